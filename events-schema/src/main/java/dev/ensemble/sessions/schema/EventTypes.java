package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import org.apache.avro.Schema;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The event types: the records of the envelope's payload union, by their simple name (the JSON "type"). */
public final class EventTypes {
    private EventTypes() {
    }

    private static final Map<String, Schema> BY_NAME = new LinkedHashMap<>();

    static {
        for (Schema s : Event.getClassSchema().getField("payload").schema().getTypes()) {
            BY_NAME.put(s.getName(), s);
        }
    }

    /** Every event type name, in schema order. */
    public static Set<String> names() {
        return BY_NAME.keySet();
    }

    /** The payload schema of {@code type}, or null when there is no such type. */
    public static Schema schemaOf(String type) {
        return BY_NAME.get(type);
    }

    /** The type name of an event: the simple class name of its payload; null when it has none. */
    public static String typeOf(Event event) {
        Object p = event.getPayload();
        return p == null ? null : SIMPLE_NAMES.get(p.getClass());
    }

    /** A class's simple name, looked up once per class (every event processed asks for its type). */
    private static final ClassValue<String> SIMPLE_NAMES = new ClassValue<>() {
        @Override
        protected String computeValue(Class<?> type) {
            return type.getSimpleName();
        }
    };
}
