package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ComputerAgent;
import dev.ensemble.sessions.agent.ComputerId;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.cleanup.CleanupConfig;
import dev.ensemble.sessions.cleanup.CleanupService;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.projector.ProjectorGenerations;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.service.ChoiceService;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code ensemble-sessions up}: the embedded default (DESIGN.md §8). Starts a real single-node KRaft broker
 * on loopback with its data in the data folder (or uses {@code --bootstrap-servers}), creates the topics,
 * starts the projector, the cleanup service (guide §6 sweeps, unless {@code --no-clean-sessions}), the gateway
 * on {@code http://localhost:<port>} and the computer agent importing the
 * agent stores found here, and runs until Ctrl-C or SIGTERM, then stops everything cleanly and exits 0 ({@link
 * StopSignals}; stopped while still starting, it exits 130 or 143). Starting again keeps everything.
 */
@Command(name = "up", mixinStandardHelpOptions = true,
        description = "Start the whole system on this computer: a Kafka broker, the projector, the cleanup, the HTTP API and the importer.")
final class UpCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(UpCommand.class);

    /**
     * The services {@code up} starts that read the projector's views and switch to a new generation, each acknowledging it
     * ({@link dev.ensemble.sessions.schema.Generations#readerKey}): after a hand-over the projector waits for them before it
     * removes the old generation, and {@code rebuild} follows them until they all read the new one.
     */
    static final List<String> GENERATION_READERS = List.of("gateway", "choice", "cleanup");

    @Option(names = "--data-dir", description = "where everything is kept (default ~/.ensemble-sessions)")
    Path dataDir;

    @Option(names = "--port", defaultValue = "8080", description = "HTTP port (default ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--kafka-port", defaultValue = "9092", description = "the embedded broker's port; another free one is taken when it is busy (default ${DEFAULT-VALUE})")
    int kafkaPort;

    @picocli.CommandLine.Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Option(names = "--replication-factor", defaultValue = "1", description = "of the topics it creates (default ${DEFAULT-VALUE})")
    short replicationFactor;

    @Option(names = "--claude-dir", description = "Claude Code projects folders to import (default ~/.claude/projects)")
    List<Path> claudeDirs;

    @Option(names = "--codex-dir", description = "Codex sessions folders to import (default ~/.codex/sessions)")
    List<Path> codexDirs;

    @Option(names = "--no-import", description = "import no agent store")
    boolean noImport;

    @Option(names = "--account", description = "the local person's account (default: the user name)")
    String account;

    @Option(names = "--poll-seconds", defaultValue = "5", description = "how often the importer looks at every agent store (default ${DEFAULT-VALUE}); between polls it imports the transcripts a watch of the store folders saw change")
    int pollSeconds;

    @Option(names = "--no-clean-sessions", description = "turn the cleanup sweeps off (orchestration.cleanSessions=false); deletions you ask for still happen")
    boolean noCleanSessions;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--completed-window-days", defaultValue = "7", description = "a done or dropped task's session is cleaned up after this many days (default ${DEFAULT-VALUE})")
    int completedWindowDays;

    /**
     * A start that cannot go on for a reason the user can fix (e.g. the HTTP port is taken): it ends {@code up} with its
     * one-line message, no stack trace.
     */
    static final class CannotStart extends RuntimeException {
        CannotStart(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The reason {@code up} cannot listen on the HTTP port, naming the port and the option that changes it. */
    static CannotStart cannotListen(int port, java.net.BindException e) {
        if (e.getMessage() == null || e.getMessage().contains("in use")) {
            return new CannotStart("port " + port + " is in use (by another program, or an 'up' already running);"
                    + " stop it or choose another HTTP port with --port", e);
        }
        return new CannotStart("cannot listen on port " + port + " (" + e.getMessage() + "); choose another HTTP port with --port", e);
    }

    /**
     * The reason {@code up} cannot use the data folder: another {@code up} (or a {@code rebuild}) runs its broker on it.
     * Names the folder, the process holding it (and which command that is, when its command line can be read) and the
     * option that chooses another folder.
     */
    static CannotStart dataFolderInUse(Path root, LocalKafka.InUse e) {
        String by = e.holderPid().isPresent()
                ? holder(e.holderPid().getAsLong(), arguments(e.holderPid().getAsLong()))
                : "another 'up' or 'rebuild'";
        return new CannotStart("the data folder " + root + " is in use by " + by
                + "; stop it or choose another data folder with --data-dir", e);
    }

    /** The broker's folder in the data folder cannot be created or locked: its message (folder and reason) and the option. */
    static CannotStart cannotUseDataFolder(LocalKafka.DataFolderUnusable e) {
        return new CannotStart(e.getMessage() + "; give another --data-dir", e);
    }

    /** A process's command-line arguments, empty when they cannot be read. */
    private static List<String> arguments(long pid) {
        java.util.Optional<String[]> args = ProcessHandle.of(pid).flatMap(h -> h.info().arguments());
        if (args.isPresent()) {
            return List.of(args.get());
        }
        try { // Java leaves the arguments out of a command line longer than 4 KiB (a long class path); Linux has them all
            return List.of(new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                    java.nio.charset.StandardCharsets.UTF_8).split("\0"));
        } catch (java.io.IOException | RuntimeException notLinux) {
            return List.of();
        }
    }

    /** Who holds a data folder, from its process id and command-line arguments (empty when they cannot be read). */
    static String holder(long pid, List<String> arguments) {
        for (String a : arguments) {
            if (a.equals("up")) {
                return "another 'up' (process " + pid + ")";
            }
            if (a.equals("rebuild")) {
                return "a 'rebuild' (process " + pid + ")";
            }
        }
        return "another 'up' or 'rebuild' (process " + pid + ")";
    }

    /** The {@link java.net.BindException} in a failure's cause chain, if any. */
    static java.util.Optional<java.net.BindException> bindFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.BindException b) {
                return java.util.Optional.of(b);
            }
        }
        return java.util.Optional.empty();
    }

    /** Fails with {@link #cannotListen} when the gateway could not listen on the port (port 0: any free port will do). */
    static void requireFreePort(int port) {
        if (port == 0) {
            return;
        }
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.setReuseAddress(true); // as Jetty: a port the last run left in TIME_WAIT is free
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        } catch (java.net.BindException e) {
            throw cannotListen(port, e);
        } catch (java.io.IOException e) {
            // not decidable here: the gateway's own start reports it
        }
    }

    @Override
    public Integer call() throws Exception {
        CommandChecks.requireWindow(spec, completedWindowDays);
        CommandChecks.requirePort(spec, "--port", port);
        CommandChecks.requirePort(spec, "--kafka-port", kafkaPort);
        CommandChecks.requireAtLeast(spec, "--replication-factor", replicationFactor, 1);
        CommandChecks.requireAtLeast(spec, "--poll-seconds", pollSeconds, 1); // also with --no-import: a wrong value is wrong
        if (account != null) {
            CommandChecks.requireAccount(spec, "--account", account);
        }
        Map<String, Object> given = cluster.clientProperties();
        DataDir data = DataDir.of(dataDir);
        if (cluster.bootstrapServers == null) {
            try { // before the ports: a second 'up' on the same folder also finds the first one's ports taken
                LocalKafka.requireNotInUse(data.root());
            } catch (LocalKafka.InUse e) {
                throw dataFolderInUse(data.root(), e);
            } catch (LocalKafka.DataFolderUnusable e) {
                throw cannotUseDataFolder(e);
            }
        }
        requireFreePort(port); // before the broker and the services start: nothing to stop
        cluster.requireReachable(given); // a cluster of one's own that does not answer: one line, before anything changes
        data.createPrivate(); // owner-only, also when it exists already
        if (cluster.bootstrapServers == null) {
            try { // before anything starts: a folder where the broker cannot write ends here, with the reason
                LocalKafka.createKafkaFolder(data.root());
            } catch (LocalKafka.DataFolderUnusable e) {
                throw cannotUseDataFolder(e);
            }
        }
        String who = account != null ? account : System.getProperty("user.name", "local");
        // Ctrl-C and SIGTERM: once ready, stop on this thread and exit 0; while starting, the start stops at its next step,
        // what started stops, 130/143 (ServiceLifetime)
        ServiceLifetime lifetime = new ServiceLifetime("\nstopping…", null);
        try {
            String bootstrap = cluster.bootstrapServers;
            Map<String, Object> security = given; // the cluster's client properties, given to every client
            Path securityFile = cluster.clientPropertiesFile == null ? null : cluster.clientPropertiesFile.toAbsolutePath();
            boolean reusedStorage = false; // the embedded broker's, from an earlier start
            LocalKafka kafka = null;
            if (bootstrap == null) {
                try {
                    kafka = LocalKafka.start(data.root(), kafkaPort);
                } catch (LocalKafka.InUse e) {
                    throw dataFolderInUse(data.root(), e); // refused before anything started
                } catch (LocalKafka.DataFolderUnusable e) { // its lock file cannot be made (e.g. a read-only folder)
                    throw cannotUseDataFolder(e);
                }
                lifetime.started(kafka);
                LocalKafka broker = kafka; // a broker that fails (its disk full) leaves every service stuck: up stops, saying why
                lifetime.started(new BrokerWatch(broker::failure, Duration.ofSeconds(1),
                        failure -> lifetime.stopBecause(BrokerWatch.line(failure, data.root()), 1)));
                kafka.waitUntilReady(Duration.ofSeconds(60));
                bootstrap = kafka.bootstrapServers();
                security = kafka.clientProperties();
                reusedStorage = !kafka.freshlyFormatted();
                securityFile = kafka.clientPropertiesFile();
                System.out.println("Kafka broker (KRaft, single node) on " + bootstrap + ", data in " + kafka.dataDir()
                        + "; its clients need " + securityFile);
            }
            // one registry for every service of this JVM, served by the gateway at GET /metrics (docs/operations.md "Metrics")
            io.micrometer.prometheusmetrics.PrometheusMeterRegistry meters =
                    new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
            String metricsToken = metricsToken(data);
            RetirementRules.Config rules = RetirementRules.Config.defaults().withCompletedWindow(Duration.ofDays(completedWindowDays));
            CleanupConfig cleanupConfig = CleanupConfig.defaults().withCleanSessions(!noCleanSessions);
            try (Admin admin = Admin.create(KafkaClients.config(bootstrap, security))) {
                if (reusedStorage) { // before any service reads: what a crash of the last run left open would stop every reader
                    try {
                        HangingTransactions.endAll(admin, KafkaClients.config(bootstrap, security), Duration.ofSeconds(30));
                    } catch (IllegalStateException e) { // its message says what is left and what to do
                        throw new CannotStart(e.getMessage(), e);
                    }
                }
                TopicAdmin.ensureTopics(admin, Topics.DEFAULT_PARTITIONS, replicationFactor);
                createChangelogs(admin, rules, cleanupConfig, replicationFactor,
                        dev.ensemble.sessions.schema.Generations.serving(bootstrap, security));
            }
            // this computer's id, also with --no-import: `choose` asks in its space (local:<computer-id>)
            String computerId = ComputerId.readOrCreate(data.computerId());
            Map<String, Object> streamsSettings = staticMembership(security, computerId);
            // the serving generation's projector; a rebuild asked for by `rebuild` builds the next one beside it
            ProjectorGenerations projector = new ProjectorGenerations(bootstrap, data.state("projector"), replicationFactor, streamsSettings,
                    rules, GENERATION_READERS, line -> System.out.println("rebuild: " + line)).withMeters(meters);
            lifetime.started(projector);
            projector.start();
            CleanupService cleanup = new CleanupService(bootstrap, data.state("cleanup"), replicationFactor, cleanupConfig, streamsSettings)
                    .withMeters(meters);
            lifetime.started(cleanup);
            cleanup.start();

            Tokens tokens = Tokens.load(data.tokens());
            String token = adminToken(tokens, data.token(), who);
            ChoiceService choice = new ChoiceService(new ChoiceService.Settings(bootstrap, data.state("choice"),
                    replicationFactor, "127.0.0.1", 0, ConfigWatcher.fromEnvironment(Clock.systemUTC(), LOG::info, LOG::warn),
                    Clock.systemUTC())).withClientProperties(streamsSettings).withMeters(meters);
            lifetime.started(choice); // before its start: a start stopped half-way closes what it opened (its producer)
            choice.start();
            Gateway gateway = lifetime.started(new Gateway(new Gateway.Settings(bootstrap, "127.0.0.1", port, data.state("gateway"),
                    replicationFactor, tokens, Clock.systemUTC(), choice.url(), choice.secret())).withClientProperties(streamsSettings)
                    .withMetrics(meters, metricsToken)); // before its start: a start stopped half-way closes what it opened
            try {
                gateway.start();
            } catch (RuntimeException e) {
                throw bindFailure(e).<RuntimeException>map(b -> cannotListen(port, b)).orElse(e); // taken since the check
            }
            awaitServices(gateway::startState, choice::state, START_TIMEOUT, START_NOTE_EVERY, System.out);
            String url = "http://localhost:" + gateway.port();
            data.writeEndpoints(url, bootstrap, securityFile);
            // this computer's own token (role computer), which the assistant-turn command sends to POST /api/assistant/turns
            String computerToken = Files.exists(data.computerToken()) ? Files.readString(data.computerToken()).strip() : null;
            if (computerToken == null || tokens.authenticate(computerToken)
                    .filter(p -> p.role().equals("computer") && p.subject().equals(computerId) && p.account().equals(who)).isEmpty()) {
                DataDir.writePrivate(data.computerToken(), tokens.issue(new Principal(who, "computer", computerId)) + "\n");
            }

            if (!noImport) {
                AgentStores stores = AgentStores.defaults(DataDir.home(), System.getenv()).withClaudeAndCodex(claudeDirs, codexDirs);
                ImportConfig config = new ImportConfig(who, computerId, Clock.systemUTC(),
                        data.importState("import-state.json"));
                ComputerAgent agent = new ComputerAgent(bootstrap, config, stores, Duration.ofSeconds(pollSeconds),
                        new ImportProgressBar(System.out)).withClientProperties(security).withMeters(meters)
                        .withAssistantState(data.assistantState()); // shared with the assistant-turn command
                lifetime.<AutoCloseable>started(agent::stop);
                System.out.println("Importing agent sessions (and keeping them up to date) from "
                        + stores.all().stream().filter(e -> Files.isDirectory(e.getValue())).count() + " of "
                        + stores.all().size() + " agent stores found; each store's figures follow the first import");
                agent.start();
            }
            // one write: the import, started above, prints its summary from its own thread, never inside this block
            String nl = System.lineSeparator();
            System.out.print(nl
                    + "Ready: " + url + "  (API: " + url + "/api/openapi.yaml)" + nl
                    + "Web page: " + url + gateway.loginLink(token) + "  (a one-time login link: open it in your browser;"
                    + " 'ensemble-sessions login' prints a new one)" + nl
                    + "Your token is in " + data.token() + ". Try:" + nl
                    + "  curl -H \"Authorization: Bearer $(cat " + data.token() + ")\" " + url + "/api/agent/sessions" + nl
                    + "Metrics (Prometheus): " + url + "/metrics with the scrape token in " + data.metricsToken() + nl
                    + "Press Ctrl-C to stop; starting again keeps everything." + nl);
            System.out.flush();
        } catch (Exception e) {
            if (lifetime.stoppingWhileStarting()) { // Ctrl-C or SIGTERM while starting: what started stops, newest first
                return lifetime.stoppedWhileStarting();
            }
            if (!(e instanceof CannotStart)) {
                LOG.error("could not start: {}", e.getMessage(), e);
            }
            lifetime.startFailed();
            throw e;
        }
        return lifetime.serveUntilStopped();
    }

    /**
     * The services' settings: the cluster's client properties and, for the consumers of their Kafka Streams applications
     * alone, static membership ({@code main.consumer.group.instance.id} {@code up-<computerId>}; Streams adds each
     * thread's index). A start after a crash ({@code kill -9}, a power cut) then takes back its partitions at once
     * instead of waiting the broker's session timeout (45 s) for the dead members to expire: the coordinator knows the
     * instance id and hands the new member the dead one's assignment. One {@code up} per data folder (its lock) and
     * one computer id per data folder keep the id unique in each group, also on a cluster that several computers share;
     * a copy of a data folder shares its computer id, so two {@code up}s of copies on one cluster fence each other's
     * Streams consumer once (Kafka's {@code FencedInstanceIdException}, logged), after which Streams replaces that
     * thread and it joins with the next thread index: both serve, with an ERROR line each.
     * Plain clients take only the connection settings from it ({@link KafkaClients#connection}) or ignore the prefixed
     * key.
     */
    static Map<String, Object> staticMembership(Map<String, ?> clientProperties, String computerId) {
        return KafkaClients.merge(clientProperties, Map.of(
                org.apache.kafka.streams.StreamsConfig.mainConsumerPrefix(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_INSTANCE_ID_CONFIG),
                instanceId(computerId)));
    }

    /** The longest instance id {@link #instanceId} makes: Kafka takes 249 characters, and Streams adds {@code -<thread>}. */
    static final int INSTANCE_ID_CHARS = 200;

    /**
     * {@code up-<computerId>} with every character Kafka does not take in an instance id (other than letters, digits,
     * {@code .}, {@code _}, {@code -}) as {@code -}; one longer than {@link #INSTANCE_ID_CHARS} (a computer id edited by
     * hand) is cut, with 16 hex digits of the whole id's SHA-256 at its end so that two long ids stay apart.
     */
    static String instanceId(String computerId) {
        String id = "up-" + computerId.replaceAll("[^A-Za-z0-9._-]", "-");
        if (id.length() <= INSTANCE_ID_CHARS) {
            return id;
        }
        try {
            byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(computerId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            String hex = java.util.HexFormat.of().formatHex(sha, 0, 8);
            return id.substring(0, INSTANCE_ID_CHARS - hex.length() - 1) + "-" + hex;
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** How long {@code up} waits for its services while they are starting, as {@code run} does. */
    static final Duration START_TIMEOUT = Duration.ofMinutes(10);
    /** How often a start that takes long says what it waits for. */
    static final Duration START_NOTE_EVERY = Duration.ofSeconds(30);

    /**
     * Waits until the gateway answers reads and the choice service's stores can be read, as long as they are starting, up
     * to {@code timeout}; every {@code noteEvery} it prints what it still waits for. A start after a crash (e.g.
     * {@code kill -9}) takes longer than a first one: the killed instance's consumer group memberships expire after the
     * broker's session timeout (45 s) and its open transactions are aborted before the new one reads, and each of the
     * four Streams applications restores its stores (docs/reliability.md "Gateway start").
     *
     * @throws IllegalStateException when one of them stopped or failed while starting (at once), or was not ready in time
     */
    static void awaitServices(java.util.function.Supplier<Gateway.StartState> gateway, java.util.function.Supplier<KafkaStreams.State> choice,
                              Duration timeout, Duration noteEvery, java.io.PrintStream out) throws InterruptedException {
        long start = System.nanoTime();
        long nextNote = start + noteEvery.toNanos();
        while (true) {
            Gateway.StartState g = gateway.get();
            KafkaStreams.State c = choice.get();
            List<String> waiting = new ArrayList<>();
            if (!g.status().equals("ready")) {
                waiting.add("the gateway's read side (Kafka Streams " + g.views() + (g.logRead() ? "" : ", the event log being read") + ")");
            }
            if (c != KafkaStreams.State.RUNNING) {
                waiting.add("the choice service (Kafka Streams " + c + ")");
            }
            if (waiting.isEmpty()) {
                return;
            }
            boolean choiceFailed = !c.isRunningOrRebalancing() && c != KafkaStreams.State.CREATED;
            if (g.status().equals("unavailable") || choiceFailed) {
                throw new IllegalStateException("stopped while starting: " + String.join("; ", waiting));
            }
            long now = System.nanoTime();
            long seconds = TimeUnit.NANOSECONDS.toSeconds(now - start);
            if (now - start > timeout.toNanos()) {
                throw new IllegalStateException("not ready within " + timeout.toSeconds() + " s: waiting for " + String.join("; ", waiting));
            }
            if (now >= nextNote) {
                out.println("still starting after " + seconds + " s: waiting for " + String.join("; ", waiting));
                nextNote += noteEvery.toNanos();
            }
            Thread.sleep(100);
        }
    }

    /**
     * The person's admin token in {@code tokenFile}: the one there while it still authenticates as {@code who}'s, else a
     * new one written there (none yet, or one another {@code --account} made: this start's person gets one of their own).
     */
    static String adminToken(Tokens tokens, java.nio.file.Path tokenFile, String who) throws java.io.IOException {
        String token = Files.exists(tokenFile) ? Files.readString(tokenFile).strip() : null;
        if (token == null || tokens.authenticate(token).filter(p -> p.account().equals(who)).isEmpty()) {
            token = tokens.issue(new Principal(who, "admin", who));
            DataDir.writePrivate(tokenFile, token + "\n");
        }
        return token;
    }

    /**
     * The scrape token of {@code GET /metrics}: the one in {@code <data-dir>/metrics-token}, or a new random one written
     * there (owner-only) on the first start; a separate secret from the API token, so that a Prometheus server holds no
     * token of the API.
     */
    static String metricsToken(DataDir data) throws java.io.IOException {
        java.nio.file.Path file = data.metricsToken();
        if (Files.exists(file)) {
            String t = Files.readString(file).strip();
            if (!t.isEmpty()) {
                return t;
            }
        }
        String token = dev.ensemble.sessions.schema.Secrets.newSecret();
        DataDir.writePrivate(file, token + "\n");
        return token;
    }

    /**
     * Creates the changelog topics of the four Kafka Streams applications it starts (projector, cleanup, choice service,
     * gateway reads) that do not exist yet, before any of them starts: on a fresh data folder each application would
     * otherwise create its own in its first rebalance while the others' clients already run, and its restore and producer
     * clients would be told "unknown topic or partition" (logged as errors) until the broker knows them. Those of the
     * serving projector generation {@code g} (docs/operations.md "Generations"): their application ids and view topics.
     */
    static void createChangelogs(Admin admin, RetirementRules.Config rules, CleanupConfig cleanup, int replicationFactor,
                                 dev.ensemble.sessions.schema.Generation g) {
        StreamsDefaults.createChangelogs(admin, g.applicationId(Projector.APPLICATION_ID), Projector.buildTopology(rules, false, g),
                replicationFactor);
        StreamsDefaults.createChangelogs(admin, g.applicationId(CleanupService.APPLICATION_ID),
                dev.ensemble.sessions.cleanup.CleanupTopology.build(cleanup, false, g), replicationFactor);
        StreamsDefaults.createChangelogs(admin, dev.ensemble.sessions.choice.service.ChoiceTopology.APPLICATION_ID,
                dev.ensemble.sessions.choice.service.ChoiceTopology.build(g), replicationFactor);
        StreamsDefaults.createChangelogs(admin, g.applicationId(dev.ensemble.sessions.gateway.SessionReads.APPLICATION_ID),
                dev.ensemble.sessions.gateway.SessionReads.buildTopology(g), replicationFactor);
    }
}
