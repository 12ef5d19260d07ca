package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serde;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;

/**
 * What a session's engine events and its runs' status reports change of it (guide §1: the agent session id, the fill,
 * the time it was last active, how many of its runs are going), kept apart from the session's runs and tasks so that an
 * engine event or a status report, most of the log, rewrites this small record (and a status report its run's
 * {@link RunRecord}) and not the whole {@link SessionView} ({@link StoreNames#SESSION_FILLS}). The view is assembled
 * from both and the runs' records when it is read or published ({@link SessionAssembly}).
 *
 * @param agentSessionId the newest engine event's agent session id
 * @param agentSessionAt its occurredAt (ms precision, as the log's)
 * @param contextUsed    tokens of the context in use, null when not reported
 * @param contextSize    the context window in tokens, null when not reported
 * @param model          the model the newest engine event named, or null: then the stored view's model holds
 * @param lastActiveAt   the session's last active time: the latest occurredAt of its engine events, claims and status
 *                       reports applied (the stored view's own is never later)
 * @param changes        how many engine events and status reports changed the session: they count in its view's
 *                       {@code sequence}
 * @param working        how many of its runs are working
 * @param waiting        how many are waiting
 * @param queued         how many are queued (a claim while any of the three is above 0 is queued, guide §1)
 */
public record SessionFill(String agentSessionId, Instant agentSessionAt, Long contextUsed, Long contextSize, String model,
                   Instant lastActiveAt, long changes, int working, int waiting, int queued) {

    /** A fill without run counts (a record from before they were kept): {@link SessionStore} counts them once. */
    static final int NOT_COUNTED = -1;

    /** The fill of a new session: nothing reported, last active {@code at}, no runs yet. */
    static SessionFill started(Instant at) {
        return new SessionFill(null, null, null, null, null, at, 0, 0, 0, 0);
    }

    /**
     * The fill of a session as its stored view holds it (before its first fill record: no changes counted apart), with
     * the runs counted from {@code progress} (each run's, in the view's order).
     */
    static SessionFill of(SessionView s, List<RunProgress> progress) {
        return new SessionFill(s.getAgentSessionId(), s.getAgentSessionAt(), s.getContextUsed(), s.getContextSize(), null,
                s.getLastActiveAt(), 0, 0, 0, 0).counted(progress);
    }

    /** This fill with its runs counted from {@code progress}. */
    SessionFill counted(List<RunProgress> progress) {
        int w = 0, wt = 0, q = 0;
        for (RunProgress p : progress) {
            w += p.status().equals(RunStatus.WORKING.name()) ? 1 : 0;
            wt += p.status().equals(RunStatus.WAITING.name()) ? 1 : 0;
            q += p.status().equals(RunStatus.QUEUED.name()) ? 1 : 0;
        }
        return new SessionFill(agentSessionId, agentSessionAt, contextUsed, contextSize, model, lastActiveAt, changes, w, wt, q);
    }

    /** Whether its runs are counted ({@link #NOT_COUNTED}: a record from before). */
    boolean isCounted() {
        return working >= 0;
    }

    /** Whether a run of the session is going (working, waiting or queued). */
    boolean going() {
        return working + waiting + queued > 0;
    }

    /** One run gone from status {@code from} to {@code to} ({@code RunStatus} names; null: a run claimed). */
    SessionFill runStatus(String from, String to) {
        int w = working + delta(RunStatus.WORKING, from, to);
        int wt = waiting + delta(RunStatus.WAITING, from, to);
        int q = queued + delta(RunStatus.QUEUED, from, to);
        return new SessionFill(agentSessionId, agentSessionAt, contextUsed, contextSize, model, lastActiveAt, changes, w, wt, q);
    }

    private static int delta(RunStatus s, String from, String to) {
        return (s.name().equals(to) ? 1 : 0) - (s.name().equals(from) ? 1 : 0);
    }

    /** Active at {@code at} (the later of it and the time held), and {@code changes} more changes counted. */
    SessionFill touched(Instant at, int moreChanges) {
        Instant last = lastActiveAt != null && !lastActiveAt.isBefore(at) ? lastActiveAt : at;
        return new SessionFill(agentSessionId, agentSessionAt, contextUsed, contextSize, model, last, changes + moreChanges,
                working, waiting, queued);
    }

    /** Without a model of its own (a claim named one: the stored view's holds). */
    SessionFill withoutModel() {
        return new SessionFill(agentSessionId, agentSessionAt, contextUsed, contextSize, null, lastActiveAt, changes,
                working, waiting, queued);
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

    /**
     * Its bytes in the store and changelog: a version byte (2), then the fields (strings as UTF-8 with their length), the
     * run counts last. Version 1 (without the counts) is still read: {@link #NOT_COUNTED}.
     */
    static final Serde<SessionFill> SERDE = StoreBytes.serde(SessionFill::encode, SessionFill::decode);

    private byte[] encode() {
        byte[] id = StoreBytes.utf8(agentSessionId);
        byte[] modelBytes = StoreBytes.utf8(model);
        ByteBuffer b = ByteBuffer.allocate(1 + 1 + 4 + id.length + 8 + 8 + 8 + 4 + modelBytes.length + 8 + 8 + 12);
        int nulls = (agentSessionId == null ? 1 : 0) | (agentSessionAt == null ? 2 : 0) | (contextUsed == null ? 4 : 0)
                | (contextSize == null ? 8 : 0) | (model == null ? 16 : 0) | (lastActiveAt == null ? 32 : 0);
        b.put((byte) 2).put((byte) nulls);
        b.putInt(id.length).put(id);
        b.putLong(agentSessionAt == null ? 0 : agentSessionAt.toEpochMilli());
        b.putLong(contextUsed == null ? 0 : contextUsed);
        b.putLong(contextSize == null ? 0 : contextSize);
        b.putInt(modelBytes.length).put(modelBytes);
        b.putLong(lastActiveAt == null ? 0 : lastActiveAt.toEpochMilli());
        b.putLong(changes);
        b.putInt(working).putInt(waiting).putInt(queued);
        return b.array();
    }

    private static SessionFill decode(byte[] data) {
        boolean counted = data.length == 0 || data[0] != 1;
        ByteBuffer b = StoreBytes.open(data, counted ? 2 : 1, "session fill");
        int nulls = b.get();
        String id = StoreBytes.string(b);
        long at = b.getLong();
        long used = b.getLong();
        long size = b.getLong();
        String model = StoreBytes.string(b);
        long last = b.getLong();
        long changes = b.getLong();
        int working = counted ? b.getInt() : NOT_COUNTED;
        int waiting = counted ? b.getInt() : NOT_COUNTED;
        int queued = counted ? b.getInt() : NOT_COUNTED;
        return new SessionFill((nulls & 1) != 0 ? null : id, (nulls & 2) != 0 ? null : Instant.ofEpochMilli(at),
                (nulls & 4) != 0 ? null : used, (nulls & 8) != 0 ? null : size, (nulls & 16) != 0 ? null : model,
                (nulls & 32) != 0 ? null : Instant.ofEpochMilli(last), changes, working, waiting, queued);
    }
}
