package dev.ensemble.sessions.schema.testing;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaTestClusterTest {
    @Test
    void anEventRoundTripsThroughTheRealBroker() throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            cluster.createTopics(2, Topics.EVENTS);
            Event e = dev.ensemble.sessions.schema.SamplesAccess.one();
            try (KafkaProducer<String, Event> p = new KafkaProducer<>(Map.of("bootstrap.servers", cluster.bootstrapServers()),
                    Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer())) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), e)).get();
            }
            try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", "t", "auto.offset.reset", "earliest"),
                    Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
                c.subscribe(List.of(Topics.EVENTS.name()));
                Event got = null;
                long until = System.currentTimeMillis() + 20_000;
                while (got == null && System.currentTimeMillis() < until) {
                    ConsumerRecords<String, Event> rs = c.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<String, Event> r : rs) {
                        got = r.value();
                    }
                }
                assertThat(got).isEqualTo(e);
            }
        }
    }
}
