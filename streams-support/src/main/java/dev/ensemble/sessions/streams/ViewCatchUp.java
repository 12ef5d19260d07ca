package dev.ensemble.sessions.streams;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Waits until a Streams application has read some topics to the ends they had when the wait began: it runs, and its
 * consumer group's committed offsets reach those ends ({@code read_committed}). A reader of a new projector generation's
 * views calls it before it answers from them ({@code Generations}).
 */
public final class ViewCatchUp {
    private ViewCatchUp() {
    }

    /**
     * @param clientProperties the cluster's client properties (security settings; empty for none)
     * @param applicationId the Streams application id (its consumer group)
     * @param topics        its source topics
     * @throws IllegalStateException when it has not caught up within {@code timeout}, or the instance failed
     */
    public static void await(String bootstrapServers, Map<String, ?> clientProperties, KafkaStreams streams, String applicationId, List<String> topics, Duration timeout)
            throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties))) {
            Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
            for (var d : admin.describeTopics(topics).allTopicNames().get().values()) {
                d.partitions().forEach(p -> ask.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest()));
            }
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(ask, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get()
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
            while (true) {
                KafkaStreams.State state = streams.state();
                if (state == KafkaStreams.State.ERROR || state == KafkaStreams.State.NOT_RUNNING || state == KafkaStreams.State.PENDING_ERROR) {
                    throw new IllegalStateException(applicationId + " stopped (" + state + ") before it caught up");
                }
                if (state == KafkaStreams.State.RUNNING) {
                    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(applicationId)
                            .partitionsToOffsetAndMetadata().get();
                    boolean caughtUp = ends.entrySet().stream().allMatch(en -> en.getValue() == 0
                            || (committed.get(en.getKey()) != null && committed.get(en.getKey()).offset() >= en.getValue()));
                    if (caughtUp) {
                        return;
                    }
                }
                if (System.nanoTime() > until) {
                    throw new IllegalStateException(applicationId + " did not read " + topics + " to their ends within " + timeout);
                }
                Thread.sleep(100);
            }
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("could not compare " + applicationId + "'s offsets with " + topics + ": " + e.getCause(), e.getCause());
        }
    }
}
