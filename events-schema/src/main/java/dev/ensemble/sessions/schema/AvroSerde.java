package dev.ensemble.sessions.schema;

import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The one Kafka serde of every Avro record: Avro single-object encoding (marker {@code C3 01}, the writer
 * schema's 64-bit CRC-64-AVRO fingerprint, then the binary body). Decoding resolves the writer schema among
 * the current one and every version shipped in {@link SchemaHistory}, and reads it into the current class.
 * A deployment with a schema registry swaps this one class.
 *
 * <p>Errors: bytes that are not single-object encoded, or whose fingerprint is of no known version, raise
 * {@link SerializationException} with the reason; Kafka Streams then sends the record to the dead-letter
 * topic.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {
    private final Class<T> type;
    private final BinaryMessageEncoder<T> encoder;
    private final BinaryMessageDecoder<T> decoder;

    private AvroSerde(Class<T> type) {
        this.type = type;
        SpecificData model = SpecificData.getForClass(type);
        Schema current = model.getSchema(type);
        this.encoder = new BinaryMessageEncoder<>(model, current);
        this.decoder = new BinaryMessageDecoder<>(model, current);
        for (Schema old : SchemaHistory.versionsOf(current.getFullName())) {
            decoder.addSchema(old);
        }
    }

    /** A serde for the generated class {@code type}. */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
        return new AvroSerde<>(type);
    }

    /** Makes a writer schema known to this serde's decoder (for a version newer than the shipped ones). */
    public AvroSerde<T> withWriterSchema(Schema writer) {
        decoder.addSchema(writer);
        return this;
    }

    /** Single-object encodes {@code value}; null stays null (a tombstone). */
    public byte[] encode(T value) {
        if (value == null) {
            return null;
        }
        try {
            ByteBuffer buf = encoder.encode(value);
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        } catch (IOException | AvroRuntimeException e) {
            throw new SerializationException("cannot encode " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /** Decodes single-object-encoded bytes; null stays null. */
    public T decode(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        try {
            return decoder.decode(bytes);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode " + type.getSimpleName() + " (" + bytes.length
                    + " bytes): " + e.getMessage(), e);
        }
    }

    @Override
    public Serializer<T> serializer() {
        return (topic, value) -> encode(value);
    }

    @Override
    public Deserializer<T> deserializer() {
        return (topic, bytes) -> decode(bytes);
    }
}
