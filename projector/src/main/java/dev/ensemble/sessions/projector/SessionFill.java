package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serde;

import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * What the newest engine event of a session says (guide §1: the agent session id and the fill), kept apart from the
 * session's runs and tasks so that an engine event, most of the log, rewrites this small record and not the whole
 * {@link SessionView} ({@link StoreNames#SESSION_FILLS}). The view is assembled from both when it is read or published
 * ({@link #applyTo}).
 *
 * @param agentSessionId the newest engine event's agent session id
 * @param agentSessionAt its occurredAt (ms precision, as the log's)
 * @param contextUsed    tokens of the context in use, null when not reported
 * @param contextSize    the context window in tokens, null when not reported
 * @param model          the model the newest engine event named, or null: then the stored view's model holds
 * @param lastActiveAt   the latest occurredAt of the engine events applied
 * @param changes        how many engine events changed the session: they count in its view's {@code sequence}
 */
public record SessionFill(String agentSessionId, Instant agentSessionAt, Long contextUsed, Long contextSize, String model,
                   Instant lastActiveAt, long changes) {

    /** The fill of a session as its stored view holds it (before its first fill record: no changes counted apart). */
    static SessionFill of(SessionView s) {
        return new SessionFill(s.getAgentSessionId(), s.getAgentSessionAt(), s.getContextUsed(), s.getContextSize(), null,
                s.getLastActiveAt(), 0);
    }

    /** The fill's fraction (used / size), null when either is unknown or the size is 0. */
    Double fill() {
        return contextUsed != null && contextSize != null && contextSize > 0 ? (double) contextUsed / contextSize : null;
    }

    /**
     * The whole view: {@code stored} (as the session chains last wrote it, without this fill's changes counted in its
     * sequence) with this fill over it. Changes {@code stored} and returns it.
     */
    SessionView applyTo(SessionView stored) {
        if (agentSessionAt != null) {
            stored.setAgentSessionId(agentSessionId);
            stored.setAgentSessionAt(agentSessionAt);
            stored.setContextUsed(contextUsed);
            stored.setContextSize(contextSize);
            stored.setFill(fill());
        }
        if (model != null) {
            stored.setModel(model);
        }
        if (lastActiveAt != null && lastActiveAt.isAfter(stored.getLastActiveAt())) {
            stored.setLastActiveAt(lastActiveAt);
        }
        stored.setResumable(!stored.getDeleted() && !stored.getDeleting() && !stored.getGone() && stored.getAgentSessionId() != null);
        stored.setSequence(stored.getSequence() + changes);
        return stored;
    }

    /** Its bytes in the store and changelog: a version byte, then the fields (strings as UTF-8 with their length). */
    static final Serde<SessionFill> SERDE = StoreBytes.serde(SessionFill::encode, SessionFill::decode);

    private byte[] encode() {
        byte[] id = StoreBytes.utf8(agentSessionId);
        byte[] modelBytes = StoreBytes.utf8(model);
        ByteBuffer b = ByteBuffer.allocate(1 + 1 + 4 + id.length + 8 + 8 + 8 + 4 + modelBytes.length + 8 + 8);
        int nulls = (agentSessionId == null ? 1 : 0) | (agentSessionAt == null ? 2 : 0) | (contextUsed == null ? 4 : 0)
                | (contextSize == null ? 8 : 0) | (model == null ? 16 : 0) | (lastActiveAt == null ? 32 : 0);
        b.put((byte) 1).put((byte) nulls);
        b.putInt(id.length).put(id);
        b.putLong(agentSessionAt == null ? 0 : agentSessionAt.toEpochMilli());
        b.putLong(contextUsed == null ? 0 : contextUsed);
        b.putLong(contextSize == null ? 0 : contextSize);
        b.putInt(modelBytes.length).put(modelBytes);
        b.putLong(lastActiveAt == null ? 0 : lastActiveAt.toEpochMilli());
        b.putLong(changes);
        return b.array();
    }

    private static SessionFill decode(byte[] data) {
        ByteBuffer b = StoreBytes.open(data, 1, "session fill");
        int nulls = b.get();
        String id = StoreBytes.string(b);
        long at = b.getLong();
        long used = b.getLong();
        long size = b.getLong();
        String model = StoreBytes.string(b);
        long last = b.getLong();
        long changes = b.getLong();
        return new SessionFill((nulls & 1) != 0 ? null : id, (nulls & 2) != 0 ? null : Instant.ofEpochMilli(at),
                (nulls & 4) != 0 ? null : used, (nulls & 8) != 0 ? null : size, (nulls & 16) != 0 ? null : model,
                (nulls & 32) != 0 ? null : Instant.ofEpochMilli(last), changes);
    }
}
