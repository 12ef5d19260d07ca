package dev.ensemble.sessions.schema;

/**
 * An event over one of the {@link Limits}: a text too long, a list with too many entries, or the whole event too
 * large. The message names the event, the field and the limit, e.g.
 * {@code RunClaimed e1: payload.task.title: 300000 characters; at most 4096}. The gateway answers it 413.
 */
public class LimitExceededException extends InvalidEventException {
    private final long limit;

    public LimitExceededException(String eventId, String type, String field, String problem, long limit) {
        super(eventId, type, field, problem);
        this.limit = limit;
    }

    /** The limit that was passed (characters, entries or bytes, as the message says). */
    public long limit() {
        return limit;
    }
}
