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
 *       or first engine event;</li>
 *   <li>{@link #progress()}: its status, times and end report ({@link RunProgress}), written by the chains from its
 *       claim on; null before, and in a record written before runs had a progress of their own (then its session's
 *       view holds it).</li>
 * </ul>
 * Each part is decoded when it is first asked for, and a part never asked for is written back as the bytes it was
 * read from: the chains read a run's session and progress, the intake its eventIds and facts.
 * Mutable: a reader changes the record it read and puts it back.
 */
final class RunRecord {
    private String sessionId;
    private AppliedEvents.RunEventIds eventIds;
    private RunFacts facts;
    private RunProgress progress;
    /** The bytes read (version 2), and where each part not decoded yet lies in them (length -1: absent). */
    private byte[] raw;
    private int idsAt, idsLength = -1, factsAt, factsLength = -1, progressAt, progressLength = -1;

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
        if (eventIds == null) {
            eventIds = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize(null,
                    java.util.Arrays.copyOfRange(raw, idsAt, idsAt + idsLength));
            idsLength = -1;
        }
        return eventIds;
    }

    /** The run's facts, or null before its claim or first engine event. */
    RunFacts facts() {
        if (factsLength >= 0) {
            facts = decodeFacts(ByteBuffer.wrap(raw, factsAt, factsLength));
            factsLength = -1;
        }
        return facts;
    }

    void setFacts(RunFacts facts) {
        this.facts = facts;
        factsLength = -1;
    }

    /** The run's status, times and end report; null before the chains applied its claim, or in a record from before. */
    RunProgress progress() {
        if (progressLength >= 0) {
            progress = RunProgress.decode(ByteBuffer.wrap(raw, progressAt, progressLength));
            progressLength = -1;
        }
        return progress;
    }

    void setProgress(RunProgress progress) {
        this.progress = progress;
        progressLength = -1;
    }

    /**
     * Its bytes in the store and changelog: a version byte (2), a byte of flags (1: a session id, 2: facts, 4: progress),
     * the session id, then each part after its length (an int): the eventIds ({@link AppliedEvents.RunEventIds#SERDE}'s
     * bytes), the facts (run id, task id, sourceRef, kind, keepDays, nextRunAt, claimedAt, agent session ids), the
     * progress ({@link RunProgress#encode}). Strings as UTF-8 after their length (-1: null); times as epoch ms (ms
     * precision, as the log's). Version 1 (before progress; the facts without their length) is still read.
     */
    static final Serde<RunRecord> SERDE = StoreBytes.serde(RunRecord::encode, RunRecord::decode);

    private byte[] encode() {
        boolean hasFacts = factsLength >= 0 || facts != null;
        boolean hasProgress = progressLength >= 0 || progress != null;
        Out out = new Out(128);
        out.b.put((byte) 2).put((byte) ((sessionId != null ? 1 : 0) | (hasFacts ? 2 : 0) | (hasProgress ? 4 : 0)));
        if (sessionId != null) {
            out.string(sessionId);
        }
        if (eventIds == null) {
            out.part(raw, idsAt, idsLength);
        } else {
            byte[] ids = AppliedEvents.RunEventIds.SERDE.serializer().serialize(null, eventIds);
            out.part(ids, 0, ids.length);
        }
        if (factsLength >= 0) {
            out.part(raw, factsAt, factsLength);
        } else if (facts != null) {
            Out f = new Out(64);
            encodeFacts(facts, f);
            out.part(f.b.array(), 0, f.b.position());
        }
        if (progressLength >= 0) {
            out.part(raw, progressAt, progressLength);
        } else if (progress != null) {
            byte[] p = progress.encode();
            out.part(p, 0, p.length);
        }
        return java.util.Arrays.copyOf(out.b.array(), out.b.position());
    }

    private static void encodeFacts(RunFacts f, Out out) {
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

    /**
     * Reads the flags, the session id and where each part lies; the parts are decoded when first asked for. A record cut
     * short or with bytes after its last part fails here, when it is read, not later where a part is first asked for.
     */
    private static RunRecord decode(byte[] bytes) {
        if (bytes.length > 0 && bytes[0] == 1) {
            return decodeVersion1(bytes);
        }
        try {
            ByteBuffer b = StoreBytes.open(bytes, 2, "run record");
            int flags = b.get();
            RunRecord r = new RunRecord((flags & 1) != 0 ? StoreBytes.string(b) : null, null, null);
            r.raw = bytes;
            r.idsLength = b.getInt();
            r.idsAt = part(b, r.idsLength, "eventIds");
            if ((flags & 2) != 0) {
                r.factsLength = b.getInt();
                r.factsAt = part(b, r.factsLength, "facts");
            }
            if ((flags & 4) != 0) {
                r.progressLength = b.getInt();
                r.progressAt = part(b, r.progressLength, "progress");
            }
            if (b.hasRemaining()) {
                throw new IllegalArgumentException("run record: " + b.remaining() + " bytes after its last part, in a record of " + bytes.length);
            }
            return r;
        } catch (java.nio.BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("run record: cut short (" + bytes.length + " bytes)", e);
        }
    }

    /** Where the part of {@code length} bytes at {@code b}'s position starts; {@code b} moves past it. */
    private static int part(ByteBuffer b, int length, String what) {
        int at = b.position();
        if (length < 0 || length > b.remaining()) {
            throw new IllegalArgumentException("run record: " + what + " of " + length + " bytes at byte " + at + " of a record of " + b.limit());
        }
        b.position(at + length);
        return at;
    }

    /** A record written before runs had a progress of their own: decoded whole. */
    private static RunRecord decodeVersion1(byte[] bytes) {
        ByteBuffer b = StoreBytes.open(bytes, 1, "run record");
        int flags = b.get();
        String sessionId = (flags & 1) != 0 ? StoreBytes.string(b) : null;
        byte[] ids = new byte[b.getInt()];
        b.get(ids);
        AppliedEvents.RunEventIds eventIds = AppliedEvents.RunEventIds.SERDE.deserializer().deserialize(null, ids);
        RunFacts facts = (flags & 2) != 0 ? decodeFacts(b) : null;
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

        /** {@code n} bytes of {@code from} at {@code at}, after their length. */
        void part(byte[] from, int at, int n) {
            room(4 + n);
            b.putInt(n).put(from, at, n);
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
