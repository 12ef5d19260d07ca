package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Which projector {@link Generation} serves, recorded durably so every service and every restart agree (DESIGN.md §4):
 * {@link Topics#GENERATIONS} (key {@value #SERVING} → the number; absent: generation 1).
 *
 * <p>The hand-over ({@link #handOver}) writes, in one Kafka transaction, the new number there and a <em>handover
 * marker</em> on every partition of {@code sessions.events}: a record with key {@code *}, no value, and header
 * {@value #HEADER} = the number. Every fold of the log ignores a record without a value; the projector's deletion guard
 * reads the marker: from that point of each partition on, only the named generation appends the projector's
 * decisions to the log. So each event is decided (appended) by exactly one generation — the old one before the marker,
 * the new one after it — at the same point of the log in the live run and in every replay, with no race between two
 * processes.
 */
public final class Generations {
    private static final Logger LOG = LoggerFactory.getLogger(Generations.class);
    /** The key of the serving generation in {@link Topics#GENERATIONS}. */
    public static final String SERVING = "serving";
    /** The key of the generation being built (a rebuild asked for or under way); a tombstone when none is. */
    public static final String BUILDING = "building";
    /** The header of a handover marker in {@code sessions.events}: the generation that decides from there on. */
    public static final String HEADER = "ensemble.generation";
    /** The transactional id of the hand-over (one at a time). */
    static final String TRANSACTIONAL_ID = "ensemble-generations";

    private Generations() {
    }

    /** The generation a handover marker names, or null for any other record. */
    public static Generation markerOf(Headers headers) {
        Header h = headers == null ? null : headers.lastHeader(HEADER);
        return h == null ? null : new Generation(Integer.parseInt(new String(h.value(), StandardCharsets.UTF_8)));
    }

    /** The records of {@link Topics#GENERATIONS} as key → newest value (committed ones; a tombstone removes the key). */
    public static Map<String, String> read(String bootstrapServers) {
        return read(bootstrapServers, Map.of());
    }

    /** {@link #read(String)} on a cluster whose clients need {@code clientProperties} ({@link KafkaClients}). */
    public static Map<String, String> read(String bootstrapServers, Map<String, ?> clientProperties) {
        Map<String, String> out = new HashMap<>();
        try (KafkaConsumer<String, String> c = consumer(bootstrapServers, clientProperties)) {
            List<TopicPartition> tps = partitions(c);
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long until = System.currentTimeMillis() + 30_000;
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > until) {
                    throw new IllegalStateException("could not read " + Topics.GENERATIONS.name() + " within 30 s");
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    apply(out, r);
                }
            }
        }
        return out;
    }

    /** The serving generation ({@link Generation#FIRST} when none was ever recorded). */
    public static Generation serving(String bootstrapServers) {
        return serving(bootstrapServers, Map.of());
    }

    /** {@link #serving(String)} on a cluster whose clients need {@code clientProperties}. */
    public static Generation serving(String bootstrapServers, Map<String, ?> clientProperties) {
        return parse(read(bootstrapServers, clientProperties).get(SERVING));
    }

    /** Records that {@code g} is being built (or, with null, that none is). */
    public static void markBuilding(String bootstrapServers, Generation g) {
        markBuilding(bootstrapServers, Map.of(), g);
    }

    /** {@link #markBuilding(String, Generation)} on a cluster whose clients need {@code clientProperties}. */
    public static void markBuilding(String bootstrapServers, Map<String, ?> clientProperties, Generation g) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(LogProducers.config(bootstrapServers, "ensemble-generations-building", clientProperties),
                new StringSerializer(), new StringSerializer())) {
            p.send(new ProducerRecord<>(Topics.GENERATIONS.name(), BUILDING, g == null ? null : Integer.toString(g.number()))).get();
        } catch (Exception e) {
            throw new IllegalStateException("could not record the generation being built: " + e, e);
        }
    }

    /** The key under which reader {@code reader} records the generation it answers from ({@link #acknowledge}). */
    public static String readerKey(String reader) {
        return "reader/" + reader;
    }

    /** Records that {@code reader} (gateway, choice, cleanup) answers from generation {@code g}'s views. */
    public static void acknowledge(String bootstrapServers, Map<String, ?> clientProperties, String reader, Generation g) {
        try (KafkaProducer<String, String> p = new KafkaProducer<>(LogProducers.config(bootstrapServers, "ensemble-generations-" + reader, clientProperties),
                new StringSerializer(), new StringSerializer())) {
            p.send(new ProducerRecord<>(Topics.GENERATIONS.name(), readerKey(reader), Integer.toString(g.number()))).get();
        } catch (Exception e) {
            throw new IllegalStateException("could not record that " + reader + " reads generation " + g + ": " + e, e);
        }
    }

    /**
     * Makes {@code next} the serving generation: one transaction with a handover marker on every partition of
     * {@code sessions.events} and {@value #SERVING} → its number (and no generation being built) in
     * {@link Topics#GENERATIONS}.
     */
    public static void handOver(String bootstrapServers, Map<String, ?> clientProperties, Generation next) {
        Map<String, Object> cfg = LogProducers.config(bootstrapServers, "ensemble-generations", clientProperties);
        cfg.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID);
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(cfg, new StringSerializer(), new ByteArraySerializer())) {
            p.initTransactions();
            p.beginTransaction();
            byte[] number = Integer.toString(next.number()).getBytes(StandardCharsets.UTF_8);
            for (var info : p.partitionsFor(Topics.EVENTS.name())) {
                ProducerRecord<String, byte[]> marker = new ProducerRecord<>(Topics.EVENTS.name(), info.partition(), "*", null);
                marker.headers().add(HEADER, number);
                p.send(marker);
            }
            p.send(new ProducerRecord<>(Topics.GENERATIONS.name(), SERVING, number));
            p.send(new ProducerRecord<>(Topics.GENERATIONS.name(), BUILDING, null));
            p.commitTransaction();
        }
        LOG.info("projector generation {} serves from now on", next);
    }

    /**
     * Calls {@code onChange} with the records of {@link Topics#GENERATIONS} (key → value) at its start and after each
     * change, from a thread of its own, until closed. A failure of {@code onChange} or of reading the topic (e.g. the
     * cluster unreachable for a while) is logged and the watching goes on.
     */
    public static final class Watcher implements AutoCloseable {
        /** How long it waits after a failed read of the topic before it reads again. */
        static final Duration RETRY = Duration.ofSeconds(1);
        private final Thread thread;
        private volatile boolean running = true;

        public Watcher(String bootstrapServers, Map<String, ?> clientProperties, String name, Consumer<Map<String, String>> onChange) {
            this(read(bootstrapServers, clientProperties), consumer(bootstrapServers, clientProperties), name, onChange);
        }

        /** Watches with {@code consumer} (closed with it), from the records {@code first} as read at its start. */
        Watcher(Map<String, String> first, org.apache.kafka.clients.consumer.Consumer<String, String> consumer, String name,
                Consumer<Map<String, String>> onChange) {
            try {
                onChange.accept(Map.copyOf(first));
            } catch (RuntimeException e) {
                consumer.close();
                throw e;
            }
            thread = new Thread(() -> watch(first, consumer, name, onChange), name + "-generations");
            thread.setDaemon(true);
            thread.start();
        }

        private void watch(Map<String, String> first, org.apache.kafka.clients.consumer.Consumer<String, String> c, String name,
                           Consumer<Map<String, String>> onChange) {
            Map<String, String> seen = new HashMap<>(first);
            try (c) {
                List<TopicPartition> tps = List.of();
                while (running) {
                    try {
                        if (tps.isEmpty()) {
                            tps = partitions(c);
                            if (tps.isEmpty()) { // no sessions.generations yet: generation 1 serves
                                Thread.sleep(1000);
                                continue;
                            }
                            c.assign(tps);
                            c.seekToBeginning(tps);
                        }
                        Map<String, String> now = new HashMap<>(seen);
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                            apply(now, r);
                        }
                        if (!now.equals(seen)) {
                            seen = now;
                            try {
                                onChange.accept(Map.copyOf(now));
                            } catch (RuntimeException e) {
                                LOG.warn("{}: a change of the serving generation failed: {}", name, e.toString(), e);
                            }
                        }
                    } catch (org.apache.kafka.common.errors.InterruptException | org.apache.kafka.common.errors.WakeupException e) {
                        return; // closed
                    } catch (RuntimeException e) {
                        LOG.warn("{}: reading {} failed ({}); reading it again in {} ms", name, Topics.GENERATIONS.name(),
                                e.toString(), RETRY.toMillis(), e);
                        Thread.sleep(RETRY.toMillis());
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Whether its thread still watches. */
        boolean watching() {
            return thread.isAlive();
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link Generation#FIRST} for null, else the number. */
    public static Generation parse(String number) {
        return number == null ? Generation.FIRST : new Generation(Integer.parseInt(number.strip()));
    }

    private static void apply(Map<String, String> state, ConsumerRecord<String, String> r) {
        if (r.value() == null) {
            state.remove(r.key());
        } else {
            state.put(r.key(), r.value());
        }
    }

    private static KafkaConsumer<String, String> consumer(String bootstrapServers, Map<String, ?> clientProperties) {
        Map<String, Object> c = KafkaClients.config(bootstrapServers, clientProperties);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false); // reading a missing topic never creates it
        return new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
    }

    private static List<TopicPartition> partitions(org.apache.kafka.clients.consumer.Consumer<String, String> c) {
        return c.partitionsFor(Topics.GENERATIONS.name(), Duration.ofSeconds(30)).stream()
                .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
    }
}
