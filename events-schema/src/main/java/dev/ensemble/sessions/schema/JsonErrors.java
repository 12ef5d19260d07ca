package dev.ensemble.sessions.schema;

import com.fasterxml.jackson.core.JsonProcessingException;

/**
 * A JSON syntax error as a person reads it, for every place that parses JSON a person or a program sent (the gateway's
 * request bodies, the event JSON, the session-choice config, a choice history): what the parser found wrong and where,
 * without its source description, its settings or its class names.
 */
public final class JsonErrors {
    private JsonErrors() {
    }

    /**
     * What the parser found wrong, without where, starting in lower case: "unexpected end of input: expected close
     * marker for Object", not "Unexpected end-of-input: ... (start marker at [Source: REDACTED ...])"; "document nesting
     * depth (1001) exceeds the maximum allowed (1000)", not "(1000, from `StreamReadConstraints...`)"; "non-standard
     * token 'NaN': not allowed in JSON", not "enable `JsonReadFeature...` to allow".
     */
    public static String problem(JsonProcessingException e) {
        String m = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        for (String cut : new String[]{"\n", " (start marker at", " (for Array starting at", " (for Object starting at",
                " (for root starting at", " at [Source", " (not recognized as one since"}) {
            int i = m.indexOf(cut);
            if (i >= 0) {
                m = m.substring(0, i);
            }
        }
        m = m.replaceAll(", from `[^`]*`", "")
                .replaceAll(": enable `[^`]*` to allow", ": not allowed in JSON")
                .replaceAll("`[A-Za-z_$][A-Za-z0-9_$.]*\\.[A-Z_]{3,}`", "a parser setting")
                .replace("end-of-input", "end of input").strip();
        if (m.isEmpty()) {
            return "a syntax error";
        }
        return m.length() > 1 && Character.isUpperCase(m.charAt(0)) && !Character.isUpperCase(m.charAt(1))
                ? Character.toLowerCase(m.charAt(0)) + m.substring(1) : m;
    }

    /** {@link #problem} and where the parser stopped: "..., at line 2, column 13" (no place when it does not tell). */
    public static String problemAt(JsonProcessingException e) {
        var at = e.getLocation();
        return problem(e) + (at == null || at.getLineNr() < 1 ? "" : ", at line " + at.getLineNr() + ", column " + at.getColumnNr());
    }

    /** {@link #problem} and the column where the parser stopped in a text of one line: "..., at column 13". */
    public static String problemAtColumn(JsonProcessingException e) {
        var at = e.getLocation();
        return problem(e) + (at == null || at.getColumnNr() < 1 ? "" : ", at column " + at.getColumnNr());
    }
}
