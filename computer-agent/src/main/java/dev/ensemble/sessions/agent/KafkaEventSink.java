package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sends events to the event log, {@link Topics#EVENTS}, keyed by account (DESIGN.md section 3: all of one
 * account's events in one partition, in order), with an idempotent producer ({@code acks=all},
 * {@code enable.idempotence=true}) so a retried send is written once.
 *
 * <p>Errors: sends are asynchronous; the first failed send is kept and thrown (as a {@link KafkaException}) by
 * the next {@link #accept} or {@link #flush}, so the importer does not record progress past it. Thrown once: the
 * caller then sends again from its last recorded progress (event ids are deterministic, so what had been written
 * already is a duplicate that changes nothing), and a broker that is back takes the events.
 */
public final class KafkaEventSink implements EventSink, AutoCloseable {
    private final Producer<String, Event> producer;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    /** A sink to the cluster at {@code bootstrapServers}. */
    public KafkaEventSink(String bootstrapServers) {
        this(bootstrapServers, Map.of());
    }

    /**
     * A sink to the cluster at {@code bootstrapServers} with extra producer settings (security, client id, ...);
     * acks, idempotence and the serializers are always this class's.
     */
    public KafkaEventSink(String bootstrapServers, Map<String, Object> overrides) {
        Map<String, Object> props = dev.ensemble.sessions.schema.LogProducers.config(bootstrapServers, "computer-agent", overrides);
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 20);
        // an import appends thousands of small events at once: larger batches, fewer requests
        props.putIfAbsent(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        this.producer = new KafkaProducer<>(props, Topics.EVENTS.keySerde().serializer(),
                Topics.EVENTS.valueSerde().serializer());
    }

    /** Binds its producer's metrics ({@code kafka.producer.*}, tagged {@code service}) to a registry; close the result first. */
    AutoCloseable bindMetrics(io.micrometer.core.instrument.MeterRegistry registry, String service) {
        io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics m = new io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics(
                producer, java.util.List.of(io.micrometer.core.instrument.Tag.of("service", service)));
        m.bindTo(registry);
        return m;
    }

    /** Sends {@code e} keyed by its account. */
    @Override
    public void accept(Event e) {
        throwIfFailed();
        producer.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), e), (metadata, error) -> {
            if (error != null) {
                failure.compareAndSet(null, error);
            }
        });
    }

    /** Waits until every event sent so far is acknowledged by all in-sync replicas, or throws the first failure. */
    @Override
    public void flush() {
        producer.flush();
        throwIfFailed();
    }

    private void throwIfFailed() {
        Exception e = failure.getAndSet(null);
        if (e != null) {
            throw new KafkaException("an event could not be written to " + Topics.EVENTS.name() + ": " + e.getMessage(), e);
        }
    }

    /** Sends what is buffered (waiting up to 30 seconds) and closes the producer. */
    @Override
    public void close() {
        producer.close(Duration.ofSeconds(30));
    }
}
