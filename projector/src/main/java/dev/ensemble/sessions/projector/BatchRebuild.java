package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topic;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.choice.ConfigWatcher;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetrics;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.Punctuator;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Rebuilds the projector's state and views from the log in one pass outside Kafka Streams (DESIGN.md §1: every view
 * can be rebuilt by replay). The projector's own processors ({@link Projector#processors}) run over each partition of
 * {@code sessions.events} as Kafka Streams runs that partition's task: the same node graph (read from
 * {@link Projector#buildTopology()}'s description), the same stores ({@link Projector#STORES}, here maps in memory), the
 * same dead-letter handlers, and the publication punctuations, ticked once the partition's records are all applied.
 * What it leaves out is what makes the live projector slower than its rules: a commit every 100 ms that encodes and
 * writes each changed store entry and publishes each changed view. Partitions are replayed in parallel, one thread
 * each, up to the cores.
 *
 * <p>Then one Kafka transaction writes what the projector would have left after the same replay: each store's final
 * entries to its changelog ({@code ensemble-projector-<store>-changelog}, created here as Kafka Streams creates them),
 * the newest record of every view key, the guard's decisions (appended to the log; duplicates of those decided live,
 * as in a replay by Kafka Streams), dead letters, and the projector group's offsets at the replayed ends. The projector
 * started afterwards restores its stores from the changelogs and goes on from those offsets. Killed before the commit,
 * nothing of it is visible to {@code read_committed} readers, the group's offsets stay at the beginning, and either
 * {@code rebuild} again or the projector itself replays from there.
 *
 * <p>Preconditions: {@link ProjectorRebuild#reset} has just run (state folder gone, group offsets at the beginning,
 * no changelog topic) and no projector runs. Memory: every store entry is a live object on the heap until the end
 * (measured in docs/benchmarks.md); {@link #fits} says whether a log of a given size is expected to fit.
 */
public final class BatchRebuild {
    private static final Logger LOG = LoggerFactory.getLogger(BatchRebuild.class);

    /** The transactional id of the rebuild's writes (one rebuild at a time; a new one fences a killed one's transaction). */
    static final String TRANSACTIONAL_ID = Projector.APPLICATION_ID + "-batch-rebuild";
    /**
     * Heap a replayed event needs until the end, on average (store entries, their objects and their encodings at the
     * write), with a margin: measured at most about 0.8 KB per event for the benchmark's mix (docs/benchmarks.md).
     */
    public static final long BYTES_PER_EVENT = 1_500;

    private BatchRebuild() {
    }

    /**
     * What a batch rebuild did.
     *
     * @param events       records replayed (offsets of {@code sessions.events} up to the ends taken at the start)
     * @param storeRecords records written to the changelogs (one per store entry)
     * @param viewRecords  records written to the view topics (one per key)
     * @param appended     the guard's decisions appended to the log
     * @param deadLettered records written to the dead-letter topic
     * @param elapsed      from the start of the replay until what its transaction wrote is readable
     * @param replay       of it, the replay (until every partition's publication is done)
     * @param write        of it, from the end of the last partition's replay to the commit (a partition's writes start
     *                     when its own replay ends, so the first partitions' are partly before)
     */
    public record Result(long events, long storeRecords, long viewRecords, long appended, long deadLettered, Duration elapsed,
                         Duration replay, Duration write) {
        /** Events replayed per second. */
        public double eventsPerSecond() {
            return events / Math.max(1e-9, elapsed.toNanos() / 1e9);
        }
    }

    /**
     * The batch stopped and committed nothing: a processor failed on a record for a reason other than the record (a
     * bug, a failure of the environment), which the live projector would retry after restoring its stores; or Kafka
     * refused a write or the transaction (its timeout, the broker's maximum of it); or the heap ran out. Replay with
     * Kafka Streams instead (from {@link ProjectorRebuild#reset}).
     */
    public static final class Failed extends RuntimeException {
        Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Whether a log of {@code events} events is expected to fit in this JVM's heap ({@link #BYTES_PER_EVENT}). */
    public static boolean fits(long events) {
        return events <= Runtime.getRuntime().maxMemory() / BYTES_PER_EVENT;
    }

    /**
     * Replays {@code sessions.events} from its beginning to its last stable offsets (taken now) and writes the result.
     *
     * @param stateDir          the projector's state.dir (only for its Streams configuration; nothing is written there)
     * @param replicationFactor of the changelog topics it creates
     * @param rules             the retirement rules' numbers, as the projector that runs afterwards uses
     * @param progress          gets the events replayed so far, about every 200 ms, on the calling thread
     * @throws Failed                when it stopped without committing ({@link Failed})
     * @throws IllegalStateException when a changelog topic of the projector exists (reset first) or Kafka refuses
     */
    public static Result run(String bootstrap, Path stateDir, int replicationFactor, RetirementRules.Config rules, LongConsumer progress)
            throws InterruptedException {
        long start = System.nanoTime();
        Properties streamsConfig = StreamsDefaults.properties(Projector.APPLICATION_ID, bootstrap, stateDir, replicationFactor, Map.of());
        Map<String, Object> configs = new HashMap<>();
        streamsConfig.forEach((k, v) -> configs.put(k.toString(), v));
        List<Task> tasks = new ArrayList<>();
        long replayedAt, committedAt;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            List<String> changelogs = Projector.STORES.stream().map(s -> changelog(s.name())).toList();
            List<String> present = admin.listTopics().names().get().stream().filter(changelogs::contains).sorted().toList();
            if (!present.isEmpty()) {
                throw new IllegalStateException("the projector's changelogs exist (" + present + "): reset the projector before a batch rebuild");
            }
            List<TopicPartition> parts = TopicAdmin.partitions(admin, Topics.EVENTS.name());
            Graph graph = Graph.of(rules, admin);
            Sent sent = new Sent();
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(bootstrap, BATCH_TRANSACTION_TIMEOUT),
                    new ByteArraySerializer(), new ByteArraySerializer())) {
                producer.initTransactions(); // first: aborts what a killed rebuild left open, which would hold back the log's end
                Map<TopicPartition, Long> begin = TopicAdmin.offsets(admin, parts, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
                Map<TopicPartition, Long> end = TopicAdmin.offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
                AtomicLong replayed = new AtomicLong();
                AtomicBoolean stop = new AtomicBoolean();
                for (TopicPartition tp : parts) {
                    tasks.add(new Task(tp, begin.get(tp), end.get(tp), graph, configs, bootstrap, replayed, stop));
                }
                ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(parts.size(), Runtime.getRuntime().availableProcessors())),
                        r -> new Thread(r, "batch-rebuild"));
                try {
                    java.util.concurrent.CompletionService<Task> jobs = new java.util.concurrent.ExecutorCompletionService<>(pool);
                    List<Future<Task>> running = new ArrayList<>();
                    for (Task t : tasks) {
                        running.add(jobs.submit(() -> {
                            t.replay();
                            return t;
                        }));
                    }
                    // meanwhile: the changelogs, and the producer's metadata of them (a send would wait for it)
                    List<String> created = createChangelogs(admin, parts.size(), replicationFactor);
                    for (String t : created) producer.partitionsFor(t);
                    producer.beginTransaction();
                    // jobs as they end: a replay's end starts its partition's writes, beside the other replays; a job's
                    // failure stops all the others at once (and nothing is committed)
                    replayedAt = System.nanoTime();
                    try {
                        for (int pending = tasks.size(), replaying = tasks.size(); pending > 0; ) {
                            Future<Task> f = jobs.poll(200, TimeUnit.MILLISECONDS);
                            progress.accept(replayed.get());
                            if (f == null) continue;
                            pending--;
                            Task t = result(f); // null: a write job
                            if (t == null) continue;
                            for (Runnable w : t.writes(producer, sent)) {
                                running.add(jobs.submit(() -> {
                                    try {
                                        w.run();
                                    } catch (org.apache.kafka.common.KafkaException e) { // the producer stops sending after a refused write
                                        throw refused(e);
                                    }
                                    return null;
                                }));
                                pending++;
                            }
                            if (--replaying == 0) replayedAt = System.nanoTime();
                        }
                    } catch (Throwable x) {
                        stop.set(true);
                        for (Future<Task> j : running) j.cancel(true);
                        throw x;
                    }
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (TopicPartition tp : parts) offsets.put(tp, new OffsetAndMetadata(end.get(tp)));
                    producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(Projector.APPLICATION_ID));
                    producer.flush();
                    sent.check();
                    beforeCommit.run();
                    producer.commitTransaction();
                    committedAt = System.nanoTime();
                } finally {
                    pool.shutdownNow();
                }
            } catch (org.apache.kafka.common.KafkaException e) {
                // nothing committed: a write the broker refused (or the transaction's timeout, or the broker's maximum of it)
                throw refused(e);
            }
            sent.awaitReadable(admin);
        } catch (ExecutionException e) {
            throw new IllegalStateException("batch rebuild: Kafka refused: " + e.getCause().getMessage(), e.getCause());
        }
        long events = 0, storeRecords = 0, viewRecords = 0, appended = 0, deadLettered = 0;
        for (Task t : tasks) {
            events += t.replayed;
            storeRecords += t.storeRecords.sum();
            viewRecords += t.views.size();
            appended += t.decisions;
            deadLettered += t.deadLettered;
        }
        Result r = new Result(events, storeRecords, viewRecords, appended, deadLettered, Duration.ofNanos(System.nanoTime() - start),
                Duration.ofNanos(replayedAt - start), Duration.ofNanos(committedAt - replayedAt));
        LOG.debug("batch rebuild: {} events replayed, {} store entries, {} view records, {} decisions appended, {} dead letters in {} ms "
                        + "(replay {} ms, write and commit {} ms, readable {} ms later)", r.events(), r.storeRecords(), r.viewRecords(),
                r.appended(), r.deadLettered(), r.elapsed().toMillis(), (replayedAt - start) / 1_000_000, (committedAt - replayedAt) / 1_000_000,
                (System.nanoTime() - committedAt) / 1_000_000);
        return r;
    }

    /**
     * The failure of a batch whose writes Kafka refused, with the first refusal as its cause: after it the
     * transactional producer refuses every later call with "in an error state", its cause being that first error.
     */
    static Failed refused(org.apache.kafka.common.KafkaException e) {
        Throwable first = e;
        while (first.getCause() != null) first = first.getCause();
        return new Failed("batch rebuild: Kafka refused its writes", first);
    }

    /**
     * The batch's transaction timeout: it runs from the first write (when the first partition's replay has ended) to
     * the commit, so it also covers the other partitions' replays after that. The broker's default maximum
     * ({@code transaction.max.timeout.ms}); a broker with a lower one refuses it, and the rebuild falls back to the
     * projector.
     */
    static final Duration BATCH_TRANSACTION_TIMEOUT = Duration.ofMinutes(15);

    /** Runs after everything is sent, before the commit (tests: a kill there). */
    static volatile Runnable beforeCommit = () -> { };

    /**
     * Gets the projector's processor suppliers by node name and gives the ones the batch runs. A seam for tests (a
     * processor with a bug, to see the batch stop and what a caller does then); nothing in the product sets it.
     */
    public static volatile java.util.function.UnaryOperator<Map<String, ProcessorSupplier<?, ?, ?, ?>>> processorSuppliers = p -> p;

    /**
     * Aborts the transaction of a batch rebuild killed before its commit, if one is open: until then its records hold
     * back the last stable offset of every partition it wrote to ({@code sessions.events} among them), and
     * {@code read_committed} readers (the projector) stop there. Quick when there is none; a failure (the broker
     * unreachable for 15 s, transactions refused) is logged and changes nothing.
     */
    public static void abortUnfinished(String bootstrap) {
        Map<String, Object> config = producerConfig(bootstrap, Duration.ofMinutes(1));
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
        } catch (org.apache.kafka.common.KafkaException e) {
            LOG.warn("could not check for a batch rebuild's unfinished transaction ({}): if one is open, readers stop at it until it "
                    + "times out", e.toString());
        }
    }

    private static Map<String, Object> producerConfig(String bootstrap, Duration transactionTimeout) {
        return new HashMap<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID,
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) transactionTimeout.toMillis(),
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", // as the projector's own writes: the same records fit
                ProducerConfig.LINGER_MS_CONFIG, 10,
                ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024,
                ProducerConfig.BUFFER_MEMORY_CONFIG, 128L * 1024 * 1024,
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Topics.LARGE_RECORD_BYTES));
    }

    /**
     * What the transaction sent: the last send of each job per partition (a producer sends a partition's records in
     * order, so the last one's offset is the partition's highest). The transactional producer fails every later send
     * and the commit after a refused one, so the last sends tell whether any was refused.
     */
    static final class Sent {
        private final java.util.concurrent.ConcurrentLinkedQueue<Future<org.apache.kafka.clients.producer.RecordMetadata>> lasts = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final Map<TopicPartition, Long> last = new HashMap<>();

        void add(Future<org.apache.kafka.clients.producer.RecordMetadata> lastOfJob) {
            lasts.add(lastOfJob);
        }

        /**
         * Reads the sends' results; call after {@code flush}.
         *
         * @throws Failed when a send was refused (the transaction is then not committed)
         */
        void check() throws InterruptedException {
            for (Future<org.apache.kafka.clients.producer.RecordMetadata> f : lasts) {
                try {
                    org.apache.kafka.clients.producer.RecordMetadata md = f.get();
                    last.merge(new TopicPartition(md.topic(), md.partition()), md.offset(), Math::max);
                } catch (ExecutionException e) {
                    throw new Failed("batch rebuild: Kafka refused its writes", e.getCause());
                }
            }
        }

        /**
         * Waits until every partition written is readable to {@code read_committed} readers past its last record: a
         * commit returns once the coordinator has decided it, and its markers reach the partitions a moment later.
         */
        void awaitReadable(Admin admin) throws ExecutionException, InterruptedException {
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                Map<TopicPartition, Long> stable = TopicAdmin.offsets(admin, last.keySet(), OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
                if (last.entrySet().stream().allMatch(en -> stable.get(en.getKey()) > en.getValue())) return;
                if (System.nanoTime() > until) {
                    LOG.warn("batch rebuild: committed, but not yet readable everywhere after 30 s");
                    return;
                }
                Thread.sleep(20);
            }
        }
    }

    /** The changelog topic of a projector store, as Kafka Streams names it. */
    static String changelog(String store) {
        return Projector.APPLICATION_ID + "-" + store + "-changelog";
    }

    /**
     * The result of a finished job (a replay's task, or null for a write).
     *
     * @throws Failed             the job's own {@link Failed}; out of heap; any other RuntimeException but Kafka's
     * @throws ExecutionException Kafka's exceptions (a broker unreachable or refusing) and checked ones
     */
    private static <T> T result(Future<T> f) throws InterruptedException, ExecutionException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Failed failed) throw failed;
            if (e.getCause() instanceof OutOfMemoryError) {
                // the batch's own state filled the heap: dropped with the tasks, the projector replays instead
                throw new Failed("batch rebuild: out of heap (" + (Runtime.getRuntime().maxMemory() >> 20)
                        + " MB); give the JVM more (-Xmx) or replay with the projector", e.getCause());
            }
            if (e.getCause() instanceof RuntimeException r && !(r instanceof org.apache.kafka.common.KafkaException)) {
                throw new Failed("batch rebuild: stopped on an unexpected error", r);
            }
            throw e;
        }
    }

    /** Creates the changelog topics as Kafka Streams does for a key-value store (compacted, create time); returns their names. */
    private static List<String> createChangelogs(Admin admin, int partitions, int replicationFactor) throws ExecutionException, InterruptedException {
        List<NewTopic> topics = new ArrayList<>();
        for (Projector.StoreSpec s : Projector.STORES) {
            topics.add(new NewTopic(changelog(s.name()), partitions, (short) replicationFactor)
                    .configs(Map.of("cleanup.policy", "compact", "message.timestamp.type", "CreateTime")));
        }
        admin.createTopics(topics).all().get();
        return topics.stream().map(NewTopic::name).toList();
    }

    /**
     * The projector's node graph, read from its topology's description: each node's successors, the sinks' topics,
     * and the processor suppliers ({@link Projector#processors}).
     */
    record Graph(Map<String, List<String>> successors, Map<String, Topic<?, ?>> sinks, Map<String, Integer> sinkPartitions,
                 Map<String, ProcessorSupplier<?, ?, ?, ?>> processors) {
        static Graph of(RetirementRules.Config rules, Admin admin) throws ExecutionException, InterruptedException {
            Map<String, List<String>> successors = new HashMap<>();
            Map<String, Topic<?, ?>> sinks = new HashMap<>();
            Map<String, Integer> sinkPartitions = new HashMap<>();
            Map<String, Topic<?, ?>> byName = new HashMap<>();
            for (Topic<?, ?> t : TopicAdmin.all()) byName.put(t.name(), t);
            Map<String, ProcessorSupplier<?, ?, ?, ?>> processors = processorSuppliers.apply(
                    Projector.processors(rules, ConfigWatcher.fromEnvironment(Clock.systemUTC(), LOG::warn)));
            for (TopologyDescription.Subtopology sub : Projector.buildTopology(processors, true).describe().subtopologies()) {
                for (TopologyDescription.Node n : sub.nodes()) {
                    successors.put(n.name(), n.successors().stream().map(TopologyDescription.Node::name).toList());
                    if (n instanceof TopologyDescription.Sink s) {
                        Topic<?, ?> t = byName.get(s.topic());
                        if (t == null) throw new IllegalStateException("sink " + s.name() + " writes to an undeclared topic " + s.topic());
                        sinks.put(s.name(), t);
                        sinkPartitions.put(t.name(), TopicAdmin.partitions(admin, t.name()).size());
                    }
                }
            }
            for (String node : successors.keySet()) {
                if (!node.equals(Projector.SOURCE) && !sinks.containsKey(node) && !processors.containsKey(node)) {
                    throw new IllegalStateException("the topology's node " + node + " has no processor supplier in Projector.processors");
                }
            }
            return new Graph(successors, sinks, sinkPartitions, processors);
        }
    }

    /** One partition's replay: its processors, its stores, its output until the write. */
    private static final class Task {
        private final TopicPartition tp;
        private final long begin;
        private final long end;
        private final Graph graph;
        private final Map<String, Object> configs;
        private final String bootstrap;
        private final AtomicLong progress;
        private final AtomicBoolean stop;
        private final Map<String, MapStore<?>> stores = new LinkedHashMap<>();
        /** The graph's nodes by name, each with its processor or sink and its successors (made at the start of the replay). */
        private final Map<String, Node> nodes = new HashMap<>();
        private final List<Punctuation> punctuations = new ArrayList<>();
        private final ProcessingExceptionHandler processingHandler;
        private final DeserializationExceptionHandler deserializationHandler;
        /** The newest record of each view key (topic, key), with the value it encodes. */
        final Map<String, View> views = new HashMap<>();
        /** Decisions and dead letters, in the order they were made. */
        final List<ProducerRecord<byte[], byte[]>> appends = new ArrayList<>();
        long replayed;
        final java.util.concurrent.atomic.LongAdder storeRecords = new java.util.concurrent.atomic.LongAdder();
        long decisions;
        long deadLettered;
        // the record being processed (Kafka Streams' record context)
        private ConsumerRecord<byte[], byte[]> current;
        private long wallClock = System.currentTimeMillis();
        private long streamTime = -1;

        Task(TopicPartition tp, long begin, long end, Graph graph, Map<String, Object> configs, String bootstrap,
             AtomicLong progress, AtomicBoolean stop) {
            this.tp = tp;
            this.begin = begin;
            this.end = end;
            this.graph = graph;
            this.configs = configs;
            this.bootstrap = bootstrap;
            this.progress = progress;
            this.stop = stop;
            for (Projector.StoreSpec s : Projector.STORES) stores.put(s.name(), new MapStore<>(s.name(), s.iteration(), (int) Math.min(1 << 18, Math.max(1 << 12, (end - begin) / 4))));
            this.processingHandler = handler(configs, StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, ProcessingExceptionHandler.class);
            this.deserializationHandler = handler(configs, StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, DeserializationExceptionHandler.class);
            processingHandler.configure(configs);
            deserializationHandler.configure(configs);
        }

        /** The exception handler the projector's Streams configuration names (a class or its name). */
        private static <H> H handler(Map<String, Object> configs, String key, Class<H> type) {
            Object v = configs.get(key);
            try {
                Class<?> c = v instanceof Class<?> k ? k : Class.forName(String.valueOf(v));
                return type.cast(c.getDeclaredConstructor().newInstance());
            } catch (ReflectiveOperationException | ClassCastException e) {
                throw new IllegalStateException("cannot make the projector's " + key + " (" + v + ")", e);
            }
        }

        @SuppressWarnings("unchecked")
        void replay() {
            for (String name : graph.successors().keySet()) {
                Topic<?, ?> sink = graph.sinks().get(name);
                ProcessorSupplier<?, ?, ?, ?> supplier = graph.processors().get(name);
                nodes.put(name, new Node(name, supplier == null ? null : (Processor<Object, Object, Object, Object>) supplier.get(), sink,
                        sink == null ? null : (Serializer<Object>) sink.keySerde().serializer(),
                        sink == null ? null : (Serializer<Object>) sink.valueSerde().serializer(),
                        sink == null ? 0 : graph.sinkPartitions().get(sink.name())));
            }
            for (Node n : nodes.values()) n.children = graph.successors().get(n.name).stream().map(nodes::get).toArray(Node[]::new);
            for (Node n : nodes.values()) {
                if (n.processor != null) n.processor.init(new NodeContext(n));
            }
            Node[] sourceChildren = nodes.get(Projector.SOURCE).children;
            Deserializer<?> keys = Topics.EVENTS.keySerde().deserializer();
            Deserializer<?> values = Topics.EVENTS.valueSerde().deserializer();
            if (begin < end) {
                Map<String, Object> c = new HashMap<>(Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString().toLowerCase(java.util.Locale.ROOT),
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000,
                        ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 * 1024 * 1024,
                        ConsumerConfig.CLIENT_ID_CONFIG, "batch-rebuild-" + tp.partition()));
                try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    consumer.assign(List.of(tp));
                    consumer.seek(tp, begin);
                    while (consumer.position(tp) < end) {
                        if (stop.get()) return;
                        long before = replayed;
                        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                            if (r.offset() >= end) break;
                            apply(r, keys, values, sourceChildren);
                            replayed++;
                        }
                        progress.addAndGet(replayed - before); // once per poll: a counter shared by the threads
                    }
                }
            }
            current = null;
            publishEverything();
            for (Node n : nodes.values()) {
                if (n.processor != null) n.processor.close();
            }
        }

        private void apply(ConsumerRecord<byte[], byte[]> r, Deserializer<?> keys, Deserializer<?> values, Node[] sourceChildren) {
            current = r;
            streamTime = Math.max(streamTime, r.timestamp());
            Object key;
            Object value;
            try {
                key = keys.deserialize(r.topic(), r.headers(), r.key());
                value = values.deserialize(r.topic(), r.headers(), r.value());
            } catch (RuntimeException e) {
                DeserializationExceptionHandler.Response response = deserializationHandler.handleError(errorContext(Projector.SOURCE), r, e);
                if (response.result() == DeserializationExceptionHandler.Result.FAIL) {
                    throw new Failed("batch rebuild: cannot decode " + tp + "@" + r.offset(), e);
                }
                deadLetters(response.deadLetterQueueRecords());
                return;
            }
            Record<Object, Object> record = new Record<>(key, value, r.timestamp(), r.headers());
            for (Node child : sourceChildren) deliver(child, record);
        }

        /** The publication punctuations, ticked (100 ms of wall-clock time apart) until no mark is left to publish. */
        private void publishEverything() {
            long ticks = 0;
            do {
                wallClock += Projector.VIEW_EMIT_INTERVAL.toMillis();
                for (Punctuation p : List.copyOf(punctuations)) {
                    if (p.cancelled) continue;
                    try {
                        p.punctuator.punctuate(wallClock);
                    } catch (RuntimeException e) {
                        throw new Failed("batch rebuild: a publication of partition " + tp + " failed", e);
                    }
                }
                if (++ticks > 10_000_000) throw new Failed("batch rebuild: the publication of " + tp + " does not end", null);
            } while (!stores.get(StoreNames.PENDING_VIEWS).map.isEmpty() || !stores.get(StoreNames.PENDING_CORPUS).map.isEmpty());
        }

        private void deliver(Node node, Record<Object, Object> record) {
            if (node.sink != null) {
                write(node, record);
                return;
            }
            try {
                node.processor.process(record);
            } catch (Failed f) {
                throw f;
            } catch (RuntimeException e) {
                if (current == null) throw new Failed("batch rebuild: processor " + node.name + " failed in a publication", e);
                if (!causedBy(e, InvalidEventException.class)) {
                    // not the record's fault: the projector retries it after restoring its stores; the handler is not
                    // asked, since it would remember the record as failed once and dead-letter it in that replay
                    throw new Failed("batch rebuild: processor " + node.name + " failed on " + tp + "@" + current.offset()
                            + " for a reason other than the record", e);
                }
                ProcessingExceptionHandler.Response response = processingHandler.handleError(errorContext(node.name), record, e);
                if (response.result() == ProcessingExceptionHandler.Result.FAIL) {
                    throw new Failed("batch rebuild: the dead-letter handler refused an invalid event at " + tp + "@" + current.offset(), e);
                }
                deadLetters(response.deadLetterQueueRecords());
            }
        }

        private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (type.isInstance(t)) return true;
            }
            return false;
        }

        private void deadLetters(List<ProducerRecord<byte[], byte[]>> records) {
            appends.addAll(records);
            deadLettered += records.size();
        }

        private void write(Node node, Record<Object, Object> record) {
            Topic<?, ?> topic = node.sink;
            String key = (String) record.key();
            byte[] k = node.keySerializer.serialize(topic.name(), record.key());
            byte[] v = node.valueSerializer.serialize(topic.name(), record.value());
            int partition = partitioner.partitions(topic.name(), key, record.value(), node.sinkPartitions).orElseThrow().iterator().next();
            ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(topic.name(), partition, record.timestamp(), k, v, record.headers());
            if (topic.compacted()) {
                // a view the final publication wrote (no record is processed after it, so its value changes no more)
                // may lend its bytes to the store entry holding the same value
                boolean lends = current == null && topic.valueSerde() instanceof AvroSerde<?>;
                views.put(topic.name() + "\n" + key, new View(out, lends ? record.value() : null));
            } else {
                appends.add(out);
                decisions++;
            }
        }

        private final AccountPartitioner<Object> partitioner = new AccountPartitioner<>();

        /** The jobs that send this partition's store entries (one per store) and its outputs, in the open transaction. */
        List<Runnable> writes(KafkaProducer<byte[], byte[]> producer, Sent sent) {
            Map<Object, byte[]> encoded = encodedViews();
            List<Runnable> jobs = new ArrayList<>();
            for (Projector.StoreSpec spec : Projector.STORES) jobs.add(() -> writeStore(producer, spec, encoded, sent));
            jobs.add(() -> writeOutputs(producer, sent));
            return jobs;
        }

        /** Sends the entries of one of this partition's stores to its changelog, in the open transaction. */
        @SuppressWarnings("unchecked")
        void writeStore(KafkaProducer<byte[], byte[]> producer, Projector.StoreSpec spec, Map<Object, byte[]> encoded, Sent sent) {
            StringSerializer keys = new StringSerializer();
            String topic = changelog(spec.name());
            Serializer<Object> values = (Serializer<Object>) spec.serde().serializer();
            boolean reuse = spec.serde() instanceof AvroSerde<?>;
            long n = 0;
            Future<org.apache.kafka.clients.producer.RecordMetadata> last = null;
            for (Map.Entry<String, ?> e : stores.get(spec.name()).map.entrySet()) {
                byte[] value = reuse ? encoded.get(e.getValue()) : null;
                if (value == null) value = values.serialize(topic, e.getValue());
                last = producer.send(new ProducerRecord<>(topic, tp.partition(), keys.serialize(topic, e.getKey()), value));
                if ((++n & 1023) == 0 && stop.get()) return;
            }
            if (last != null) sent.add(last);
            storeRecords.add(n);
        }

        /** Sends this partition's views, decisions and dead letters, in the open transaction. */
        void writeOutputs(KafkaProducer<byte[], byte[]> producer, Sent sent) {
            Map<TopicPartition, Future<org.apache.kafka.clients.producer.RecordMetadata>> last = new HashMap<>();
            for (View v : views.values()) send(producer, v.record(), last, sent);
            for (ProducerRecord<byte[], byte[]> r : appends) send(producer, r, last, sent);
            last.values().forEach(sent::add);
        }

        /** Sends a record, noting its result as its partition's last, or in {@code sent} when the producer chooses the partition. */
        private static void send(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> r,
                                 Map<TopicPartition, Future<org.apache.kafka.clients.producer.RecordMetadata>> last, Sent sent) {
            var f = producer.send(r);
            if (r.partition() == null) sent.add(f);
            else last.put(new TopicPartition(r.topic(), r.partition()), f);
        }

        /**
         * The Avro encoding of each view the final publication wrote, by its value's identity: a store entry holding the
         * very object (a session's chain, its retirement view), stored with the same single-object encoding, is written to
         * its changelog with these bytes instead of being encoded again. No record is processed after the final
         * publication, so none of these objects changed after its view was encoded.
         */
        Map<Object, byte[]> encodedViews() {
            Map<Object, byte[]> out = new java.util.IdentityHashMap<>(views.size() * 2);
            for (View v : views.values()) {
                if (v.lent() != null) out.put(v.lent(), v.record().value());
            }
            return out;
        }

        private ErrorHandlerContext errorContext(String node) {
            ConsumerRecord<byte[], byte[]> r = current;
            return new ErrorContext(r.topic(), r.partition(), r.offset(), r.headers(), node, new TaskId(0, tp.partition()), r.timestamp(),
                    r.key(), r.value());
        }

        /** A processor node's context: forwards to the node's successors, hands out the task's stores. */
        private final class NodeContext implements ProcessorContext<Object, Object> {
            private final Node node;

            NodeContext(Node node) {
                this.node = node;
            }

            @Override
            @SuppressWarnings("unchecked")
            public <K, V> void forward(Record<K, V> record) {
                for (Node child : node.children) deliver(child, (Record<Object, Object>) record);
            }

            @Override
            @SuppressWarnings("unchecked")
            public <K, V> void forward(Record<K, V> record, String childName) {
                for (Node child : node.children) {
                    if (child.name.equals(childName)) {
                        deliver(child, (Record<Object, Object>) record);
                        return;
                    }
                }
                throw new IllegalStateException("processor " + node.name + " forwarded to " + childName + ", which is not one of its successors");
            }

            @Override
            public String applicationId() {
                return Projector.APPLICATION_ID;
            }

            @Override
            public TaskId taskId() {
                return new TaskId(0, tp.partition());
            }

            @Override
            public Optional<RecordMetadata> recordMetadata() {
                ConsumerRecord<byte[], byte[]> r = current;
                return r == null ? Optional.empty() : Optional.of(new Metadata(r.topic(), r.partition(), r.offset()));
            }

            @Override
            public Serde<?> keySerde() {
                return Topics.EVENTS.keySerde();
            }

            @Override
            public Serde<?> valueSerde() {
                return Topics.EVENTS.valueSerde();
            }

            @Override
            public File stateDir() {
                throw new UnsupportedOperationException("a batch rebuild keeps no state folder");
            }

            @Override
            public StreamsMetrics metrics() {
                throw new UnsupportedOperationException("a batch rebuild has no Streams metrics");
            }

            @Override
            @SuppressWarnings("unchecked")
            public <S extends StateStore> S getStateStore(String name) {
                MapStore<?> s = stores.get(name);
                if (s == null) throw new IllegalStateException("no store " + name + " in Projector.STORES");
                return (S) s;
            }

            @Override
            public Cancellable schedule(Duration interval, PunctuationType type, Punctuator callback) {
                Punctuation p = new Punctuation(callback);
                punctuations.add(p);
                return () -> p.cancelled = true;
            }

            @Override
            public Cancellable schedule(Instant startTime, Duration interval, PunctuationType type, Punctuator callback) {
                return schedule(interval, type, callback);
            }

            @Override
            public void commit() {
            }

            @Override
            public Map<String, Object> appConfigs() {
                return configs;
            }

            @Override
            public Map<String, Object> appConfigsWithPrefix(String prefix) {
                Map<String, Object> out = new HashMap<>();
                configs.forEach((k, v) -> {
                    if (k.startsWith(prefix)) out.put(k.substring(prefix.length()), v);
                });
                return out;
            }

            @Override
            public long currentSystemTimeMs() {
                return wallClock;
            }

            @Override
            public long currentStreamTimeMs() {
                return streamTime;
            }
        }
    }

    /** A node of a task's graph: a processor (with its own instance) or a sink (with its topic's serializers). */
    private static final class Node {
        final String name;
        final Processor<Object, Object, Object, Object> processor;
        final Topic<?, ?> sink;
        final Serializer<Object> keySerializer;
        final Serializer<Object> valueSerializer;
        /** The sink topic's partitions. */
        final int sinkPartitions;
        Node[] children;

        Node(String name, Processor<Object, Object, Object, Object> processor, Topic<?, ?> sink, Serializer<Object> keySerializer,
             Serializer<Object> valueSerializer, int sinkPartitions) {
            this.name = name;
            this.processor = processor;
            this.sink = sink;
            this.keySerializer = keySerializer;
            this.valueSerializer = valueSerializer;
            this.sinkPartitions = sinkPartitions;
        }
    }

    /**
     * A view record to write, and the value it encodes when that value may lend these bytes to a store entry holding it
     * (written by the final publication to a topic of Avro single-object encoded values; else null).
     */
    record View(ProducerRecord<byte[], byte[]> record, Object lent) {
    }

    private static final class Punctuation {
        final Punctuator punctuator;
        volatile boolean cancelled;

        Punctuation(Punctuator punctuator) {
            this.punctuator = punctuator;
        }
    }

    /** The record being processed, as a processor sees it. */
    private record Metadata(String topic, int partition, long offset) implements RecordMetadata {
    }

    /** The error handlers' view of the record that failed (Kafka Streams' ErrorHandlerContext). */
    private record ErrorContext(String topic, int partition, long offset, Headers headers, String processorNodeId, TaskId taskId,
                                long timestamp, byte[] sourceRawKey, byte[] sourceRawValue) implements ErrorHandlerContext {
    }

    /**
     * A key-value store in a map: live objects, like {@code WriteBackStore}'s. Iterated in the key order of a Kafka
     * Streams store (UTF-8 bytes) when its declaration allows ({@link Projector.Iteration}): the keys are then also kept
     * in a sorted set, brought up to date only when a processor iterates (the keys put or deleted since are noted, and
     * the set is made again from the map when they outnumber its entries). So a store scanned now and then (the corpus
     * documents, scanned when a table is first used) costs a hash map's put, not a sorted map's. Iterators read a copy,
     * so the store may change while one is open.
     */
    static final class MapStore<V> implements KeyValueStore<String, V> {
        private final String name;
        private final Projector.Iteration iteration;
        /** The entries. */
        final HashMap<String, V> map;
        /** The keys in store order as of the last iteration, or null (made at the next one). */
        private TreeSet<String> sorted;
        /** Keys put or deleted since {@link #sorted} was brought up to date (while it is kept). */
        private final List<String> changed = new ArrayList<>();
        /** Whether a key holds a character from U+D800 up: then String order differs from UTF-8 order. */
        private boolean beyondUtf16Order;

        /** @param capacity the hash map's initial capacity (a hint: the entries expected) */
        MapStore(String name, Projector.Iteration iteration, int capacity) {
            this.name = name;
            this.iteration = iteration;
            this.map = new HashMap<>(capacity);
        }

        MapStore(String name, Projector.Iteration iteration) {
            this(name, iteration, 1 << 12);
        }

        @Override
        public void put(String key, V value) {
            if (value == null) {
                delete(key);
                return;
            }
            if (map.put(key, value) == null && iteration != Projector.Iteration.NONE) {
                if (!beyondUtf16Order && !inUtf16OrderAsInUtf8(key)) {
                    beyondUtf16Order = true;
                    sorted = null; // made again in UTF-8 order
                }
                changed(key);
            }
        }

        private void changed(String key) {
            if (sorted == null) return;
            changed.add(key);
            if (changed.size() > map.size() + 1024) { // cheaper to make it again when next needed
                sorted = null;
                changed.clear();
            }
        }

        /** Whether {@link String#compareTo} orders the key among others as their UTF-8 bytes do: no char from U+D800 up. */
        private static boolean inUtf16OrderAsInUtf8(String key) {
            for (int i = 0; i < key.length(); i++) {
                if (key.charAt(i) >= 0xD800) return false;
            }
            return true;
        }

        @Override
        public V putIfAbsent(String key, V value) {
            V old = map.get(key);
            if (old == null) put(key, value);
            return old;
        }

        @Override
        public void putAll(List<KeyValue<String, V>> entries) {
            for (KeyValue<String, V> kv : entries) put(kv.key, kv.value);
        }

        @Override
        public V delete(String key) {
            V old = map.remove(key);
            if (old != null && iteration != Projector.Iteration.NONE) changed(key);
            return old;
        }

        @Override
        public V get(String key) {
            return map.get(key);
        }

        /** The keys in store order, up to date; refuses an iteration the store's declaration does not allow. */
        private NavigableSet<String> sorted(String op) {
            boolean whole = op.equals("all") || op.equals("reverseAll");
            if (iteration == Projector.Iteration.NONE || (iteration == Projector.Iteration.WHOLE && !whole)) {
                throw new UnsupportedOperationException("store " + name + " is iterated (" + op + ") but declared " + iteration + " in Projector.STORES");
            }
            if (sorted == null) {
                sorted = new TreeSet<>(beyondUtf16Order ? Keys.UTF8_ORDER : null);
                sorted.addAll(map.keySet());
            } else {
                for (String k : changed) {
                    if (map.containsKey(k)) sorted.add(k);
                    else sorted.remove(k);
                }
            }
            changed.clear();
            return sorted;
        }

        @Override
        public KeyValueIterator<String, V> range(String from, String to) {
            return iterator(between(from, to, "range").iterator(), null);
        }

        /** Keys from {@code from} to {@code to}, both included; null is unbounded (as {@link KeyValueStore#range}). */
        private NavigableSet<String> between(String from, String to, String op) {
            NavigableSet<String> m = sorted(op);
            return from == null && to == null ? m : from == null ? m.headSet(to, true)
                    : to == null ? m.tailSet(from, true) : m.subSet(from, true, to, true);
        }

        @Override
        public KeyValueIterator<String, V> all() {
            return iterator(sorted("all").iterator(), null);
        }

        @Override
        public <PS extends Serializer<P>, P> KeyValueIterator<String, V> prefixScan(P prefix, PS serializer) {
            String p = new String(serializer.serialize(null, prefix), StandardCharsets.UTF_8);
            return iterator(sorted("prefixScan").tailSet(p, true).iterator(), p);
        }

        @Override
        public KeyValueIterator<String, V> reverseRange(String from, String to) {
            return iterator(between(from, to, "reverseRange").descendingIterator(), null);
        }

        @Override
        public KeyValueIterator<String, V> reverseAll() {
            return iterator(sorted("reverseAll").descendingIterator(), null);
        }

        private KeyValueIterator<String, V> iterator(Iterator<String> keys, String prefix) {
            List<KeyValue<String, V>> copy = new ArrayList<>();
            while (keys.hasNext()) {
                String k = keys.next();
                if (prefix != null && !k.startsWith(prefix)) break;
                copy.add(KeyValue.pair(k, map.get(k)));
            }
            return new KeyValueIterator<>() {
                private int at;

                @Override
                public boolean hasNext() {
                    return at < copy.size();
                }

                @Override
                public KeyValue<String, V> next() {
                    return copy.get(at++);
                }

                @Override
                public String peekNextKey() {
                    if (!hasNext()) throw new java.util.NoSuchElementException();
                    return copy.get(at).key;
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public long approximateNumEntries() {
            return map.size();
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void init(StateStoreContext context, StateStore root) {
        }

        @Override
        public void close() {
        }

        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public boolean isOpen() {
            return true;
        }
    }
}
