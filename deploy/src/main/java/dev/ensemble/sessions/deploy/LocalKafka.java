package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.schema.Secrets;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntUnaryOperator;

/**
 * A real single-node Apache Kafka broker (KRaft, broker and controller in one {@link KafkaRaftServer}) running in
 * this JVM, for the one-command local launcher.
 *
 * <p>Everything lives under {@code dataDir/kafka}: the {@code __cluster_metadata} log in {@code metadata/}, the
 * partitions in {@code logs/} (each with Kafka's {@code meta.properties}), and {@code localkafka.lock}. The first
 * start formats both folders (new random cluster id, node id 1, the latest production {@code metadata.version});
 * later starts find {@code metadata/meta.properties} and reuse the storage, so topics and records survive
 * restarts. Each start records its client port in {@code broker-port}; a later start asked for any port (0), or for
 * one that is taken, takes that port again when it is free, so a restart keeps the broker's address
 * ({@link #preferredPort}). Clients connect over SASL_PLAINTEXT (mechanism PLAIN) on {@code 127.0.0.1:<port>} with the credentials in
 * {@code dataDir/kafka-client.properties} ({@link #clientProperties()}, made owner-only at the first start that finds
 * it missing); a client without them is refused. The controller listens on another free loopback port chosen at each
 * start (the quorum is static, so that port may change between restarts), also SASL, with a password made afresh at
 * each start and kept only in memory.
 *
 * <p>The broker is tuned for one node: the offsets, transaction-state and share-state topics have replication
 * factor 1 and min ISR 1 (so exactly-once producers and Streams work), new topics default to replication factor 1,
 * topics are never auto-created, and the first consumer-group rebalance is not delayed. Broker-wide retention is
 * Kafka's default; topics that must be kept forever set {@code retention.ms=-1} themselves.
 *
 * <p>While any {@code LocalKafka} is open, Kafka's {@link Exit} procedures are replaced so that Kafka cannot end
 * the JVM: an exit or halt request is logged and refused with a {@link IllegalStateException} thrown in the calling
 * Kafka thread, and the broker is marked as failed ({@link #failure()}).
 *
 * <p>Thread-safe. One data folder serves one broker at a time: {@code localkafka.lock} is held while the broker
 * runs (it holds the running process's id), so a second start on the same folder, in this or another process, fails
 * with {@link InUse} before touching the storage.
 * (Kafka's own {@code .lock} files in {@code metadata/} and {@code logs/} are a second line against other Kafka
 * processes; with the metadata log inside {@code logs/}, a second combined-mode broker would open and corrupt it
 * before Kafka's lock on that folder stopped it.)
 */
public final class LocalKafka implements AutoCloseable {
    /** The port the local launcher asks for by default; see {@link #start(Path, int)} for what happens if taken. */
    public static final int DEFAULT_PORT = 9092;
    /** The broker's (and the only controller's) node id. */
    public static final int NODE_ID = 1;
    /** Loopback address every listener binds and advertises. */
    public static final String HOST = "127.0.0.1";

    private static final Logger log = LoggerFactory.getLogger(LocalKafka.class);
    private static final String CONTROLLER_LISTENER = "CONTROLLER";
    private static final String BROKER_LISTENER = "CLIENT";
    /** The file in the data folder holding the clients' settings (security.protocol, sasl.mechanism, sasl.jaas.config). */
    public static final String CLIENT_PROPERTIES = "kafka-client.properties";
    private static final String META_PROPERTIES = "meta.properties";
    private static final String LOCK_FILE = "localkafka.lock";
    /** The file in {@code dataDir/kafka} holding the client port of the last start, for the next start to take again. */
    static final String PORT_FILE = "broker-port";
    private static final int START_ATTEMPTS = 3;
    /** The broker's own SASL user, for its requests to its own listeners; never a client's. */
    private static final String BROKER_USER = "broker";

    /** Open instances; they share the JVM-wide exit guard. */
    private static final List<LocalKafka> OPEN = new CopyOnWriteArrayList<>();

    private final Path kafkaDir;
    private final DataDirLock lock;
    private final int port;
    private final int controllerPort;
    private final String clusterId;
    private final boolean formatted;
    private final KafkaClientProperties.Credentials credentials;
    private final KafkaRaftServer server;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile String failure;
    /** How long {@link #close} waits for a broker that failed ({@link #failure()}) to stop. */
    static final java.time.Duration FAILED_STOP_WAIT = java.time.Duration.ofSeconds(30);

    private LocalKafka(Path kafkaDir, DataDirLock lock, int port, int controllerPort, String clusterId,
                       boolean formatted, KafkaClientProperties.Credentials credentials, KafkaRaftServer server) {
        this.credentials = credentials;
        this.kafkaDir = kafkaDir;
        this.lock = lock;
        this.port = port;
        this.controllerPort = controllerPort;
        this.clusterId = clusterId;
        this.formatted = formatted;
        this.server = server;
    }

    /**
     * Starts the broker with its data under {@code dataDir/kafka}, formatting that folder on first use.
     *
     * <p>Returns once the broker and controller have started; call {@link #waitUntilReady(Duration)} before
     * relying on it. If {@code port} is taken on {@value #HOST}, the broker falls back to a free port and logs a
     * warning that names both ports; read the one in use from {@link #port()} or {@link #bootstrapServers()}. On storage
     * that ran before, the port of its last start is taken first when {@code port} is 0 or taken and that port is free.
     * Choosing a free port and binding it are not atomic; if another process grabs a chosen port in between, the
     * start is retried on other free ports (three attempts in all).
     *
     * @param dataDir the launcher's data folder; created if missing
     * @param port    client port on {@value #HOST}, 1..65535, or 0 for any free port
     * @return the running broker; close it to stop it
     * @throws IllegalArgumentException if {@code port} is out of range
     * @throws InUse                   if {@code dataDir/kafka} is in use by another {@code LocalKafka} (in this or
     *                                  another process)
     * @throws IllegalStateException    if the storage cannot be formatted or read (e.g. it belongs
     *                                  to another node id), or the broker fails to start
     * @throws DataFolderUnusable      if {@code dataDir/kafka} cannot be created or locked
     */
    public static LocalKafka start(Path dataDir, int port) {
        return start(dataDir, port, LocalKafka::choosePort);
    }

    /** {@link #start(Path, int)} with the broker-port choice replaceable, so tests can provoke a bind race. */
    static LocalKafka start(Path dataDir, int port, IntUnaryOperator portChooser) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0 (any free port) or 1..65535, got " + port);
        }
        Path kafkaDir = createKafkaFolder(dataDir);
        DataDirLock lock = DataDirLock.acquire(kafkaDir.resolve(LOCK_FILE));
        try {
            Path meta = metadataDir(kafkaDir).resolve(META_PROPERTIES);
            boolean format = !Files.exists(meta);
            String clusterId = format ? format(kafkaDir) : readExistingClusterId(meta);
            KafkaClientProperties.Credentials credentials = KafkaClientProperties.readOrCreate(
                    dataDir.toAbsolutePath().resolve(CLIENT_PROPERTIES));
            int lastPort = format ? 0 : readLastPort(kafkaDir);
            for (int attempt = 1; ; attempt++) {
                int brokerPort = portChooser.applyAsInt(attempt == 1 ? preferredPort(port, lastPort) : port);
                int controllerPort = freePort(brokerPort);
                try {
                    LocalKafka kafka = launch(kafkaDir, lock, brokerPort, controllerPort, clusterId, format, credentials);
                    writeLastPort(kafkaDir, brokerPort);
                    if (lastPort != 0 && brokerPort != lastPort) {
                        log.warn("The local Kafka broker listens on port {} now, not on {} as at its last start; clients "
                                + "started before must be started again", brokerPort, lastPort);
                    }
                    log.info("Local Kafka broker started on {} (cluster id {}, data in {}, {})",
                            kafka.bootstrapServers(), clusterId, kafkaDir, format ? "freshly formatted" : "existing data");
                    return kafka;
                } catch (RuntimeException e) {
                    String why = rootCause(e);
                    boolean portTaken = hasCause(e, BindException.class);
                    if (!portTaken || attempt == START_ATTEMPTS) {
                        throw new IllegalStateException("could not start the local Kafka broker on " + HOST + ":"
                                + brokerPort + " (controller port " + controllerPort + ") with data in " + kafkaDir
                                + ": " + why, e);
                    }
                    log.warn("Port {} or {} on {} was taken while the local Kafka broker started ({}); retrying on "
                            + "other ports", brokerPort, controllerPort, HOST, why);
                }
            }
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /**
     * Holds {@code dataDir/kafka} as a running broker does, without starting one (for tests of a second start).
     *
     * @throws InUse if another {@code LocalKafka} holds it
     */
    static AutoCloseable holdDataFolder(Path dataDir) throws IOException {
        Path kafkaDir = dataDir.toAbsolutePath().resolve("kafka");
        Files.createDirectories(kafkaDir);
        return DataDirLock.acquire(kafkaDir.resolve(LOCK_FILE));
    }

    /**
     * Creates {@code dataDir/kafka}, the broker's folder, when missing.
     *
     * @throws DataFolderUnusable when it cannot: "cannot create the Kafka data folder DIR: REASON" ({@link DataDir#reason})
     */
    static Path createKafkaFolder(Path dataDir) {
        Path kafkaDir = dataDir.toAbsolutePath().resolve("kafka");
        try {
            Files.createDirectories(kafkaDir);
        } catch (IOException e) {
            throw new DataFolderUnusable("cannot create the Kafka data folder " + kafkaDir + ": " + DataDir.reason(e, kafkaDir), e);
        }
        return kafkaDir;
    }

    /**
     * Fails when a broker holds {@code dataDir/kafka} now (checked by taking its lock and letting it go); does nothing,
     * and creates nothing, when that folder does not exist yet. For a command to say so before it checks anything else.
     *
     * @throws InUse if another {@code LocalKafka} holds it
     */
    static void requireNotInUse(Path dataDir) {
        Path kafkaDir = dataDir.toAbsolutePath().resolve("kafka");
        if (Files.isDirectory(kafkaDir)) {
            DataDirLock.acquire(kafkaDir.resolve(LOCK_FILE)).close();
        }
    }

    /** Starts a broker on formatted storage; on failure, stops what was started and rethrows. */
    private static LocalKafka launch(Path kafkaDir, DataDirLock lock, int brokerPort, int controllerPort,
                                     String clusterId, boolean formatted, KafkaClientProperties.Credentials credentials) {
        guardExit();
        KafkaRaftServer server = null;
        LocalKafka kafka = null;
        try {
            server = new KafkaRaftServer(new KafkaConfig(brokerConfig(kafkaDir, brokerPort, controllerPort, credentials,
                    Secrets.newSecret()), false), Time.SYSTEM);
            kafka = new LocalKafka(kafkaDir, lock, brokerPort, controllerPort, clusterId, formatted, credentials, server);
            OPEN.add(kafka);
            server.startup();
            return kafka;
        } catch (RuntimeException e) {
            if (kafka != null) {
                OPEN.remove(kafka);
            }
            if (server != null) {
                stopQuietly(server);
            }
            unguardExit();
            throw e;
        }
    }

    /** The broker's client address, {@code 127.0.0.1:<port>}, for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return HOST + ":" + port;
    }

    /**
     * The settings every client of this broker needs besides {@code bootstrap.servers}: {@code security.protocol},
     * {@code sasl.mechanism} and {@code sasl.jaas.config}, as in {@link #clientPropertiesFile()}. A new map each call.
     */
    public Map<String, Object> clientProperties() {
        return credentials.clientProperties();
    }

    /** The owner-only file holding {@link #clientProperties()}: {@code dataDir/kafka-client.properties}. */
    public Path clientPropertiesFile() {
        return credentials.file();
    }

    /** The client port actually in use (never 0; may differ from the requested one, see {@link #start}). */
    public int port() {
        return port;
    }

    /** The controller's loopback port for this run (chosen freshly at each start). */
    public int controllerPort() {
        return controllerPort;
    }

    /** The cluster id stored in {@code meta.properties}; stays the same across restarts on one data folder. */
    public String clusterId() {
        return clusterId;
    }

    /** The folder holding everything this broker stores ({@code metadata/}, {@code logs/}): {@code dataDir/kafka}. */
    public Path dataDir() {
        return kafkaDir;
    }

    /** True if this start formatted empty storage; false if it reused storage formatted earlier. */
    public boolean freshlyFormatted() {
        return formatted;
    }

    /**
     * Why Kafka tried to exit or halt the JVM while this broker was open, if it did (Kafka does so on fatal faults,
     * e.g. a corrupt metadata log or a failed log directory); the broker should then be treated as unusable. The
     * exit procedures are JVM-wide, so a refused exit marks every open {@code LocalKafka}.
     */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * Blocks until an Admin client's {@code describeCluster} lists this broker, retrying until the timeout.
     *
     * @param timeout how long to wait in total; positive
     * @throws IllegalStateException if the broker is closed or has failed ({@link #failure()}), or it is not
     *                               ready within {@code timeout}
     */
    public void waitUntilReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        int requestMs = (int) Math.max(500, Math.min(5_000, timeout.toMillis()));
        Map<String, Object> config = new java.util.HashMap<>(clientProperties());
        config.putAll(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, requestMs,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, requestMs,
                AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 100));
        try (Admin admin = Admin.create(config)) {
            while (true) {
                if (closed.get()) {
                    throw new IllegalStateException("the local Kafka broker is closed");
                }
                if (failure != null) {
                    throw new IllegalStateException("the local Kafka broker failed: " + failure);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("the local Kafka broker on " + bootstrapServers()
                            + " was not ready within " + timeout + (last == null ? "" : ": " + last), last);
                }
                try {
                    DescribeClusterResult cluster = admin.describeCluster();
                    Collection<Node> nodes = cluster.nodes().get(left, TimeUnit.NANOSECONDS);
                    if (nodes.stream().anyMatch(n -> n.id() == NODE_ID)) {
                        return;
                    }
                    last = new IllegalStateException("describeCluster listed no broker yet");
                } catch (ExecutionException e) {
                    last = e.getCause() instanceof Exception c ? c : e;
                } catch (TimeoutException e) {
                    last = e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the local Kafka broker", e);
                }
                sleep(100);
            }
        }
    }

    /**
     * Shuts the broker and controller down (controlled shutdown, logs flushed and closed) and waits until they
     * have stopped. Idempotent. Once the last open {@code LocalKafka} is closed, Kafka's exit procedures are
     * restored.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean stillStopping = false;
        try {
            if (failure == null) {
                server.shutdown();
                server.awaitShutdown();
                log.info("Local Kafka broker on {} stopped", bootstrapServers());
            } else { // a failed broker's controlled shutdown can wait for minutes on what failed: given 30 s
                Thread stop = new Thread(() -> {
                    server.shutdown();
                    server.awaitShutdown();
                }, "ensemble-failed-broker-stop");
                stop.setDaemon(true);
                stop.start();
                stop.join(FAILED_STOP_WAIT.toMillis());
                if (stop.isAlive()) { // it may still write to its folder and ask to end the JVM: lock and guard stay
                    stillStopping = true;
                    log.info("Local Kafka broker on {} failed and did not stop within {}; left to the JVM's exit", bootstrapServers(), FAILED_STOP_WAIT);
                } else {
                    log.info("Local Kafka broker on {} (failed) stopped", bootstrapServers());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stillStopping = failure != null;
        } finally {
            if (!stillStopping) {
                OPEN.remove(this);
                unguardExit();
                lock.close();
            }
        }
    }

    @Override
    public String toString() {
        return "LocalKafka[" + bootstrapServers() + ", " + kafkaDir + "]";
    }

    // ---------------------------------------------------------------------------------------------- config

    /**
     * The broker's settings. Both listeners take SASL PLAIN only: the client listener knows the client user of
     * {@code credentials} and the broker's own user (for its requests to itself), the controller listener only the
     * broker's user; {@code brokerPassword} is made afresh at each start.
     */
    static Map<String, String> brokerConfig(Path kafkaDir, int port, int controllerPort,
                                            KafkaClientProperties.Credentials credentials, String brokerPassword) {
        String plain = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + BROKER_USER
                + "\" password=\"" + brokerPassword + "\" user_" + BROKER_USER + "=\"" + brokerPassword + "\"";
        String clientJaas = plain + " user_" + credentials.user() + "=\"" + credentials.password() + "\";";
        String controllerJaas = plain + ";";
        String client = "listener.name." + BROKER_LISTENER.toLowerCase(java.util.Locale.ROOT) + ".plain.sasl.jaas.config";
        String controller = "listener.name." + CONTROLLER_LISTENER.toLowerCase(java.util.Locale.ROOT) + ".plain.sasl.jaas.config";
        return Map.ofEntries(
                Map.entry("process.roles", "broker,controller"),
                Map.entry("node.id", Integer.toString(NODE_ID)),
                // static quorum: the controller's address comes from config, so its port may change per start
                Map.entry("controller.quorum.voters", NODE_ID + "@" + HOST + ":" + controllerPort),
                Map.entry("controller.listener.names", CONTROLLER_LISTENER),
                Map.entry("listeners", BROKER_LISTENER + "://" + HOST + ":" + port + ","
                        + CONTROLLER_LISTENER + "://" + HOST + ":" + controllerPort),
                Map.entry("advertised.listeners", BROKER_LISTENER + "://" + HOST + ":" + port),
                Map.entry("inter.broker.listener.name", BROKER_LISTENER),
                Map.entry("listener.security.protocol.map",
                        BROKER_LISTENER + ":SASL_PLAINTEXT," + CONTROLLER_LISTENER + ":SASL_PLAINTEXT"),
                // SASL PLAIN on both listeners: the users and passwords live in this config, nothing in the metadata log
                Map.entry("sasl.enabled.mechanisms", "PLAIN"),
                Map.entry("sasl.mechanism.inter.broker.protocol", "PLAIN"),
                Map.entry("sasl.mechanism.controller.protocol", "PLAIN"),
                Map.entry(client, clientJaas),
                Map.entry(controller, controllerJaas),
                // a metadata folder apart from the partitions' folder, so Kafka locks it before the controller starts
                Map.entry("metadata.log.dir", metadataDir(kafkaDir).toString()),
                Map.entry("log.dirs", logsDir(kafkaDir).toString()),
                // one node: internal topics and defaults at replication factor 1, min ISR 1
                Map.entry("offsets.topic.replication.factor", "1"),
                Map.entry("offsets.topic.num.partitions", "3"),
                Map.entry("transaction.state.log.replication.factor", "1"),
                Map.entry("transaction.state.log.min.isr", "1"),
                Map.entry("transaction.state.log.num.partitions", "3"),
                Map.entry("share.coordinator.state.topic.replication.factor", "1"),
                Map.entry("share.coordinator.state.topic.min.isr", "1"),
                Map.entry("share.coordinator.state.topic.num.partitions", "3"),
                Map.entry("default.replication.factor", "1"),
                Map.entry("min.insync.replicas", "1"),
                Map.entry("num.partitions", "1"),
                Map.entry("auto.create.topics.enable", "false"),
                Map.entry("group.initial.rebalance.delay.ms", "0"),
                Map.entry("group.streams.initial.rebalance.delay.ms", "0"),
                // the controller logs an event slower than this at ERROR; its default (2 s) is often passed on a busy laptop
                // while the JVM starts, with nothing wrong; 30 s still reports a controller that is stuck
                Map.entry("controller.performance.always.log.threshold.ms", "30000"),
                // a laptop, not a server: smaller segments and a smaller compaction buffer (default 128 MiB heap)
                Map.entry("log.segment.bytes", Integer.toString(64 * 1024 * 1024)),
                Map.entry("log.cleaner.dedupe.buffer.size", Integer.toString(16 * 1024 * 1024)));
    }

    // ---------------------------------------------------------------------------------------------- storage

    static Path metadataDir(Path kafkaDir) {
        return kafkaDir.resolve("metadata");
    }

    static Path logsDir(Path kafkaDir) {
        return kafkaDir.resolve("logs");
    }

    /** Formats empty storage in {@code kafkaDir} and returns the new cluster id. */
    private static String format(Path kafkaDir) {
        String clusterId = Uuid.randomUuid().toString();
        MetadataVersion version = MetadataVersion.latestProduction();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            new Formatter()
                    .setPrintStream(print)
                    .setNodeId(NODE_ID)
                    .setClusterId(clusterId)
                    .setReleaseVersion(version)
                    .setUnstableFeatureVersionsEnabled(false)
                    .setControllerListenerName(CONTROLLER_LISTENER)
                    .setHasDynamicQuorum(false)
                    .setMetadataLogDirectory(metadataDir(kafkaDir).toString())
                    .setDirectories(List.of(metadataDir(kafkaDir).toString(), logsDir(kafkaDir).toString()))
                    .run();
        } catch (Exception e) {
            throw new IllegalStateException("could not format Kafka storage in " + kafkaDir + ": " + e.getMessage(), e);
        }
        log.debug("Kafka storage formatter said: {}", out.toString(StandardCharsets.UTF_8).trim());
        log.info("Formatted new Kafka storage in {} (cluster id {}, metadata.version {})", kafkaDir, clusterId,
                version.version());
        return clusterId;
    }

    /** Reads {@code cluster.id} from an existing {@code meta.properties}, checking it belongs to node 1. */
    private static String readExistingClusterId(Path meta) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(meta)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + meta + ": " + e.getMessage(), e);
        }
        String clusterId = p.getProperty("cluster.id");
        String nodeId = p.getProperty("node.id");
        if (clusterId == null || clusterId.isBlank()) {
            throw new IllegalStateException(meta + " has no cluster.id; move the folder away to start afresh");
        }
        if (!Integer.toString(NODE_ID).equals(nodeId)) {
            throw new IllegalStateException(meta + " belongs to node.id " + nodeId + ", not " + NODE_ID
                    + "; this folder was not created by LocalKafka");
        }
        log.info("Reusing Kafka storage in {} (cluster id {})", meta.getParent().getParent(), clusterId);
        return clusterId;
    }

    // ---------------------------------------------------------------------------------------------- ports

    /**
     * The port to ask for first on storage that ran before on {@code lastPort} (0: never, or not known): the last port
     * when any port will do ({@code requested} 0) or when the requested one is taken, else the requested one.
     *
     * <p>A restart keeps the broker's address: the metadata log holds the broker's registration with the address of its
     * last run until this run registers again, and after an unclean stop (a killed process, open transactions) the
     * broker's own transaction coordinator starts writing the markers of those transactions from that log. On the same
     * port that works at once; on another, the clients and the coordinator depend on the new registration reaching them.
     */
    static int preferredPort(int requested, int lastPort) {
        if (lastPort == 0 || requested == lastPort) {
            return requested;
        }
        if (requested == 0 || !isFree(requested)) {
            return isFree(lastPort) ? lastPort : requested;
        }
        return requested;
    }

    /** The client port recorded by the last start on {@code kafkaDir}, or 0 when none was (or it cannot be read). */
    static int readLastPort(Path kafkaDir) {
        Path file = kafkaDir.resolve(PORT_FILE);
        try {
            int port = Integer.parseInt(Files.readString(file, StandardCharsets.US_ASCII).strip());
            return port > 0 && port <= 65535 ? port : 0;
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        } catch (IOException | NumberFormatException e) {
            log.warn("Cannot read the last broker port from {} ({}); any free port will do", file, e.toString());
            return 0;
        }
    }

    private static void writeLastPort(Path kafkaDir, int port) {
        Path file = kafkaDir.resolve(PORT_FILE);
        try {
            Files.writeString(file, port + "\n", StandardCharsets.US_ASCII);
        } catch (IOException e) {
            log.warn("Cannot record the broker port in {} ({}); the next start may take another port", file, e.toString());
        }
    }

    /** The requested port if it is free on {@value #HOST}, else (or for 0) a free one. */
    static int choosePort(int requested) {
        if (requested == 0) {
            return freePort(-1);
        }
        if (isFree(requested)) {
            return requested;
        }
        int fallback = freePort(-1);
        log.warn("Port {} on {} is taken; the local Kafka broker uses free port {} instead", requested, HOST,
                fallback);
        return fallback;
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A port the OS reports free on {@value #HOST}, other than {@code not}. */
    private static int freePort(int not) {
        for (int attempt = 0; attempt < 10; attempt++) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
                int port = socket.getLocalPort();
                if (port != not) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot find a free port on " + HOST, e);
            }
        }
        throw new IllegalStateException("cannot find a free port on " + HOST);
    }

    // ---------------------------------------------------------------------------------------------- exit guard

    private static final Object EXIT_LOCK = new Object();
    private static int exitGuards;

    private static void guardExit() {
        synchronized (EXIT_LOCK) {
            if (exitGuards++ == 0) {
                Exit.setExitProcedure((code, message) -> refuseExit("exit", code, message));
                Exit.setHaltProcedure((code, message) -> refuseExit("halt", code, message));
            }
        }
    }

    private static void unguardExit() {
        synchronized (EXIT_LOCK) {
            if (--exitGuards == 0) {
                Exit.resetExitProcedure();
                Exit.resetHaltProcedure();
            }
        }
    }

    private static void refuseExit(String kind, int code, String message) {
        String what = "Kafka tried to " + kind + " the JVM with status " + code
                + (message == null ? "" : " (" + message + ")");
        log.error("{}; refused. The local Kafka broker is probably unusable now; restart the launcher.", what);
        for (LocalKafka kafka : OPEN) {
            if (kafka.failure == null) {
                kafka.failure = what;
            }
        }
        throw new IllegalStateException(what + "; refused by LocalKafka");
    }

    // ---------------------------------------------------------------------------------------------- helpers

    /**
     * The data folder's {@code kafka/} folder, or its lock file, cannot be created, opened or locked (a read-only or
     * missing parent, a file in the way): the message names it and the reason; nothing was started.
     */
    public static final class DataFolderUnusable extends UncheckedIOException {
        DataFolderUnusable(String message, IOException cause) {
            super(message, cause);
        }
    }

    /**
     * A start refused because another {@code LocalKafka} (in this or another process) holds the data folder's
     * {@code kafka/} folder; nothing was started or changed.
     */
    public static final class InUse extends IllegalStateException {
        private final OptionalLong holderPid;

        InUse(Path kafkaDir, OptionalLong holderPid) {
            super("the Kafka data folder " + kafkaDir + " is in use by another local Kafka broker ("
                    + (holderPid.isPresent() ? "process " + holderPid.getAsLong() : "in this or another process")
                    + "); stop it first");
            this.holderPid = holderPid;
        }

        /** The id of the process holding it, when it could be read from the lock file. */
        public OptionalLong holderPid() {
            return holderPid;
        }
    }

    /** An exclusive OS file lock on {@code dataDir/kafka/localkafka.lock}, across processes and within this JVM. */
    private static final class DataDirLock implements AutoCloseable {
        private final FileChannel channel;
        private final FileLock lock;

        private DataDirLock(FileChannel channel, FileLock lock) {
            this.channel = channel;
            this.lock = lock;
        }

        static DataDirLock acquire(Path file) {
            FileChannel channel;
            try {
                channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            } catch (IOException e) {
                throw new DataFolderUnusable("cannot open the lock file " + file + ": " + DataDir.reason(e, file), e);
            }
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            } catch (IOException e) {
                closeQuietly(channel);
                throw new DataFolderUnusable("cannot lock " + file + ": " + DataDir.reason(e, file), e);
            }
            if (lock == null) {
                closeQuietly(channel);
                throw new InUse(file.getParent(), holder(file));
            }
            try { // who holds the folder, for a second start to name it
                channel.truncate(0);
                channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            } catch (IOException e) {
                log.debug("Could not write the process id into {}: {}", file, e.toString());
            }
            return new DataDirLock(channel, lock);
        }

        /** The process id the holder wrote into the lock file, if it can be read. */
        private static OptionalLong holder(Path file) {
            try {
                return OptionalLong.of(Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).strip()));
            } catch (IOException | NumberFormatException e) {
                return OptionalLong.empty(); // not written yet, or a system that keeps a locked file from being read
            }
        }

        @Override
        public void close() {
            try {
                lock.release();
            } catch (IOException e) {
                log.warn("Could not release {}: {}", LOCK_FILE, e.toString());
            } finally {
                closeQuietly(channel);
            }
        }

        private static void closeQuietly(FileChannel channel) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    private static void stopQuietly(KafkaRaftServer server) {
        try {
            server.shutdown();
            server.awaitShutdown();
        } catch (RuntimeException e) {
            log.warn("Error while stopping a Kafka broker that failed to start: {}", e.toString());
        }
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static String rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (caused by " + t + ")";
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the local Kafka broker", e);
        }
    }
}
