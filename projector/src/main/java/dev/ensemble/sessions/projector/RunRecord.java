package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.views.RunFacts;
import org.apache.kafka.common.serialization.Serde;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything the projector keeps of one run, in one record of its own key {@code <account>/<runId>}
 * ({@link StoreNames#RUNS}), since the events that change it are the same: the run's claim, status reports and engine
 * events. An event about a run reads and writes this one entry instead of three stores.
 *
 * <ul>
 *   <li>{@link #eventIds()}: the eventIds applied for the run, in arrival order ({@link AppliedEvents});</li>
 *   <li>{@link #sessionId()}: the session the chains put the run in when they applied its claim; null while the run
 *       is not claimed or its claim is parked ({@link SessionChainRules});</li>
 *   <li>{@link #facts()}: what the deletion workflow and the retirement rules read of the run (agent session ids,
 *       keepDays, nextRunAt, sourceRef, task, kind, claim time), folded by the event intake; null before its claim
 *       or first engine event.</li>
 * </ul>
 * Mutable: a reader changes the record it read and puts it back.
 */
final class RunRecord {
    private String sessionId;
    private final AppliedEvents.RunEventIds eventIds;
    private RunFacts facts;

    RunRecord() {
        this(null, new AppliedEvents.RunEventIds(), null);
    }

    private RunRecord(String sessionId, AppliedEvents.RunEventIds eventIds, RunFacts facts) {
        this.sessionId = sessionId;
        this.eventIds = eventIds;
        this.facts = facts;
    }

    /** The run's session, or null while its claim is not applied. */
    String sessionId() {
        return sessionId;
    }

    void setSessionId(String sessionId) {
        this.sessionId = sessionId;
    }

    /** The eventIds applied for the run (changed in place). */
    AppliedEvents.RunEventIds eventIds() {
        return eventIds;
    }

    /** The run's facts, or null before its claim or first engine event. */
    RunFacts facts() {
        return facts;
    }

    void setFacts(RunFacts facts) {
        this.facts = facts;
    }

    /**
     * Its bytes in the store and changelog: a version byte (1), a byte of flags (1: a session id, 2: facts), the session
     * id, the eventIds ({@link AppliedEvents.RunEventIds#SERDE}'s bytes, after their length), then the facts: run id,
     * task id, sourceRef, kind, keepDays, nextRunAt, claimedAt, agent session ids. Strings as UTF-8 after their length
     * (-1: null); times as epoch ms (ms precision, as the log's).
     */
    static final Serde<RunRecord> SERDE = StoreBytes.serde(RunRecord::encode, RunRecord::decode);

    private byte[] encode() {
        byte[] ids = AppliedEvents.RunEventIds.SERDE.serializer().serialize(null, eventIds);
        Out out = new Out(64 + ids.length);
        out.b.put((byte) 1).put((byte) ((sessionId != null ? 1 : 0) | (facts != null ? 2 : 0)));
        if (sessionId != null) {
            out.string(sessionId);
        }
        out.room(4 + ids.length);
        out.b.putInt(ids.length).put(ids);
        if (facts != null) {
            RunFacts f = facts;
            out.string(f.getRunId());
            out.string(f.getTaskId());
            out.string(f.getSourceRef());
            out.string(f.getKind());
            out.room(1 + 4 + 1 + 8 + 8 + 4);
            out.b.put((byte) (f.getKeepDays() != null ? 1 : 0)).putInt(f.getKeepDays() == null ? 0 : f.getKeepDays());
            out.b.put((byte) (f.getNextRunAt() != null ? 1 : 0)).putLong(f.getNextRunAt() == null ? 0 : f.getNextRunAt().toEpochMilli());
            out.b.putLong(f.getClaimedAt().toEpochMilli());
            out.b.putInt(f.getAgentSessionIds().size());
            for (String id : f.getAgentSessionIds()) {
                out.string(id);
            }
        }
        return java.util.Arrays.copyOf(out.b.array(), out.b.position());
    }

    private static RunRecord decode(byte[] bytes) {
        ByteBuffer b = StoreBytes.open(bytes, 1, "run record");
        int flags = b.get();
        String sessionId = (flags & 1) != 0 ? StoreBytes.string(b) : null;
        byte[] ids = new byte[b.getInt()];
        b.get(ids);
        AppliedEvents.RunEventIds eventIds = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize(null, ids);
        RunFacts facts = null;
        if ((flags & 2) != 0) {
            String runId = StoreBytes.string(b);
            String taskId = StoreBytes.string(b);
            String sourceRef = StoreBytes.string(b);
            String kind = StoreBytes.string(b);
            boolean hasKeepDays = b.get() != 0;
            int keepDaysValue = b.getInt();
            Integer keepDays = hasKeepDays ? Integer.valueOf(keepDaysValue) : null;
            boolean hasNextRunAt = b.get() != 0;
            long nextRunAtMs = b.getLong();
            Instant nextRunAt = hasNextRunAt ? Instant.ofEpochMilli(nextRunAtMs) : null;
            Instant claimedAt = Instant.ofEpochMilli(b.getLong());
            int n = b.getInt();
            List<String> agentSessionIds = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                agentSessionIds.add(StoreBytes.string(b));
            }
            facts = RunFacts.newBuilder().setRunId(runId).setTaskId(taskId).setSourceRef(sourceRef).setKind(kind).setKeepDays(keepDays)
                    .setNextRunAt(nextRunAt).setAgentSessionIds(agentSessionIds).setClaimedAt(claimedAt).build();
        }
        return new RunRecord(sessionId, eventIds, facts);
    }

    /** A growing buffer. */
    private static final class Out {
        ByteBuffer b;

        Out(int size) {
            b = ByteBuffer.allocate(size);
        }

        void room(int n) {
            if (b.remaining() < n) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(b.capacity() * 2, b.position() + n));
                bigger.put(b.array(), 0, b.position());
                b = bigger;
            }
        }

        void string(String s) {
            if (s == null) {
                room(4);
                b.putInt(-1);
                return;
            }
            byte[] u = s.getBytes(StandardCharsets.UTF_8);
            room(4 + u.length);
            b.putInt(u.length).put(u);
        }
    }
}
