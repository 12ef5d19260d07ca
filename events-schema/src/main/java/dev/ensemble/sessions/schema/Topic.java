package dev.ensemble.sessions.schema;

import org.apache.kafka.common.serialization.Serde;

/**
 * A Kafka topic with its name and both serdes, declared once in {@link Topics}. Nothing else spells a topic
 * name.
 *
 * @param name       the topic name
 * @param keySerde   serde of the record key
 * @param valueSerde serde of the record value
 * @param compacted  whether the topic is log-compacted (views) or time-retained (the event log)
 */
public record Topic<K, V>(String name, Serde<K> keySerde, Serde<V> valueSerde, boolean compacted) {
}
