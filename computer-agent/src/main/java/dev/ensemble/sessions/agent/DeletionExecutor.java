package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
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
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Carries out accepted deletions on this computer (guide §6: "each computer deletes the agent's own saved
 * history"): it reads the event log's partition of this computer's account (read-committed, from its own
 * committed position, else from the start) and, for each {@code SessionDeletionAccepted} written by the
 * projector's guard ({@code source service:projector}) that lists this computer, deletes the named agent
 * sessions from the stores ({@link AgentStoreDeleter}) and answers with a {@code SessionDeletedOnComputer}:
 * ok with the removed paths (a session already gone counts as deleted), or not ok with the error. Nothing is
 * deleted for any other event, account or computer.
 *
 * <p>The answer's eventId is named by the computer and the request ({@code deleted-on-computer/<computer>/<request>}),
 * and the position is committed only after the answers are written, so a restart in between deletes again
 * (finding nothing) and answers with the same id. When the answers cannot be written, it goes back to the
 * committed position and tries again every 5 seconds.
 */
public final class DeletionExecutor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeletionExecutor.class);
    /** The source of the only deletion decisions a computer acts on. */
    static final String DECIDER = "service:projector";

    private final String bootstrapServers;
    private final Map<String, ?> clientProperties;
    private final ImportConfig config;
    private final AgentStoreDeleter deleter;
    private final EventFactory events;
    private final EventSink sink;
    private volatile boolean running;
    private Thread thread;
    private KafkaConsumer<String, byte[]> consumer;

    /**
     * @param bootstrapServers the Kafka cluster
     * @param config           this computer's account and id, and its clock
     * @param deleter          the stores to delete from
     * @param sink             where the answers go (the agent's producer)
     */
    public DeletionExecutor(String bootstrapServers, ImportConfig config, AgentStoreDeleter deleter, EventSink sink) {
        this(bootstrapServers, Map.of(), config, deleter, sink);
    }

    /**
     * @param clientProperties the cluster's client properties (security settings) for its consumer
     */
    public DeletionExecutor(String bootstrapServers, Map<String, ?> clientProperties, ImportConfig config, AgentStoreDeleter deleter,
                            EventSink sink) {
        this.clientProperties = Map.copyOf(clientProperties);
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers, "bootstrapServers");
        this.config = Objects.requireNonNull(config, "config");
        this.deleter = Objects.requireNonNull(deleter, "deleter");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.events = new EventFactory(config);
    }

    /** Starts reading on a thread of its own. */
    public synchronized void start() {
        if (thread != null) {
            throw new IllegalStateException("the deletion executor is already started");
        }
        Map<String, Object> p = dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "ensemble-computer-" + config.computerId() + "-deletions");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "computer-agent-" + config.computerId() + "-deletions");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer = new KafkaConsumer<>(p, Topics.EVENTS.keySerde().deserializer(), new ByteArrayDeserializer());
        int partitions = consumer.partitionsFor(Topics.EVENTS.name()).size();
        consumer.assign(List.of(new TopicPartition(Topics.EVENTS.name(), Keys.accountPartition(config.account(), partitions))));
        running = true;
        thread = new Thread(this::loop, "computer-agent-deletions");
        thread.setDaemon(true);
        thread.start();
        log.info("computer {} carries out the deletions accepted for it", config.computerId());
    }

    private void loop() {
        try {
            while (running) {
                try {
                    once();
                } catch (WakeupException stopping) {
                    throw stopping;
                } catch (RuntimeException e) {
                    // the answers could not be written (or the position committed): go back to the committed
                    // position and try again; deleting again finds nothing and answers with the same ids
                    log.error("carrying out deletions failed; trying again from the committed position in 5 s", e);
                    rewind();
                    Thread.sleep(5_000);
                }
            }
        } catch (WakeupException | InterruptedException stopping) {
            // stop() asked
        } finally {
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
            Event answer = handle(e);
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
     * Deletes what an accepted deletion asks of this computer and returns the answer, or null when the event
     * asks nothing of it (another type, account or computer, or not the projector's decision).
     */
    Event handle(Event e) {
        if (e == null) {
            return null; // a record with no value: a projector generation's handover marker, not an event
        }
        if (!(e.getPayload() instanceof SessionDeletionAccepted a) || !config.account().equals(e.getAccount())
                || !DECIDER.equals(e.getSource()) || !a.getComputerIds().contains(config.computerId())) {
            return null;
        }
        Set<String> ids = new LinkedHashSet<>(a.getAgentSessionIds());
        String agent = a.getAgent();
        String own = agent == null ? null : AgentStoreDeleter.agentSessionIdOf(agent, a.getSessionId());
        if (own != null) {
            ids.add(own);
        }
        AgentStoreDeleter.Result result = agent == null
                ? new AgentStoreDeleter.Result(false, "the accepted deletion does not name the agent", List.of())
                : deleter.delete(agent, ids);
        if (result.ok()) {
            log.info("deleted session {} ({} {}) for request {}: {}", a.getSessionId(), agent, ids, a.getRequestId(),
                    result.removedPaths().isEmpty() ? "nothing was left" : result.removedPaths());
        } else {
            log.warn("could not delete session {} ({} {}) for request {}: {}", a.getSessionId(), agent, ids, a.getRequestId(),
                    result.error());
        }
        return events.event("deleted-on-computer/" + config.computerId() + "/" + a.getRequestId(),
                config.clock().instant().truncatedTo(ChronoUnit.MILLIS),
                SessionDeletedOnComputer.newBuilder().setSessionId(a.getSessionId()).setRequestId(a.getRequestId())
                        .setComputerId(config.computerId()).setOk(result.ok()).setError(result.error())
                        .setRemovedPaths(new ArrayList<>(result.removedPaths())).build());
    }

    /** Stops reading (a deletion under way finishes first) and closes the consumer. */
    public synchronized void stop() {
        if (thread == null) {
            return;
        }
        running = false;
        consumer.wakeup();
        try {
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
