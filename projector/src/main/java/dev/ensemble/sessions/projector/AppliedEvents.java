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
import java.util.LinkedHashSet;

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
        return ids != null && ids.ids.contains(e.getEventId());
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
        if (ids.ids.add(e.getEventId())) {
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

    /** The eventIds applied for one run, in arrival order; stored as UTF-8 text, one id per line. */
    static final class RunEventIds {
        final LinkedHashSet<String> ids = new LinkedHashSet<>();

        /** The store's serde: ids joined by '\n' (an eventId holds no line break: {@code EventJson.Validation}). */
        static final Serde<RunEventIds> SERDE = Serdes.serdeFrom(
                (Serializer<RunEventIds>) (topic, v) -> v == null ? null : String.join("\n", v.ids).getBytes(StandardCharsets.UTF_8),
                (Deserializer<RunEventIds>) (topic, bytes) -> {
                    if (bytes == null) {
                        return null;
                    }
                    RunEventIds v = new RunEventIds();
                    String text = new String(bytes, StandardCharsets.UTF_8);
                    if (!text.isEmpty()) {
                        v.ids.addAll(java.util.Arrays.asList(text.split("\n", -1)));
                    }
                    return v;
                });
    }
}
