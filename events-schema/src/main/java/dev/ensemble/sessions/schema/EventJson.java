package dev.ensemble.sessions.schema;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.Event;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.specific.SpecificData;

import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON form of events, as {@code POST /api/events} takes them and as the API returns them
 * ({@code shared/contract/events-example.jsonl}): the envelope's fields at the top, {@code "type"} naming the
 * payload record, and {@code "payload"} holding it. Times are ISO-8601 instants (epoch milliseconds from
 * 2000-01-01 on are accepted too; a smaller number, such as epoch seconds, is refused), enums their symbols (any case), nullable fields may be null or left out, fields with a
 * default may be left out, unknown fields are ignored. {@code recordedAt} is set from the clock when absent.
 *
 * <p>The conversion is driven by the Avro schema, so a field added to a schema is mapped without code. Each event is
 * then checked against {@link Validation} and {@link Limits} (sizes, printable ids, times from 2000 to 2100, counts not
 * negative). Errors are {@link InvalidEventException}s naming the event and the field ({@link LimitExceededException}
 * for a size over its limit).
 */
public final class EventJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final SpecificData MODEL = SpecificData.getForClass(Event.class);

    private EventJson() {
    }

    /** The shared Jackson mapper. */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** Parses one event from JSON text. */
    public static Event parse(String json, Clock clock) {
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidEventException(null, null, null, "not valid JSON: " + JsonErrors.problemAt(e));
        }
        return fromJson(node, clock);
    }

    /** Converts one event from its JSON tree. */
    public static Event fromJson(JsonNode node, Clock clock) {
        return fromJson(node, clock, new ArrayList<>());
    }

    /**
     * Converts one event from its JSON tree, adding to {@code ignored} the paths of the fields its schema does not have
     * and the event therefore leaves out (a misspelt {@code payload.reportSumary}, a newer schema's field), in the order
     * given ({@code ocurredAt}, {@code payload.task.titel}; an element of a list of records as {@code [i]}); inside a
     * map every key is data. Found by the conversion itself, looking further only at an object with more fields than
     * its schema has of them.
     */
    public static Event fromJson(JsonNode node, Clock clock, List<String> ignored) {
        if (node == null || !node.isObject()) {
            throw new InvalidEventException(null, null, null, "an event must be a JSON object");
        }
        String eventId = textOrNull(node.get("eventId"));
        String type = textOrNull(node.get("type"));
        if (type == null) {
            JsonNode given = node.get("type");
            throw new InvalidEventException(eventId, null, "type", (given == null || given.isNull() ? "required field is missing"
                    : "must be the event type's name (a string), not " + abbreviated(given)) + "; one of " + EventTypes.names());
        }
        Schema payloadSchema = EventTypes.schemaOf(type);
        if (payloadSchema == null) {
            throw new InvalidEventException(eventId, type, "type", "unknown event type '" + type + "'; one of " + EventTypes.names());
        }
        Converter c = new Converter(eventId, type, ignored);
        Schema envelope = Event.getClassSchema();
        Event event = new Event();
        c.noteUnknown(envelope, node, "", 1); // "type" stands beside the envelope's fields
        for (Schema.Field f : envelope.getFields()) {
            if (f.name().equals("payload")) {
                JsonNode p = node.get("payload");
                if (p == null || p.isNull()) {
                    throw c.error("payload", "required field is missing");
                }
                event.put(f.pos(), c.convert(payloadSchema, p, "payload"));
            } else if (f.name().equals("recordedAt") && absent(node.get("recordedAt"))) {
                event.setRecordedAt(clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
            } else {
                event.put(f.pos(), c.field(f, node.get(f.name()), ""));
            }
        }
        Validation.check(event);
        Limits.check(event);
        return event;
    }

    /** The JSON tree of an event, in the form {@link #fromJson} reads. */
    public static ObjectNode toJson(Event event) {
        ObjectNode out = NODES.objectNode();
        out.put("eventId", event.getEventId());
        out.put("type", EventTypes.typeOf(event));
        for (Schema.Field f : Event.getClassSchema().getFields()) {
            if (f.name().equals("eventId")) {
                continue;
            }
            out.set(f.name(), toJson(f.schema(), event.get(f.pos())));
        }
        return out;
    }

    /** The JSON tree of any generated Avro record (views too), fields in schema order. */
    public static ObjectNode recordToJson(IndexedRecord record) {
        return (ObjectNode) toJson(record.getSchema(), record);
    }

    /** JSON text of an event. */
    public static String write(Event event) {
        try {
            return MAPPER.writeValueAsString(toJson(event));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode toJson(Schema s, Object v) {
        if (v == null) {
            return NODES.nullNode();
        }
        switch (s.getType()) {
            case RECORD: {
                IndexedRecord r = (IndexedRecord) v;
                ObjectNode o = NODES.objectNode();
                for (Schema.Field f : r.getSchema().getFields()) {
                    o.set(f.name(), toJson(f.schema(), r.get(f.pos())));
                }
                return o;
            }
            case UNION: {
                for (Schema branch : s.getTypes()) {
                    if (branch.getType() == Schema.Type.NULL) {
                        continue;
                    }
                    if (branch.getType() == Schema.Type.RECORD) {
                        if (v instanceof IndexedRecord r && r.getSchema().getFullName().equals(branch.getFullName())) {
                            return toJson(branch, v);
                        }
                        continue;
                    }
                    return toJson(branch, v);
                }
                throw new IllegalArgumentException("no union branch of " + s + " for " + v.getClass());
            }
            case ARRAY: {
                ArrayNode a = NODES.arrayNode();
                for (Object item : (List<?>) v) {
                    a.add(toJson(s.getElementType(), item));
                }
                return a;
            }
            case MAP: {
                ObjectNode o = NODES.objectNode();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    o.set(e.getKey().toString(), toJson(s.getValueType(), e.getValue()));
                }
                return o;
            }
            case ENUM:
                return NODES.textNode(v.toString());
            case STRING:
                return NODES.textNode(v.toString());
            case BOOLEAN:
                return NODES.booleanNode((Boolean) v);
            case INT:
                return NODES.numberNode((Integer) v);
            case LONG:
                if (v instanceof Instant i) {
                    return NODES.textNode(i.toString());
                }
                return NODES.numberNode((Long) v);
            case DOUBLE:
                return NODES.numberNode((Double) v);
            case FLOAT:
                return NODES.numberNode((Float) v);
            case BYTES:
                return NODES.binaryNode(((java.nio.ByteBuffer) v).array());
            default:
                throw new IllegalArgumentException("unsupported schema type " + s.getType());
        }
    }

    private static boolean absent(JsonNode n) {
        return n == null || n.isNull() || n.isMissingNode();
    }

    /** A JSON value as an error message shows it: at most 40 characters of it. */
    private static String abbreviated(JsonNode n) {
        String s = n.toString();
        return s.length() <= 40 ? s : s.substring(0, 40) + "… (" + s.length() + " characters)";
    }

    private static String textOrNull(JsonNode n) {
        return n != null && n.isTextual() ? n.asText() : null;
    }

    /** Semantic checks beyond the schema: ids are not blank, an eventId is one line, a run does not continue itself. */
    public static final class Validation {
        private Validation() {
        }

        /**
         * Throws {@link InvalidEventException} when an id field of the event is blank, its eventId holds a line break, or
         * it is a RunClaimed whose {@code continueFromJobId} is its own {@code runId} (the projector would park it for ever,
         * waiting for a parent that is the run itself).
         */
        public static void check(Event e) {
            String id = e.getEventId();
            blank(e, "eventId", id);
            if (id.indexOf('\n') >= 0 || id.indexOf('\r') >= 0) {
                throw new InvalidEventException(id, EventTypes.typeOf(e), "eventId", "must not contain a line break");
            }
            blank(e, "account", e.getAccount());
            blank(e, "space", e.getSpace());
            blank(e, "source", e.getSource());
            if (e.getAccount().indexOf(Keys.SEPARATOR) >= 0) {
                throw new InvalidEventException(id, EventTypes.typeOf(e), "account", "must not contain '" + Keys.SEPARATOR + "'");
            }
            Object p = e.getPayload();
            if (p instanceof IndexedRecord r) {
                Schema.Field[] ids = r instanceof org.apache.avro.specific.SpecificRecord ? ID_FIELDS.get(r.getClass()) : idFields(r.getSchema());
                for (Schema.Field f : ids) {
                    if (isBlank((CharSequence) r.get(f.pos()))) {
                        throw new InvalidEventException(id, EventTypes.typeOf(e), "payload." + f.name(), "must not be blank");
                    }
                }
            }
            if (p instanceof dev.ensemble.sessions.events.RunClaimed rc && rc.getContinueFromJobId() != null
                    && rc.getContinueFromJobId().equals(rc.getRunId())) {
                throw new InvalidEventException(id, EventTypes.typeOf(e), "payload.continueFromJobId",
                        "a run cannot continue itself (it names the run's own runId); name the run it continues, or leave it out");
            }
        }

        /** The string fields of a payload schema that are ids: named {@code *Id}, {@code agent} and {@code conversationKey}. */
        private static Schema.Field[] idFields(Schema payload) {
            return payload.getFields().stream()
                    .filter(f -> (f.name().endsWith("Id") || f.name().equals("agent") || f.name().equals("conversationKey"))
                            && f.schema().getType() == Schema.Type.STRING)
                    .toArray(Schema.Field[]::new);
        }

        /** {@link #idFields} of each generated payload class, found once per class (every event is checked). */
        private static final ClassValue<Schema.Field[]> ID_FIELDS = new ClassValue<>() {
            @Override
            protected Schema.Field[] computeValue(Class<?> type) {
                return idFields(SpecificData.get().getSchema(type));
            }
        };

        private static void blank(Event e, String field, CharSequence v) {
            if (isBlank(v)) {
                throw new InvalidEventException(e.getEventId(), EventTypes.typeOf(e), field, "must not be blank");
            }
        }

        private static boolean isBlank(CharSequence v) {
            return v == null || (v instanceof String s ? s.isBlank() : v.toString().isBlank());
        }
    }

    /** Schema-driven JSON-to-Avro conversion that remembers which event it is converting for its errors. */
    private static final class Converter {
        private final String eventId;
        private final String type;
        /** The paths of the fields the schema does not have, as met. */
        private final List<String> ignored;

        Converter(String eventId, String type, List<String> ignored) {
            this.eventId = eventId;
            this.type = type;
            this.ignored = ignored;
        }

        /**
         * Adds the fields of the object {@code n} that the record schema {@code s} does not have, beside {@code extra}
         * names read elsewhere; only looks when {@code n} holds more fields than {@code s} has of them.
         */
        void noteUnknown(Schema s, JsonNode n, String path, int extra) {
            int known = extra;
            for (Schema.Field f : s.getFields()) {
                if (n.has(f.name())) {
                    known++;
                }
            }
            if (n.size() <= known) {
                return;
            }
            n.fieldNames().forEachRemaining(name -> {
                if (s.getField(name) == null && !(extra > 0 && path.isEmpty() && name.equals("type"))) {
                    ignored.add(path.isEmpty() ? name : path + "." + name);
                }
            });
        }

        InvalidEventException error(String path, String problem) {
            return new InvalidEventException(eventId, type, path, problem);
        }

        Object field(Schema.Field f, JsonNode n, String parent) {
            String path = parent.isEmpty() ? f.name() : parent + "." + f.name();
            if (absent(n)) {
                if (n != null && n.isNull() && f.schema().isNullable()) {
                    return null;
                }
                if (f.hasDefaultValue()) {
                    return MODEL.deepCopy(f.schema(), MODEL.getDefaultValue(f));
                }
                if (f.schema().isNullable()) {
                    return null;
                }
                throw error(path, "required field is missing");
            }
            return convert(f.schema(), n, path);
        }

        Object convert(Schema s, JsonNode n, String path) {
            switch (s.getType()) {
                case RECORD: {
                    if (!n.isObject()) {
                        throw error(path, "expected an object");
                    }
                    IndexedRecord r = (IndexedRecord) MODEL.newRecord(null, s);
                    for (Schema.Field f : s.getFields()) {
                        r.put(f.pos(), field(f, n.get(f.name()), path));
                    }
                    noteUnknown(s, n, path, 0);
                    return r;
                }
                case UNION: {
                    if (n.isNull()) {
                        if (s.isNullable()) {
                            return null;
                        }
                        throw error(path, "must not be null");
                    }
                    List<Schema> branches = new ArrayList<>();
                    for (Schema b : s.getTypes()) {
                        if (b.getType() != Schema.Type.NULL) {
                            branches.add(b);
                        }
                    }
                    if (branches.size() == 1) {
                        return convert(branches.get(0), n, path);
                    }
                    InvalidEventException last = null;
                    int noted = ignored.size();
                    for (Schema b : branches) {
                        try {
                            return convert(b, n, path);
                        } catch (InvalidEventException e) {
                            ignored.subList(noted, ignored.size()).clear(); // what a branch not taken noted is not so
                            last = e;
                        }
                    }
                    throw last;
                }
                case STRING:
                    if (!n.isTextual()) {
                        throw error(path, "expected a string, got " + kind(n));
                    }
                    return n.asText();
                case BOOLEAN:
                    if (!n.isBoolean()) {
                        throw error(path, "expected true or false, got " + kind(n));
                    }
                    return n.asBoolean();
                case INT:
                    if (!n.isIntegralNumber() || !n.canConvertToInt()) {
                        throw error(path, "expected a whole number, got " + kind(n));
                    }
                    return n.asInt();
                case LONG: {
                    LogicalType lt = s.getLogicalType();
                    if (lt instanceof LogicalTypes.TimestampMillis) {
                        return instant(n, path);
                    }
                    if (!n.isIntegralNumber() || !n.canConvertToLong()) {
                        throw error(path, "expected a whole number, got " + kind(n));
                    }
                    return n.asLong();
                }
                case DOUBLE:
                case FLOAT:
                    if (!n.isNumber()) {
                        throw error(path, "expected a number, got " + kind(n));
                    }
                    return s.getType() == Schema.Type.DOUBLE ? (Object) n.asDouble() : (Object) (float) n.asDouble();
                case ENUM: {
                    if (!n.isTextual()) {
                        throw error(path, "expected one of " + s.getEnumSymbols() + ", got " + kind(n));
                    }
                    for (String sym : s.getEnumSymbols()) {
                        if (sym.equalsIgnoreCase(n.asText())) {
                            Object e = MODEL.createEnum(sym, s);
                            return e instanceof GenericEnumSymbol<?> g ? g : e;
                        }
                    }
                    throw error(path, "'" + n.asText() + "' is not one of " + s.getEnumSymbols());
                }
                case ARRAY: {
                    if (!n.isArray()) {
                        throw error(path, "expected an array, got " + kind(n));
                    }
                    List<Object> out = new ArrayList<>(n.size());
                    int i = 0;
                    for (JsonNode item : n) {
                        out.add(convert(s.getElementType(), item, path + "[" + i++ + "]"));
                    }
                    return out;
                }
                case MAP: {
                    if (!n.isObject()) {
                        throw error(path, "expected an object, got " + kind(n));
                    }
                    Map<String, Object> out = new LinkedHashMap<>();
                    Iterator<Map.Entry<String, JsonNode>> it = n.fields();
                    while (it.hasNext()) {
                        Map.Entry<String, JsonNode> e = it.next();
                        out.put(e.getKey(), convert(s.getValueType(), e.getValue(), path + "." + e.getKey()));
                    }
                    return out;
                }
                default:
                    throw error(path, "unsupported schema type " + s.getType());
            }
        }

        /** 2000-01-01T00:00:00Z: a number below it is taken for a mistake (epoch seconds of today are about 1.8e9). */
        static final long EARLIEST_EPOCH_MILLI = 946_684_800_000L;

        private Instant instant(JsonNode n, String path) {
            if (n.isIntegralNumber()) {
                if (!n.canConvertToLong() || n.asLong() < EARLIEST_EPOCH_MILLI) {
                    throw error(path, n.asText() + " is not epoch milliseconds of this century (seconds?); send an ISO-8601"
                            + " instant such as 2026-11-02T09:00:05Z");
                }
                return Instant.ofEpochMilli(n.asLong());
            }
            if (n.isTextual()) {
                try {
                    return Instant.parse(n.asText());
                } catch (DateTimeParseException e) {
                    try {
                        return java.time.OffsetDateTime.parse(n.asText()).toInstant();
                    } catch (DateTimeParseException e2) {
                        throw error(path, "'" + n.asText() + "' is not an ISO-8601 instant such as 2026-11-02T09:00:05Z");
                    }
                }
            }
            throw error(path, "expected an ISO-8601 instant, got " + kind(n));
        }

        private static String kind(JsonNode n) {
            return n.getNodeType().name().toLowerCase();
        }
    }
}
