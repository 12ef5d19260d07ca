package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What an event says, apart from when the log received it: a 64-bit fingerprint (CRC-64-AVRO, Avro's own
 * {@link SchemaNormalization#fingerprint64}) of its eventId, account, space, occurredAt (ms), source and payload, leaving
 * out {@code recordedAt}, which the gateway sets at each post. The payload is written field by field in its schema's
 * order in Avro's binary encoding, a map's entries sorted by key, so that the same event read from the log and parsed
 * from its JSON (whose maps iterate in other orders) gives the same fingerprint; another event under the same eventId
 * gives another one (but for a chance of 2^-64).
 */
public final class EventContent {
    private static final Schema PAYLOAD = Event.getClassSchema().getField("payload").schema();
    /** The generated classes' model (with their logical types), to tell a union's branch of a value. */
    private static final org.apache.avro.specific.SpecificData MODEL = org.apache.avro.specific.SpecificData.getForClass(Event.class);

    private EventContent() {
    }

    /** A thread's buffer and encoder, reused (the gateway's feed fingerprints every event of the log at its start). */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        final BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
    }

    /** The fingerprint of {@code e}'s content (everything but {@code recordedAt}). */
    public static long fingerprint(Event e) {
        Scratch scratch = SCRATCH.get();
        ByteArrayOutputStream out = scratch.out;
        out.reset();
        BinaryEncoder enc = scratch.enc;
        try {
            enc.writeString(e.getEventId());
            enc.writeString(e.getAccount());
            enc.writeString(e.getSpace());
            enc.writeLong(e.getOccurredAt().toEpochMilli());
            enc.writeString(e.getSource());
            write(PAYLOAD, e.getPayload(), enc);
            enc.flush();
        } catch (IOException x) {
            throw new UncheckedIOException(x); // a byte array does not fail
        }
        return SchemaNormalization.fingerprint64(out.toByteArray());
    }

    private static void write(Schema s, Object v, BinaryEncoder enc) throws IOException {
        switch (s.getType()) {
            case UNION -> {
                int branch = MODEL.resolveUnion(s, v);
                enc.writeIndex(branch);
                write(s.getTypes().get(branch), v, enc);
            }
            case RECORD -> {
                IndexedRecord r = (IndexedRecord) v;
                for (Schema.Field f : s.getFields()) {
                    write(f.schema(), r.get(f.pos()), enc);
                }
            }
            case MAP -> {
                List<Map.Entry<?, ?>> entries = new ArrayList<>(((Map<?, ?>) v).entrySet());
                entries.sort((a, b) -> a.getKey().toString().compareTo(b.getKey().toString()));
                enc.writeLong(entries.size());
                for (Map.Entry<?, ?> en : entries) {
                    enc.writeString(en.getKey().toString());
                    write(s.getValueType(), en.getValue(), enc);
                }
            }
            case ARRAY -> {
                Collection<?> items = (Collection<?>) v;
                enc.writeLong(items.size());
                for (Object item : items) {
                    write(s.getElementType(), item, enc);
                }
            }
            case STRING -> enc.writeString(v.toString());
            case ENUM -> enc.writeString(v.toString());
            case LONG -> enc.writeLong(v instanceof Instant i ? i.toEpochMilli() : ((Number) v).longValue());
            case INT -> enc.writeInt(((Number) v).intValue());
            case DOUBLE -> enc.writeDouble(((Number) v).doubleValue() + 0.0); // -0.0 + 0.0 is 0.0: JSON's -0.0 and 0 are one number
            case FLOAT -> enc.writeFloat(((Number) v).floatValue() + 0.0f);
            case BOOLEAN -> enc.writeBoolean((Boolean) v);
            case NULL -> enc.writeNull();
            case BYTES -> enc.writeBytes(((ByteBuffer) v).duplicate());
            case FIXED -> enc.writeFixed(((org.apache.avro.generic.GenericFixed) v).bytes());
        }
    }
}
