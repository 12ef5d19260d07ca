package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.schema.Keys;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.charset.StandardCharsets;

/**
 * Which events the projector has applied, so that a second delivery of an eventId changes nothing (DESIGN.md §4,
 * issue "duplicated events change nothing"). Most events are about a run (its claim, its status reports, its
 * engine events): their ids are kept in the run's own entry of {@link StoreNames#RUN_EVENT_IDS}
 * ({@code <account>/<runId>} → the ids, in arrival order), written once per commit with the run's other changes,
 * so that no event costs a store entry and a changelog record of its own. Every other event (task changes,
 * computer reports, deletion requests and decisions, session-choice records) has its own key in
 * {@link StoreNames#EVENT_IDS}.
 */
final class AppliedEvents {
    private final KeyValueStore<String, Long> byId;
    private final KeyValueStore<String, RunEventIds> byRun;

    AppliedEvents(ProcessingContext context) {
        this.byId = context.getStateStore(StoreNames.EVENT_IDS);
        this.byRun = context.getStateStore(StoreNames.RUN_EVENT_IDS);
    }

    /** Whether {@code e}'s eventId was applied already. */
    boolean contains(Event e) {
        String run = runOf(e);
        if (run == null) {
            return byId.get(e.getEventId()) != null;
        }
        RunEventIds ids = byRun.get(Keys.of(e.getAccount(), run));
        return ids != null && ids.contains(e.getEventId());
    }

    /** Records {@code e}'s eventId as applied. */
    void add(Event e) {
        String run = runOf(e);
        if (run == null) {
            byId.put(e.getEventId(), e.getOccurredAt().toEpochMilli());
            return;
        }
        String key = Keys.of(e.getAccount(), run);
        RunEventIds ids = byRun.get(key);
        if (ids == null) {
            ids = new RunEventIds();
        }
        if (ids.add(e.getEventId())) {
            byRun.put(key, ids);
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
     * The eventIds applied for one run, in arrival order, without repeats; stored as UTF-8 text, one id per line. An
     * array, searched in order while the run has few (a claim, its status reports and engine events: usually under
     * twenty), with a hash set beside it beyond {@link #INDEXED_FROM}: one entry per run for every run in the log.
     */
    static final class RunEventIds {
        static final int INDEXED_FROM = 16;
        private String[] ids = new String[8];
        private int size;
        private java.util.HashSet<String> index;

        boolean contains(String id) {
            if (index != null) return index.contains(id);
            for (int i = 0; i < size; i++) {
                if (ids[i].equals(id)) return true;
            }
            return false;
        }

        /** Adds {@code id} at the end; false when it is held already. */
        boolean add(String id) {
            if (contains(id)) return false;
            if (size == ids.length) ids = java.util.Arrays.copyOf(ids, size * 2);
            ids[size++] = id;
            if (index != null) {
                index.add(id);
            } else if (size > INDEXED_FROM) {
                index = new java.util.HashSet<>(java.util.Arrays.asList(ids).subList(0, size));
            }
            return true;
        }

        /** The ids in arrival order. */
        java.util.List<String> ids() {
            return java.util.Arrays.asList(ids).subList(0, size);
        }

        /** The store's serde: ids joined by '\n' (an eventId holds no line break: {@code EventJson.Validation}). */
        static final Serde<RunEventIds> SERDE = Serdes.serdeFrom(
                (Serializer<RunEventIds>) (topic, v) -> v == null ? null : String.join("\n", v.ids()).getBytes(StandardCharsets.UTF_8),
                (Deserializer<RunEventIds>) (topic, bytes) -> {
                    if (bytes == null) {
                        return null;
                    }
                    RunEventIds v = new RunEventIds();
                    String text = new String(bytes, StandardCharsets.UTF_8);
                    if (!text.isEmpty()) {
                        for (String id : text.split("\n", -1)) v.add(id);
                    }
                    return v;
                });
    }
}
