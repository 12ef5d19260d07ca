package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The reading loop shared by the computer's executors ({@link DeletionExecutor}, {@link ConversationDropExecutor}): on a
 * thread of its own, it reads the event log's partition of this computer's account (read-committed, with a consumer
 * group of its own, from its committed position, else from the start), skips what cannot be decoded (the projector
 * dead-letters it), hands each event to the handler and writes the handler's answer, if any, to the sink. The position
 * is committed only after the answers are flushed, so a restart in between hands the same events again (the handlers
 * answer with the same ids). When the answers cannot be written (or the position committed), it goes back to the
 * committed position and tries again every 5 seconds.
 *
 * <p>A handler cut short by {@link #stop()} throws {@link Stopping}: its event is neither answered nor committed, and
 * the next start reads it again.
 */
final class AccountLogAnswers implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AccountLogAnswers.class);

    /** Thrown by a handler that {@link #stop()} interrupted: the loop stops without answering or committing. */
    static final class Stopping extends RuntimeException {
        Stopping() {
            super("stopping", null, false, false);
        }
    }

    private final String bootstrapServers;
    private final Map<String, ?> clientProperties;
    private final ImportConfig config;
    private final String name;
    private final String what;
    private final Function<Event, Event> handler;
    private final EventSink sink;
    private final Duration interruptAfter;
    private volatile boolean running;
    private Thread thread;
    private KafkaConsumer<String, byte[]> consumer;

    /**
     * @param name           names the consumer group ({@code ensemble-computer-<computer>-<name>}), the client id
     *                       ({@code computer-agent-<computer>-<name>}) and the thread ({@code computer-agent-<name>})
     * @param what           what the loop does, for its log lines ("carrying out deletions")
     * @param handler        an event (or null, a record with no value) to its answer, or null when it asks nothing
     * @param interruptAfter how long {@link #stop()} waits before it interrupts a handler still running, or null to
     *                       never interrupt it
     */
    AccountLogAnswers(String bootstrapServers, Map<String, ?> clientProperties, ImportConfig config, String name, String what,
                      Function<Event, Event> handler, EventSink sink, Duration interruptAfter) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        this.clientProperties = Map.copyOf(clientProperties);
        this.config = Objects.requireNonNull(config, "config");
        this.name = Objects.requireNonNull(name, "name");
        this.what = Objects.requireNonNull(what, "what");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.interruptAfter = interruptAfter;
    }

    /** Starts reading on a thread of its own. */
    synchronized void start() {
        if (thread != null) {
            throw new IllegalStateException("computer-agent-" + name + " is already started");
        }
        Map<String, Object> p = KafkaClients.config(bootstrapServers, clientProperties);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "ensemble-computer-" + config.computerId() + "-" + name);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "computer-agent-" + config.computerId() + "-" + name);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer = new KafkaConsumer<>(p, Topics.EVENTS.keySerde().deserializer(), new ByteArrayDeserializer());
        int partitions = consumer.partitionsFor(Topics.EVENTS.name()).size();
        consumer.assign(List.of(new TopicPartition(Topics.EVENTS.name(), Keys.accountPartition(config.account(), partitions))));
        running = true;
        thread = new Thread(this::loop, "computer-agent-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                try {
                    once();
                } catch (WakeupException | Stopping stopping) {
                    throw stopping;
                } catch (RuntimeException e) {
                    // the answers could not be written (or the position committed): go back to the committed
                    // position and try again; the handlers answer again with the same ids
                    log.error("{} failed; trying again from the committed position in 5 s", what, e);
                    rewind();
                    Thread.sleep(5_000);
                }
            }
        } catch (WakeupException | Stopping | InterruptedException stopping) {
            // stop() asked; an event cut short is neither answered nor committed: the next start reads it again
        } finally {
            Thread.interrupted(); // closing the consumer must not see stop()'s interrupt
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private void once() {
        boolean any = false;
        var records = consumer.poll(Duration.ofMillis(500));
        for (ConsumerRecord<String, byte[]> r : records) {
            Event e;
            try {
                e = Topics.EVENTS.valueSerde().deserializer().deserialize(r.topic(), r.value());
            } catch (RuntimeException undecodable) {
                continue; // the projector dead-letters what cannot be decoded; nothing here is ours
            }
            Event answer = handler.apply(e);
            if (answer != null) {
                sink.accept(answer);
                any = true;
            }
        }
        if (any) {
            sink.flush();
        }
        if (!records.isEmpty()) {
            consumer.commitSync();
        }
    }

    private void rewind() {
        try {
            var committed = consumer.committed(consumer.assignment());
            for (TopicPartition tp : consumer.assignment()) {
                var at = committed.get(tp);
                if (at == null) {
                    consumer.seekToBeginning(List.of(tp));
                } else {
                    consumer.seek(tp, at.offset());
                }
            }
        } catch (RuntimeException e) {
            log.warn("could not go back to the committed position: {}", e.toString());
        }
    }

    /**
     * Stops reading and closes the consumer: the event under way finishes first, unless it is still running after
     * {@code interruptAfter} (then it is interrupted).
     */
    synchronized void stop() {
        if (thread == null) {
            return;
        }
        running = false;
        consumer.wakeup();
        try {
            if (interruptAfter != null) {
                thread.join(interruptAfter.toMillis());
                if (thread.isAlive()) {
                    thread.interrupt();
                }
            }
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        thread = null;
    }

    @Override
    public void close() {
        stop();
    }
}
