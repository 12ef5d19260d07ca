package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

/**
 * Creates the system's topics when they are missing, and reads their partitions and offsets. The event log keeps every event forever (it is the
 * source of truth, so views can always be rebuilt); views are compacted; the dead-letter topic keeps 30 days;
 * cleanup commands one day.
 */
public final class TopicAdmin {
    private TopicAdmin() {
    }

    /** The partitions of {@code topic}, in partition order. */
    public static List<TopicPartition> partitions(Admin admin, String topic) throws ExecutionException, InterruptedException {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
    }

    /**
     * The offsets of {@code partitions} by {@code spec} (e.g. {@code OffsetSpec.latest()} at {@code READ_COMMITTED}: the
     * last stable offsets, up to which a read_committed consumer reads).
     */
    public static Map<TopicPartition, Long> offsets(Admin admin, Collection<TopicPartition> partitions, OffsetSpec spec,
                                                    IsolationLevel isolation) throws ExecutionException, InterruptedException {
        Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
        for (TopicPartition tp : partitions) ask.put(tp, spec);
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(ask, new ListOffsetsOptions(isolation)).all().get().forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    /** Every topic {@link Topics} declares. */
    public static List<Topic<?, ?>> all() {
        return List.of(Topics.EVENTS, Topics.DEAD_LETTER, Topics.SESSIONS_VIEW, Topics.CORPUS_VIEW, Topics.RETIREMENT_VIEW,
                Topics.DELETION_AUDIT, Topics.ASSISTANT_VIEW, Topics.CLEANUP_COMMANDS, Topics.CHOICE_CONFIG, Topics.GENERATIONS);
    }

    /**
     * Creates each missing topic with {@code partitions} partitions and {@code replicationFactor} replicas, and
     * returns once every partition of them has a leader (up to 30 s), so the first writes are not refused while
     * leaders come up (what a refused first batch does to an idempotent producer: {@link LogProducers}). Existing
     * topics are left as they are.
     *
     * @throws IllegalStateException when the cluster refuses for another reason than "exists"
     */
    public static void ensureTopics(Admin admin, int partitions, short replicationFactor) {
        ensureTopics(admin, all(), partitions, replicationFactor);
    }

    /** {@link #ensureTopics(Admin, int, short)} of these topics (e.g. a generation's views, {@link Generation#views}). */
    public static void ensureTopics(Admin admin, List<Topic<?, ?>> topics, int partitions, short replicationFactor) {
        try {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = new ArrayList<>();
            for (Topic<?, ?> t : topics) {
                if (!existing.contains(t.name())) {
                    missing.add(new NewTopic(t.name(), partitions, replicationFactor).configs(configOf(t)));
                }
            }
            if (missing.isEmpty()) {
                return;
            }
            try {
                admin.createTopics(missing).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            awaitLeaders(admin, missing.stream().map(NewTopic::name).toList(), 30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not create topics: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /**
     * Waits until every partition of {@code topics} has a leader, as the broker's metadata says.
     *
     * @throws IllegalStateException when some have none after {@code timeoutMs}
     */
    public static void awaitLeaders(Admin admin, List<String> topics, long timeoutMs)
            throws InterruptedException, ExecutionException {
        long until = System.currentTimeMillis() + timeoutMs;
        while (true) {
            boolean ready;
            try {
                ready = admin.describeTopics(topics).allTopicNames().get().values().stream()
                        .flatMap(d -> d.partitions().stream()).allMatch(p -> p.leader() != null && !p.leader().isEmpty());
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)) {
                    throw e;
                }
                ready = false;
            }
            if (ready) {
                return;
            }
            if (System.currentTimeMillis() > until) {
                throw new IllegalStateException("the new topics " + topics + " have partitions without a leader after " + timeoutMs + " ms");
            }
            Thread.sleep(50);
        }
    }

    static Map<String, String> configOf(Topic<?, ?> t) {
        Map<String, String> c = new HashMap<>();
        if (t.compacted()) {
            c.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
            if (t.name().startsWith(Topics.CORPUS_VIEW.name())) { // every generation's
                c.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, String.valueOf(Topics.LARGE_RECORD_BYTES));
            }
        } else if (t == Topics.DEAD_LETTER) {
            c.put(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30L * 24 * 3600 * 1000));
        } else if (t == Topics.CLEANUP_COMMANDS) {
            c.put(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(24L * 3600 * 1000));
        } else {
            c.put(TopicConfig.RETENTION_MS_CONFIG, "-1");
            c.put(TopicConfig.RETENTION_BYTES_CONFIG, "-1");
        }
        return c;
    }
}
