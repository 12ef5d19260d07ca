package dev.ensemble.sessions.choice.service;

import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.ChoiceDecision;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.NewestBySequence;
import dev.ensemble.sessions.views.CorpusView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;

/**
 * The choice service's Kafka Streams topology (application id {@code ensemble-choice}):
 * <ul>
 *   <li>{@code sessions.view.sessions} → store {@value #SESSIONS} (newest sequence per session): the
 *       candidates;</li>
 *   <li>{@code sessions.view.corpus} → store {@value #CORPUS} (newest per account and computer): the rarity
 *       tables;</li>
 *   <li>{@code sessions.events} → the outcome recorder: for each {@code SessionChoiceRecorded} it waits for the
 *       run to end and appends a {@code SessionChoiceOutcome} (guide §4 "Records": status, duration, tokens, and
 *       for a continued session whether the agent really resumed it — its session id stayed the same) to
 *       {@code sessions.events}, with a name-based event id so a replay appends nothing twice; and it folds the
 *       partition's {@code ChoiceConfigChanged} into store {@value #CONFIG} (key {@value #CONFIG_KEY}: the config in
 *       force, canonical JSON; absent: the defaults; an invalid one: the defaults, logged), the config the
 *       decisions for that partition's accounts are made with.</li>
 * </ul>
 */
public final class ChoiceTopology {
    public static final String APPLICATION_ID = "ensemble-choice";
    public static final String SESSIONS = "choice-sessions";
    public static final String CORPUS = "choice-corpus";
    public static final String PENDING = "choice-pending";
    public static final String CONFIG = "choice-config";
    public static final String CONFIG_KEY = "config";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChoiceTopology.class);

    private ChoiceTopology() {
    }

    /** Builds the topology; the service and the tests call this. */
    public static Topology build() {
        return build(Generation.FIRST);
    }

    /**
     * A store of the views of projector generation {@code g}: {@code base} for generation 1, {@code base-g<n>} after,
     * so the views of a new generation load into stores of their own while the application keeps its place in the
     * log and its other stores.
     */
    public static String store(String base, Generation g) {
        return g.number() == 1 ? base : base + "-g" + g.number();
    }

    /** The topology on the view topics of projector generation {@code g} (stores {@link #store}). */
    public static Topology build(Generation g) {
        String sessions = store(SESSIONS, g);
        String corpus = store(CORPUS, g);
        Topology t = new Topology();
        t.addSource("views-source", Topics.SESSIONS_VIEW.keySerde().deserializer(), Topics.SESSIONS_VIEW.valueSerde().deserializer(),
                g.view(Topics.SESSIONS_VIEW).name());
        t.addProcessor("newest-session", () -> new Newest<SessionView>(sessions, SessionView::getSequence), "views-source");
        t.addSource("corpus-source", Topics.CORPUS_VIEW.keySerde().deserializer(), Topics.CORPUS_VIEW.valueSerde().deserializer(),
                g.view(Topics.CORPUS_VIEW).name());
        t.addProcessor("newest-corpus", () -> new Newest<CorpusView>(corpus, CorpusView::getSequence), "corpus-source");
        t.addSource("events-source", Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(),
                Topics.EVENTS.name());
        t.addProcessor("outcomes", () -> new OutcomeRecorder(sessions), "events-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(sessions), Serdes.String(),
                AvroSerde.of(SessionView.class)), "newest-session", "outcomes");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(corpus), Serdes.String(),
                AvroSerde.of(CorpusView.class)), "newest-corpus");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PENDING), Serdes.String(),
                Serdes.String()), "outcomes");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CONFIG), Serdes.String(),
                Serdes.String()), "outcomes");
        t.addSink("events-sink", Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer(),
                "outcomes");
        return t;
    }

    /** Keeps, in {@code storeName}, each key's view with the highest sequence ({@link NewestBySequence}). */
    static final class Newest<V> implements Processor<String, V, Void, Void> {
        private final String storeName;
        private final java.util.function.ToLongFunction<V> sequence;
        private KeyValueStore<String, V> store;

        Newest(String storeName, java.util.function.ToLongFunction<V> sequence) {
            this.storeName = storeName;
            this.sequence = sequence;
        }

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(storeName);
        }

        @Override
        public void process(Record<String, V> r) {
            NewestBySequence.keep(store, r.key(), r.value(), sequence);
        }
    }

    /**
     * Pending entry, one line each: the session continued (empty for a new session), the session's agent
     * session id at the decision, the run's own agent session id once it reports one.
     */
    static final class OutcomeRecorder implements Processor<String, Event, String, Event> {
        private ProcessorContext<String, Event> context;
        private KeyValueStore<String, String> pending;
        private final String sessionsStore;
        private KeyValueStore<String, SessionView> sessions;
        private KeyValueStore<String, String> config;

        OutcomeRecorder(String sessionsStore) {
            this.sessionsStore = sessionsStore;
        }

        @Override
        public void init(ProcessorContext<String, Event> context) {
            this.context = context;
            this.pending = context.getStateStore(PENDING);
            this.sessions = context.getStateStore(sessionsStore);
            this.config = context.getStateStore(CONFIG);
        }

        @Override
        public void process(Record<String, Event> r) {
            Event e = r.value();
            if (e == null) {
                return;
            }
            EventJson.Validation.check(e);
            Object p = e.getPayload();
            if (p instanceof ChoiceConfigChanged) {
                SessionChoiceConfig next;
                try {
                    next = ChoiceConfigEvents.config(e);
                } catch (ConfigLoader.InvalidConfigException x) {
                    LOG.warn("session-choice config change {} is invalid, the defaults apply from here: {}", e.getEventId(), x.getMessage());
                    next = SessionChoiceConfig.defaults();
                }
                config.put(CONFIG_KEY, ConfigLoader.toJson(next));
            } else if (p instanceof SessionChoiceRecorded c) {
                // the newest decision for a run is the one its computer acts on
                String key = Keys.of(e.getAccount(), c.getRunId());
                String session = c.getDecision() == ChoiceDecision.CONTINUE && c.getSessionId() != null ? c.getSessionId() : "";
                String before = "";
                if (!session.isEmpty()) {
                    SessionView v = sessions.get(Keys.of(e.getAccount(), session));
                    before = v == null || v.getAgentSessionId() == null ? "" : v.getAgentSessionId();
                }
                pending.put(key, session + "\n" + before + "\n");
            } else if (p instanceof EngineEvent ee) {
                String key = Keys.of(e.getAccount(), ee.getRunId());
                String[] entry = entry(pending.get(key));
                if (entry != null && entry[2].isEmpty()) {
                    pending.put(key, entry[0] + "\n" + entry[1] + "\n" + ee.getAgentSessionId());
                }
            } else if (p instanceof RunStatusChanged rs && ended(rs.getStatus())) {
                String key = Keys.of(e.getAccount(), rs.getRunId());
                String[] entry = entry(pending.get(key));
                if (entry == null) {
                    return;
                }
                pending.delete(key);
                boolean continued = !entry[0].isEmpty();
                Boolean resumed = continued ? (Boolean) (!entry[1].isEmpty() && entry[1].equals(entry[2])) : null;
                SessionChoiceOutcome outcome = SessionChoiceOutcome.newBuilder().setRunId(rs.getRunId())
                        .setSessionId(continued ? entry[0] : null).setStatus(rs.getStatus()).setDurationMs(rs.getDurationMs())
                        .setTokens(rs.getTokens()).setResumed(resumed).build();
                Instant now = e.getOccurredAt();
                Event out = Event.newBuilder()
                        .setEventId(UUID.nameUUIDFromBytes(("choice-outcome/" + key).getBytes(StandardCharsets.UTF_8)).toString())
                        .setAccount(e.getAccount()).setSpace(e.getSpace()).setOccurredAt(now).setRecordedAt(now)
                        .setSource("service:choice").setPayload(outcome).build();
                context.forward(new Record<>(e.getAccount(), out, r.timestamp()));
            }
        }

        private static String[] entry(String v) {
            return v == null ? null : v.split("\n", -1);
        }

        private static boolean ended(RunStatus s) {
            return s == RunStatus.DONE || s == RunStatus.FAILED || s == RunStatus.CANCELLED;
        }
    }
}
