package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/**
 * For the HTTP tests: an in-process broker with the project's topics ({@value #PARTITIONS} partitions), the projector on
 * it (commits every 100 ms), and one gateway on a free port of 127.0.0.1 with the given tokens, ready. {@link #close}
 * stops them, the gateway first.
 */
final class GatewayOnBroker implements AutoCloseable {
    static final int PARTITIONS = 3;
    final KafkaTestCluster cluster;
    final Projector projector;
    final Gateway gateway;

    private GatewayOnBroker(KafkaTestCluster cluster, Projector projector, Gateway gateway) {
        this.cluster = cluster;
        this.projector = projector;
        this.gateway = gateway;
    }

    /** Starts the three under a new temporary directory named {@code name}; waits up to {@code ready} for the gateway. */
    static GatewayOnBroker start(String name, Tokens tokens, Duration ready) throws Exception {
        KafkaTestCluster cluster = KafkaTestCluster.start();
        Projector projector = null;
        try {
            try (Admin admin = cluster.admin()) {
                TopicAdmin.ensureTopics(admin, PARTITIONS, (short) 1);
            }
            Path dir = Files.createTempDirectory(name);
            projector = new Projector(cluster.bootstrapServers(), dir.resolve("projector"), 1, Map.of("commit.interval.ms", 100));
            projector.start();
            Gateway gateway = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1,
                    tokens, Clock.systemUTC())).start();
            gateway.awaitReady(ready);
            return new GatewayOnBroker(cluster, projector, gateway);
        } catch (Exception | Error e) {
            if (projector != null) {
                projector.stop();
            }
            cluster.close();
            throw e;
        }
    }

    @Override
    public void close() {
        gateway.stop();
        projector.stop();
        cluster.close();
    }
}
