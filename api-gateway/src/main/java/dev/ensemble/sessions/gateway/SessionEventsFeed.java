package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Keeps {@link SessionEventBuffers} up to date: one consumer thread (no group, nothing committed) reads every
 * partition of {@code sessions.events} from its beginning, in log order, on every start; so a session's cursors are the
 * same after a restart. Undecodable records are skipped here (the projector sends them to the dead-letter topic).
 * Only committed records are read (read_committed).
 */
public final class SessionEventsFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SessionEventsFeed.class);
    private final SessionEventBuffers buffers;
    private final KafkaConsumer<String, byte[]> consumer;
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean running = true;
    /** The consumer's positions after its latest poll (read_committed: at most the last stable offsets); guarded by itself. */
    private final Object positionsLock = new Object();
    private final String bootstrapServers;
    private final Map<String, ?> clientProperties;
    private Admin admin; // reads the log's end offsets; created on first use, guarded by this
    private Map<TopicPartition, Long> positions = Map.of();

    /** @param windowBytes the retained window per session in bytes (see {@link SessionEventBuffers}) */
    public SessionEventsFeed(String bootstrapServers, long windowBytes) {
        this(bootstrapServers, Map.of(), windowBytes);
    }

    /** @param clientProperties the cluster's client properties (security settings) for its consumer and admin client */
    public SessionEventsFeed(String bootstrapServers, Map<String, ?> clientProperties, long windowBytes) {
        this.bootstrapServers = bootstrapServers;
        this.clientProperties = Map.copyOf(clientProperties);
        this.buffers = new SessionEventBuffers(windowBytes);
        Map<String, Object> p = dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "ensemble-gateway-session-events-" + UUID.randomUUID());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false); // reading a missing topic never creates it
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
        thread = new Thread(this::run, "gateway-session-events");
        thread.setDaemon(true);
    }

    /** Binds its consumer's metrics ({@code kafka.consumer.*}, {@code service="gateway"}); close the result before it. */
    AutoCloseable bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
        return dev.ensemble.sessions.streams.ServiceMeters.bind(registry, consumer, "gateway");
    }

    /** Starts reading. */
    public SessionEventsFeed start() {
        thread.start();
        return this;
    }

    /** The buffers it fills. */
    public SessionEventBuffers buffers() {
        return buffers;
    }

    /** True once it has read up to the end offsets it found when it started. */
    public boolean caughtUp() {
        return caughtUp.getCount() == 0;
    }

    /** Waits until {@link #caughtUp()}; false on timeout. */
    public boolean awaitCaughtUp(Duration timeout) throws InterruptedException {
        return caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Waits until the feed has read every partition up to {@code ends} (offsets, e.g. the log's last stable offsets
     * taken when a request came), i.e. until the buffers hold what the log held then; false on timeout. A reader whose
     * cursor is ahead of its session asks this first: another gateway instance may simply have read the log sooner.
     */
    public boolean awaitPositions(Map<TopicPartition, Long> ends, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (positionsLock) {
            while (!reached(ends)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                TimeUnit.NANOSECONDS.timedWait(positionsLock, left);
            }
            return true;
        }
    }

    /** Waits until the feed has read the log up to its last stable offsets as they are now ({@link #logEnd()}); false on timeout. */
    public boolean awaitLogEnd(Duration timeout) throws InterruptedException {
        return awaitPositions(logEnd(), timeout);
    }

    /** The feed's position in each partition after its latest poll (empty before the first). */
    public Map<TopicPartition, Long> positions() {
        synchronized (positionsLock) {
            return positions;
        }
    }

    /**
     * The last stable offsets of every partition of {@code sessions.events} now, through one admin client (no client per
     * request); a 503 {@link ApiError} when the broker does not answer within 5 s.
     */
    Map<TopicPartition, Long> logEnd() {
        try {
            Admin a = admin(); // its default API timeout is 5 s: a broker away fails the futures then
            return TopicAdmin.offsets(a, TopicAdmin.partitions(a, Topics.EVENTS.name()), OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        } catch (ExecutionException e) {
            throw new ApiError(503, "unavailable", "the event log did not answer in time; try again");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "unavailable", "interrupted while reading the event log's end; try again");
        }
    }

    private synchronized Admin admin() {
        if (!running) throw new ApiError(503, "unavailable", "the gateway is stopping");
        if (admin == null) {
            admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.merge(
                    dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties), Map.of(
                    AdminClientConfig.CLIENT_ID_CONFIG, "ensemble-gateway-offsets-" + UUID.randomUUID(),
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000)));
        }
        return admin;
    }

    private boolean reached(Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            Long at = positions.get(e.getKey());
            if (at == null || at < e.getValue()) return false;
        }
        return true;
    }

    private void run() {
        Deserializer<Event> events = Topics.eventSerde().deserializer();
        try {
            List<TopicPartition> parts = consumer.partitionsFor(Topics.EVENTS.name(), Duration.ofSeconds(60)).stream()
                    .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            while (running) {
                var records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, byte[]> r : records) {
                    Event e;
                    try {
                        e = events.deserialize(r.topic(), r.value());
                    } catch (RuntimeException ex) {
                        continue;
                    }
                    if (e != null) {
                        buffers.add(e, SessionEventBuffers.position(r.partition(), r.offset()), r.serializedValueSize(),
                                EventJson.toJson(e).toString());
                    }
                }
                Map<TopicPartition, Long> now = new HashMap<>();
                for (TopicPartition tp : parts) now.put(tp, consumer.position(tp));
                synchronized (positionsLock) {
                    positions = now;
                    positionsLock.notifyAll();
                    if (!caughtUp() && reached(end)) caughtUp.countDown();
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            LOG.error("the session-events feed stopped", e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    @Override
    public void close() {
        Admin a;
        synchronized (this) {
            running = false;
            a = admin;
            admin = null;
        }
        if (a != null) a.close(Duration.ofSeconds(5));
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
