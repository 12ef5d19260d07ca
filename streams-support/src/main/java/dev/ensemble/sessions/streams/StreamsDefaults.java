package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * The Kafka Streams settings every service of the system shares (DESIGN.md §8, Streams hygiene):
 * exactly-once v2, explicit names for every internal resource, the built-in dead-letter topic for records
 * that cannot be decoded or processed (they are logged, sent there with the reason in headers, and
 * processing goes on; a record whose processing failed on a bug is first undone by a task restart,
 * {@link DeadLetterProcessingExceptionHandler}) and for records that cannot be serialized or produced, a record
 * larger than its topic accepts among them ({@link DeadLetterProductionExceptionHandler},
 * {@link SizeCheckingClientSupplier}: one such record never fails the transaction nor the stream thread, unless it
 * was meant for an internal topic: a changelog must not lose a store's change), and RocksDB
 * bounded by one cache shared by every store of the JVM (docs/reliability.md).
 */
public final class StreamsDefaults {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StreamsDefaults.class);
    private StreamsDefaults() {
    }

    /**
     * Properties for an application.
     *
     * @param applicationId     the Streams application id (and consumer group)
     * @param bootstrapServers  the cluster
     * @param stateDir          where RocksDB stores live
     * @param replicationFactor of internal topics (1 on a single broker)
     * @param overrides         any further settings, applied last
     */
    public static Properties properties(String applicationId, String bootstrapServers, Path stateDir,
                                        int replicationFactor, Map<String, ?> overrides) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING_CONFIG, true);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, replicationFactor);
        p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, Topics.DEAD_LETTER.name());
        p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProcessingExceptionHandler.class);
        p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true); // the same for global stores
        p.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterProductionExceptionHandler.class);
        // a record larger than its topic takes is refused before it reaches the transaction, then dead-lettered
        p.put(StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG, SizeCheckingClientSupplier.class);
        p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedRocksDb.class);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 32L * 1024 * 1024);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 256 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), Topics.LARGE_RECORD_BYTES);
        // the internal topics Streams creates take a store's largest value (a record refused there fails the task)
        p.put(StreamsConfig.topicPrefix(TopicConfig.MAX_MESSAGE_BYTES_CONFIG), Topics.LARGE_RECORD_BYTES);
        if (overrides != null) {
            p.putAll(overrides);
        }
        return p;
    }

    /**
     * Creates the changelog topics of {@code topology}'s stores before its application first starts, as Kafka Streams
     * would create them in its first rebalance ({@code <applicationId>-<store>-changelog}, compacted, create time, one
     * partition per task: the most partitions among its sub-topology's source topics), and returns once each has a
     * leader; their {@code max.message.bytes} is {@link Topics#LARGE_RECORD_BYTES}, as Streams' own would have
     * ({@link #properties}). An existing changelog with a smaller {@code max.message.bytes} (made before) gets that
     * limit; nothing else of an existing topic changes. So that the application's clients never ask the broker for a
     * changelog it has only just created (on a fresh data folder the broker then answers "unknown topic or partition"
     * to the restore and producer clients for a while, logged as errors). Every store of the system's topologies keeps
     * a changelog (none is built with logging disabled).
     *
     * @return the changelog topics it created (empty when they all existed)
     * @throws IllegalStateException when a source topic is missing or the cluster refuses
     */
    public static java.util.List<String> createChangelogs(org.apache.kafka.clients.admin.Admin admin, String applicationId,
                                                         org.apache.kafka.streams.Topology topology, int replicationFactor) {
        try {
            java.util.Map<String, Integer> partitions = new java.util.TreeMap<>();
            for (org.apache.kafka.streams.TopologyDescription.Subtopology sub : topology.describe().subtopologies()) {
                java.util.Set<String> sources = new java.util.TreeSet<>();
                java.util.Set<String> stores = new java.util.TreeSet<>();
                for (org.apache.kafka.streams.TopologyDescription.Node n : sub.nodes()) {
                    if (n instanceof org.apache.kafka.streams.TopologyDescription.Source src && src.topicSet() != null) {
                        sources.addAll(src.topicSet());
                    } else if (n instanceof org.apache.kafka.streams.TopologyDescription.Processor proc) {
                        stores.addAll(proc.stores());
                    }
                }
                if (stores.isEmpty()) {
                    continue;
                }
                int tasks = 0;
                for (var d : admin.describeTopics(sources).allTopicNames().get().values()) {
                    tasks = Math.max(tasks, d.partitions().size());
                }
                for (String store : stores) {
                    partitions.merge(applicationId + "-" + store + "-changelog", tasks, Math::max);
                }
            }
            java.util.Set<String> existing = admin.listTopics().names().get();
            java.util.List<org.apache.kafka.clients.admin.NewTopic> missing = new java.util.ArrayList<>();
            partitions.forEach((topic, n) -> {
                if (!existing.contains(topic)) {
                    missing.add(new org.apache.kafka.clients.admin.NewTopic(topic, n, (short) replicationFactor).configs(Map.of(
                            "cleanup.policy", "compact", "message.timestamp.type", "CreateTime",
                            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, String.valueOf(Topics.LARGE_RECORD_BYTES))));
                }
            });
            raiseRecordLimit(admin, partitions.keySet().stream().filter(existing::contains).toList());
            if (missing.isEmpty()) {
                return java.util.List.of();
            }
            try {
                admin.createTopics(missing).all().get();
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                    throw e; // another instance created one first: fine
                }
            }
            java.util.List<String> names = missing.stream().map(org.apache.kafka.clients.admin.NewTopic::name).toList();
            dev.ensemble.sessions.schema.TopicAdmin.awaitLeaders(admin, names, 30_000);
            return names;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating the changelogs of " + applicationId, e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("could not create the changelogs of " + applicationId + ": " + e.getCause().getMessage(), e.getCause());
        }
    }

    /** Sets {@code max.message.bytes} to {@link Topics#LARGE_RECORD_BYTES} on those of {@code topics} whose limit is smaller. */
    private static void raiseRecordLimit(org.apache.kafka.clients.admin.Admin admin, java.util.List<String> topics)
            throws InterruptedException {
        if (topics.isEmpty()) {
            return;
        }
        try {
            java.util.List<org.apache.kafka.common.config.ConfigResource> resources = topics.stream()
                    .map(t -> new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, t)).toList();
            java.util.Map<org.apache.kafka.common.config.ConfigResource, java.util.Collection<org.apache.kafka.clients.admin.AlterConfigOp>> raise =
                    new java.util.HashMap<>();
            admin.describeConfigs(resources).all().get().forEach((r, c) -> {
                var e = c.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                if (e == null || e.value() == null || Long.parseLong(e.value()) < Topics.LARGE_RECORD_BYTES) {
                    raise.put(r, java.util.List.of(new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(
                            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, String.valueOf(Topics.LARGE_RECORD_BYTES)),
                            org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)));
                }
            });
            if (!raise.isEmpty()) {
                admin.incrementalAlterConfigs(raise).all().get();
                LOG.info("raised max.message.bytes of {} to {}", raise.keySet().stream().map(org.apache.kafka.common.config.ConfigResource::name).toList(),
                        Topics.LARGE_RECORD_BYTES);
            }
        } catch (java.util.concurrent.ExecutionException e) {
            LOG.warn("could not raise max.message.bytes of the changelogs {}: {}; a store value above their limit fails its task",
                    topics, e.getCause().toString());
        }
    }

    /**
     * Starts a Streams instance so that nothing stops it for good: a stream thread that dies of an uncaught error
     * is logged and replaced (its tasks restart from the last commit, exactly-once), instead of the Kafka Streams
     * default of shutting the whole client down.
     *
     * @param name the service's name for the log ("projector", "cleanup", ...)
     */
    public static void start(org.apache.kafka.streams.KafkaStreams streams, String name) {
        streams.setGlobalStateRestoreListener(new RestoreLog(name));
        streams.setUncaughtExceptionHandler(ex -> {
            LOG.error("{} stream thread failed; replacing it", name, ex);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
    }

    /**
     * Closes a Streams instance cleanly: commits, and leaves its consumer group so that a restart (or the
     * other instances) take its partitions at once instead of after the session timeout.
     */
    public static void close(org.apache.kafka.streams.KafkaStreams streams, java.time.Duration timeout) {
        streams.close(org.apache.kafka.streams.CloseOptions.groupMembershipOperation(
                org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(timeout));
    }

    /**
     * Bounds the memory of every RocksDB store of this JVM with one shared 64 MiB block cache, which also
     * counts the memtables (RocksDB's WriteBufferManager), as the Kafka Streams memory-management guide
     * describes.
     */
    public static final class BoundedRocksDb implements RocksDBConfigSetter {
        static final long TOTAL_OFF_HEAP_BYTES = 64L * 1024 * 1024;
        static final long TOTAL_MEMTABLE_BYTES = 16L * 1024 * 1024;
        private static final Cache CACHE;
        private static final WriteBufferManager WRITE_BUFFERS;

        static {
            org.rocksdb.RocksDB.loadLibrary();
            CACHE = new LRUCache(TOTAL_OFF_HEAP_BYTES, -1, false, 0.1);
            WRITE_BUFFERS = new WriteBufferManager(TOTAL_MEMTABLE_BYTES, CACHE);
        }

        @Override
        public void setConfig(String storeName, Options options, Map<String, Object> configs) {
            BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
            table.setBlockCache(CACHE);
            table.setCacheIndexAndFilterBlocks(true);
            table.setPinTopLevelIndexAndFilter(true);
            options.setWriteBufferManager(WRITE_BUFFERS);
            options.setMaxWriteBufferNumber(2);
            options.setWriteBufferSize(4L * 1024 * 1024);
            options.setTableFormatConfig(table);
        }

        @Override
        public void close(String storeName, Options options) {
            // the cache and write buffer manager are shared by every store and live as long as the JVM
        }
    }

    /**
     * Logs each store an application restored from its changelog (INFO, with the records read; a store with nothing
     * to restore says nothing): after an unclean stop every store of every service is wiped and restored, and these
     * lines are what the console tells of it (Kafka Streams' own account is filtered off the launcher's console).
     */
    private static final class RestoreLog implements org.apache.kafka.streams.processor.StateRestoreListener {
        private final String name;

        RestoreLog(String name) {
            this.name = name;
        }

        @Override
        public void onRestoreStart(org.apache.kafka.common.TopicPartition partition, String store, long startingOffset, long endingOffset) {
            LOG.debug("{}: restoring store {} from {} (offsets {} to {})", name, store, partition, startingOffset, endingOffset);
        }

        @Override
        public void onBatchRestored(org.apache.kafka.common.TopicPartition partition, String store, long batchEndOffset, long numRestored) {
        }

        @Override
        public void onRestoreEnd(org.apache.kafka.common.TopicPartition partition, String store, long totalRestored) {
            if (totalRestored > 0) {
                LOG.info("{}: restored store {} from {}: {} records", name, store, partition, totalRestored);
            }
        }
    }
}
