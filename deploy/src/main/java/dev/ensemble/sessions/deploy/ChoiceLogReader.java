package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.choice.recalibration.Recalibration;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongConsumer;

/**
 * Reads every SessionChoiceRecorded and SessionChoiceOutcome of {@code sessions.events} with a plain consumer (no
 * group, nothing committed): every partition from its beginning up to the end offsets taken when it starts, so a
 * running system's later events do not hold it up. Records that do not decode are counted and skipped (the projector
 * sends them to the dead-letter topic).
 */
final class ChoiceLogReader {
    /** What the log held. {@code events}: records read; {@code undecodable}: records skipped. */
    record Read(List<Recalibration.Recorded> records, Map<String, SessionChoiceOutcome> outcomes, long events, long undecodable) {
    }

    private ChoiceLogReader() {
    }

    /** The total records to read (end minus beginning offsets), then reads them; {@code onTotal}, {@code onRead} report progress. */
    static Read read(String bootstrapServers, Instant since, LongConsumer onTotal, LongConsumer onRead) {
        return read(bootstrapServers, Map.of(), since, onTotal, onRead);
    }

    /** {@link #read(String, Instant, LongConsumer, LongConsumer)} with the cluster's client properties (security settings). */
    static Read read(String bootstrapServers, Map<String, ?> clientProperties, Instant since, LongConsumer onTotal, LongConsumer onRead) {
        Map<String, Object> p = dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "ensemble-recalibrate-" + UUID.randomUUID());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024 * 1024);
        Deserializer<Event> events = Topics.eventSerde().deserializer();
        List<Recalibration.Recorded> records = new ArrayList<>();
        Map<String, SessionChoiceOutcome> outcomes = new HashMap<>();
        long read = 0, bad = 0;
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(Topics.EVENTS.name(), Duration.ofSeconds(30)).stream()
                    .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            c.assign(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            Map<TopicPartition, Long> begin = c.beginningOffsets(parts);
            c.seekToBeginning(parts);
            long total = 0;
            for (TopicPartition tp : parts) total += end.get(tp) - begin.get(tp);
            onTotal.accept(total);
            List<TopicPartition> open = new ArrayList<>();
            for (TopicPartition tp : parts) if (end.get(tp) > begin.get(tp)) open.add(tp);
            c.assign(open);
            while (!open.isEmpty()) {
                ConsumerRecords<String, byte[]> batch = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, byte[]> r : batch) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(tp)) continue;
                    read++;
                    Event e;
                    try {
                        e = events.deserialize(r.topic(), r.value());
                    } catch (RuntimeException ex) {
                        bad++;
                        continue;
                    }
                    if (e == null || since != null && e.getOccurredAt().isBefore(since)) continue;
                    if (e.getPayload() instanceof SessionChoiceRecorded rec) {
                        records.add(new Recalibration.Recorded(e.getOccurredAt(), rec));
                    } else if (e.getPayload() instanceof SessionChoiceOutcome o) {
                        outcomes.put(o.getRunId(), o);
                    }
                }
                onRead.accept(batch.count());
                List<TopicPartition> still = new ArrayList<>();
                for (TopicPartition tp : open) if (c.position(tp) < end.get(tp)) still.add(tp);
                if (still.size() != open.size()) {
                    open = still;
                    c.assign(open);
                }
            }
        }
        return new Read(records, outcomes, read, bad);
    }
}
