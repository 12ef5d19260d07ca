package dev.ensemble.sessions.deploy;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka settings from the environment, in the field's convention (as streams-bootstrap and the Kafka container images
 * read them): every variable {@code KAFKA_<NAME>} is the setting named by {@code <NAME>} in lower case with each
 * {@code _} a {@code .}: {@code KAFKA_BOOTSTRAP_SERVERS} is {@code bootstrap.servers}, {@code KAFKA_SECURITY_PROTOCOL}
 * {@code security.protocol}, {@code KAFKA_NUM_STANDBY_REPLICAS} {@code num.standby.replicas}. The variables of Kafka's
 * own scripts ({@code KAFKA_HOME}, {@code KAFKA_DEBUG}, {@code KAFKA_JMX_PORT}, {@code KAFKA_LOG_DIR}, any
 * {@code KAFKA_*_OPTS}) are no settings and are left out. A setting whose name holds a {@code _} (none of the client's
 * or Streams' do) cannot be given this way.
 */
final class KafkaEnvironment {
    /** The prefix of the variables read. */
    static final String PREFIX = "KAFKA_";
    /** Variables of Kafka's scripts, not settings. */
    private static final Set<String> SCRIPT_VARIABLES = Set.of("KAFKA_HOME", "KAFKA_DEBUG", "KAFKA_JMX_PORT", "KAFKA_LOG_DIR",
            "KAFKA_CLUSTER_ID");

    private KafkaEnvironment() {
    }

    /** The settings among {@code environment}'s variables, by setting name (sorted); empty when there is none. */
    static Map<String, String> settings(Map<String, String> environment) {
        Map<String, String> out = new TreeMap<>();
        environment.forEach((name, value) -> {
            if (name.startsWith(PREFIX) && name.length() > PREFIX.length() && !SCRIPT_VARIABLES.contains(name)
                    && !name.endsWith("_OPTS") && value != null) {
                out.put(settingName(name), value.strip());
            }
        });
        return out;
    }

    /** {@code KAFKA_SECURITY_PROTOCOL} → {@code security.protocol}. */
    static String settingName(String variable) {
        return variable.substring(PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
    }
}
