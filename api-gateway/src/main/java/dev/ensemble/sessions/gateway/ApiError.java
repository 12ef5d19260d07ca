package dev.ensemble.sessions.gateway;

/**
 * An error answer: HTTP status, a short machine-readable code and a message a person can act on. Rendered
 * as {@code {"error": code, "message": message}}.
 */
public class ApiError extends RuntimeException {
    private final int status;
    private final String code;

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

    static ApiError notFound(String what) {
        return new ApiError(404, "not_found", what);
    }

    static ApiError badRequest(String message) {
        return new ApiError(400, "bad_request", message);
    }
}
