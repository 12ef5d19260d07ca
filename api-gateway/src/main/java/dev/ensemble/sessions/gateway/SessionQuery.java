package dev.ensemble.sessions.gateway;

import java.util.List;
import java.util.Locale;

/**
 * What {@code GET /api/agent/sessions} asks for (guide §1; issue 19 item 3): the filters, the search text, the page size
 * and the cursor of the page before. Every filter is optional (null: any); all given filters must hold.
 *
 * @param q        search text over what the sessions said (Lucene's simple query syntax: words all required, stemmed;
 *                 {@code "a phrase"}; {@code -word} excludes; {@code a | b} either), or null for the plain list
 * @param agent    the session's agent (case-insensitive), e.g. {@code claude-code}
 * @param computer a computer the session ran on (its id)
 * @param taskId   a task one of its runs was for
 * @param status   {@code working}, {@code waiting}, {@code queued}, {@code idle} or {@code gone}, as the list shows it
 * @param deleted  true: only deleted sessions; false: only sessions not deleted
 * @param limit    the page size, 1 to {@link Gateway#MAX_LIMIT}
 * @param cursor   the {@code next} of the page before, or null for the first page
 */
public record SessionQuery(String q, String agent, String computer, String taskId, String status, Boolean deleted,
                           int limit, String cursor) {
    /** The statuses a session shows ({@code SessionJson.summary}), in the order messages name them. */
    public static final List<String> STATUSES = List.of("working", "waiting", "queued", "idle", "gone");

    public SessionQuery {
        q = q == null || q.isBlank() ? null : q.strip();
        agent = agent == null || agent.isBlank() ? null : agent.strip().toLowerCase(Locale.ROOT);
        computer = computer == null || computer.isBlank() ? null : computer.strip();
        taskId = taskId == null || taskId.isBlank() ? null : taskId.strip();
        status = status == null || status.isBlank() ? null : status.strip().toLowerCase(Locale.ROOT);
        cursor = cursor == null || cursor.isBlank() ? null : cursor.strip();
        if (status != null && !STATUSES.contains(status)) {
            throw ApiError.badRequest("status must be one of " + String.join(", ", STATUSES) + ", not '" + status + "'").with("field", "status");
        }
    }

    /** The first page of the plain list, newest first. */
    public static SessionQuery list(int limit) {
        return new SessionQuery(null, null, null, null, null, null, limit, null);
    }

    /** The same query for the page after {@code cursor}. */
    public SessionQuery after(String next) {
        return new SessionQuery(q, agent, computer, taskId, status, deleted, limit, next);
    }

    /**
     * {@code deleted=true|false} as a filter; a 400 naming the field for anything else.
     *
     * @return null when absent or blank
     */
    static Boolean deletedParam(String v) {
        if (v == null || v.isBlank()) {
            return null;
        }
        return switch (v.strip().toLowerCase(Locale.ROOT)) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw ApiError.badRequest("deleted must be true or false, not '" + v + "'").with("field", "deleted");
        };
    }

    /**
     * What a cursor is bound to: the search text and filters (not the page size, which may change from page to page).
     * Eight hex digits.
     */
    String fingerprint() {
        String all = String.join("\u0001", String.valueOf(q), String.valueOf(agent), String.valueOf(computer),
                String.valueOf(taskId), String.valueOf(status), String.valueOf(deleted));
        return String.format("%08x", all.hashCode());
    }
}
