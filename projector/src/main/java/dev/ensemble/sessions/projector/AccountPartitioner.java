package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Keys;
import org.apache.kafka.streams.processor.StreamPartitioner;

import java.util.Optional;
import java.util.Set;

/** Partitions a {@code <account>/<id>} key by its account, so views land in their account's partition. */
public final class AccountPartitioner<V> implements StreamPartitioner<String, V> {
    @Override
    public Optional<Set<Integer>> partitions(String topic, String key, V value, int numPartitions) {
        return Optional.of(Set.of(Keys.accountPartition(key, numPartitions)));
    }
}
