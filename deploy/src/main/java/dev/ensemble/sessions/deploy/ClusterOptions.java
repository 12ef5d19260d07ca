package dev.ensemble.sessions.deploy;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.Map;

/**
 * The options that point a command at a Kafka cluster of one's own instead of the data folder's embedded broker
 * ({@code --bootstrap-servers}, {@code --client-properties}), as a picocli mixin of {@code up}, {@code rebuild} and
 * {@code recalibrate}, and the client properties they give.
 */
final class ClusterOptions {
    @Option(names = "--bootstrap-servers", description = "use this Kafka cluster instead of the data folder's embedded broker")
    String bootstrapServers;

    @Option(names = "--client-properties", paramLabel = "FILE", description = "with --bootstrap-servers: that cluster's Kafka client "
            + "settings (security.protocol, sasl.*, ssl.*), given to every client")
    Path clientPropertiesFile;

    @Option(names = "--cluster-timeout", defaultValue = "30", paramLabel = "SECONDS", description = "with --bootstrap-servers: "
            + "how long it tries to reach that cluster before it gives up (default ${DEFAULT-VALUE})")
    int clusterTimeoutSeconds;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    /** Whether either option was given. */
    boolean given() {
        return bootstrapServers != null || clientPropertiesFile != null;
    }

    /**
     * The client properties {@code --client-properties} names (empty without it), for the cluster {@code --bootstrap-servers}
     * names; a usage error (exit code 2) when it is given without {@code --bootstrap-servers} (the embedded broker makes its own).
     *
     * @throws IllegalArgumentException when the file cannot be read
     */
    Map<String, Object> clientProperties() {
        if (clientPropertiesFile == null) {
            return Map.of();
        }
        CommandChecks.require(spec, bootstrapServers != null, "--client-properties goes with --bootstrap-servers "
                + "(the embedded broker's clients use <data-dir>/" + LocalKafka.CLIENT_PROPERTIES + ")");
        return KafkaClientProperties.load(clientPropertiesFile);
    }

    /**
     * With {@code --bootstrap-servers}: returns once that cluster answered, trying for {@code --cluster-timeout}
     * ({@link ServiceOptions#requireReachable(String, Map, int, String)}).
     *
     * @throws UpCommand.CannotStart when it did not answer, with the reason and the options to check
     */
    void requireReachable(Map<String, Object> clientProperties) {
        CommandChecks.requireAtLeast(spec, "--cluster-timeout", clusterTimeoutSeconds, 1);
        if (bootstrapServers != null) {
            ServiceOptions.requireReachable(bootstrapServers, clientProperties, clusterTimeoutSeconds,
                    "--bootstrap-servers and --client-properties (security.protocol, sasl.*, ssl.*)");
        }
    }
}
