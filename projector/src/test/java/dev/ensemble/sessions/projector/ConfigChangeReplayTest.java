package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.LogProducers;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.views.CorpusView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Views are a pure function of the log (DESIGN.md §4; issue 15 item 1): the session-choice config is an event
 * ({@code ChoiceConfigChanged} on every partition, as the choice service's publisher appends it), so a live run with a
 * config change half-way and a rebuild after it (reset, replay with the same topology) give the same views, key by
 * key: sessions, rarity tables, retirement, deletion audit. The rarity tables show each config applied from its point
 * of the log: a window of 20 tasks before the change, 3 after.
 */
class ConfigChangeReplayTest {
    @Test
    void aRebuildAfterAConfigChangeGivesTheLiveViews(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
            String bootstrap = cluster.bootstrapServers();
            List<Event> history = ProjectorRebuildTest.randomHistory(new Random(7), 1200);
            Map<String, Object> fast = Map.of("commit.interval.ms", 100, "session.timeout.ms", 6000);

            Map<String, Object> live;
            try (Projector p = new Projector(bootstrap, state, 1, fast)) {
                p.start();
                appendConfig(bootstrap, config("{\"version\":\"t-a\",\"limits\":{\"corpusTasks\":20}}"));
                ProjectorRebuildTest.send(bootstrap, history.subList(0, 600));
                settle(admin);
                Map<String, Object> before = ProjectorRebuildTest.latest(bootstrap, Map.of());
                assertThat(windows(before)).as("rarity tables under the first config (20 tasks)").isNotEmpty().allMatch(n -> n == 20);

                appendConfig(bootstrap, config("{\"version\":\"t-b\",\"limits\":{\"corpusTasks\":3}}"));
                ProjectorRebuildTest.send(bootstrap, history.subList(600, history.size()));
                settle(admin);
                live = ProjectorRebuildTest.latest(bootstrap, Map.of());
            }
            assertThat(windows(live)).as("rarity tables under the second config (3 tasks)").isNotEmpty().allMatch(n -> n == 3);

            Map<TopicPartition, Long> mark = ProjectorRebuildTest.ends(bootstrap);
            ProjectorRebuild.reset(bootstrap, state);
            try (Projector p = new Projector(bootstrap, state, 1, fast)) {
                p.start();
                settle(admin);
            }
            ProjectorRebuildTest.assertSameViews("rebuild after a config change", live, ProjectorRebuildTest.latest(bootstrap, mark));
        }
    }

    private static void settle(Admin admin) throws InterruptedException {
        assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(120), n -> { })).isTrue();
        assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(60))).isTrue();
    }

    /** The window size (tasks) of each rarity table among the views. */
    private static List<Integer> windows(Map<String, Object> views) {
        return views.entrySet().stream().filter(e -> e.getKey().startsWith(Topics.CORPUS_VIEW.name()))
                .map(e -> ((Number) ((List<?>) e.getValue()).get(3)).intValue()).toList();
    }

    private static SessionChoiceConfig config(String json) throws ConfigLoader.InvalidConfigException {
        return ConfigLoader.merge(SessionChoiceConfig.defaults(), json);
    }

    /** What the choice service's ConfigPublisher appends: one copy of the change on every partition of the log. */
    static void appendConfig(String bootstrap, SessionChoiceConfig cfg) throws Exception {
        Event e = ChoiceConfigEvents.changed(cfg, Instant.now());
        try (KafkaProducer<String, Event> p = new KafkaProducer<>(LogProducers.config(bootstrap, "config-test", Map.of()),
                new StringSerializer(), Topics.eventSerde().serializer())) {
            for (var info : p.partitionsFor(Topics.EVENTS.name())) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), info.partition(), ChoiceConfigEvents.ACCOUNT, e)).get();
            }
        }
    }
}
