package dev.ensemble.sessions.choice.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigWatcher;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The config file becomes events of the log (DESIGN.md §4; issue 15 item 1), on a real broker: the choice service's
 * publisher appends a {@code ChoiceConfigChanged} to every partition at its start, appends nothing at a restart with
 * the same file, appends the new config when the file changes and the defaults when it turns invalid (never the invalid
 * content); and the service decides with the config it folded from the log.
 */
class ConfigPublisherTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void theFilesConfigIsAppendedToEveryPartitionOnceAndDecisionsUseIt(@TempDir Path dir) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            String bootstrap = cluster.bootstrapServers();
            Path file = dir.resolve("choice.json");
            Files.writeString(file, "{\"version\":\"t-a\",\"weights\":{\"topic\":8}}");

            try (ChoiceService s = service(bootstrap, dir.resolve("state"), file)) {
                assertThat(awaitVersion(s, "acct-ana", "t-a")).as("the decision's config, folded from the log").isEqualTo("t-a");
                assertThat(awaitVersion(s, "acct-bo", "t-a")).isEqualTo("t-a");
            }
            List<ConsumerRecord<String, Event>> first = changes(bootstrap);
            assertThat(first).hasSize(2);
            assertThat(first).extracting(ConsumerRecord::partition).containsExactlyInAnyOrder(0, 1);
            for (ConsumerRecord<String, Event> r : first) {
                assertThat(r.key()).isEqualTo(ChoiceConfigEvents.ACCOUNT);
                assertThat(r.value().getSource()).isEqualTo(ChoiceConfigEvents.SOURCE);
                SessionChoiceConfig cfg = ChoiceConfigEvents.config(r.value());
                assertThat(cfg.version()).isEqualTo("t-a");
                assertThat(cfg.weights().topic()).isEqualTo(8.0);
            }

            // a restart with the same file appends nothing; a changed file is appended
            try (ChoiceService s = service(bootstrap, dir.resolve("state"), file)) {
                assertThat(awaitVersion(s, "acct-ana", "t-a")).isEqualTo("t-a");
                Thread.sleep(2000);
                assertThat(changes(bootstrap)).as("nothing appended again for the same file").hasSize(2);
                Files.writeString(file, "{\"version\":\"t-b\",\"bands\":{\"confident\":9}}");
                assertThat(awaitVersion(s, "acct-ana", "t-b")).isEqualTo("t-b");

                // an invalid file: logged, the defaults apply and are appended; its content never is
                Files.writeString(file, "{\"version\":\"t-c\",\"weights\":{\"topic\":\"high\"}}");
                assertThat(awaitVersion(s, "acct-ana", SessionChoiceConfig.DEFAULT_VERSION)).isEqualTo(SessionChoiceConfig.DEFAULT_VERSION);
            }
            List<ConsumerRecord<String, Event>> all = changes(bootstrap);
            assertThat(all).hasSize(6);
            List<String> versions = new ArrayList<>();
            for (ConsumerRecord<String, Event> r : all) {
                if (r.partition() == 0) {
                    versions.add(((ChoiceConfigChanged) r.value().getPayload()).getVersion());
                }
                assertThat(ChoiceConfigEvents.config(r.value())).as("every appended config is valid").isNotNull();
            }
            assertThat(versions).containsExactly("t-a", "t-b", SessionChoiceConfig.DEFAULT_VERSION);
        }
    }

    private static ChoiceService service(String bootstrap, Path state, Path file) throws InterruptedException {
        ChoiceService s = new ChoiceService(new ChoiceService.Settings(bootstrap, state, 1, "127.0.0.1", 0,
                new ConfigWatcher(file, Clock.systemUTC(), Duration.ofMillis(100), m -> { }), Clock.systemUTC())).start();
        s.awaitReady(Duration.ofSeconds(60));
        return s;
    }

    /** Asks for decisions until one is made with config {@code version} (up to 60 s); the last decision's version. */
    private static String awaitVersion(ChoiceService s, String account, String version) throws Exception {
        String seen = null;
        long until = System.currentTimeMillis() + 60_000;
        int n = 0;
        while (System.currentTimeMillis() < until) {
            String claim = "{\"eventId\":\"c0000000-0000-0000-0000-" + String.format("%012d", ++n) + "\",\"type\":\"RunClaimed\","
                    + "\"account\":\"" + account + "\",\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T12:00:00Z\","
                    + "\"source\":\"computer:laptop\",\"payload\":{\"runId\":\"job-" + n + "\",\"taskId\":\"task-" + n + "\","
                    + "\"computerId\":\"laptop\",\"agent\":\"claude-code\",\"kind\":\"TASK_RUN\",\"task\":{\"title\":\"Add paging\",\"labels\":[],\"linkedTaskIds\":[]}}}";
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(s.url() + "/choice/decide"))
                    .header("Authorization", "Bearer " + s.secret()).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(claim)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                JsonNode d = JSON.readTree(r.body());
                seen = d.get("configVersion").asText();
                if (version.equals(seen)) {
                    return seen;
                }
            } else {
                seen = r.statusCode() + " " + r.body();
            }
            Thread.sleep(200);
        }
        return seen;
    }

    /** Every ChoiceConfigChanged of the log, partition by partition in order. */
    private static List<ConsumerRecord<String, Event>> changes(String bootstrap) {
        List<ConsumerRecord<String, Event>> out = new ArrayList<>();
        try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap, "isolation.level", "read_committed"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            List<TopicPartition> tps = c.partitionsFor(Topics.EVENTS.name()).stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long until = System.currentTimeMillis() + 30_000;
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, Event> r : c.poll(Duration.ofMillis(200))) {
                    if (r.value() != null && r.value().getPayload() instanceof ChoiceConfigChanged) {
                        out.add(r);
                    }
                }
            }
        }
        out.sort(java.util.Comparator.comparingInt(ConsumerRecord<String, Event>::partition).thenComparingLong(ConsumerRecord::offset));
        return out;
    }
}
