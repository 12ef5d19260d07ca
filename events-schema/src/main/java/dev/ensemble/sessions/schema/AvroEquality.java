package dev.ensemble.sessions.schema;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.specific.SpecificData;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Value equality of Avro records by their schema, for the generated classes with logical types (java.time.Instant
 * fields): their generated {@code equals} goes through {@code SpecificData.compare}, which knows no conversions and
 * cannot compare an Instant. Records compare field by field, arrays element by element, maps entry by entry (in any
 * order), strings by their characters, every other value (Instant, Long, Double, ByteBuffer, enum) by {@code equals}.
 * For records without maps and with millisecond Instants (the views) that is exactly when their binary encodings are
 * equal; elsewhere it can differ from the encodings only where the values differ in ways the encoding drops
 * (sub-millisecond instants) or keeps (a map's order).
 */
public final class AvroEquality {
    private AvroEquality() {
    }

    /**
     * True when {@code a} and {@code b}, both of {@code a}'s schema, hold equal values in every field but the
     * top-level field named {@code ignored} (null: none).
     */
    public static boolean equalBut(IndexedRecord a, IndexedRecord b, String ignored) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null || !a.getSchema().equals(b.getSchema())) {
            return false;
        }
        for (Schema.Field f : a.getSchema().getFields()) {
            if (!f.name().equals(ignored) && !equal(a.get(f.pos()), b.get(f.pos()), f.schema(), a)) {
                return false;
            }
        }
        return true;
    }

    /** @param owner the record the values belong to (its generated class knows the conversions of its unions) */
    private static boolean equal(Object a, Object b, Schema s, IndexedRecord owner) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null) {
            return false;
        }
        switch (s.getType()) {
            case RECORD:
                return equalBut((IndexedRecord) a, (IndexedRecord) b, null);
            case ARRAY: {
                List<?> x = (List<?>) a, y = (List<?>) b;
                if (x.size() != y.size()) {
                    return false;
                }
                for (int i = 0; i < x.size(); i++) {
                    if (!equal(x.get(i), y.get(i), s.getElementType(), owner)) {
                        return false;
                    }
                }
                return true;
            }
            case MAP: {
                Map<?, ?> x = (Map<?, ?>) a, y = (Map<?, ?>) b;
                if (x.size() != y.size()) {
                    return false;
                }
                for (Map.Entry<?, ?> e : x.entrySet()) {
                    if (!y.containsKey(e.getKey()) || !equal(e.getValue(), y.get(e.getKey()), s.getValueType(), owner)) {
                        return false;
                    }
                }
                return true;
            }
            case UNION: {
                List<Schema> types = s.getTypes();
                if (types.size() == 2 && types.get(0).getType() == Schema.Type.NULL) {
                    return equal(a, b, types.get(1), owner); // ["null", X], both present
                }
                // a union of several types: a logical type's branch needs the conversions of the generated class
                GenericData model = SpecificData.getForClass(owner.getClass());
                int i = model.resolveUnion(s, a);
                return i == model.resolveUnion(s, b) && equal(a, b, types.get(i), owner);
            }
            case STRING:
                return a.toString().contentEquals((CharSequence) b);
            default:
                return Objects.equals(a, b);
        }
    }
}
