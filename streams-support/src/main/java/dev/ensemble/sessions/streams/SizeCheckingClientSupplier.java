package dev.ensemble.sessions.streams;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka clients of every Streams application here ({@code default.client.supplier}, {@link StreamsDefaults}): the
 * plain clients, except that a producer refuses, before sending, a record larger than its topic accepts.
 *
 * <p>Why: with exactly-once, a record the broker refuses ({@code RecordTooLargeException}) puts the producer's whole
 * transaction in an abortable error, whatever the production exception handler answers; the commit then fails, the
 * stream thread dies, and every task of the thread (every account of its partitions) stalls while it is replaced, its
 * stores restored, and the same record refused again. Refused here instead, the record never reaches the transaction:
 * the send completes at once with a {@link RecordTooLargeException}, Kafka Streams hands it to the production exception
 * handler ({@link DeadLetterProductionExceptionHandler}: dead-letter topic, processing goes on) and the transaction
 * commits.
 *
 * <p>A record's size is its key, value and headers plus {@link #RECORD_OVERHEAD_BYTES}, uncompressed, against the
 * smaller of the producer's {@code max.request.size} and the topic's {@code max.message.bytes} (read from the cluster
 * the first time the producer sends to the topic, again after {@link #LIMIT_TTL}; while it cannot be read, only
 * {@code max.request.size} counts). Counting uncompressed bytes is cautious: a record that would have fitted once
 * compressed is refused too.
 */
public final class SizeCheckingClientSupplier implements KafkaClientSupplier {
    private static final Logger LOG = LoggerFactory.getLogger(SizeCheckingClientSupplier.class);

    /** A record batch's header and one record's framing, which the broker counts against {@code max.message.bytes}. */
    static final int RECORD_OVERHEAD_BYTES = 128;
    /** How long a topic's {@code max.message.bytes} is used before it is read again. */
    static final Duration LIMIT_TTL = Duration.ofMinutes(5);

    @Override
    public Admin getAdmin(Map<String, Object> config) {
        return Admin.create(config);
    }

    @Override
    public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
        return new SizeCheckingProducer(new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()), config);
    }

    @Override
    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** A producer that completes a too-large send at once with a {@link RecordTooLargeException} instead of sending it. */
    static final class SizeCheckingProducer implements Producer<byte[], byte[]> {
        private final Producer<byte[], byte[]> inner;
        private final int maxRequestSize;
        private final Map<String, Object> adminConfig = new HashMap<>();
        private final Map<String, Limit> limits = new ConcurrentHashMap<>();
        private Admin admin;

        private record Limit(int bytes, long readAtNanos) {
        }

        SizeCheckingProducer(Producer<byte[], byte[]> inner, Map<String, Object> config) {
            this.inner = inner;
            Object max = config.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
            this.maxRequestSize = max == null ? 1024 * 1024 : Integer.parseInt(max.toString());
            for (String name : AdminClientConfig.configNames()) {
                if (config.containsKey(name)) {
                    adminConfig.put(name, config.get(name));
                }
            }
            Object clientId = config.get(ProducerConfig.CLIENT_ID_CONFIG);
            adminConfig.put(AdminClientConfig.CLIENT_ID_CONFIG, (clientId == null ? "producer" : clientId) + "-limits");
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
            return send(record, null);
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
            long size = sizeOf(record);
            if (size > maxRequestSize || size > limit(record.topic())) {
                int limit = Math.min(maxRequestSize, limit(record.topic()));
                RecordTooLargeException e = new RecordTooLargeException("the record for " + record.topic() + " is " + size
                        + " bytes, more than its max.message.bytes or the producer's max.request.size allow (" + limit
                        + " bytes); it was not sent");
                if (callback != null) {
                    callback.onCompletion(new RecordMetadata(new TopicPartition(record.topic(),
                            record.partition() == null ? -1 : record.partition()), -1, -1, -1, -1, -1), e);
                }
                return CompletableFuture.failedFuture(e);
            }
            return inner.send(record, callback);
        }

        static long sizeOf(ProducerRecord<byte[], byte[]> record) {
            long n = RECORD_OVERHEAD_BYTES;
            n += record.key() == null ? 0 : record.key().length;
            n += record.value() == null ? 0 : record.value().length;
            for (Header h : record.headers()) {
                n += h.key().length() + (h.value() == null ? 0 : h.value().length);
            }
            return n;
        }

        /** The topic's max.message.bytes as last read, or {@link Integer#MAX_VALUE} while it cannot be read. */
        private int limit(String topic) {
            Limit l = limits.get(topic);
            long now = System.nanoTime();
            if (l == null || now - l.readAtNanos() > LIMIT_TTL.toNanos()) {
                l = new Limit(read(topic), now);
                limits.put(topic, l);
            }
            return l.bytes();
        }

        private int read(String topic) {
            try {
                if (admin == null) {
                    admin = Admin.create(adminConfig);
                }
                ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                Config c = admin.describeConfigs(List.of(r)).all().get(10, TimeUnit.SECONDS).get(r);
                ConfigEntry e = c == null ? null : c.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                return e == null || e.value() == null ? Integer.MAX_VALUE : Integer.parseInt(e.value());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Integer.MAX_VALUE;
            } catch (Exception e) {
                LOG.warn("could not read max.message.bytes of {} ({}); records for it are checked against max.request.size only "
                        + "until it is read again", topic, e.toString());
                return Integer.MAX_VALUE;
            }
        }

        @Override
        public void initTransactions() {
            inner.initTransactions();
        }

        @Override
        public void beginTransaction() {
            inner.beginTransaction();
        }

        @Override
        public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
            inner.sendOffsetsToTransaction(offsets, groupMetadata);
        }

        @Override
        public void commitTransaction() {
            inner.commitTransaction();
        }

        @Override
        public void abortTransaction() {
            inner.abortTransaction();
        }

        @Override
        public void registerMetricForSubscription(KafkaMetric metric) {
            inner.registerMetricForSubscription(metric);
        }

        @Override
        public void unregisterMetricFromSubscription(KafkaMetric metric) {
            inner.unregisterMetricFromSubscription(metric);
        }

        @Override
        public void flush() {
            inner.flush();
        }

        @Override
        public List<PartitionInfo> partitionsFor(String topic) {
            return inner.partitionsFor(topic);
        }

        @Override
        public Map<MetricName, ? extends Metric> metrics() {
            return inner.metrics();
        }

        @Override
        public Uuid clientInstanceId(Duration timeout) {
            return inner.clientInstanceId(timeout);
        }

        @Override
        public void close() {
            close(Duration.ofMillis(Long.MAX_VALUE));
        }

        @Override
        public void close(Duration timeout) {
            try {
                inner.close(timeout);
            } finally {
                if (admin != null) {
                    admin.close(Duration.ofSeconds(5));
                }
            }
        }
    }
}
