package dev.ensemble.sessions.schema;

import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one Kafka serde of every Avro record: Avro single-object encoding (marker {@code C3 01}, the writer
 * schema's 64-bit CRC-64-AVRO fingerprint, then the binary body). Decoding resolves the writer schema among
 * the current one and every version shipped in {@link SchemaHistory}, and reads it into the current class.
 * A deployment with a schema registry swaps this one class. The body is written and read with Avro's buffered binary
 * encoder and decoder over the bytes themselves (Avro's message classes go through a stream a byte at a time); the
 * bytes are the same. Every record is written by its generated custom encoder ({@code customEncode}, generated also for
 * timestamp-millis fields: events-schema/src/main/avro-templates), two to three times faster than Avro's generic writer,
 * with the same bytes; an {@link dev.ensemble.sessions.events.Event}, whose union of payloads has none, by the generic
 * writer up to its payload and the payload's own encoder from there. A value that cannot be written is refused with the
 * generic writer's reason, which names the field (the gateway tells it to the event's sender).
 *
 * <p>Errors: bytes that are not single-object encoded, or whose fingerprint is of no known version, raise
 * {@link SerializationException} with the reason; Kafka Streams then sends the record to the dead-letter
 * topic.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {
    /** The single-object encoding's marker, before the 8-byte little-endian fingerprint. */
    private static final byte MARKER_0 = (byte) 0xC3;
    private static final byte MARKER_1 = (byte) 0x01;
    private static final int HEADER_BYTES = 10;
    /** A thread's encoding buffer is kept for its next encoding up to this size. */
    private static final int KEPT_BUFFER_BYTES = 1 << 20;
    private static final ThreadLocal<BinaryDecoder> DECODER = new ThreadLocal<>();
    private static final ThreadLocal<BinaryEncoder> ENCODER = new ThreadLocal<>();
    private static final ThreadLocal<Buffer> BUFFER = ThreadLocal.withInitial(Buffer::new);

    private final Class<T> type;
    private final SpecificData model;
    private final Schema current;
    private final byte[] header;
    private final DatumWriter<T> writer;
    /** Readers into the current class by the writer schema's fingerprint. */
    private final Map<Long, DatumReader<T>> readers = new ConcurrentHashMap<>();

    @SuppressWarnings("unchecked")
    private AvroSerde(Class<T> type) {
        this.type = type;
        this.model = SpecificData.getForClass(type);
        this.current = model.getSchema(type);
        this.header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN)
                .put(MARKER_0).put(MARKER_1).putLong(SchemaHistory.fingerprint(current)).array();
        this.writer = (DatumWriter<T>) writerModel(type, model).createDatumWriter(current);
        withWriterSchema(current);
        for (Schema old : SchemaHistory.versionsOf(current.getFullName())) {
            withWriterSchema(old);
        }
    }

    /**
     * The model {@code type} is written with: its own conversions, and the generated custom encoders on (off by default in
     * Avro: {@code org.apache.avro.specific.use_custom_coders}).
     */
    private static SpecificData writerModel(Class<?> type, SpecificData model) {
        SpecificData custom = new SpecificData(type.getClassLoader());
        for (org.apache.avro.Conversion<?> c : model.getConversions()) { // the class's own, for a record without custom coders
            custom.addLogicalTypeConversion(c);
        }
        custom.setCustomCoders(true);
        return custom;
    }

    /** Whether this serde writes with the generated custom encoders (for tests). */
    boolean writesWithCustomCoders() {
        return writer instanceof org.apache.avro.specific.SpecificDatumWriter<T> w && w.getSpecificData().useCustomCoders();
    }

    /** A serde for the generated class {@code type}. */
    public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
        return new AvroSerde<>(type);
    }

    /** Makes a writer schema known to this serde's decoder (for a version newer than the shipped ones). */
    @SuppressWarnings("unchecked")
    public AvroSerde<T> withWriterSchema(Schema writer) {
        readers.putIfAbsent(SchemaHistory.fingerprint(writer), (DatumReader<T>) model.createDatumReader(writer, current));
        return this;
    }

    /**
     * Single-object encodes {@code value}; null stays null (a tombstone). A value the schema cannot hold (a required
     * field null, an instant whose epoch milliseconds overflow a long, ...) raises {@link SerializationException} with
     * the reason; the thread's encoder and buffer, which then hold part of the failed write, are dropped with it, so a
     * failed encoding never puts a byte into another record.
     */
    public byte[] encode(T value) {
        if (value == null) {
            return null;
        }
        Buffer out = BUFFER.get();
        out.reset();
        boolean written = false;
        try {
            out.write(header);
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, ENCODER.get());
            ENCODER.set(encoder);
            writer.write(value, encoder);
            encoder.flush();
            written = true;
            return out.toByteArray();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot encode " + type.getSimpleName() + ": " + reason(value, e), e);
        } finally {
            if (!written) {
                // the encoder's own buffer holds the failed write's bytes, and reusing it would flush them ahead of the next record
                ENCODER.remove();
                BUFFER.remove();
            } else if (out.capacity() > KEPT_BUFFER_BYTES) {
                BUFFER.remove();
            }
        }
    }

    /**
     * Why {@code value} could not be written: Avro's generic writer's reason, which names the field (a custom encoder's
     * exception does not: a NullPointerException of the JDK's), or {@code failure}'s own message.
     */
    private String reason(T value, Exception failure) {
        try {
            model.createDatumWriter(current).write(value, EncoderFactory.get().binaryEncoder(OutputStream.nullOutputStream(), null));
        } catch (IOException | RuntimeException generic) {
            return generic.getMessage();
        }
        return failure.getMessage();
    }

    /** Decodes single-object-encoded bytes; null stays null. */
    public T decode(byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        try {
            if (bytes.length < HEADER_BYTES || bytes[0] != MARKER_0 || bytes[1] != MARKER_1) {
                throw new IOException("not Avro single-object encoded (no C3 01 marker and fingerprint)");
            }
            long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            DatumReader<T> reader = readers.get(fingerprint);
            if (reader == null) {
                throw new IOException("no known schema of " + current.getFullName() + " has the fingerprint " + Long.toHexString(fingerprint));
            }
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(bytes, HEADER_BYTES, bytes.length - HEADER_BYTES, DECODER.get());
            DECODER.set(decoder);
            return reader.read(null, decoder);
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot decode " + type.getSimpleName() + " (" + bytes.length
                    + " bytes): " + e.getMessage(), e);
        }
    }

    /** A byte stream whose buffer is reused by the thread's next encoding. */
    private static final class Buffer extends ByteArrayOutputStream {
        Buffer() {
            super(512);
        }

        int capacity() {
            return buf.length;
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
