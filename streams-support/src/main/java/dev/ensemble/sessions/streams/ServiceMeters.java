package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventTypes;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.streams.KafkaStreams;

import java.util.Map;
import java.util.Properties;

/**
 * The meters every service shares (docs/operations.md "Metrics"): one {@link MeterRegistry} given to each service
 * ({@code up} runs them all in one JVM with one registry, which the gateway serves at {@code GET /metrics}); a service
 * given none counts into {@link #NONE}, which keeps nothing, and binds no Kafka metrics.
 *
 * <p>Meters named here (Micrometer names; Prometheus adds {@code _total} to counters and turns dots into underscores):
 * <ul>
 *   <li>{@value #DEAD_LETTERED}, tags {@code type} (the event type, or {@code unknown} when the record is not a
 *       readable event) and {@code service} (the gateway, or the Streams application that wrote the dead letter).</li>
 *   <li>the Kafka Streams metrics of each application ({@code kafka.stream.*}) and the metrics of its clients
 *       ({@code kafka.producer.*}, {@code kafka.consumer.*}, {@code kafka.admin.client.*}), and those of the plain
 *       clients bound with {@link #bind(MeterRegistry, Producer, String)}; each tagged {@code service}.</li>
 * </ul>
 * Counting happens as records are processed: a task that restarts from its last commit may count a record twice.
 */
public final class ServiceMeters {
    private ServiceMeters() {
    }

    /**
     * The Streams setting under which a service's registry reaches its processors and exception handlers
     * ({@code ProcessorContext.appConfigs()}, {@code configure(Map)}); not a Kafka setting, never given to a client.
     */
    public static final String REGISTRY_CONFIG = "ensemble.meter.registry";

    /** The dead-letter counter's name. */
    public static final String DEAD_LETTERED = "ensemble.events.dead.lettered";

    /** The registry of a service given none: meters registered with it record nothing. */
    public static final MeterRegistry NONE = new CompositeMeterRegistry();

    /** {@code registry}, or {@link #NONE} when it is null. */
    public static MeterRegistry orNone(MeterRegistry registry) {
        return registry == null ? NONE : registry;
    }

    /** The registry a Streams application was given ({@link #REGISTRY_CONFIG} in its configs), or {@link #NONE}. */
    public static MeterRegistry of(Map<String, ?> configs) {
        return configs != null && configs.get(REGISTRY_CONFIG) instanceof MeterRegistry r ? r : NONE;
    }

    /** Puts the registry into a Streams application's properties (nothing when it is {@link #NONE} or null); returns them. */
    public static Properties withRegistry(Properties streamsProperties, MeterRegistry registry) {
        if (registry != null && registry != NONE) {
            streamsProperties.put(REGISTRY_CONFIG, registry);
        }
        return streamsProperties;
    }

    /**
     * Binds a Streams application's metrics (its threads, tasks, stores and clients) to the registry, tagged
     * {@code service}; close the result when the application closes. Nothing is bound to {@link #NONE}.
     */
    public static AutoCloseable bind(MeterRegistry registry, KafkaStreams streams, String service) {
        if (registry == null || registry == NONE) {
            return () -> { };
        }
        KafkaStreamsMetrics m = new KafkaStreamsMetrics(streams, Tags.of(Tag.of("service", service)));
        m.bindTo(registry);
        return m;
    }

    /** Binds a producer's metrics ({@code kafka.producer.*}), tagged {@code service}; close the result with the producer. */
    public static AutoCloseable bind(MeterRegistry registry, Producer<?, ?> producer, String service) {
        if (registry == null || registry == NONE) {
            return () -> { };
        }
        KafkaClientMetrics m = new KafkaClientMetrics(producer, Tags.of(Tag.of("service", service)));
        m.bindTo(registry);
        return m;
    }

    /** Binds a consumer's metrics ({@code kafka.consumer.*}), tagged {@code service}; close the result with the consumer. */
    public static AutoCloseable bind(MeterRegistry registry, Consumer<?, ?> consumer, String service) {
        if (registry == null || registry == NONE) {
            return () -> { };
        }
        KafkaClientMetrics m = new KafkaClientMetrics(consumer, Tags.of(Tag.of("service", service)));
        m.bindTo(registry);
        return m;
    }

    /**
     * The metrics of a service's current Streams application, which a change of the serving generation replaces:
     * {@link #follow} binds the new one and unbinds the one before.
     */
    public static final class StreamsBinding implements AutoCloseable {
        private final MeterRegistry registry;
        private final String service;
        private AutoCloseable current;

        public StreamsBinding(MeterRegistry registry, String service) {
            this.registry = orNone(registry);
            this.service = service;
        }

        /** Binds {@code streams} (the service's application from now on) in place of the one before. */
        public synchronized void follow(KafkaStreams streams) {
            closeQuietly(current);
            current = bind(registry, streams, service);
        }

        @Override
        public synchronized void close() {
            closeQuietly(current);
            current = null;
        }
    }

    /** Closes a binding, ignoring a failure (it only unregisters meters). */
    public static void closeQuietly(AutoCloseable binding) {
        if (binding == null) {
            return;
        }
        try {
            binding.close();
        } catch (Exception ignored) {
            // nothing to do: the meters stay registered with their last values
        }
    }

    /** The event type of a record's value: an {@link Event}'s type, a known type name as is, else {@code unknown}. */
    public static String eventType(Object value) {
        if (value instanceof Event e && e.getPayload() != null) {
            return EventTypes.typeOf(e);
        }
        if (value instanceof CharSequence s && EventTypes.names().contains(s.toString())) {
            return s.toString();
        }
        return "unknown";
    }

    /** Counts one dead letter of an event of {@code type} written by {@code service}. */
    public static void deadLettered(MeterRegistry registry, String type, String service) {
        Counter.builder(DEAD_LETTERED).description("events written to the dead-letter topic instead of being taken")
                .tag("type", type).tag("service", service == null || service.isEmpty() ? "unknown" : service)
                .register(orNone(registry)).increment();
    }
}
