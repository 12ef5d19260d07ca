package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Event;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.UUID;

/**
 * Builds the envelope of every event this computer writes (DESIGN.md section 3): the account from the config,
 * {@code space = local:<computerId>}, {@code source = computer:<computerId>}, {@code recordedAt} from the
 * importer's clock, and a deterministic event id.
 */
public final class EventFactory {
    private final ImportConfig config;

    public EventFactory(ImportConfig config) {
        this.config = config;
    }

    public String computerId() {
        return config.computerId();
    }

    /** The name-based (version 3) UUID of {@code name}: the same name always gives the same event id. */
    public static String eventId(String name) {
        byte[] md5 = MD5.get().digest(name.getBytes(StandardCharsets.UTF_8));
        md5[6] = (byte) ((md5[6] & 0x0f) | 0x30); // version 3, as UUID.nameUUIDFromBytes
        md5[8] = (byte) ((md5[8] & 0x3f) | 0x80); // IETF variant
        long msb = 0;
        long lsb = 0;
        for (int i = 0; i < 8; i++) {
            msb = (msb << 8) | (md5[i] & 0xff);
            lsb = (lsb << 8) | (md5[i + 8] & 0xff);
        }
        return new UUID(msb, lsb).toString();
    }

    /** One MD5 digest a thread (looking one up for each event cost as much as the digest). */
    private static final ThreadLocal<MessageDigest> MD5 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new InternalError("MD5 not supported", e);
        }
    });

    /** An event with the id named by {@code idName}, occurring at {@code occurredAt} (truncated to milliseconds). */
    public Event event(String idName, Instant occurredAt, Object payload) {
        return Event.newBuilder()
                .setEventId(eventId(idName))
                .setAccount(config.account())
                .setSpace("local:" + config.computerId())
                .setSource("computer:" + config.computerId())
                .setOccurredAt(occurredAt.truncatedTo(ChronoUnit.MILLIS))
                .setRecordedAt(config.clock().instant().truncatedTo(ChronoUnit.MILLIS))
                .setPayload(payload)
                .build();
    }

    /**
     * This computer's status, now: online or not, and what it can do ({@code sessionDelete: 1}, guide section 6).
     * The id is named by the computer, the state and the clock's millisecond, so a retried send is one event.
     */
    Event computerStatus(boolean online, Map<String, Integer> capabilities) {
        Instant now = config.clock().instant().truncatedTo(ChronoUnit.MILLIS);
        return event("computer-status/" + config.computerId() + "/" + online + "/" + now.toEpochMilli(), now,
                ComputerStatus.newBuilder().setComputerId(config.computerId()).setOnline(online)
                        .setCapabilities(capabilities).build());
    }
}
