package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.service.ChoiceService;
import dev.ensemble.sessions.cleanup.CleanupConfig;
import dev.ensemble.sessions.cleanup.CleanupService;
import dev.ensemble.sessions.projector.ProjectorGenerations;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Generations;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The choice service and the cleanup follow a blue/green rebuild (docs/operations.md "Generations"), on a real broker:
 * each switches to generation 2's views and records it; the choice service decides again afterwards; the cleanup runs as
 * {@code ensemble-cleanup-g2} and generation 1's cleanup group and the projector's generation 1 views are gone.
 */
class GenerationReadersTest {
    @Test
    void theChoiceServiceAndTheCleanupSwitchToTheNewGeneration(@TempDir Path dir) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            try (ProjectorGenerations projector = new ProjectorGenerations(bootstrap, dir.resolve("projector"), 1,
                    Map.of("commit.interval.ms", 100), RetirementRules.Config.defaults(), List.of("choice", "cleanup"), m -> { }).start();
                 CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1, CleanupConfig.defaults(), Map.of());
                 ChoiceService choice = new ChoiceService(new ChoiceService.Settings(bootstrap, dir.resolve("choice"), 1, "127.0.0.1", 0,
                         new ConfigWatcher(null, Clock.systemUTC(), ConfigWatcher.DEFAULT_INTERVAL, m -> { }), Clock.systemUTC())).start()) {
                cleanup.start();
                choice.awaitReady(Duration.ofSeconds(120));
                assertThat(decide(choice, 1)).as("a decision on generation 1").isEqualTo(200);

                Generations.markBuilding(bootstrap, new Generation(2));
                long until = System.currentTimeMillis() + 300_000;
                Map<String, String> records = Map.of();
                while (System.currentTimeMillis() < until) {
                    records = Generations.read(bootstrap);
                    if ("2".equals(records.get(Generations.readerKey("choice"))) && "2".equals(records.get(Generations.readerKey("cleanup")))
                            && !admin.listTopics().names().get().contains(Topics.SESSIONS_VIEW.name())) {
                        break;
                    }
                    Thread.sleep(500);
                }
                assertThat(records).containsEntry(Generations.SERVING, "2").containsEntry(Generations.readerKey("choice"), "2")
                        .containsEntry(Generations.readerKey("cleanup"), "2");
                int status = 0;
                for (int i = 0; i < 300 && status != 200; i++) {
                    status = decide(choice, 100 + i);
                    Thread.sleep(200);
                }
                assertThat(status).as("a decision on generation 2's views").isEqualTo(200);
                assertThat(admin.listConsumerGroups().all().get()).extracting(g -> g.groupId())
                        .contains("ensemble-cleanup-g2").doesNotContain("ensemble-cleanup", "ensemble-projector");
                assertThat(admin.listTopics().names().get()).as("generation 1's projector topics are removed")
                        .doesNotContain(Topics.SESSIONS_VIEW.name(), "ensemble-projector-session-chains-changelog")
                        .contains(new Generation(2).view(Topics.SESSIONS_VIEW).name());
            }
        }
    }

    private static int decide(ChoiceService s, int n) throws Exception {
        String claim = "{\"eventId\":\"c0000000-0000-0000-0000-" + String.format("%012d", n) + "\",\"type\":\"RunClaimed\","
                + "\"account\":\"acct-ana\",\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T12:00:00Z\","
                + "\"source\":\"computer:laptop\",\"payload\":{\"runId\":\"job-" + n + "\",\"taskId\":\"task-" + n + "\","
                + "\"computerId\":\"laptop\",\"agent\":\"claude-code\",\"kind\":\"TASK_RUN\",\"task\":{\"title\":\"Add paging\","
                + "\"labels\":[],\"linkedTaskIds\":[]}}}";
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(s.url() + "/choice/decide"))
                .header("Authorization", "Bearer " + s.secret()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(claim)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
