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
        int start = 0;
        int n = s.length();
        while (start < n) {
            int end = start;
            while (end < n && !isLineEnd(s.charAt(end))) {
                end++;
            }
            String line = s.substring(start, end);
            if (!line.isBlank()) {
                return line.strip();
            }
            start = end + 1;
        }
        return "";
    }

    /** {@code s} on one line: every run of white space (line ends included) becomes one space; null when blank. */
    static String oneLine(String s) {
        if (s == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), 1 << 16));
        boolean space = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (isSpace(c)) {
                space = true;
            } else {
                if (space && b.length() > 0) {
                    b.append(' ');
                }
                space = false;
                b.append(c);
            }
        }
        String t = b.toString().strip();
        return t.isEmpty() ? null : t;
    }

    /**
     * {@code shorten(oneLine(s), max)}, looking at no more of {@code s} than it needs: a turn's last text can be
     * a long document, and the summary keeps its first {@code max} code points.
     */
    static String oneLineShortened(String s, int max) {
        int limit = 4 * max + 8;
        if (s != null && s.length() > limit) {
            String head = oneLine(s.substring(0, limit)); // a prefix of the whole one's, past max code points
            if (head != null && head.codePointCount(0, head.length()) > max) {
                return shorten(head, max);
            }
        }
        return shorten(oneLine(s), max);
    }

    /** What the regex {@code \R} takes for a line end (a CR LF pair is two ends, with nothing between). */
    private static boolean isLineEnd(char c) {
        return c == '\n' || c == '\r' || c == '\u000B' || c == '\f' || c == '\u0085' || c == '\u2028' || c == '\u2029';
    }

    /** What the regex {@code \s} matches: ASCII white space only. */
    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
    }
}
