package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.JsonErrors;

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
     * A body that is not JSON: the parser's reason and where, without its internals ("unexpected character ('}'
     * (code 125)): was expecting double-quote to start field name, at line 1, column 2", {@link JsonErrors#problemAt}).
     */
    static ApiError badJson(java.io.IOException e) {
        if (e instanceof com.fasterxml.jackson.core.JsonProcessingException j) {
            return badRequest("the body is not valid JSON: " + JsonErrors.problemAt(j));
        }
        return badRequest("the body could not be read: " + e.getMessage());
    }
}
