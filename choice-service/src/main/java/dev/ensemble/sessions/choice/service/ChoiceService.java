package dev.ensemble.sessions.choice.service;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.choice.CandidateSession;
import dev.ensemble.sessions.choice.ChoiceRecords;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.CorpusStats;
import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.ImportedSessions;
import dev.ensemble.sessions.choice.Scorer;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.ViewMapping;
import dev.ensemble.sessions.views.CorpusView;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;
import io.javalin.Javalin;
import io.javalin.http.Context;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The choice service (guide §4, DESIGN.md §5): decides for a new run whether to continue one of the agent's
 * sessions on that computer or start a new one, in milliseconds, and records every decision as a
 * {@code SessionChoiceRecorded} event; its topology ({@link ChoiceTopology}) records each outcome when the run
 * ends. The decision itself is {@link Scorer#decide}: pure, so the same records always give the same decision.
 *
 * <p>HTTP (internal; the gateway's {@code POST /api/session-choice} forwards here), every request with
 * {@code Authorization: Bearer <secret>} ({@link #secret()}; else 401):
 * {@code POST /choice/decide} with a RunClaimed event in the JSON form answers the decision record, plus
 * {@code continueFromJobId} (the run to continue from, when continuing) and {@code resume} (when continuing a session
 * whose agent session id is known: {@code agent}, {@code agentSessionId}, {@code folder} and the {@code command} that
 * resumes it there, {@link ImportedSessions#resumeCommand}; else null). A person's own imported sessions are candidates
 * as {@link ViewMapping#candidate(SessionView, SessionChoiceConfig)} says ({@code importedSessions.candidates}); a claim
 * with a {@code LOCAL} folder offers only those of them that worked in it. {@code GET /choice/config} the file's config
 * (the one appended to the log). Config: the service's {@link ConfigPublisher} appends the config of
 * {@code ENSEMBLE_SESSION_CHOICE_CONFIG} to the log when it changes (re-read within a minute); a decision uses the config
 * in force in its account's partition of the log ({@link ChoiceTopology#CONFIG}), as the projector's rarity tables do.
 *
 * <p>Life cycle: {@link #start()} / {@link #stop()}.
 */
public final class ChoiceService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChoiceService.class);

    /**
     * @param bootstrapServers  the cluster
     * @param stateDir          the stores' folder
     * @param replicationFactor of the changelogs
     * @param host              HTTP address (127.0.0.1 locally)
     * @param port              HTTP port (0: a free one)
     * @param config            the session-choice config source
     * @param clock             the decisions' time
     */
    public record Settings(String bootstrapServers, Path stateDir, int replicationFactor, String host, int port,
                           ConfigWatcher config, Clock clock) {
    }

    private final Settings settings;
    /** Decoded rarity tables by account/computer with the view sequence they were decoded from (read-only once decoded). */
    private final Map<String, Map.Entry<Long, CorpusStats>> corpora = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map.Entry<Long, CorpusStats>> eldest) {
            return size() > 64;
        }
    };
    private volatile KafkaStreams streams;
    private volatile dev.ensemble.sessions.schema.Generation generation;
    private dev.ensemble.sessions.schema.Generations.Watcher watcher;
    private KafkaProducer<String, Event> producer;
    private ConfigPublisher publisher;
    private Javalin http;

    /**
     * The counter of its decisions, by {@code decision} ({@code CONTINUE}, {@code NEW}), {@code band} and {@code note}
     * ({@code none} when the decision has none); docs/operations.md "Metrics".
     */
    public static final String DECISIONS = "ensemble.choice.decisions";
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;
    private dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding metrics =
            new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "choice");
    private AutoCloseable producerMetrics;

    /**
     * The registry its decisions ({@link #DECISIONS}) and its Kafka Streams and producer metrics ({@code service="choice"})
     * go to; before {@link #start()}. Without it nothing is counted.
     */
    public synchronized ChoiceService withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(registry);
        this.metrics = new dev.ensemble.sessions.streams.ServiceMeters.StreamsBinding(meters, "choice");
        return this;
    }

    /** The cluster's client properties (security settings), given to its producer and Streams application. */
    private Map<String, ?> clientProperties = Map.of();

    public ChoiceService(Settings settings) {
        this.settings = settings;
    }

    /**
     * The cluster's client properties (e.g. {@code security.protocol}, {@code sasl.*}; see
     * {@link dev.ensemble.sessions.schema.KafkaClients}) for every client it makes; before {@link #start()}.
     */
    public synchronized ChoiceService withClientProperties(Map<String, ?> properties) {
        this.clientProperties = Map.copyOf(properties);
        return this;
    }

    /**
     * The bearer secret every request must carry ({@code Authorization: Bearer <secret>}): the service listens on a
     * local port that any process of the computer can reach, and a decision it records is an event in the log for the
     * account named in the request, so only its gateway (which checked the person's token) may call it. Random per
     * instance (32 bytes, base64url); the gateway gets it with the URL ({@link #secret()}).
     */
    private volatile String secret = dev.ensemble.sessions.schema.Secrets.newSecret();
    /** Further Kafka Streams settings of its application only ({@link #withStreamsSettings}). */
    private Map<String, ?> streamsSettings = Map.of();

    /**
     * This secret instead of a random one: for a choice service run alone, whose gateway runs in another process and is
     * given the same secret; before {@link #start()}.
     *
     * @throws IllegalArgumentException when it is shorter than 16 characters
     */
    public synchronized ChoiceService withSecret(String secret) {
        if (secret == null || secret.strip().length() < 16) {
            throw new IllegalArgumentException("the choice service's secret must have 16 characters or more");
        }
        this.secret = secret.strip();
        return this;
    }

    /**
     * Further Kafka Streams settings of its application only (e.g. {@code num.standby.replicas},
     * {@code num.stream.threads}), put over its defaults and the client properties; before {@link #start()}.
     */
    public synchronized ChoiceService withStreamsSettings(Map<String, ?> settings) {
        this.streamsSettings = Map.copyOf(settings);
        return this;
    }

    /** The secret a caller sends as {@code Authorization: Bearer <secret>}; requests without it are refused (401). */
    public String secret() {
        return secret;
    }

    private void requireSecret(Context ctx) {
        String given = ctx.header("Authorization");
        byte[] expected = ("Bearer " + secret()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (given == null || !java.security.MessageDigest.isEqual(given.getBytes(java.nio.charset.StandardCharsets.UTF_8), expected)) {
            ctx.status(401).json(error("unauthorized", "the choice service answers only its gateway: send its secret as "
                    + "'Authorization: Bearer <secret>'"));
            ctx.skipRemainingHandlers();
        }
    }

    public synchronized ChoiceService start() {
        Map<String, Object> p = dev.ensemble.sessions.schema.LogProducers.config(settings.bootstrapServers(),
                "ensemble-choice-records", clientProperties);
        producer = new KafkaProducer<>(p, new StringSerializer(), Topics.EVENTS.valueSerde().serializer());
        producerMetrics = dev.ensemble.sessions.streams.ServiceMeters.bind(meters, producer, "choice");
        generation = dev.ensemble.sessions.schema.Generations.serving(settings.bootstrapServers(), clientProperties);
        streams = newStreams(generation);
        StreamsDefaults.start(streams, "choice service");
        metrics.follow(streams);
        watcher = new dev.ensemble.sessions.schema.Generations.Watcher(settings.bootstrapServers(), clientProperties, "choice",
                records -> switchTo(dev.ensemble.sessions.schema.Generations.parse(records.get(dev.ensemble.sessions.schema.Generations.SERVING))));
        publisher = new ConfigPublisher(settings.bootstrapServers(), clientProperties, settings.config(), settings.clock(), Duration.ofSeconds(1)).start();
        http = Javalin.create(cfg -> cfg.showJavalinBanner = false);
        http.exception(InvalidEventException.class, (e, ctx) -> { // as the gateway's event intake answers: the field named
            ObjectNode body = error("invalid_event", e.getMessage());
            if (e.field() != null) {
                body.put("field", e.field());
            }
            ctx.status(400).json(body);
        });
        http.exception(ServiceUnavailable.class, (e, ctx) -> ctx.status(503).json(error("starting", e.getMessage())));
        http.before(this::requireSecret);
        http.post("/choice/decide", this::decide);
        http.get("/choice/config", ctx -> ctx.contentType("application/json")
                .result(dev.ensemble.sessions.choice.ConfigLoader.toJson(settings.config().current())));
        http.start(settings.host(), settings.port());
        LOG.info("choice service listening on http://{}:{}", settings.host(), http.port());
        return this;
    }

    private KafkaStreams newStreams(dev.ensemble.sessions.schema.Generation g) {
        return new KafkaStreams(ChoiceTopology.build(g), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(
                StreamsDefaults.properties(ChoiceTopology.APPLICATION_ID, settings.bootstrapServers(), settings.stateDir(),
                        settings.replicationFactor(), dev.ensemble.sessions.schema.KafkaClients.merge(
                                dev.ensemble.sessions.schema.KafkaClients.merge(clientProperties, Map.of("commit.interval.ms", 100)), streamsSettings)),
                meters));
    }

    /**
     * Decides on generation {@code g}'s views from now on: the application restarts with the same application id (its
     * place in the log, its pending outcomes and config stay) on {@code g}'s view topics, loaded into stores of their own
     * ({@link ChoiceTopology#store}); decisions asked during the restart's few seconds answer 503. The old view stores'
     * changelogs are removed.
     */
    private synchronized void switchTo(dev.ensemble.sessions.schema.Generation g) {
        if (streams == null || g.equals(generation)) {
            return;
        }
        dev.ensemble.sessions.schema.Generation old = generation;
        StreamsDefaults.close(streams, Duration.ofSeconds(30));
        KafkaStreams next = newStreams(g);
        next.cleanUp(); // the old generation's view stores go with the local state; the others restore from their changelogs
        streams = next;
        generation = g;
        StreamsDefaults.start(next, "choice service");
        metrics.follow(next);
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(settings.bootstrapServers(), clientProperties))) {
            admin.deleteTopics(List.of(ChoiceTopology.APPLICATION_ID + "-" + ChoiceTopology.store(ChoiceTopology.SESSIONS, old) + "-changelog",
                    ChoiceTopology.APPLICATION_ID + "-" + ChoiceTopology.store(ChoiceTopology.CORPUS, old) + "-changelog")).all().get();
        } catch (Exception e) {
            LOG.warn("choice service: could not remove generation {}'s view store changelogs: {}", old, e.toString());
        }
        LOG.info("choice service: deciding on projector generation {}'s views", g);
        dev.ensemble.sessions.schema.Generations.acknowledge(settings.bootstrapServers(), clientProperties, "choice", g);
    }

    /** The base URL of the decision endpoint. */
    public String url() {
        return "http://" + settings.host() + ":" + http.port();
    }

    /** Its Kafka Streams state ({@code RUNNING}: its stores can be read). */
    public KafkaStreams.State state() {
        return streams.state();
    }

    /** Waits until its stores can be read. */
    public void awaitReady(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (streams.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the choice service did not start within " + timeout);
            }
            Thread.sleep(50);
        }
    }

    private void decide(Context ctx) throws Exception {
        Event claim = EventJson.fromJson(EventJson.mapper().readTree(ctx.body()), settings.clock());
        if (!(claim.getPayload() instanceof RunClaimed rc)) {
            throw new InvalidEventException(claim.getEventId(), EventTypes.typeOf(claim), "type",
                    "a session choice is made for a RunClaimed event");
        }
        ObjectNode out = decide(claim, rc);
        ctx.json(out);
    }

    /** Decides for a claim, appends the record to the event log, and returns the record's JSON. */
    ObjectNode decide(Event claim, RunClaimed rc) throws Exception {
        String account = claim.getAccount();
        SessionChoiceConfig cfg = configOf(account);
        List<SessionView> views = sessionsOf(account);
        List<CandidateSession> sessions = new ArrayList<>(views.size());
        Map<String, SessionView> byId = new HashMap<>();
        // a claim in a local folder (a person asking in a terminal): only their own sessions that worked there; and
        // those of another computer or agent are left out before their prompts are gathered (never candidates)
        String localFolder = rc.getFolderKind() == dev.ensemble.sessions.events.FolderKind.LOCAL ? rc.getFolder() : null;
        for (SessionView v : views) {
            if (ImportedSessions.isImported(v) && (!ImportedSessions.workedIn(v, localFolder)
                    || !v.getComputerId().equals(rc.getComputerId()) || !v.getAgent().equals(rc.getAgent()))) {
                continue;
            }
            sessions.add(ViewMapping.candidate(v, cfg));
            byId.put(v.getSessionId(), v);
        }
        CorpusStats corpus = corpusOf(account, rc.getComputerId(), cfg);
        Instant now = settings.clock().instant(); // one time for the decision and its record
        Decision d = Scorer.decide(ViewMapping.newRun(rc, account, claim.getSpace()), sessions, corpus, cfg, now, System::nanoTime);
        SessionChoiceRecorded record = ChoiceRecords.toEvent(d);
        Instant at = now.truncatedTo(ChronoUnit.MILLIS);
        Event e = Event.newBuilder()
                .setEventId(UUID.randomUUID().toString()) // every decision is recorded, asked twice or not
                .setAccount(account).setSpace(claim.getSpace())
                .setOccurredAt(at).setRecordedAt(at)
                .setSource("service:choice").setPayload(record).build();
        producer.send(new ProducerRecord<>(Topics.EVENTS.name(), account, e)).get(30, TimeUnit.SECONDS);
        io.micrometer.core.instrument.Counter.builder(DECISIONS).description("session-choice decisions recorded by the choice service")
                .tag("decision", d.decision().name()).tag("band", d.band() == null ? "NONE" : d.band().name())
                .tag("note", d.note() == null ? "none" : d.note()).register(meters).increment();
        ObjectNode out = EventJson.recordToJson(record);
        out.put("eventId", e.getEventId());
        String continueFrom = null;
        if (d.decision() == Decision.Choice.CONTINUE && byId.get(d.sessionId()) != null) {
            List<RunView> runs = byId.get(d.sessionId()).getRuns();
            continueFrom = runs.get(runs.size() - 1).getRunId();
        }
        out.put("continueFromJobId", continueFrom);
        SessionView chosen = d.decision() == Decision.Choice.CONTINUE ? byId.get(d.sessionId()) : null;
        if (chosen != null && chosen.getAgentSessionId() != null) {
            ObjectNode resume = out.putObject("resume");
            resume.put("agent", chosen.getAgent()).put("agentSessionId", chosen.getAgentSessionId()).put("folder", chosen.getFolder())
                    .put("command", ImportedSessions.resumeCommand(chosen.getAgent(), chosen.getAgentSessionId(), chosen.getFolder()));
        } else {
            out.putNull("resume");
        }
        out.put("briefReport", d.briefReport());
        return out;
    }

    private List<SessionView> sessionsOf(String account) {
        List<SessionView> out = new ArrayList<>();
        try (KeyValueIterator<String, SessionView> it = this.<SessionView>store(ChoiceTopology.store(ChoiceTopology.SESSIONS, generation))
                .prefixScan(Keys.prefix(account), new StringSerializer())) {
            it.forEachRemaining(kv -> out.add(kv.value));
        }
        return out;
    }

    /** Partitions of {@code sessions.events}: read once (the account partitioning depends on them never changing). */
    private volatile int eventPartitions;

    /** A partition's stored config JSON and the config it gives. */
    private record HeldConfig(String json, SessionChoiceConfig config) {
    }

    /** The last config read per partition of {@code sessions.events}, so a request compares the stored JSON only. */
    private final Map<Integer, HeldConfig> configs = new java.util.concurrent.ConcurrentHashMap<>();

    /** The config in force in the account's partition of the log ({@link ChoiceTopology#CONFIG}); the defaults before the first change. */
    SessionChoiceConfig configOf(String account) {
        int partitions = eventPartitions;
        if (partitions == 0) {
            partitions = producer.partitionsFor(Topics.EVENTS.name()).size();
            eventPartitions = partitions;
        }
        int partition = Keys.accountPartition(account, partitions);
        ReadOnlyKeyValueStore<String, String> store;
        try {
            store = streams.store(StoreQueryParameters.fromNameAndType(ChoiceTopology.CONFIG, QueryableStoreTypes.<String, String>keyValueStore())
                    .withPartition(partition));
        } catch (InvalidStateStoreException e) {
            throw new ServiceUnavailable("the choice service is loading its views (" + streams.state() + "); try again in a few seconds");
        }
        String json = store.get(ChoiceTopology.CONFIG_KEY);
        HeldConfig held = configs.get(partition);
        if (held != null && java.util.Objects.equals(held.json(), json)) {
            return held.config();
        }
        SessionChoiceConfig cfg = dev.ensemble.sessions.choice.ChoiceConfigEvents.ofStored(json);
        configs.put(partition, new HeldConfig(json, cfg));
        return cfg;
    }

    private CorpusStats corpusOf(String account, String computerId, SessionChoiceConfig cfg) {
        String key = Keys.of(account, computerId);
        CorpusView v = this.<CorpusView>store(ChoiceTopology.store(ChoiceTopology.CORPUS, generation)).get(key);
        if (v == null) {
            return new CorpusStats(account, computerId, cfg.limits().corpusTasks());
        }
        synchronized (corpora) {
            Map.Entry<Long, CorpusStats> held = corpora.get(key);
            if (held != null && held.getKey() == v.getSequence()) {
                return held.getValue();
            }
        }
        ByteBuffer b = v.getStats().duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        CorpusStats stats = CorpusStats.fromBytes(bytes);
        synchronized (corpora) {
            corpora.put(key, Map.entry(v.getSequence(), stats));
        }
        return stats;
    }

    private <V> ReadOnlyKeyValueStore<String, V> store(String name) {
        try {
            return streams.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, V>keyValueStore()));
        } catch (InvalidStateStoreException e) {
            throw new ServiceUnavailable("the choice service is loading its views (" + streams.state() + "); try again in a few seconds");
        }
    }

    static final class ServiceUnavailable extends RuntimeException {
        ServiceUnavailable(String m) {
            super(m);
        }
    }

    private static ObjectNode error(String code, String message) {
        return EventJson.mapper().createObjectNode().put("error", code).put("message", message);
    }

    public void stop() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        stopAll();
    }

    private synchronized void stopAll() {
        if (http != null) {
            http.stop();
            http = null;
        }
        if (publisher != null) {
            publisher.close();
            publisher = null;
        }
        metrics.close();
        if (streams != null) {
            StreamsDefaults.close(streams, Duration.ofSeconds(30));
            streams = null;
        }
        dev.ensemble.sessions.streams.ServiceMeters.closeQuietly(producerMetrics);
        producerMetrics = null;
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
    }

    @Override
    public void close() {
        stop();
    }

}
