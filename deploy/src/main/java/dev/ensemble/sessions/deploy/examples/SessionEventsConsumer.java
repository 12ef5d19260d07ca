package dev.ensemble.sessions.deploy.examples;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An outside service consuming the event log (docs/events.md, "Consuming from another service"): a consumer group of
 * its own, {@code read_committed} (the choice service writes with exactly-once transactions), values decoded with
 * events-schema's serde (Avro single-object encoding; every released schema version is readable), offsets committed
 * after the records are handled (at-least-once: handle each eventId idempotently). Undecodable records are reported
 * and skipped, never stop it.
 * <p>
 * Run: {@code java -cp deploy/target/ensemble-sessions.jar dev.ensemble.sessions.deploy.examples.SessionEventsConsumer
 * [--client-properties FILE] <bootstrap-servers> [group-id]}; prints one JSON line per event until interrupted. The
 * embedded broker of {@code up} refuses clients without its credentials: give it {@code <data-dir>/kafka-client.properties}
 * (security.protocol, sasl.mechanism, sasl.jaas.config); for another cluster, that cluster's client properties file.
 */
public final class SessionEventsConsumer {
    private SessionEventsConsumer() {
    }

    public static void main(String[] args) throws java.io.IOException {
        java.util.List<String> rest = new java.util.ArrayList<>(java.util.List.of(args));
        Map<String, Object> clientProperties = new java.util.HashMap<>();
        if (rest.size() >= 2 && rest.get(0).equals("--client-properties")) {
            java.util.Properties file = new java.util.Properties();
            try (var in = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(rest.get(1)))) {
                file.load(in);
            }
            file.forEach((k, v) -> clientProperties.put(k.toString(), v.toString().strip()));
            rest = rest.subList(2, rest.size());
        }
        if (rest.isEmpty() || rest.get(0).startsWith("--")) {
            System.err.println("usage: SessionEventsConsumer [--client-properties FILE] <bootstrap-servers> [group-id]");
            System.exit(2);
        }
        consume(rest.get(0), clientProperties, rest.size() > 1 ? rest.get(1) : "example-session-events", Long.MAX_VALUE,
                Duration.ofDays(3650), e -> System.out.println(EventTypes.typeOf(e) + " " + EventJson.toJson(e)));
    }

    /** {@link #consume(String, Map, String, long, Duration, Consumer)} on a cluster without security settings. */
    public static long consume(String bootstrapServers, String groupId, long max, Duration timeout, Consumer<Event> handler) {
        return consume(bootstrapServers, Map.of(), groupId, max, timeout, handler);
    }

    /**
     * Reads the log as group {@code groupId} from its committed offsets (the beginning for a new group) and hands each
     * event to {@code handler}, until {@code max} events were handled or {@code timeout} passed.
     *
     * @param clientProperties the cluster's client properties (security settings; for {@code up}'s broker, the contents of
     *                         {@code <data-dir>/kafka-client.properties})
     * @return how many events were handled
     */
    public static long consume(String bootstrapServers, Map<String, ?> clientProperties, String groupId, long max, Duration timeout,
                               Consumer<Event> handler) {
        Map<String, Object> p = new java.util.HashMap<>(clientProperties);
        p.putAll(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, groupId,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
        var decoder = Topics.eventSerde().deserializer();
        long handled = 0;
        long until = System.currentTimeMillis() + timeout.toMillis();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(Topics.EVENTS.name()));
            while (handled < max && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(500))) {
                    try {
                        handler.accept(decoder.deserialize(r.topic(), r.value()));
                        handled++;
                    } catch (SerializationException | org.apache.avro.AvroRuntimeException ex) {
                        System.err.println("skipped " + r.topic() + "-" + r.partition() + "@" + r.offset() + ": " + ex.getMessage());
                    }
                }
                c.commitSync();
            }
        }
        return handled;
    }
}
