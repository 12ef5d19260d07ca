package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The computer agent watches the store folders (a real in-process Kafka broker of its own): with a poll far longer
 * than the wait, a prompt appended to a transcript and a new session in a new project folder still reach the event
 * log, so they were imported because a watch saw them, not by the poll. How fast is measured by {@code bench import},
 * not here.
 */
class ComputerAgentWatchTest {
    static KafkaTestCluster cluster;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
        cluster.createTopics(1, Topics.EVENTS);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNewPromptAndANewSessionAreImportedWithoutWaitingForThePoll() throws Exception {
        Stores stores = Stores.withFixtures(tmp.resolve("home"));
        ComputerAgent agent = new ComputerAgent(cluster.bootstrapServers(), stores.config(), List.of(stores.claude),
                List.of(stores.codex), Duration.ofMinutes(10), ImportProgress.NONE);
        String firstRun = "claude-code:" + ClaudeImportTest.A;
        try (KafkaConsumer<String, Event> consumer = consumer()) {
            agent.start();
            List<ConsumerRecord<String, Event>> got = new ArrayList<>();
            pollUntil(consumer, got, firstRun, 180_000); // the first import, at start

            Path file = stores.claudeFile("-home-ana-my-app", ClaudeImportTest.A + ".jsonl");
            Files.writeString(file, IncrementalImportTest.prompt(ClaudeImportTest.A, "a-p4", "Watch this"),
                    StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            pollUntil(consumer, got, firstRun + ":a-p4", 120_000); // well under the 10-minute poll

            String id = "0000aaaa-1111-4111-8111-000000000042";
            Path fresh = stores.claudeFile("-home-ana-new-app", id + ".jsonl");
            Files.createDirectories(fresh.getParent());
            Files.writeString(fresh, IncrementalImportTest.prompt(id, "n-p1", "A new session"), StandardCharsets.UTF_8);
            pollUntil(consumer, got, "claude-code:" + id, 120_000);

            assertThat(got.stream().map(r -> r.value().getEventId()).toList()).doesNotHaveDuplicates();
        } finally {
            agent.stop();
        }
        assertThat(agent.lastError()).isNull();
    }

    /**
     * A file that cannot be read is tried at every poll; the listener that shows the summaries (up's progress bar) hears
     * the first import, then only quietly of polls that met the same unreadable file again, and again in full when
     * something new is imported.
     */
    @Test
    void pollsThatOnlyMeetTheSameUnreadableFileAgainAreQuiet() throws Exception {
        Stores stores = Stores.empty(tmp.resolve("home"));
        Path chat = stores.home.resolve(".gemini/tmp/0123abcd/chats/session-2026-03-01T10-00-cut.json");
        Files.createDirectories(chat.getParent());
        Files.writeString(chat, "{\"sessionId\": \"cut\", \"messages\": [{\"type\": \"user\", \"content\": \"hal",
                StandardCharsets.UTF_8);
        java.util.concurrent.atomic.AtomicInteger said = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger quiet = new java.util.concurrent.atomic.AtomicInteger();
        List<ImportSummary> summaries = java.util.Collections.synchronizedList(new ArrayList<>());
        ImportProgress shown = new ImportProgress() {
            @Override
            public void onDone(ImportSummary summary) {
                summaries.add(summary);
                said.incrementAndGet();
            }

            @Override
            public void onDoneQuietly(ImportSummary summary) {
                quiet.incrementAndGet();
            }
        };
        ComputerAgent agent = new ComputerAgent(cluster.bootstrapServers(), stores.config(), stores.agentStores(),
                Duration.ofMillis(300), shown);
        try {
            agent.start();
            long until = System.currentTimeMillis() + 120_000;
            while (quiet.get() < 3 && System.currentTimeMillis() < until) {
                Thread.sleep(50);
            }
            assertThat(quiet.get()).as("later polls, quiet").isGreaterThanOrEqualTo(3);
            assertThat(said.get()).as("only the first import said").isEqualTo(1);
            assertThat(summaries.get(0).skippedFilesByKind()).containsEntry("unreadable", 1L);

            String id = "0000aaaa-1111-4111-8111-000000000043";
            Path fresh = stores.claudeFile("-home-ana-app", id + ".jsonl");
            Files.createDirectories(fresh.getParent());
            Files.writeString(fresh, IncrementalImportTest.prompt(id, "n-p1", "Something new"), StandardCharsets.UTF_8);
            while (said.get() < 2 && System.currentTimeMillis() < until) {
                Thread.sleep(50);
            }
            assertThat(said.get()).as("an import with something new is said").isGreaterThanOrEqualTo(2);
        } finally {
            agent.stop();
        }
        assertThat(agent.lastError()).isNull();
    }

    private static KafkaConsumer<String, Event> consumer() {
        KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "computer-agent-watch-test", "auto.offset.reset", "earliest"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer());
        c.subscribe(List.of(Topics.EVENTS.name()));
        return c;
    }

    /** Polls until a {@code RunClaimed} of {@code runId} arrived, failing after {@code timeoutMs}. */
    private static void pollUntil(KafkaConsumer<String, Event> consumer, List<ConsumerRecord<String, Event>> got,
                                  String runId, long timeoutMs) {
        long until = System.currentTimeMillis() + timeoutMs;
        while (!claimed(got, runId) && System.currentTimeMillis() < until) {
            consumer.poll(Duration.ofMillis(200)).forEach(got::add);
        }
        assertThat(claimed(got, runId)).as("%s claimed; %s events arrived", runId, got.size()).isTrue();
    }

    private static boolean claimed(List<ConsumerRecord<String, Event>> records, String runId) {
        return records.stream().anyMatch(r -> r.value().getPayload() instanceof RunClaimed c && c.getRunId().equals(runId));
    }
}
