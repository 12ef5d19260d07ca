package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The options every service run alone shares ({@code ensemble-sessions run <service>}, a picocli mixin): the cluster,
 * the state folder, the Kafka Streams instance's threads and standby replicas, the replication factor and partitions of
 * the topics it creates when missing. With the {@code KAFKA_} environment ({@link KafkaEnvironment}) they give the
 * service's Kafka settings ({@link #resolve}); lowest to highest:
 * <ol>
 *   <li>the {@code KAFKA_*} variables;</li>
 *   <li>the {@code --client-properties} file;</li>
 *   <li>the options ({@code --bootstrap-servers}, {@code --threads}, {@code --standby-replicas}, the gateway's
 *       {@code --application-server}), each from the command line or else its {@code ENSEMBLE_*} variable
 *       ({@link EnvironmentDefaults}).</li>
 * </ol>
 */
final class ServiceOptions {
    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            description = "the Kafka cluster (else KAFKA_BOOTSTRAP_SERVERS)")
    String bootstrapServers;

    @Option(names = "--client-properties", paramLabel = "FILE", description = "that cluster's Kafka client settings "
            + "(security.protocol, sasl.*, ssl.*, ...), given to every client; over the KAFKA_* variables")
    Path clientPropertiesFile;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "where its Kafka Streams stores (or the importer's state) live "
            + "(default ~/.ensemble-sessions/state/<service>)")
    Path stateDir;

    @Option(names = "--threads", paramLabel = "N", description = "Kafka Streams num.stream.threads (default 1)")
    Integer threads;

    @Option(names = "--standby-replicas", paramLabel = "N", description = "Kafka Streams num.standby.replicas: warm copies of "
            + "each store on other instances, taken over at once when an instance goes (default 0)")
    Integer standbyReplicas;

    @Option(names = "--replication-factor", defaultValue = "-1", paramLabel = "N", description = "of the topics it creates "
            + "when missing, its internal topics among them (default: the cluster's default.replication.factor)")
    short replicationFactor;

    @Option(names = "--partitions", paramLabel = "N", description = "of the system's topics it creates when missing (default "
            + Topics.DEFAULT_PARTITIONS + "); all instances and services must agree")
    int partitions = Topics.DEFAULT_PARTITIONS;

    @Option(names = "--ready-file", paramLabel = "FILE", description = "a file written once the service is ready (its ready "
            + "line) and removed when it stops, and at its start: a readiness check for compose or Kubernetes (test -f FILE)")
    Path readyFile;

    @Option(names = "--cluster-timeout", defaultValue = "30", paramLabel = "SECONDS",
            description = "how long it tries to reach the cluster before it gives up (default ${DEFAULT-VALUE})")
    int clusterTimeoutSeconds;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    /**
     * A service's Kafka settings.
     *
     * @param bootstrapServers the cluster
     * @param clientProperties the settings every client gets: the connection and security settings of the {@code KAFKA_*}
     *                         variables, then the whole {@code --client-properties} file
     * @param streamsSettings  the settings its Kafka Streams applications get beside those: the other {@code KAFKA_*}
     *                         variables, then the options
     */
    record Resolved(String bootstrapServers, Map<String, Object> clientProperties, Map<String, Object> streamsSettings) {
        /** {@link #clientProperties} with {@link #streamsSettings} over them: a Streams application's overrides. */
        Map<String, Object> streamsOverrides() {
            return KafkaClients.merge(clientProperties, streamsSettings);
        }
    }

    /**
     * The settings from {@code environment} and the options, as the class comment orders them; a usage error (exit code 2)
     * when no cluster is given or a number is out of range.
     *
     * @throws IllegalArgumentException when the {@code --client-properties} file cannot be read
     */
    Resolved resolve(Map<String, String> environment) {
        CommandChecks.requireAtLeast(spec, "--partitions", partitions, 1);
        CommandChecks.requireAtLeast(spec, "--cluster-timeout", clusterTimeoutSeconds, 1);
        if (threads != null) {
            CommandChecks.requireAtLeast(spec, "--threads", threads, 1);
        }
        if (standbyReplicas != null) {
            CommandChecks.requireAtLeast(spec, "--standby-replicas", standbyReplicas, 0);
        }
        CommandChecks.require(spec, replicationFactor == -1 || replicationFactor >= 1,
                "--replication-factor must be 1 or more (or -1: the cluster's default), not " + replicationFactor);
        Map<String, String> fromEnvironment = new HashMap<>(KafkaEnvironment.settings(environment));
        String bootstrap = bootstrapServers != null ? bootstrapServers : fromEnvironment.get("bootstrap.servers");
        fromEnvironment.remove("bootstrap.servers");
        CommandChecks.require(spec, bootstrap != null && !bootstrap.isBlank(),
                "give the Kafka cluster: --bootstrap-servers HOST:PORT or KAFKA_BOOTSTRAP_SERVERS");
        Map<String, Object> client = KafkaClients.connection(fromEnvironment);
        Map<String, Object> streams = new HashMap<>(fromEnvironment);
        streams.keySet().removeAll(client.keySet());
        if (clientPropertiesFile != null) {
            Map<String, Object> file = KafkaClientProperties.load(clientPropertiesFile);
            client.putAll(file);
            streams.keySet().removeAll(file.keySet());
        }
        if (threads != null) {
            streams.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        }
        if (standbyReplicas != null) {
            streams.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, standbyReplicas);
        }
        return new Resolved(bootstrap.strip(), client, streams);
    }

    /** {@code --state-dir}, or {@code ~/.ensemble-sessions/state/<service>}. */
    Path stateDir(String service) {
        return stateDir != null ? stateDir : DataDir.of(null).state(service);
    }

    /**
     * Returns once the cluster answered (its id), trying for {@code --cluster-timeout}.
     *
     * @throws UpCommand.CannotStart when it did not answer, naming the cluster, the reason and where the settings come from
     */
    void requireReachable(Resolved kafka) {
        requireReachable(kafka.bootstrapServers(), kafka.clientProperties(), clusterTimeoutSeconds,
                "--bootstrap-servers or KAFKA_BOOTSTRAP_SERVERS, and the security settings (--client-properties, KAFKA_SECURITY_PROTOCOL, ...)");
    }

    /**
     * Returns once the cluster at {@code bootstrapServers} answered (its id), trying for {@code seconds}. Until an
     * address takes a plain TCP connection (every address a name resolves to is tried, as Kafka's clients do) it tries
     * that once a second, printing one line that it waits, without a Kafka client's warning at each try; an address
     * that is not {@code [SCHEME://]HOST:PORT} fails at once.
     *
     * @param settings where the settings come from, for the message
     * @throws UpCommand.CannotStart when it did not answer, naming the cluster, the reason and {@code settings}
     */
    static void requireReachable(String bootstrapServers, Map<String, Object> clientProperties, int seconds, String settings) {
        long until = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        boolean said = false;
        for (String why = unreachable(bootstrapServers, settings); why != null; why = unreachable(bootstrapServers, settings)) {
            if (System.nanoTime() > until) {
                throw new UpCommand.CannotStart("cannot reach the Kafka cluster at " + bootstrapServers + " within " + seconds
                        + " s (" + why + "); check " + settings, null);
            }
            if (!said) {
                System.out.println("waiting for the Kafka cluster at " + bootstrapServers + " (" + why + "), up to " + seconds + " s…");
                said = true;
            }
            try {
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UpCommand.CannotStart("interrupted while reaching the Kafka cluster at " + bootstrapServers, e);
            }
        }
        long ms = Math.max(1_000, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())); // what is left of the time
        Map<String, Object> config = KafkaClients.config(bootstrapServers, clientProperties);
        config.put("default.api.timeout.ms", (int) ms);
        config.put("request.timeout.ms", (int) Math.min(ms, 30_000));
        try (Admin admin = Admin.create(config)) {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) ms)).clusterId().get(ms + 5_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UpCommand.CannotStart("interrupted while reaching the Kafka cluster at " + bootstrapServers, e);
        } catch (Exception e) {
            Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new UpCommand.CannotStart("cannot reach the Kafka cluster at " + bootstrapServers + " within "
                    + seconds + " s (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + "); check " + settings, e);
        }
    }

    /**
     * Null when an address of {@code bootstrapServers} takes a TCP connection (1 s each), else why none does
     * ("127.0.0.1:1: Connection refused; k:9092: unknown host"). Addresses are read as Kafka's clients read them
     * ({@link Utils#getHost}, {@link Utils#getPort}: a scheme such as {@code SASL_SSL://} and IPv6 brackets allowed).
     *
     * @throws UpCommand.CannotStart at once for an address that is not {@code [SCHEME://]HOST:PORT}, or none at all
     */
    static String unreachable(String bootstrapServers, String settings) {
        List<String> why = new ArrayList<>();
        for (String given : bootstrapServers.split(",")) {
            String a = given.strip();
            if (a.isEmpty()) {
                continue;
            }
            String host = Utils.getHost(a);
            Integer port = Utils.getPort(a);
            if (host == null || port == null || port > 65535) {
                throw new UpCommand.CannotStart("cannot reach the Kafka cluster at " + bootstrapServers + " ('" + a
                        + "' is not HOST:PORT); check " + settings, null);
            }
            java.net.InetAddress[] addresses;
            try {
                addresses = java.net.InetAddress.getAllByName(host);
            } catch (java.net.UnknownHostException e) {
                why.add(a + ": unknown host");
                continue;
            }
            for (java.net.InetAddress address : addresses) {
                try (java.net.Socket socket = new java.net.Socket()) {
                    socket.connect(new java.net.InetSocketAddress(address, port), 1_000);
                    return null;
                } catch (java.io.IOException e) {
                    why.add(a + (addresses.length > 1 ? " (" + address.getHostAddress() + ")" : "") + ": " + e.getMessage());
                }
            }
        }
        if (why.isEmpty()) {
            throw new UpCommand.CannotStart("no Kafka cluster address in '" + bootstrapServers + "'; check " + settings, null);
        }
        return String.join("; ", why);
    }
}
