package dev.ensemble.sessions.gateway;

/**
 * An error answer: HTTP status, a short machine-readable code and a message a person can act on. Rendered
 * as {@code {"error": code, "message": message}} plus any {@link #with details}, and a {@code Retry-After} header when
 * it has {@link #retryAfterSeconds}.
 */
public class ApiError extends RuntimeException {
    private final int status;
    private final String code;
    private final java.util.Map<String, String> details = new java.util.LinkedHashMap<>();
    private int retryAfterSeconds;
    /** How long a client waits before asking again while the gateway starts (seconds, the Retry-After header). */
    static final int STARTING_RETRY_SECONDS = 5;

    public ApiError(int status, String code, String message) {
        super(message);
        this.status = status;
        this.code = code;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    /** Adds a field to the error's JSON beside error and message (e.g. which computer to connect). */
    public ApiError with(String field, String value) {
        details.put(field, value);
        return this;
    }

    /** The fields added with {@link #with}, in order. */
    public java.util.Map<String, String> details() {
        return details;
    }

    /** Seconds to wait before trying again (the {@code Retry-After} header), or 0 for none. */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** Sets the seconds to wait before asking again (the {@code Retry-After} header). */
    ApiError retryAfter(int seconds) {
        this.retryAfterSeconds = seconds;
        return this;
    }

    /**
     * 503 {@code starting}, with {@code Retry-After}: what a read answers while the gateway's views or its reading of the
     * event log are still loading after a start (or a rebalance); {@code what} says which and what to do.
     */
    static ApiError starting(String what) {
        ApiError e = new ApiError(503, "starting", what);
        e.retryAfterSeconds = STARTING_RETRY_SECONDS;
        return e;
    }

    /**
     * 503 {@code unavailable}, with {@code Retry-After}: what a request answers while the gateway instance holding the
     * caller's account is gone and the group has not given its partitions to another instance yet (a rebalance: about
     * the read side's {@code session.timeout.ms} after the instance was lost).
     */
    static ApiError moving(String what) {
        ApiError e = new ApiError(503, "unavailable", what);
        e.retryAfterSeconds = STARTING_RETRY_SECONDS;
        return e;
    }

    static ApiError notFound(String what) {
        return new ApiError(404, "not_found", what);
    }

    static ApiError badRequest(String message) {
        return new ApiError(400, "bad_request", message);
    }

    /**
     * A body that is not JSON: the parser's reason and where, without its internals ("Unexpected character ('}'
     * (code 125)): was expecting double-quote to start field name, at line 1, column 2").
     */
    static ApiError badJson(java.io.IOException e) {
        if (e instanceof com.fasterxml.jackson.core.JsonProcessingException j) {
            var at = j.getLocation();
            return badRequest("the body is not valid JSON: " + jsonReason(j));
        }
        return badRequest("the body could not be read: " + e.getMessage());
    }

    /** The parser's reason and where (line and column), as {@link #jsonProblem} words it. */
    static String jsonReason(com.fasterxml.jackson.core.JsonProcessingException j) {
        var at = j.getLocation();
        return jsonProblem(j) + (at == null || at.getLineNr() < 1 ? "" : ", at line " + at.getLineNr() + ", column " + at.getColumnNr());
    }

    /**
     * What the parser found wrong, without where and without its own settings, class names or source description:
     * "Unexpected end-of-input: expected close marker for Object", not "... (start marker at [Source: REDACTED ...])";
     * "Document nesting depth (1001) exceeds the maximum allowed (1000)", not "(1000, from `StreamReadConstraints...`)";
     * "Non-standard token 'NaN': not allowed in JSON", not "enable `JsonReadFeature...` to allow".
     */
    static String jsonProblem(com.fasterxml.jackson.core.JsonProcessingException j) {
        String m = String.valueOf(j.getOriginalMessage());
        for (String cut : new String[]{"\n", " (start marker at", " (for Array starting at", " (for Object starting at",
                " (for root starting at", " at [Source", " (not recognized as one since"}) {
            int i = m.indexOf(cut);
            if (i >= 0) {
                m = m.substring(0, i);
            }
        }
        return m.replaceAll(", from `[^`]*`", "")
                .replaceAll(": enable `[^`]*` to allow", ": not allowed in JSON")
                .replaceAll("`[A-Za-z_$][A-Za-z0-9_$.]*\\.[A-Z_]{3,}`", "a parser setting");
    }
}
