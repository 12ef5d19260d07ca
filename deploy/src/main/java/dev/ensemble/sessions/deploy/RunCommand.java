package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ComputerAgent;
import dev.ensemble.sessions.agent.ComputerId;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.service.ChoiceService;
import dev.ensemble.sessions.cleanup.CleanupConfig;
import dev.ensemble.sessions.cleanup.CleanupService;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.projector.ProjectorGenerations;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.TopicAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * {@code ensemble-sessions run <service>}: one service alone in its own process, against any Kafka cluster (DESIGN.md
 * §8, scale-out), as many instances of it as wanted (Kafka Streams spreads the partitions over the instances of one
 * service). Each creates the system's topics and the changelogs of the Streams applications when missing, then runs until
 * SIGTERM or Ctrl-C, closes its Streams applications (committing, leaving the group) and exits 0; a cluster it cannot
 * reach within {@code --cluster-timeout} ends it with code 1 and a one-line message. Settings: {@link ServiceOptions}
 * (flags, {@code ENSEMBLE_*} variables for the flags, {@code KAFKA_*} variables for Kafka's own settings); with
 * {@code --ready-file} it also writes a file while it is ready, for health checks. {@code up} stays the one-JVM default.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = "Run one service alone against a Kafka cluster (several instances each for scale-out).",
        subcommands = {RunCommand.Projector.class, RunCommand.GatewayService.class, RunCommand.Choice.class,
                RunCommand.Cleanup.class, RunCommand.Agent.class})
final class RunCommand implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);
    /** The line each service prints once it is ready. */
    static final String READY = "Send SIGTERM (or press Ctrl-C) to stop";

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The environment the services read ({@code KAFKA_*}); the process's. */
    static Map<String, String> environment() {
        return System.getenv();
    }

    /**
     * Starts a service (its parts added to the list {@code start} gets as they start, so that a failure stops those),
     * prints its readiness, waits for SIGTERM or Ctrl-C and stops it: exit code 0. Stopped while starting, it exits 130
     * or 143 ({@link ServiceLifetime}).
     *
     * @param start starts the service and returns the line it prints when ready
     */
    static int runUntilStopped(String service, ServiceOptions options, ServiceOptions.Resolved kafka, Starter start) throws Exception {
        if (options.readyFile != null) {
            Files.deleteIfExists(options.readyFile); // one left by an instance killed before (kill -9) says nothing of this one
        }
        options.requireReachable(kafka); // before anything of the JVM changes: nothing to undo
        ServiceLifetime lifetime = new ServiceLifetime("stopping " + service + "…", service + " stopped.");
        try {
            String line = start.start(lifetime);
            if (options.readyFile != null) {
                Path readyFile = options.readyFile.toAbsolutePath();
                Files.createDirectories(readyFile.getParent());
                Files.writeString(readyFile, service + " ready: " + line + "\n");
                lifetime.<AutoCloseable>started(() -> Files.deleteIfExists(readyFile)); // removed first when it stops
            }
            System.out.println(service + " ready: " + line);
            System.out.println(READY + ".");
        } catch (Exception e) {
            if (lifetime.stoppingWhileStarting()) { // Ctrl-C or SIGTERM while starting: what started stops, newest first
                return lifetime.stoppedWhileStarting();
            }
            if (!(e instanceof UpCommand.CannotStart)) {
                LOG.error("{} could not start: {}", service, e.getMessage(), e);
            }
            lifetime.startFailed();
            throw e;
        }
        return lifetime.serveUntilStopped();
    }

    /** Starts a service; returns the line printed when it is ready. */
    interface Starter {
        /** @param running where each part goes as soon as it has started */
        String start(ServiceLifetime running) throws Exception;
    }

    /**
     * Creates the system's topics and the changelogs of the Streams applications when missing (the serving
     * generation's), as {@code up} does before its services start; instances starting together may race, which is fine.
     */
    static void ensureTopics(ServiceOptions options, ServiceOptions.Resolved kafka, RetirementRules.Config rules, CleanupConfig cleanup) {
        try (Admin admin = Admin.create(KafkaClients.config(kafka.bootstrapServers(), kafka.clientProperties()))) {
            TopicAdmin.ensureTopics(admin, options.partitions, options.replicationFactor);
            UpCommand.createChangelogs(admin, rules, cleanup, options.replicationFactor,
                    Generations.serving(kafka.bootstrapServers(), kafka.clientProperties()));
        }
    }

    /** Waits until a Streams instance runs (its tasks assigned and restored), for {@code timeout}. */
    static void awaitRunning(Supplier<KafkaStreams> streams, String service, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (true) {
            KafkaStreams s = streams.get();
            if (s != null && s.state() == KafkaStreams.State.RUNNING) {
                return;
            }
            if (s != null && (s.state() == KafkaStreams.State.ERROR || s.state() == KafkaStreams.State.NOT_RUNNING)) {
                throw new IllegalStateException(service + " stopped while starting (Kafka Streams state " + s.state() + ")");
            }
            if (System.nanoTime() > until) {
                throw new IllegalStateException(service + " was not running within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(100);
        }
    }

    /** The text of a secret file, stripped; a usage error naming the option when it cannot be read or is empty. */
    static String readSecret(CommandSpec spec, String option, Path file) {
        try {
            String s = Files.readString(file).strip();
            CommandChecks.require(spec, !s.isEmpty(), option + " " + file + " is empty");
            return s;
        } catch (java.io.IOException e) {
            CommandChecks.require(spec, false, option + ": cannot read " + file + " (" + e.getMessage() + ")");
            return null;
        }
    }

    @Command(name = "projector", mixinStandardHelpOptions = true, defaultValueProvider = EnvironmentDefaults.class,
            description = "The projector alone: derives the sessions from the event log (its generations too, for rebuild).")
    static final class Projector implements Callable<Integer> {
        @Mixin
        ServiceOptions options = new ServiceOptions();

        @Option(names = "--completed-window-days", defaultValue = "7", description = "a done or dropped task's session is cleaned up after this many days (default ${DEFAULT-VALUE})")
        int completedWindowDays;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            CommandChecks.requireWindow(spec, completedWindowDays);
            ServiceOptions.Resolved kafka = options.resolve(environment());
            RetirementRules.Config rules = RetirementRules.Config.defaults().withCompletedWindow(Duration.ofDays(completedWindowDays));
            return runUntilStopped("projector", options, kafka, running -> {
                ensureTopics(options, kafka, rules, CleanupConfig.defaults());
                ProjectorGenerations projector = new ProjectorGenerations(kafka.bootstrapServers(), options.stateDir("projector"),
                        options.replicationFactor, kafka.streamsOverrides(), rules, UpCommand.GENERATION_READERS,
                        line -> System.out.println("rebuild: " + line));
                running.started(projector);
                projector.start();
                awaitRunning(() -> projector.serving().streams(), "projector", Duration.ofMinutes(10));
                return "generation " + projector.serving().generation() + " on " + kafka.bootstrapServers();
            });
        }
    }

    @Command(name = "cleanup", mixinStandardHelpOptions = true, defaultValueProvider = EnvironmentDefaults.class,
            description = "The cleanup service alone: the guide's §6 sweeps and the deletions asked for.")
    static final class Cleanup implements Callable<Integer> {
        @Mixin
        ServiceOptions options = new ServiceOptions();

        @Option(names = "--no-clean-sessions", description = "turn the cleanup sweeps off (orchestration.cleanSessions=false); deletions asked for still happen")
        boolean noCleanSessions;

        @Override
        public Integer call() throws Exception {
            ServiceOptions.Resolved kafka = options.resolve(environment());
            CleanupConfig config = CleanupConfig.defaults().withCleanSessions(!noCleanSessions);
            return runUntilStopped("cleanup", options, kafka, running -> {
                ensureTopics(options, kafka, RetirementRules.Config.defaults(), config);
                CleanupService cleanup = new CleanupService(kafka.bootstrapServers(), options.stateDir("cleanup"),
                        options.replicationFactor, config, kafka.streamsOverrides());
                running.started(cleanup);
                cleanup.start();
                awaitRunning(cleanup::streams, "cleanup", Duration.ofMinutes(10));
                return "on " + kafka.bootstrapServers() + (noCleanSessions ? ", sweeps off" : "");
            });
        }
    }

    @Command(name = "choice", mixinStandardHelpOptions = true, defaultValueProvider = EnvironmentDefaults.class,
            description = "The choice service alone: decides whether a new run continues a session; its gateway forwards to it.")
    static final class Choice implements Callable<Integer> {
        @Mixin
        ServiceOptions options = new ServiceOptions();

        @Option(names = "--host", defaultValue = "0.0.0.0", description = "the address it listens on (default ${DEFAULT-VALUE})")
        String host;

        @Option(names = "--port", defaultValue = "8081", description = "its HTTP port (default ${DEFAULT-VALUE})")
        int port;

        @Option(names = "--secret-file", required = true, paramLabel = "FILE", description = "the secret its gateway sends "
                + "(Authorization: Bearer), 16 characters or more; the gateway's --choice-secret-file")
        Path secretFile;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            CommandChecks.requirePort(spec, "--port", port);
            String secret = readSecret(spec, "--secret-file", secretFile);
            CommandChecks.require(spec, secret.length() >= 16, "--secret-file " + secretFile + " must hold 16 characters or more");
            ServiceOptions.Resolved kafka = options.resolve(environment());
            return runUntilStopped("choice", options, kafka, running -> {
                ensureTopics(options, kafka, RetirementRules.Config.defaults(), CleanupConfig.defaults());
                ChoiceService choice = new ChoiceService(new ChoiceService.Settings(kafka.bootstrapServers(), options.stateDir("choice"),
                        options.replicationFactor, host, port, ConfigWatcher.fromEnvironment(Clock.systemUTC(), LOG::info, LOG::warn),
                        Clock.systemUTC())).withClientProperties(kafka.clientProperties())
                        .withStreamsSettings(kafka.streamsSettings()).withSecret(secret);
                running.started(choice);
                choice.start();
                choice.awaitReady(Duration.ofMinutes(10));
                return choice.url() + "/choice/decide";
            });
        }
    }

    @Command(name = "gateway", mixinStandardHelpOptions = true, defaultValueProvider = EnvironmentDefaults.class,
            description = "The HTTP API alone; several instances route each account's reads to the one holding it.")
    static final class GatewayService implements Callable<Integer> {
        @Mixin
        ServiceOptions options = new ServiceOptions();

        @Option(names = "--host", defaultValue = "0.0.0.0", description = "the address it listens on (default ${DEFAULT-VALUE})")
        String host;

        @Option(names = "--port", defaultValue = "8080", description = "its HTTP port (default ${DEFAULT-VALUE})")
        int port;

        @Option(names = "--application-server", paramLabel = "HOST:PORT", description = "Kafka Streams application.server: "
                + "where the other gateway instances reach this one, to which they forward the reads of the accounts it holds "
                + "(default: this computer's host name and --port)")
        String applicationServer;

        @Option(names = "--tokens", required = true, paramLabel = "FILE", description = "the bearer tokens it accepts "
                + "(the tokens.json of a data folder: hashes only)")
        Path tokens;

        @Option(names = "--choice-url", paramLabel = "URL", description = "the choice service's base URL (its 'run choice'); "
                + "without it POST /api/session-choice answers 503")
        String choiceUrl;

        @Option(names = "--choice-secret-file", paramLabel = "FILE", description = "with --choice-url: the choice service's --secret-file")
        Path choiceSecretFile;

        @Option(names = "--metrics-token-file", paramLabel = "FILE", description = "the scrape token GET /metrics asks for "
                + "(default: a random one, written to <state-dir>/metrics-token)")
        Path metricsTokenFile;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            CommandChecks.requirePort(spec, "--port", port);
            CommandChecks.require(spec, Files.isRegularFile(tokens), "--tokens " + tokens + " is no file (the tokens.json of a data folder)");
            CommandChecks.require(spec, (choiceUrl == null) == (choiceSecretFile == null), "--choice-url and --choice-secret-file go together");
            String choiceSecret = choiceSecretFile == null ? null : readSecret(spec, "--choice-secret-file", choiceSecretFile);
            String advertised = applicationServer != null ? applicationServer
                    : java.net.InetAddress.getLocalHost().getCanonicalHostName() + ":" + port;
            CommandChecks.require(spec, applicationServer != null || port != 0,
                    "--port 0 needs --application-server (the others must know the port)");
            ServiceOptions.Resolved kafka = options.resolve(environment());
            Path state = options.stateDir("gateway");
            return runUntilStopped("gateway", options, kafka, running -> {
                ensureTopics(options, kafka, RetirementRules.Config.defaults(), CleanupConfig.defaults());
                String metricsToken;
                if (metricsTokenFile != null) {
                    metricsToken = readSecret(spec, "--metrics-token-file", metricsTokenFile);
                } else {
                    Files.createDirectories(state);
                    metricsToken = UpCommand.metricsToken(new DataDir(state));
                }
                Gateway gateway;
                try {
                    gateway = new Gateway(new Gateway.Settings(kafka.bootstrapServers(), host, port, state, options.replicationFactor,
                            Tokens.load(tokens), Clock.systemUTC(), choiceUrl, choiceSecret))
                            .withClientProperties(kafka.clientProperties()).withStreamsSettings(kafka.streamsSettings())
                            .withApplicationServer(advertised)
                            .withMetrics(new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                                    io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT), metricsToken).start();
                } catch (RuntimeException e) {
                    throw UpCommand.bindFailure(e).<RuntimeException>map(b -> UpCommand.cannotListen(port, b)).orElse(e);
                }
                running.started(gateway);
                gateway.awaitReady(Duration.ofMinutes(10));
                return "http://" + host + ":" + gateway.port() + " (application.server " + advertised + ")";
            });
        }
    }

    @Command(name = "agent", mixinStandardHelpOptions = true, defaultValueProvider = EnvironmentDefaults.class,
            description = "The computer agent alone: imports this computer's agent stores and keeps them up to date.")
    static final class Agent implements Callable<Integer> {
        @Mixin
        ServiceOptions options = new ServiceOptions();

        @Option(names = "--account", description = "the person's account (default: the user name)")
        String account;

        @Option(names = "--claude-dir", description = "Claude Code projects folders to import (default ~/.claude/projects)")
        List<Path> claudeDirs;

        @Option(names = "--codex-dir", description = "Codex sessions folders to import (default ~/.codex/sessions)")
        List<Path> codexDirs;

        @Option(names = "--poll-seconds", defaultValue = "5", description = "how often it looks for changed transcripts (default ${DEFAULT-VALUE})")
        int pollSeconds;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            CommandChecks.requireAtLeast(spec, "--poll-seconds", pollSeconds, 1);
            if (account != null) {
                CommandChecks.requireAccount(spec, "--account", account);
            }
            ServiceOptions.Resolved kafka = options.resolve(environment());
            String who = account != null ? account : System.getProperty("user.name", "local");
            Path state = options.stateDir("agent");
            return runUntilStopped("agent", options, kafka, running -> {
                ensureTopics(options, kafka, RetirementRules.Config.defaults(), CleanupConfig.defaults());
                Files.createDirectories(state);
                AgentStores stores = AgentStores.defaults(DataDir.home(), System.getenv()).withClaudeAndCodex(claudeDirs, codexDirs);
                ComputerAgent agent = new ComputerAgent(kafka.bootstrapServers(), new ImportConfig(who,
                        ComputerId.readOrCreate(state.resolve("computer-id")), Clock.systemUTC(), state.resolve("import-state.json")),
                        stores, Duration.ofSeconds(pollSeconds), new ImportProgressBar(System.out))
                        .withClientProperties(kafka.clientProperties());
                running.<AutoCloseable>started(agent::stop);
                agent.start();
                return "importing for " + who + " from " + stores.all().stream().filter(e -> Files.isDirectory(e.getValue())).count()
                        + " of " + stores.all().size() + " agent stores";
            });
        }
    }
}
