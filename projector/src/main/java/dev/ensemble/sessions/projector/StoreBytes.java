package dev.ensemble.sessions.projector;

import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * What the projector's hand-encoded store records ({@link SessionFill}, {@link RunRecord}, {@link RetirementDigest},
 * {@link AppliedEvents.RunEventIds}) share: a serde that keeps null as null, a version byte first, and strings as
 * their UTF-8 bytes after their length (an int; -1 for null).
 */
final class StoreBytes {
    private StoreBytes() {
    }

    /** The serde of {@code encode} and {@code decode}; a null value is null bytes, and back. */
    static <T> Serde<T> serde(Function<T, byte[]> encode, Function<byte[], T> decode) {
        return Serdes.serdeFrom((Serializer<T>) (topic, v) -> v == null ? null : encode.apply(v),
                (Deserializer<T>) (topic, bytes) -> bytes == null ? null : decode.apply(bytes));
    }

    /**
     * {@code data} to read past its first byte, the version; IllegalArgumentException naming {@code what} when that is
     * not {@code version}.
     */
    static ByteBuffer open(byte[] data, int version, String what) {
        ByteBuffer b = ByteBuffer.wrap(data);
        if (data.length == 0 || b.get() != version) {
            throw new IllegalArgumentException("unknown " + what + " version " + (data.length == 0 ? "(empty)" : data[0]));
        }
        return b;
    }

    /** The UTF-8 bytes of {@code s}; none for null. */
    static byte[] utf8(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    /** A string written as its UTF-8 length (an int; negative: null) and bytes. */
    static String string(ByteBuffer b) {
        int n = b.getInt();
        if (n < 0) {
            return null;
        }
        String s = new String(b.array(), b.arrayOffset() + b.position(), n, StandardCharsets.UTF_8);
        b.position(b.position() + n);
        return s;
    }
}
