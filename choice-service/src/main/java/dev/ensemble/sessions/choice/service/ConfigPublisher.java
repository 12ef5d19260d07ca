package dev.ensemble.sessions.choice.service;

import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.LogProducers;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Turns the session-choice config file into events of the log (DESIGN.md §4, guide §4 "Tuning"): the one place that
 * reads {@code ENSEMBLE_SESSION_CHOICE_CONFIG} (through its {@link ConfigWatcher}). When the effective config (the
 * file merged over the defaults; the defaults for an absent or invalid file, which the watcher logs) differs from
 * the one last appended, it appends a {@code ChoiceConfigChanged} ({@link ChoiceConfigEvents#changed}) to every
 * partition of {@code sessions.events}, and records it in {@code sessions.choice-config}, all in one Kafka
 * transaction (transactional id {@value #TRANSACTIONAL_ID}: a second publisher fences the first). At a start it
 * compares with that record, so a restart with an unchanged file appends nothing; a log with more partitions than
 * the record covered gets the config again on every partition. Nothing invalid is ever appended: the watcher
 * hands out only checked configs.
 *
 * <p>The projector and the choice service take the config from the log, not from here.
 */
public final class ConfigPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigPublisher.class);
    /** The producer's transactional id: one publisher appends config changes at a time. */
    public static final String TRANSACTIONAL_ID = "ensemble-choice-config";
    /** The key of the record in {@code sessions.choice-config}. */
    static final String KEY = "current";
    /** The header of that record with the number of partitions of {@code sessions.events} it covered. */
    static final String PARTITIONS_HEADER = "partitions";

    private final String bootstrapServers;
    private final Map<String, ?> clientProperties;
    private final ConfigWatcher watcher;
    private final Clock clock;
    private final Duration every;
    private KafkaProducer<String, Event> producer;
    private ScheduledExecutorService timer;
    private String lastHash;
    private int lastPartitions;

    /**
     * @param clientProperties the cluster's client properties (security settings; empty for none)
     * @param watcher the file's watcher (its own interval decides how often the file is looked at)
     * @param every   how often to ask the watcher; positive
     */
    public ConfigPublisher(String bootstrapServers, Map<String, ?> clientProperties, ConfigWatcher watcher, Clock clock, Duration every) {
        this.bootstrapServers = bootstrapServers;
        this.clientProperties = clientProperties;
        this.watcher = watcher;
        this.clock = clock;
        this.every = every;
    }

    /** Reads what was last appended, appends the file's config if it differs, and keeps looking every {@code every}. */
    public synchronized ConfigPublisher start() {
        Map<String, Object> p = LogProducers.config(bootstrapServers, "ensemble-choice-config", clientProperties);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID);
        producer = new KafkaProducer<>(p, new StringSerializer(), Topics.EVENTS.valueSerde().serializer());
        producer.initTransactions();
        readLast();
        publishIfChanged();
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "choice-config-publisher");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                publishIfChanged();
            } catch (RuntimeException e) {
                LOG.warn("could not append the session-choice config to the log (tried again in {}): {}", every, e.toString());
            }
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Appends the watcher's current config when it is not the one last appended (or the log grew partitions).
     *
     * @return whether it appended
     */
    public synchronized boolean publishIfChanged() {
        SessionChoiceConfig cfg = watcher.current();
        String hash = ConfigLoader.hash(cfg);
        List<org.apache.kafka.common.PartitionInfo> partitions = producer.partitionsFor(Topics.EVENTS.name());
        if (hash.equals(lastHash) && partitions.size() <= lastPartitions) {
            return false;
        }
        if (lastHash == null && hash.equals(ConfigLoader.hash(SessionChoiceConfig.defaults()))) {
            lastHash = hash; // nothing was ever appended and the defaults apply: the log's config is already this one
            lastPartitions = Integer.MAX_VALUE;
            return false;
        }
        Event e = ChoiceConfigEvents.changed(cfg, clock.instant());
        producer.beginTransaction();
        try {
            for (var info : partitions) {
                producer.send(new ProducerRecord<>(Topics.EVENTS.name(), info.partition(), ChoiceConfigEvents.ACCOUNT, e));
            }
            ProducerRecord<String, Event> marker = new ProducerRecord<>(Topics.CHOICE_CONFIG.name(), KEY, e);
            marker.headers().add(PARTITIONS_HEADER, Integer.toString(partitions.size()).getBytes(StandardCharsets.UTF_8));
            producer.send(marker);
            producer.commitTransaction();
        } catch (RuntimeException x) {
            try {
                producer.abortTransaction();
            } catch (RuntimeException ignored) {
                // fenced or closed: the exception below says why
            }
            throw x;
        }
        lastHash = hash;
        lastPartitions = partitions.size();
        LOG.info("session-choice config version {} (hash {}) appended to the {} partitions of {}", cfg.version(),
                hash.substring(0, 12), partitions.size(), Topics.EVENTS.name());
        return true;
    }

    /** The newest record of {@code sessions.choice-config} (committed ones only), into lastHash and lastPartitions. */
    private void readLast() {
        Map<String, Object> c = dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, Event> consumer = new KafkaConsumer<>(c, new StringDeserializer(), Topics.CHOICE_CONFIG.valueSerde().deserializer())) {
            List<TopicPartition> tps = consumer.partitionsFor(Topics.CHOICE_CONFIG.name()).stream()
                    .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            long until = System.currentTimeMillis() + 30_000;
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.currentTimeMillis() > until) {
                    throw new IllegalStateException("could not read " + Topics.CHOICE_CONFIG.name() + " within 30 s");
                }
                for (ConsumerRecord<String, Event> r : consumer.poll(Duration.ofMillis(200))) {
                    if (KEY.equals(r.key()) && r.value() != null && r.value().getPayload() instanceof ChoiceConfigChanged cc) {
                        Header h = r.headers().lastHeader(PARTITIONS_HEADER);
                        lastHash = cc.getHash();
                        lastPartitions = h == null ? 0 : Integer.parseInt(new String(h.value(), StandardCharsets.UTF_8));
                    }
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
    }
}
