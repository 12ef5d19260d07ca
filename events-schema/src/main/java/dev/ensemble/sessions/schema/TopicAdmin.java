package dev.ensemble.sessions.schema;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

/**
 * Creates the system's topics when they are missing. The event log keeps every event forever (it is the
 * source of truth, so views can always be rebuilt); views are compacted; the dead-letter topic keeps 30 days;
 * cleanup commands one day.
 */
public final class TopicAdmin {
    private TopicAdmin() {
    }

    /** Every topic {@link Topics} declares. */
    public static List<Topic<?, ?>> all() {
        return List.of(Topics.EVENTS, Topics.DEAD_LETTER, Topics.SESSIONS_VIEW, Topics.CORPUS_VIEW, Topics.RETIREMENT_VIEW,
                Topics.DELETION_AUDIT, Topics.CLEANUP_COMMANDS);
    }

    /**
     * Creates each missing topic with {@code partitions} partitions and {@code replicationFactor} replicas.
     * Existing topics are left as they are.
     *
     * @throws IllegalStateException when the cluster refuses for another reason than "exists"
     */
    public static void ensureTopics(Admin admin, int partitions, short replicationFactor) {
        try {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = new ArrayList<>();
            for (Topic<?, ?> t : all()) {
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
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not create topics: " + e.getCause().getMessage(), e.getCause());
        }
    }

    static Map<String, String> configOf(Topic<?, ?> t) {
        Map<String, String> c = new HashMap<>();
        if (t.compacted()) {
            c.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
            if (t == Topics.CORPUS_VIEW) {
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
