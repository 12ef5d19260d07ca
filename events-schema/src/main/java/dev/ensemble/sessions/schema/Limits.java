package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the event intake accepts, in one place (docs/reliability.md, "Limits" and "Bad input"). Every event taken
 * in the JSON form ({@link EventJson#fromJson}: {@code POST /api/events}, the session-choice endpoints) is checked
 * here before it can reach the log, so that no single event can be too large for a view or a Kafka record, or hold a
 * value the schema or a reader cannot take:
 * <ul>
 *   <li><b>ids</b> (the envelope's {@code eventId}, {@code account}, {@code space}, {@code source}; payload fields named
 *   {@code *Id}, {@code id}, {@code agent}, {@code sourceRef}, {@code continuesSessionOf}, {@code confirmedBy},
 *   {@code conversationKey} (an assistant conversation's id: a store key and a computer's chat key), and the
 *   entries of lists named {@code *Ids}): at most {@value #MAX_ID_CHARS} characters, printable (no control character
 *   such as NUL, tab or line break, no invisible format character such as a zero-width space or a direction override,
 *   no line or paragraph separator);</li>
 *   <li><b>texts</b>: at most {@value #MAX_TEXT_CHARS} characters (a title, a name, a path, a label), or
 *   {@value #MAX_LONG_TEXT_CHARS} for the long ones ({@link #LONG_TEXT_FIELDS}: a description, instructions, a report
 *   summary, an error, a configuration); well-formed Unicode (a lone surrogate, which would be written as {@code ?}, is
 *   refused);</li>
 *   <li><b>lists and maps</b>: at most {@value #MAX_LIST_ENTRIES} entries; a map's keys are texts;</li>
 *   <li><b>times</b> (every timestamp): from {@link #EARLIEST} (2000-01-01) up to, not including, {@link #LATEST}
 *   (2100-01-01);</li>
 *   <li><b>whole numbers</b> (token counts, durations, sizes, days, capability levels): not negative;
 *   <b>fractions</b> (scores): finite;</li>
 *   <li><b>the whole event</b>: at most {@value #MAX_EVENT_BYTES} bytes encoded ({@link #checkEncodedSize}), well
 *   under Kafka's default record limit of 1 MB;</li>
 *   <li><b>a request</b> to the gateway: at most {@value #MAX_REQUEST_BYTES} bytes of body and {@value #MAX_BATCH_EVENTS}
 *   events.</li>
 * </ul>
 * A value over a size limit raises {@link LimitExceededException} (the gateway's 413), any other an
 * {@link InvalidEventException} (400); both name the event, the field path and the limit or rule.
 */
public final class Limits {
    /** The most characters of an id. */
    public static final int MAX_ID_CHARS = 256;
    /** The most characters of a text field (a title, a name, a path, a label, a list entry). */
    public static final int MAX_TEXT_CHARS = 4_096;
    /** The most characters of a long text field ({@link #LONG_TEXT_FIELDS}). */
    public static final int MAX_LONG_TEXT_CHARS = 32_768;
    /** The text fields that may be long: descriptions, instructions, report summaries, errors, configurations. */
    public static final Set<String> LONG_TEXT_FIELDS = Set.of("description", "instructions", "reportSummary", "error", "json");
    /** The most entries of a list or a map. */
    public static final int MAX_LIST_ENTRIES = 2_000;
    /** The most bytes of one event, Avro single-object encoded (what a Kafka record of the log holds). */
    public static final int MAX_EVENT_BYTES = 256 * 1024;
    /** The most events one request to the gateway carries. */
    public static final int MAX_BATCH_EVENTS = 10_000;
    /** The most bytes of one request body to the gateway. */
    public static final long MAX_REQUEST_BYTES = 1_000_000;
    /** The earliest time an event may name (inclusive). */
    public static final Instant EARLIEST = Instant.parse("2000-01-01T00:00:00Z");
    /** The time every time an event names must be before. */
    public static final Instant LATEST = Instant.parse("2100-01-01T00:00:00Z");

    private static final Set<String> ID_NAMES = Set.of("eventId", "account", "space", "source", "id", "agent", "sourceRef",
            "continuesSessionOf", "confirmedBy", "conversationKey");

    private Limits() {
    }

    /**
     * Checks every field of the event against the limits and rules above.
     *
     * @throws LimitExceededException a text, list or map over its limit
     * @throws InvalidEventException  an id with a character that is not printable, a time outside the window, a negative
     *                                whole number, a number that is not finite, a text that is not well-formed Unicode
     */
    public static void check(Event e) {
        new Walk(e).record(e, "");
    }

    /** Checks the size of the event's encoding ({@code bytes}); throws {@link LimitExceededException} over {@link #MAX_EVENT_BYTES}. */
    public static void checkEncodedSize(Event e, int bytes) {
        if (bytes > MAX_EVENT_BYTES) {
            throw new LimitExceededException(e.getEventId(), EventTypes.typeOf(e), "event", "encoded, it is " + bytes
                    + " bytes; at most " + MAX_EVENT_BYTES + " (shorten its texts or lists)", MAX_EVENT_BYTES);
        }
    }

    /**
     * Whether a field of this name holds an id (its entries, for a list): the names above, any name ending in {@code Id},
     * any ending in {@code Ids}. The projector refuses an event whose id is over {@link #MAX_ID_CHARS} by the same rule.
     */
    public static boolean isId(String name) {
        return ID_NAMES.contains(name) || name.endsWith("Id") || name.endsWith("Ids");
    }

    /** One check of one event: remembers the event for the errors' messages. */
    private static final class Walk {
        private final String eventId;
        private final String type;

        Walk(Event e) {
            this.eventId = e.getEventId();
            this.type = EventTypes.typeOf(e);
        }

        void record(IndexedRecord r, String path) {
            for (Schema.Field f : r.getSchema().getFields()) {
                value(f.schema(), r.get(f.pos()), path.isEmpty() ? f.name() : path + "." + f.name(), f.name());
            }
        }

        void value(Schema s, Object v, String path, String name) {
            if (v == null) {
                return;
            }
            switch (s.getType()) {
                case UNION -> value(branch(s, v), v, path, name);
                case RECORD -> record((IndexedRecord) v, path);
                case ARRAY -> {
                    List<?> list = (List<?>) v;
                    entries(list.size(), path);
                    int i = 0;
                    for (Object item : list) {
                        value(s.getElementType(), item, path + "[" + i++ + "]", name);
                    }
                }
                case MAP -> {
                    Map<?, ?> map = (Map<?, ?>) v;
                    entries(map.size(), path);
                    for (Map.Entry<?, ?> entry : map.entrySet()) {
                        String key = entry.getKey().toString();
                        text(key, path + " (a key)", false, MAX_TEXT_CHARS);
                        value(s.getValueType(), entry.getValue(), path + "." + key, name);
                    }
                }
                case STRING -> {
                    boolean id = isId(name);
                    text(v.toString(), path, id, id ? MAX_ID_CHARS : LONG_TEXT_FIELDS.contains(name) ? MAX_LONG_TEXT_CHARS : MAX_TEXT_CHARS);
                }
                case INT, LONG -> {
                    if (s.getLogicalType() instanceof LogicalTypes.TimestampMillis) {
                        Instant t = (Instant) v;
                        if (t.isBefore(EARLIEST) || !t.isBefore(LATEST)) {
                            throw new InvalidEventException(eventId, type, path, t + " is outside the times an event may name: from "
                                    + EARLIEST + " up to " + LATEST);
                        }
                    } else if (((Number) v).longValue() < 0) {
                        throw new InvalidEventException(eventId, type, path, v + " is negative; a count, size or duration is 0 or more");
                    }
                }
                case DOUBLE, FLOAT -> {
                    if (!Double.isFinite(((Number) v).doubleValue())) {
                        throw new InvalidEventException(eventId, type, path, v + " is not a finite number");
                    }
                }
                default -> {
                }
            }
        }

        private void entries(int n, String path) {
            if (n > MAX_LIST_ENTRIES) {
                throw new LimitExceededException(eventId, type, path, n + " entries; at most " + MAX_LIST_ENTRIES, MAX_LIST_ENTRIES);
            }
        }

        private void text(String s, String path, boolean id, int max) {
            if (s.length() > max) {
                throw new LimitExceededException(eventId, type, path, s.length() + " characters; at most " + max, max);
            }
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = s.codePointAt(i++);
                    if (id && Character.getType(cp) == Character.FORMAT) {
                        throw notPrintable(path, cp, i - 1);
                    }
                    continue;
                }
                if (Character.isSurrogate(c)) {
                    throw new InvalidEventException(eventId, type, path, String.format(
                            "holds a lone surrogate (U+%04X) at index %d: not well-formed Unicode text", (int) c, i));
                }
                if (id) {
                    int t = Character.getType(c);
                    if (Character.isISOControl(c) || t == Character.FORMAT || t == Character.LINE_SEPARATOR || t == Character.PARAGRAPH_SEPARATOR) {
                        throw notPrintable(path, c, i);
                    }
                }
            }
        }

        private InvalidEventException notPrintable(String path, int codePoint, int index) {
            return new InvalidEventException(eventId, type, path, String.format(
                    "holds U+%04X (%s) at index %d; an id is of printable characters", codePoint, java.util.Objects.toString(Character.getName(codePoint), "unassigned"), index));
        }

        /** The branch of a union that {@code v} is of (the event's payload, or a nullable field's value). */
        private static Schema branch(Schema union, Object v) {
            Schema only = null;
            for (Schema b : union.getTypes()) {
                if (b.getType() == Schema.Type.NULL) {
                    continue;
                }
                if (v instanceof IndexedRecord r) {
                    if (b.getType() == Schema.Type.RECORD && b.getFullName().equals(r.getSchema().getFullName())) {
                        return b;
                    }
                } else if (b.getType() != Schema.Type.RECORD) {
                    return b;
                }
                only = b;
            }
            return only;
        }
    }
}
