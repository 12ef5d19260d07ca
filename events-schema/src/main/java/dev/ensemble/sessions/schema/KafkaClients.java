package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.CommonClientConfigs;

import java.util.HashMap;
import java.util.Map;

/**
 * How every Kafka client of the system reaches its cluster: the bootstrap servers plus the cluster's client properties
 * (its security settings, e.g. {@code security.protocol=SASL_PLAINTEXT}, {@code sasl.mechanism},
 * {@code sasl.jaas.config} for the embedded broker, or {@code SASL_SSL} and trust-store settings for a real cluster).
 * Each service takes those properties in its {@code overrides} (Streams passes unprefixed client settings on to all its
 * clients) or a {@code clientProperties} map, and starts each client's settings from {@link #config}.
 */
public final class KafkaClients {
    private KafkaClients() {
    }

    /**
     * A client's base settings: {@code clientProperties}, then {@code bootstrap.servers}. The caller puts its own settings
     * on top.
     *
     * @param bootstrapServers the cluster, {@code host:port[,host:port...]}
     * @param clientProperties the cluster's client properties (empty for a cluster without security)
     * @return a new mutable map
     */
    public static Map<String, Object> config(String bootstrapServers, Map<String, ?> clientProperties) {
        Map<String, Object> p = new HashMap<>(clientProperties == null ? Map.of() : clientProperties);
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return p;
    }

    /**
     * The connection and security settings among {@code settings} (a service's Streams overrides, say): keys starting
     * with {@code security.}, {@code sasl.} or {@code ssl.}, and {@code client.dns.lookup}; for a plain client made
     * beside a Streams application, which must not get the application's other settings.
     */
    public static Map<String, Object> connection(Map<?, ?> settings) {
        Map<String, Object> p = new HashMap<>();
        if (settings == null) {
            return p;
        }
        settings.forEach((k, v) -> {
            String key = String.valueOf(k);
            if (key.startsWith("security.") || key.startsWith("sasl.") || key.startsWith("ssl.")
                    || key.equals(CommonClientConfigs.CLIENT_DNS_LOOKUP_CONFIG)) {
                p.put(key, v);
            }
        });
        return p;
    }

    /** {@code base} with {@code top} put over it, as a new mutable map (a service's own settings over the client properties). */
    public static Map<String, Object> merge(Map<String, ?> base, Map<String, ?> top) {
        Map<String, Object> p = new HashMap<>(base == null ? Map.of() : base);
        if (top != null) {
            p.putAll(top);
        }
        return p;
    }
}
