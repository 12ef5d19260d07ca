package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.views.RetirementView;
import org.apache.kafka.common.serialization.Serde;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * What the retirement processor keeps of the newest retirement view it published for a session
 * ({@link StoreNames#RETIREMENT_DIGESTS}): its sequence and the SHA-256 of its Avro encoding with the sequence set to 0.
 * That is all the next evaluation needs (publish only a view that differs, with a higher sequence), so the store neither
 * holds nor decodes the whole view.
 *
 * @param sequence the published view's sequence
 * @param digest   32 bytes: {@link #of} of the published view
 */
record RetirementDigest(long sequence, byte[] digest) {
    private static final AvroSerde<RetirementView> VIEWS = AvroSerde.of(RetirementView.class);

    /**
     * The digest of {@code view} in every field but its sequence: SHA-256 of its Avro encoding with the sequence 0 (the
     * view's sequence is set back before it returns).
     */
    static byte[] of(RetirementView view) {
        long sequence = view.getSequence();
        view.setSequence(0L);
        try {
            return sha256().digest(VIEWS.encode(view));
        } finally {
            view.setSequence(sequence);
        }
    }

    /** Whether {@code digest} ({@link #of}) is this one's. */
    boolean sameAs(byte[] digest) {
        return Arrays.equals(this.digest, digest);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java platform", e);
        }
    }

    /** Its bytes in the store and changelog: a version byte (1), the sequence (8 bytes), the digest (32 bytes). */
    static final Serde<RetirementDigest> SERDE = StoreBytes.serde(
            d -> ByteBuffer.allocate(1 + 8 + d.digest.length).put((byte) 1).putLong(d.sequence).put(d.digest).array(),
            bytes -> {
                ByteBuffer b = StoreBytes.open(bytes, 1, "retirement digest");
                long sequence = b.getLong();
                byte[] digest = new byte[b.remaining()];
                b.get(digest);
                return new RetirementDigest(sequence, digest);
            });
}
