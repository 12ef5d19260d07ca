package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

class GenerationsWatcherTest {
    /** A failed read of sessions.generations (the cluster away for a while) is logged; the watcher reads on and sees the next change. */
    @Test
    void keepsWatchingAfterAFailedRead() throws Exception {
        String topic = Topics.GENERATIONS.name();
        TopicPartition tp = new TopicPartition(topic, 0);
        MockConsumer<String, String> consumer = new MockConsumer<>("earliest");
        consumer.updatePartitions(topic, List.of(new PartitionInfo(topic, 0, null, null, null)));
        consumer.updateBeginningOffsets(Map.of(tp, 0L));
        consumer.setPollException(new KafkaException("the cluster is away"));
        List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
        try (Generations.Watcher watcher = new Generations.Watcher(Map.of(), consumer, "test", seen::add)) {
            long until = System.currentTimeMillis() + 10_000;
            while (consumer.assignment().isEmpty() && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
            consumer.schedulePollTask(() -> consumer.addRecord(new ConsumerRecord<>(topic, 0, 0, Generations.SERVING, "2")));
            while (seen.size() < 2 && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
            assertThat(seen).containsExactly(Map.of(), Map.of(Generations.SERVING, "2"));
            assertThat(watcher.watching()).isTrue();
        }
    }
}
