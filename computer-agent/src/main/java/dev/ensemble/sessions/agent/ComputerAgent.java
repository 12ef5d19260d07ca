package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.assistant.AssistantDrops;
import dev.ensemble.sessions.agent.assistant.AssistantSessions;
import dev.ensemble.sessions.agent.assistant.AssistantStore;
import dev.ensemble.sessions.agent.assistant.ChatLocks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The service on a person's computer (DESIGN.md section 2, {@code computer-agent}): it imports the agents' own
 * stores as runs and engine events and keeps doing so as they change, writing to the event log through a
 * {@link KafkaEventSink}.
 *
 * <p>Life cycle: {@link #start()} sends a {@code ComputerStatus} (online, capabilities {@code sessionDelete: 1, assistantTurns: 3},
 * guide section 6), then imports once at once and again every poll interval (default 5 s). Each import only
 * looks at files' sizes and modification times and reads what grew (see {@link StoreImporter}). Between polls a
 * {@link StoreWatcher} watches the store folders: a burst of changes, once quiet for {@value #SETTLE_MS} ms, is
 * imported at once, only the changed files ({@link StoreImporter#importChanged}), so a new prompt is in the event
 * log moments after the agent wrote it. Where watching is unavailable, or changes were lost, the poll (which works
 * the same on every file system) is the safety net. {@link #stop()} lets a running import finish, sends
 * {@code ComputerStatus} offline, flushes and closes the producer. A failed import is logged, kept in
 * {@link #lastError()}, and tried again at the next poll; its events are sent again then with the same ids.
 *
 * <p>Deletions (guide section 6): while started, a {@link DeletionExecutor} carries out every
 * {@code SessionDeletionAccepted} that lists this computer in the same stores ({@link AgentStoreDeleter}) and
 * answers with {@code SessionDeletedOnComputer}; the importer forgets transcripts that disappeared.
 *
 * <p>Assistant sessions (guide §5, §6): the store is {@code <state>/assistant-sessions.json} in the assistant state
 * folder ({@link #withAssistantState}, by default the import state file's folder), shared with the
 * {@code assistant-turn} command's turns (the store is opened for each use, the chats' locks are shared through their
 * lock files, {@link ChatLocks#ChatLocks(Path)}). While started, a {@link ConversationDropExecutor} drops each chat whose
 * deletion the projector accepted for this computer (after its running turn) and answers
 * {@code ConversationDroppedOnComputer}; every {@link #ASSISTANT_EXPIRY_EVERY} (and at start) the sessions unused past
 * their keepDays are dropped ({@link AssistantDrops#dropExpired}). {@code ComputerStatus} announces
 * {@code assistantTurns: 3}.
 */
public final class ComputerAgent {
    /** The default poll interval. */
    public static final Duration DEFAULT_POLL = Duration.ofSeconds(5);
    /** What this computer reports it can do. */
    public static final Map<String, Integer> CAPABILITIES = Map.of("sessionDelete", 1, "assistantTurns", 3);
    /** How often the assistant sessions unused past their keepDays are looked for (guide §5). */
    public static final Duration ASSISTANT_EXPIRY_EVERY = Duration.ofHours(1);
    /** How long a use of the assistant sessions store waits while another process has it open. */
    static final Duration STORE_WAIT = Duration.ofSeconds(60);
    private static final Logger log = LoggerFactory.getLogger(ComputerAgent.class);
    /** How long a burst of changes to the stores must be quiet before it is imported. */
    static final long SETTLE_MS = 100;

    private final boolean summaryShownElsewhere;
    private final String bootstrapServers;
    private final ImportConfig config;
    private final AgentStores stores;
    private final Duration pollInterval;
    private final StoreImporter importer;
    private final EventFactory events;
    private Map<String, ?> clientProperties = Map.of();
    private KafkaEventSink sink;
    private DeletionExecutor deletions;
    private ConversationDropExecutor conversationDrops;
    private Path assistantStateDir;
    private ChatLocks assistantLocks;
    private AssistantStore assistantStore;
    private ScheduledExecutorService scheduler;
    private StoreWatcher watcher;
    /** Files the watcher saw change that no import has taken yet; guarded by itself. */
    private final java.util.Set<Path> changedFiles = new java.util.HashSet<>();
    private boolean changeImportQueued;
    private volatile ImportSummary lastSummary;
    /** The unreadable files said so far (guarded by itself: the poll and the watch both import). */
    private final UnreadableFiles unreadable = new UnreadableFiles();
    private volatile RuntimeException lastError;
    private io.micrometer.core.instrument.MeterRegistry meters;
    private ImportMetrics importMetrics;
    private AutoCloseable producerMetrics;

    /** An agent polling every {@link #DEFAULT_POLL}. */
    public ComputerAgent(String bootstrapServers, ImportConfig config, List<Path> claudeDirs, List<Path> codexDirs) {
        this(bootstrapServers, config, claudeDirs, codexDirs, DEFAULT_POLL, ImportProgress.NONE);
    }

    /**
     * @param bootstrapServers the Kafka cluster
     * @param config           account, computer id, clock and state file
     * @param claudeDirs       Claude Code {@code projects} folders (see {@link #defaultClaudeDirs()})
     * @param codexDirs        Codex {@code sessions} folders (see {@link #defaultCodexDirs()})
     * @param pollInterval     time between the end of one import and the start of the next
     * @param progress         listener of each import; one other than {@link ImportProgress#NONE} shows the summary
     *                         of each import itself, so the agent then logs it at DEBUG instead of INFO
     */
    public ComputerAgent(String bootstrapServers, ImportConfig config, List<Path> claudeDirs, List<Path> codexDirs,
                         Duration pollInterval, ImportProgress progress) {
        this(bootstrapServers, config, AgentStores.of(claudeDirs, codexDirs), pollInterval, progress);
    }

    /**
     * @param stores every agent's store folders (see {@link AgentStores#defaults})
     */
    public ComputerAgent(String bootstrapServers, ImportConfig config, AgentStores stores, Duration pollInterval,
                         ImportProgress progress) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        this.config = Objects.requireNonNull(config, "config");
        this.stores = Objects.requireNonNull(stores, "stores");
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval must be positive: " + pollInterval);
        }
        this.pollInterval = pollInterval;
        this.summaryShownElsewhere = progress != ImportProgress.NONE;
        this.importer = new StoreImporter(config, summaryShownElsewhere ? new Saying(progress) : progress);
        this.events = new EventFactory(config);
        Path parent = config.stateFile().toAbsolutePath().getParent();
        withAssistantState(parent != null ? parent : config.stateFile().toAbsolutePath());
    }

    /**
     * The folder of {@code assistant-sessions.json}, the chats' own folders and their lock files (by default the import
     * state file's folder); before {@link #start()}.
     */
    public synchronized ComputerAgent withAssistantState(Path stateDir) {
        this.assistantStateDir = stateDir.toAbsolutePath().normalize();
        this.assistantLocks = new ChatLocks(assistantStateDir);
        this.assistantStore = AssistantStore.opening(assistantStateDir, config.clock(), STORE_WAIT);
        return this;
    }

    /** The folder of the assistant sessions (see {@link #withAssistantState}). */
    public synchronized Path assistantState() {
        return assistantStateDir;
    }

    /**
     * The cluster's client properties (security settings, {@link dev.ensemble.sessions.schema.KafkaClients}) for its
     * producer and its consumer; before {@link #start()}.
     */
    public synchronized ComputerAgent withClientProperties(Map<String, ?> properties) {
        this.clientProperties = Map.copyOf(properties);
        return this;
    }

    /**
     * The registry its importer's meters ({@link ImportMetrics}: files read and skipped, transcripts, events, failures,
     * lag) and its producer's metrics ({@code service="computer-agent"}) go to; before {@link #start()}. Without it
     * nothing is counted. Run alone ({@link #main}) it has none: its meters are served only when {@code up} runs it
     * beside the gateway (docs/operations.md "Metrics").
     */
    public synchronized ComputerAgent withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = registry;
        return this;
    }

    /** Claude Code's projects folder: {@code $CLAUDE_CONFIG_DIR/projects}, else {@code ~/.claude/projects}. */
    public static List<Path> defaultClaudeDirs() {
        String dir = System.getenv("CLAUDE_CONFIG_DIR");
        Path base = dir != null && !dir.isBlank() ? Path.of(dir) : Path.of(System.getProperty("user.home"), ".claude");
        return List.of(base.resolve("projects"));
    }

    /** Codex's sessions folder: {@code $CODEX_HOME/sessions}, else {@code ~/.codex/sessions}. */
    public static List<Path> defaultCodexDirs() {
        String dir = System.getenv("CODEX_HOME");
        Path base = dir != null && !dir.isBlank() ? Path.of(dir) : Path.of(System.getProperty("user.home"), ".codex");
        return List.of(base.resolve("sessions"));
    }

    /**
     * Connects, reports this computer online and starts importing (the first import right away, on the agent's
     * own thread).
     *
     * @throws IllegalStateException when already started
     */
    public synchronized void start() {
        if (scheduler != null) {
            throw new IllegalStateException("the computer agent is already started");
        }
        sink = new KafkaEventSink(bootstrapServers, dev.ensemble.sessions.schema.KafkaClients.merge(clientProperties,
                Map.of("client.id", "computer-agent-" + config.computerId())));
        try {
            if (meters != null) {
                importMetrics = new ImportMetrics(meters, config.clock());
                producerMetrics = sink.bindMetrics(meters, "computer-agent");
            }
            sink.accept(events.computerStatus(true, CAPABILITIES));
            deletions = new DeletionExecutor(bootstrapServers, clientProperties, config, new AgentStoreDeleter(stores), sink);
            deletions.start();
            conversationDrops = new ConversationDropExecutor(bootstrapServers, clientProperties, config, assistantStore,
                    new AgentStoreDeleter(stores), assistantLocks, ConversationDropExecutor.DEFAULT_TURN_WAIT, sink);
            conversationDrops.start();
        } catch (RuntimeException e) { // e.g. interrupted by a stop while starting: what it opened is closed, nothing left
            abandonStart();
            throw e;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "computer-agent-import");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::importOnce, 0, pollInterval.toMillis(), TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(this::dropExpiredAssistantSessions, 0, ASSISTANT_EXPIRY_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        watcher = new StoreWatcher(stores, Duration.ofMillis(SETTLE_MS), this::changed, this::lostChanges);
        boolean watching = watcher.start();
        log.info("computer agent {} started for account {}: {}, {}every {}",
                config.computerId(), config.account(), stores.all().stream()
                        .map(e -> AgentStores.displayName(e.getKey(), e.getValue()) + " " + e.getValue()).toList(),
                watching ? "watching " + watcher.folders() + " folders for changes and looking at everything " : "", pollInterval);
    }

    /**
     * Drops the assistant sessions unused past their keepDays (guide §5 "Sessions unused for 30 days (or the chat's
     * keepDays) are dropped and deleted from the agent"), skipping a chat whose turn runs now (it is in use); never
     * throws. Nothing is opened when there is no store yet.
     */
    void dropExpiredAssistantSessions() {
        if (!java.nio.file.Files.exists(assistantStateDir.resolve(AssistantSessions.FILE))) {
            return;
        }
        try {
            java.time.Instant now = config.clock().instant();
            List<AssistantDrops.Dropped> dropped = assistantStore.with(s ->
                    new AssistantDrops(s, new AgentStoreDeleter(stores), assistantLocks, config.computerId()).dropExpired(now, Duration.ofSeconds(1)));
            for (AssistantDrops.Dropped d : dropped) {
                if (d.confirmed()) {
                    log.info("assistant session of chat {} ({} {}) unused past its keepDays: dropped, {} paths{}", d.key(), d.agent(),
                            d.sessionId(), d.removedCount(), d.keptInAgent().isEmpty() ? "" : ", kept in the agent: " + d.keptInAgent());
                } else {
                    log.warn("assistant session of chat {} unused past its keepDays could not be dropped: {}", d.key(), d.error());
                }
            }
        } catch (RuntimeException e) {
            log.error("dropping the assistant sessions unused past their keepDays failed; trying again in {}", ASSISTANT_EXPIRY_EVERY, e);
        }
    }

    /** The watcher saw {@code files} change: import them next on the import thread (one queued import takes them all). */
    private void changed(java.util.Set<Path> files) {
        synchronized (changedFiles) {
            changedFiles.addAll(files);
            if (changeImportQueued) {
                return;
            }
            changeImportQueued = true;
        }
        submit(this::importChanged);
    }

    /** The watcher lost changes: look at every store now, as the poll does. */
    private void lostChanges() {
        submit(this::importOnce);
    }

    private synchronized void submit(Runnable task) {
        if (scheduler == null) {
            return; // stopped
        }
        try {
            scheduler.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // stopping: the next start looks at everything
        }
    }

    /** One import of the files the watcher saw change; never throws. */
    private void importChanged() {
        java.util.List<Path> files;
        synchronized (changedFiles) {
            files = java.util.List.copyOf(changedFiles);
            changedFiles.clear();
            changeImportQueued = false;
        }
        runImport(() -> importer.importChanged(stores, files, sink), false);
    }

    /** One import of every store; never throws (the scheduler would stop polling). */
    private void importOnce() {
        runImport(() -> importer.importStores(stores, sink), true);
    }

    /** Names the unreadable files not named yet (warnings) and tells whether the summary is worth a line. */
    private UnreadableFiles.Said say(ImportSummary summary, boolean whole) {
        UnreadableFiles.Said said;
        synchronized (unreadable) {
            said = unreadable.look(summary, whole);
        }
        said.lines().forEach(line -> log.warn("{}", line));
        return said;
    }

    /**
     * The listener that shows the summaries ({@code up}'s progress bar), told of each import as {@link #say} has it: the
     * first import always, a later one quietly when it only met the same unreadable files again.
     */
    private final class Saying implements ImportProgress {
        private final ImportProgress shown;
        private boolean first = true;

        Saying(ImportProgress shown) {
            this.shown = shown;
        }

        @Override
        public void onStart(int files, long bytes) {
            shown.onStart(files, bytes);
        }

        @Override
        public void onFile(Path file, long bytes) {
            shown.onFile(file, bytes);
        }

        @Override
        public void onDone(ImportSummary summary) {
            UnreadableFiles.Said said = say(summary, whole);
            if (first || said.summary()) {
                shown.onDone(summary);
            } else {
                shown.onDoneQuietly(summary);
            }
            first = false;
        }
    }

    /** Whether the import running now looks at every store (set before it starts; imports run one at a time). */
    private volatile boolean whole;

    /** Runs one import ({@code whole}: of every store) and counts it; never throws. */
    private void runImport(java.util.function.Supplier<ImportSummary> pass, boolean whole) {
        this.whole = whole;
        java.time.Instant started = config.clock().instant();
        ImportMetrics m = importMetrics;
        try {
            ImportSummary summary = pass.get();
            lastSummary = summary;
            lastError = null;
            if (m != null) {
                m.imported(started, summary, whole);
            }
            UnreadableFiles.Said said = summaryShownElsewhere ? null : say(summary, whole);
            if ((summary.events() > 0 || summary.filesRead() > 0) && (said == null || said.summary())) {
                if (summaryShownElsewhere) {
                    log.debug("{}", summary);
                } else {
                    log.info("{}", summary);
                }
            }
        } catch (RuntimeException e) {
            lastError = e;
            if (m != null) {
                m.failed();
            }
            log.error("import failed; trying again in {}", pollInterval, e);
        }
    }

    /**
     * Stops polling (a running import finishes first), reports this computer offline, flushes and closes the
     * producer. Does nothing when not started.
     */
    public synchronized void stop() {
        if (scheduler == null) {
            return;
        }
        watcher.close();
        watcher = null;
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(60, TimeUnit.SECONDS)) {
                scheduler.shutdownNow();
                log.warn("the running import did not finish within 60 s and was interrupted");
            }
        } catch (InterruptedException e) {
            scheduler.shutdownNow();
            Thread.currentThread().interrupt();
        }
        deletions.stop();
        deletions = null;
        conversationDrops.stop();
        conversationDrops = null;
        try {
            sink.accept(events.computerStatus(false, CAPABILITIES));
            sink.flush();
        } catch (RuntimeException e) {
            log.error("could not report computer {} offline", config.computerId(), e);
        } finally {
            closeSink();
            scheduler = null;
            log.info("computer agent {} stopped", config.computerId());
        }
    }

    /** Closes what a {@link #start()} that failed before its scheduler opened (the producer, the executors). */
    private void abandonStart() {
        if (conversationDrops != null) {
            conversationDrops.stop();
            conversationDrops = null;
        }
        if (deletions != null) {
            deletions.stop();
            deletions = null;
        }
        closeSink();
    }

    /** Unbinds the producer's meters and closes the producer. */
    private void closeSink() {
        if (producerMetrics != null) {
            try {
                producerMetrics.close();
            } catch (Exception ignored) {
                // it only unregisters meters
            }
            producerMetrics = null;
        }
        sink.close();
        sink = null;
    }

    /** Whether {@link #start()} was called and {@link #stop()} not yet. */
    public synchronized boolean isRunning() {
        return scheduler != null;
    }

    /** The summary of the newest successful import, or null before the first one. */
    public ImportSummary lastSummary() {
        return lastSummary;
    }

    /** The failure of the newest import, or null when it succeeded. */
    public RuntimeException lastError() {
        return lastError;
    }

    /**
     * Runs the agent alone until the JVM is stopped: {@code ComputerAgent <bootstrap servers> [<state folder>]}.
     * The state folder (default {@code ~/.ensemble/computer-agent}) keeps {@code computer-id} and
     * {@code import-state.json}; the stores are the default ones of this person. The environment variable
     * {@code ENSEMBLE_KAFKA_CLIENT_PROPERTIES} may name a Kafka client properties file (the cluster's security settings,
     * e.g. the {@code kafka-client.properties} of {@code up}'s data folder), given to its producer and consumer.
     */
    public static void main(String[] args) throws InterruptedException, java.io.IOException {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: ComputerAgent <bootstrap servers> [<state folder>]");
            System.exit(2);
        }
        Path stateDir = args.length == 2 ? Path.of(args[1])
                : Path.of(System.getProperty("user.home"), ".ensemble", "computer-agent");
        ImportConfig config = ImportConfig.defaults(stateDir.resolve("computer-id"), stateDir.resolve("import-state.json"));
        ComputerAgent agent = new ComputerAgent(args[0], config,
                AgentStores.defaults(Path.of(System.getProperty("user.home")), System.getenv()), DEFAULT_POLL, ImportProgress.NONE);
        String clientProperties = System.getenv("ENSEMBLE_KAFKA_CLIENT_PROPERTIES");
        if (clientProperties != null && !clientProperties.isBlank()) {
            java.util.Properties file = new java.util.Properties();
            try (java.io.Reader in = java.nio.file.Files.newBufferedReader(Path.of(clientProperties))) {
                file.load(in);
            }
            Map<String, Object> security = new java.util.HashMap<>();
            file.forEach((k, v) -> security.put(k.toString(), v.toString().strip()));
            security.remove("bootstrap.servers");
            agent.withClientProperties(security);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            agent.stop();
            stopped.countDown();
        }, "computer-agent-stop"));
        agent.start();
        stopped.await(); // the import thread is a daemon: keep the JVM up until it is stopped
    }
}
