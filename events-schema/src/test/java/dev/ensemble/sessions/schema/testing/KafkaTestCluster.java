package dev.ensemble.sessions.schema.testing;

import dev.ensemble.sessions.schema.Topic;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.server.common.MetadataVersion;

import java.util.List;
import java.util.Map;

/**
 * A real Kafka cluster in this JVM for integration tests: by default one KRaft controller and one broker as separate
 * nodes (combined mode clashes on metrics), bootstrapped at the latest production metadata version, with the
 * offsets and transaction-state topics at replication factor 1 and min ISR 1 so exactly-once Streams works
 * on a single broker ({@link #start()}, about two seconds); or several brokers with their own settings over those
 * ({@link #start(int, int, Map)}, e.g. replication factor 3 and min ISR 2), one of which can be stopped
 * ({@link #stopBroker}). No broker can exit the JVM.
 */
public final class KafkaTestCluster implements AutoCloseable {
    private final KafkaClusterTestKit kit;

    private KafkaTestCluster(KafkaClusterTestKit kit) {
        this.kit = kit;
    }

    /** Formats and starts a fresh cluster and waits until its broker is ready. */
    public static KafkaTestCluster start() {
        return start(1, 1, Map.of());
    }

    /**
     * Formats and starts a fresh cluster of {@code controllers} KRaft controllers and {@code brokers} brokers (separate
     * nodes) and waits until every broker is ready; {@code settings} (broker settings by name, e.g.
     * {@code min.insync.replicas}) go over the single-broker defaults of {@link #start()}.
     */
    public static KafkaTestCluster start(int controllers, int brokers, Map<String, String> settings) {
        Exit.setExitProcedure((code, message) -> {
            throw new IllegalStateException("the test broker tried to exit(" + code + "): " + message);
        });
        Exit.setHaltProcedure((code, message) -> {
            throw new IllegalStateException("the test broker tried to halt(" + code + "): " + message);
        });
        try {
            TestKitNodes nodes = new TestKitNodes.Builder()
                    .setBootstrapMetadataVersion(MetadataVersion.latestProduction())
                    .setCombined(false)
                    .setNumControllerNodes(controllers)
                    .setNumBrokerNodes(brokers)
                    .build();
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes)
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("offsets.topic.num.partitions", "3")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("transaction.state.log.num.partitions", "3")
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .setConfigProp("auto.create.topics.enable", "false");
            settings.forEach(builder::setConfigProp);
            KafkaClusterTestKit kit = builder.build();
            kit.format();
            kit.startup();
            kit.waitForReadyBrokers();
            return new KafkaTestCluster(kit);
        } catch (Exception e) {
            throw new IllegalStateException("could not start the in-process Kafka cluster: " + e, e);
        }
    }

    /** The broker's bootstrap servers (loopback). */
    public String bootstrapServers() {
        return kit.bootstrapServers();
    }

    /** The ids of the brokers (not the controllers), ascending. */
    public List<Integer> brokerIds() {
        return kit.brokers().keySet().stream().sorted().toList();
    }

    /**
     * Stops one broker as a clean shutdown does (its partitions' leadership moves to the others); it stays stopped until
     * the cluster is closed.
     */
    public void stopBroker(int id) {
        var broker = kit.brokers().get(id);
        if (broker == null) {
            throw new IllegalArgumentException("no broker " + id + " (brokers: " + brokerIds() + ")");
        }
        broker.shutdown();
        broker.awaitShutdown();
    }

    /** An admin client; close it. */
    public Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", bootstrapServers()));
    }

    /** Creates the topics (replication factor 1, {@code partitions} each; compacted where the topic says so). */
    public void createTopics(int partitions, Topic<?, ?>... topics) {
        try (Admin admin = admin()) {
            List<NewTopic> list = java.util.Arrays.stream(topics).map(t -> new NewTopic(t.name(), partitions, (short) 1)
                    .configs(t.compacted() ? Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT) : Map.of()))
                    .toList();
            admin.createTopics(list).all().get();
        } catch (Exception e) {
            throw new IllegalStateException("could not create topics: " + e, e);
        }
    }

    @Override
    public void close() {
        try {
            kit.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            Exit.resetExitProcedure();
            Exit.resetHaltProcedure();
        }
    }
}
