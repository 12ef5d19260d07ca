package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.schema.Keys;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.charset.StandardCharsets;

/**
 * Which events the projector has applied, so that a second delivery of an eventId changes nothing (DESIGN.md §4,
 * issue "duplicated events change nothing"). Most events are about a run (its claim, its status reports, its
 * engine events): their ids are kept in the run's own record ({@link RunRecord}, store {@link StoreNames#RUNS}:
 * {@code <account>/<runId>} → the ids in arrival order, with the run's session and facts), written once per event with
 * the run's other changes, so that no event costs a store entry and a changelog record of its own. Every other event
 * (task changes, computer reports, deletion requests and decisions, session-choice records) has its own key in
 * {@link StoreNames#EVENT_IDS}.
 */
final class AppliedEvents {
    private final KeyValueStore<String, Long> byId;
    private final KeyValueStore<String, RunRecord> byRun;

    AppliedEvents(ProcessingContext context) {
        this.byId = context.getStateStore(StoreNames.EVENT_IDS);
        this.byRun = context.getStateStore(StoreNames.RUNS);
    }

    /** Whether {@code e}'s eventId was applied already. */
    boolean contains(Event e) {
        String run = runOf(e);
        if (run == null) {
            return byId.get(e.getEventId()) != null;
        }
        RunRecord r = byRun.get(Keys.of(e.getAccount(), run));
        return r != null && r.eventIds().contains(e.getEventId());
    }

    /** Records {@code e}'s eventId as applied. */
    void add(Event e) {
        NewId id = ifNew(e);
        if (id != null) {
            id.record();
        }
    }

    /**
     * The check of {@code e}'s eventId and its recording, with the run's record read (decoded) once for both: null when
     * it was applied already, else a {@link NewId} that records it ({@link NewId#record}) once the caller has taken the
     * event (after any check that may still refuse it, so that a refused event leaves nothing behind).
     */
    NewId ifNew(Event e) {
        String run = runOf(e);
        if (run == null) {
            return byId.get(e.getEventId()) != null ? null : new NewId(e, null, null);
        }
        String key = Keys.of(e.getAccount(), run);
        RunRecord r = byRun.get(key);
        if (r != null && r.eventIds().contains(e.getEventId())) {
            return null;
        }
        return new NewId(e, key, r);
    }

    /** An eventId found not applied yet ({@link #ifNew}). */
    final class NewId {
        private final Event event;
        private final String runKey;
        private RunRecord run;

        private NewId(Event event, String runKey, RunRecord run) {
            this.event = event;
            this.runKey = runKey;
            this.run = run;
        }

        /** Records the eventId as applied ({@link #take} and {@link #store} at once). */
        void record() {
            take(null);
            store();
        }

        /**
         * The first half of recording it: an event not about a run has its eventId written at once; for an event about
         * a run, the eventId is added and {@code change} (when not null) applied to the run's record in memory
         * ({@link #run}), written by {@link #store} once the session chains have changed it too.
         */
        void take(java.util.function.Consumer<RunRecord> change) {
            if (runKey == null) {
                byId.put(event.getEventId(), event.getOccurredAt().toEpochMilli());
                return;
            }
            if (run == null) {
                run = new RunRecord();
            }
            run.eventIds().append(event.getEventId());
            if (change != null) {
                change.accept(run);
            }
        }

        /** The second half: writes the run's record as taken and changed since (nothing for other events). */
        void store() {
            if (runKey != null) {
                byRun.put(runKey, run);
            }
        }

        /** The key of the run's record ({@code <account>/<runId>}), or null for an event not about a run. */
        String runKey() {
            return runKey;
        }

        /** The run's record as taken ({@link #take}), or null for an event not about a run. */
        RunRecord run() {
            return run;
        }
    }

    /** The run an event is about, or null. */
    static String runOf(Event e) {
        Object p = e.getPayload();
        if (p instanceof RunClaimed rc) {
            return rc.getRunId();
        }
        if (p instanceof RunStatusChanged rs) {
            return rs.getRunId();
        }
        if (p instanceof EngineEvent ee) {
            return ee.getRunId();
        }
        return null;
    }

    /**
     * The eventIds applied for one run, in arrival order, without repeats (part of its {@link RunRecord}). Held
     * compactly, since there is one for every run in the log: an id in the canonical UUID form (lowercase, as
     * {@link java.util.UUID#toString} writes it, and as every producer of the log makes them) as its two longs, any
     * other as its string; searched in order (a run has a claim, its status reports and engine events: usually under
     * twenty; each is read from the store once per event that is about the run, so an index beside the ids would be
     * built again for every event).
     */
    static final class RunEventIds {
        /** Per id: its UUID's two longs (when {@code other[i]} is null), or the id itself in {@code other[i]}. */
        private long[] bits = new long[16];
        private String[] other;
        private int size;

        boolean contains(String id) {
            long[] uuid = new long[2];
            return holds(id, parseUuid(id, uuid), uuid);
        }

        private boolean holds(String id, boolean isUuid, long[] uuid) {
            for (int i = 0; i < size; i++) {
                String o = other == null ? null : other[i];
                if (o == null ? isUuid && bits[2 * i] == uuid[0] && bits[2 * i + 1] == uuid[1] : o.equals(id)) return true;
            }
            return false;
        }

        /** Adds {@code id} at the end; false when it is held already. */
        boolean add(String id) {
            long[] uuid = new long[2];
            boolean isUuid = parseUuid(id, uuid);
            if (holds(id, isUuid, uuid)) return false;
            append(isUuid ? null : id, uuid[0], uuid[1]);
            return true;
        }

        /** Adds {@code id}, known not to be held (checked by {@link #contains}), at the end. */
        void append(String id) {
            long[] uuid = new long[2];
            boolean isUuid = parseUuid(id, uuid);
            append(isUuid ? null : id, uuid[0], uuid[1]);
        }

        /** The ids in arrival order. */
        java.util.List<String> ids() {
            java.util.List<String> out = new java.util.ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                String o = other == null ? null : other[i];
                out.add(o != null ? o : new java.util.UUID(bits[2 * i], bits[2 * i + 1]).toString());
            }
            return out;
        }

        /** Whether {@code id} is a UUID as {@link java.util.UUID#toString} writes it: 8-4-4-4-12 lowercase hex digits. */
        static boolean isUuid(String id) {
            return parseUuid(id, new long[2]);
        }

        /**
         * Reads a UUID as {@link java.util.UUID#toString} writes it (8-4-4-4-12 lowercase hex digits) into its two longs;
         * false, and {@code out} unspecified, for any other string.
         */
        private static boolean parseUuid(String id, long[] out) {
            if (id.length() != 36) return false;
            long hi = 0, lo = 0;
            for (int i = 0; i < 36; i++) {
                char c = id.charAt(i);
                if (i == 8 || i == 13 || i == 18 || i == 23) {
                    if (c != '-') return false;
                    continue;
                }
                int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                if (d < 0) return false;
                if (i < 18) hi = hi << 4 | d;
                else lo = lo << 4 | d;
            }
            out[0] = hi;
            out[1] = lo;
            return true;
        }

        /** The first byte of the encoding ({@link #SERDE}): its version. */
        static final byte BINARY = 0;

        /**
         * Its bytes inside its {@link RunRecord}: {@link #BINARY}, then per id in arrival order a UUID's two longs after a
         * 0 byte, or another id's UTF-8 bytes after a 1 byte and their length (int).
         */
        static final Serde<RunEventIds> SERDE = StoreBytes.serde(RunEventIds::encode, RunEventIds::decode);

        private byte[] encode() {
            int n = 1;
            for (int i = 0; i < size; i++) {
                String o = other == null ? null : other[i];
                n += o == null ? 17 : 5 + o.getBytes(StandardCharsets.UTF_8).length;
            }
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(n).put(BINARY);
            for (int i = 0; i < size; i++) {
                String o = other == null ? null : other[i];
                if (o == null) {
                    b.put((byte) 0).putLong(bits[2 * i]).putLong(bits[2 * i + 1]);
                } else {
                    byte[] u = o.getBytes(StandardCharsets.UTF_8);
                    b.put((byte) 1).putInt(u.length).put(u);
                }
            }
            return b.array();
        }

        private static RunEventIds decode(byte[] bytes) {
            if (bytes.length == 0 || bytes[0] != BINARY) {
                throw new IllegalArgumentException("unknown run eventIds encoding " + (bytes.length == 0 ? "(empty)" : bytes[0]));
            }
            RunEventIds v = new RunEventIds();
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes, 1, bytes.length - 1);
            while (b.hasRemaining()) {
                if (b.get() == 0) {
                    v.append(null, b.getLong(), b.getLong());
                } else {
                    byte[] u = new byte[b.getInt()];
                    b.get(u);
                    v.append(new String(u, StandardCharsets.UTF_8), 0, 0);
                }
            }
            return v;
        }

        /** Appends an id not held yet: {@code id} when not null, else a UUID's two longs. */
        private void append(String id, long hi, long lo) {
            if (2 * size == bits.length) {
                bits = java.util.Arrays.copyOf(bits, bits.length * 2);
                if (other != null) other = java.util.Arrays.copyOf(other, bits.length / 2);
            }
            if (id == null) {
                bits[2 * size] = hi;
                bits[2 * size + 1] = lo;
            } else {
                if (other == null) other = new String[bits.length / 2];
                other[size] = id;
            }
            size++;
        }
    }
}
