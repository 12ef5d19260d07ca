package dev.ensemble.sessions.agent;

/** Shortening rules for titles, descriptions and report summaries. Counts are in Unicode code points. */
final class Text {
    static final String ELLIPSIS = "…";

    private Text() {
    }

    /** {@code s} when it has at most {@code max} code points, else its first {@code max - 1} and "…". */
    static String shorten(String s, int max) {
        if (s == null || s.codePointCount(0, s.length()) <= max) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, max - 1)).stripTrailing() + ELLIPSIS;
    }

    /** {@code s} stripped and cut after {@code max} code points (no ellipsis). */
    static String trimTo(String s, int max) {
        if (s == null) {
            return null;
        }
        String t = s.strip();
        return t.codePointCount(0, t.length()) <= max ? t : t.substring(0, t.offsetByCodePoints(0, max));
    }

    /** The first line of {@code s} that is not blank, stripped; "" when there is none. */
    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        for (String line : s.split("\\R")) {
            if (!line.isBlank()) {
                return line.strip();
            }
        }
        return "";
    }

    /** {@code s} on one line: every run of white space (line ends included) becomes one space; null when blank. */
    static String oneLine(String s) {
        if (s == null) {
            return null;
        }
        String t = s.replaceAll("\\s+", " ").strip();
        return t.isEmpty() ? null : t;
    }
}
