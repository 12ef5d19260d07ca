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
 * Mutable: a reader changes the record it read and puts it back. Its eventIds and facts are decoded when first asked
 * for, and written back as read when untouched.
 */
final class RunRecord {
    private String sessionId;
    private AppliedEvents.RunEventIds eventIds;
    private RunFacts facts;
    /**
     * The record's bytes as read, while a part is not decoded yet: an event about a run mostly needs its session alone
     * (the chains) or its eventIds alone (the intake), so each part is decoded when it is first asked for, and an
     * untouched part is written back as the bytes it was read from.
     */
    private final byte[] read;
    private int idsAt = -1;
    private int idsLength;
    private int factsAt = -1;

    RunRecord() {
        this.eventIds = new AppliedEvents.RunEventIds();
        this.read = null;
    }

    private RunRecord(String sessionId, byte[] read, int idsAt, int idsLength, int factsAt) {
        this.sessionId = sessionId;
        this.read = read;
        this.idsAt = idsAt;
        this.idsLength = idsLength;
        this.factsAt = factsAt;
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
        if (eventIds == null) {
            eventIds = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize(null,
                    java.util.Arrays.copyOfRange(read, idsAt, idsAt + idsLength));
            idsAt = -1;
        }
        return eventIds;
    }

    /** The run's facts, or null before its claim or first engine event. */
    RunFacts facts() {
        if (factsAt >= 0) {
            facts = decodeFacts(ByteBuffer.wrap(read, factsAt, read.length - factsAt));
            factsAt = -1;
        }
        return facts;
    }

    void setFacts(RunFacts facts) {
        this.facts = facts;
        this.factsAt = -1;
    }

    /**
     * Its bytes in the store and changelog: a version byte (1), a byte of flags (1: a session id, 2: facts), the session
     * id, the eventIds ({@link AppliedEvents.RunEventIds#SERDE}'s bytes, after their length), then the facts: run id,
     * task id, sourceRef, kind, keepDays, nextRunAt, claimedAt, agent session ids. Strings as UTF-8 after their length
     * (-1: null); times as epoch ms (ms precision, as the log's).
     */
    static final Serde<RunRecord> SERDE = StoreBytes.serde(RunRecord::encode, RunRecord::decode);

    private byte[] encode() {
        boolean hasFacts = factsAt >= 0 || facts != null;
        Out out;
        if (idsAt >= 0) {
            out = new Out(64 + idsLength);
            head(out, hasFacts);
            out.room(4 + idsLength);
            out.b.putInt(idsLength).put(read, idsAt, idsLength);
        } else {
            byte[] ids = AppliedEvents.RunEventIds.SERDE.serializer().serialize(null, eventIds);
            out = new Out(64 + ids.length);
            head(out, hasFacts);
            out.room(4 + ids.length);
            out.b.putInt(ids.length).put(ids);
        }
        if (factsAt >= 0) {
            out.room(read.length - factsAt);
            out.b.put(read, factsAt, read.length - factsAt);
        } else if (facts != null) {
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

    private void head(Out out, boolean hasFacts) {
        out.b.put((byte) 1).put((byte) ((sessionId != null ? 1 : 0) | (hasFacts ? 2 : 0)));
        if (sessionId != null) {
            out.string(sessionId);
        }
    }

    /** Reads the flags and the session id; the eventIds and facts are decoded when first asked for. */
    private static RunRecord decode(byte[] bytes) {
        ByteBuffer b = StoreBytes.open(bytes, 1, "run record");
        int flags = b.get();
        String sessionId = (flags & 1) != 0 ? StoreBytes.string(b) : null;
        int idsLength = b.getInt();
        int idsAt = b.position();
        int factsAt = (flags & 2) != 0 ? idsAt + idsLength : -1;
        if (idsLength < 0 || idsAt + idsLength > bytes.length) {
            throw new IllegalArgumentException("run record: eventIds of " + idsLength + " bytes in a record of " + bytes.length);
        }
        int end = factsAt >= 0 ? factsEnd(bytes, factsAt) : idsAt + idsLength;
        if (end != bytes.length) {
            throw new IllegalArgumentException("run record: " + (factsAt >= 0 ? "facts" : "eventIds") + " end at byte " + end
                    + " of a record of " + bytes.length);
        }
        return new RunRecord(sessionId, bytes, idsAt, idsLength, factsAt);
    }

    /**
     * Where the facts starting at {@code at} end, found from their lengths alone (nothing decoded), so that a damaged
     * record fails when it is read, not later where its facts are first asked for.
     */
    private static int factsEnd(byte[] bytes, int at) {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes, at, bytes.length - at);
            for (int i = 0; i < 4; i++) {
                skipString(b); // run id, task id, sourceRef, kind
            }
            b.position(b.position() + 1 + 4 + 1 + 8 + 8); // keepDays, nextRunAt, claimedAt
            int n = b.getInt();
            if (n < 0) {
                throw new IllegalArgumentException("run record: " + n + " agent session ids");
            }
            for (int i = 0; i < n; i++) {
                skipString(b);
            }
            return b.position();
        } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
            throw new IllegalArgumentException("run record: its facts are cut short (" + bytes.length + " bytes)", e);
        }
    }

    private static void skipString(ByteBuffer b) {
        int n = b.getInt();
        if (n > 0) {
            b.position(b.position() + n); // IllegalArgumentException past the end
        }
    }

    private static RunFacts decodeFacts(ByteBuffer b) {
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
        return RunFacts.newBuilder().setRunId(runId).setTaskId(taskId).setSourceRef(sourceRef).setKind(kind).setKeepDays(keepDays)
                .setNextRunAt(nextRunAt).setAgentSessionIds(agentSessionIds).setClaimedAt(claimedAt).build();
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
