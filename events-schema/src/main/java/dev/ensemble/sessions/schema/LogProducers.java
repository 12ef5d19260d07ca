package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.producer.ProducerConfig;

import java.util.HashMap;
import java.util.Map;

/**
 * The settings of every producer that appends to the event log ({@link Topics#EVENTS}) from outside Kafka Streams:
 * the gateway's intake, the computer agent's sink, the choice service's records, the benchmark.
 */
public final class LogProducers {
    private LogProducers() {
    }

    /**
     * Producer settings: {@code acks=all} and idempotence (a retried send is written once), and one request in
     * flight per connection: on a system just started, a first batch refused while a new partition's leader comes up
     * is retried before the next is sent. With several in flight the broker can take the next batch first, and the
     * first then fails with an out-of-order sequence until it expires (seen in the rebuild test on Kafka 4.3).
     *
     * @param bootstrapServers the cluster
     * @param clientId         the producer's client id
     * @param overrides        further settings (linger, security, ...), applied first: the three above always win
     * @return a new mutable map
     */
    public static Map<String, Object> config(String bootstrapServers, String clientId, Map<String, ?> overrides) {
        Map<String, Object> p = new HashMap<>(overrides);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        return p;
    }
}
