package dev.ensemble.sessions.schema;

/**
 * An event that cannot be accepted: its type is unknown, or a required field is missing or of the wrong type.
 * The message names the event (type and eventId, where known) and the field path, e.g.
 * {@code RunClaimed 0b4f…0002: payload.task.title: required field is missing}.
 */
public class InvalidEventException extends RuntimeException {
    private final String eventId;
    private final String type;
    private final String field;
    private final String problem;

    public InvalidEventException(String eventId, String type, String field, String problem) {
        super(describe(eventId, type, field, problem));
        this.eventId = eventId;
        this.type = type;
        this.field = field;
        this.problem = problem;
    }

    private static String describe(String eventId, String type, String field, String problem) {
        StringBuilder s = new StringBuilder();
        s.append(type == null ? "event" : type);
        if (eventId != null) {
            s.append(' ').append(eventId);
        }
        s.append(": ");
        if (field != null && !field.isEmpty()) {
            s.append(field).append(": ");
        }
        return s.append(problem).toString();
    }

    /** The eventId, or null when the event had none. */
    public String eventId() {
        return eventId;
    }

    /** The event type, or null when unknown. */
    public String type() {
        return type;
    }

    /** The dotted path of the offending field, or null for the event as a whole. */
    public String field() {
        return field;
    }

    /** What is wrong with the field (the message without the event and the field). */
    public String problem() {
        return problem;
    }
}
