package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.projector.ProjectorRebuild;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rebuild --data-dir DIR} as a user runs it, on a data folder whose broker holds a log the projector has
 * folded: it resets the projector with Kafka's tools and replays the log with the projector itself, and leaves the
 * session views the projector had published live; twice in a row (a second rebuild resets the first one's state).
 */
class RebuildCommandTest {
    @Test
    void rebuildReplaysWithTheProjectorAndGivesTheLiveSessionViewsBackEachTime(@TempDir Path dir) throws Exception {
        DataDir data = new DataDir(dir.resolve("data"));
        data.createPrivate();
        Map<String, SessionView> live;
        try (LocalKafka kafka = LocalKafka.start(data.root(), 0)) {
            kafka.waitUntilReady(Duration.ofSeconds(60));
            Bench.appendOnly(kafka.bootstrapServers(), new Bench.Settings(3000, 40, 2, kafka.clientProperties(), 0), new PrintStream(new ByteArrayOutputStream()));
            try (Projector p = new Projector(kafka.bootstrapServers(), data.state("projector"), 1,
                    KafkaClients.merge(kafka.clientProperties(), Map.of("commit.interval.ms", 100)));
                 Admin admin = Admin.create(KafkaClients.config(kafka.bootstrapServers(), kafka.clientProperties()))) {
                p.start();
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(120), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(60))).isTrue();
            }
            live = sessionViews(kafka, Map.of());
        }
        assertThat(live).hasSizeGreaterThan(40);

        for (int round = 1; round <= 2; round++) {
            List<String> all = new ArrayList<>(List.of("--data-dir", data.root().toString(), "--kafka-port", "0"));
            Map<TopicPartition, Long> before;
            try (LocalKafka kafka = LocalKafka.start(data.root(), 0)) {
                kafka.waitUntilReady(Duration.ofSeconds(60));
                before = ends(kafka);
            }
            RebuildCommand command = new RebuildCommand();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            command.out = new PrintStream(out, true, StandardCharsets.UTF_8);
            int code = new CommandLine(command).execute(all.toArray(String[]::new));
            String printed = out.toString(StandardCharsets.UTF_8);
            assertThat(code).as(printed).isZero();
            assertThat(printed).containsPattern("Rebuilt the views from 3,000 events in [0-9.]+ s \\([0-9,]+ events/s, replayed by the projector\\)");
            try (LocalKafka kafka = LocalKafka.start(data.root(), 0)) {
                kafka.waitUntilReady(Duration.ofSeconds(60));
                Map<String, SessionView> rebuilt = sessionViews(kafka, before); // written by this rebuild
                assertThat(rebuilt.keySet()).as("after rebuild " + round).isEqualTo(live.keySet());
                List<String> differ = live.keySet().stream().filter(k -> !tree(live.get(k)).equals(tree(rebuilt.get(k)))).sorted().toList();
                assertThat(differ).as("after rebuild " + round + ": " + differ.size() + " of " + live.size() + " differ; first: "
                        + (differ.isEmpty() ? "" : json(live.get(differ.get(0))) + " rebuilt " + json(rebuilt.get(differ.get(0))))).isEmpty();
            }
        }
    }

    @Test
    void aFolderWithoutAnEventLogIsNothingToRebuildAndIsLeftAsItWasAndAFileIsNamedAsOne(@TempDir Path dir) throws Exception {
        RebuildCommand command = new RebuildCommand();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        command.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        assertThat(new CommandLine(command).execute("--data-dir", dir.resolve("mistyped").toString())).isEqualTo(1);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("No event log in " + dir.resolve("mistyped")).contains("nothing to rebuild");
        assertThat(dir.resolve("mistyped")).doesNotExist();

        java.nio.file.Path file = dir.resolve("notes.txt");
        java.nio.file.Files.writeString(file, "x");
        java.io.StringWriter err = new java.io.StringWriter();
        CommandLine cli = new CommandLine(command);
        cli.setErr(new java.io.PrintWriter(err));
        assertThat(cli.execute("--data-dir", file.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("the data folder " + file + " is a file, not a folder");
    }

    @Test
    void aNegativeCompletedWindowIsRefusedByRebuildAndUpBeforeAnythingStarts(@TempDir Path dir) {
        assertRefusedByRebuildAndUpBeforeAnythingStarts(dir, "--completed-window-days", "-1",
                "--completed-window-days must be 0 or more, not -1");
    }

    @Test
    void aReplicationFactorBelowOneIsRefusedByRebuildAndUpBeforeAnythingStarts(@TempDir Path dir) {
        assertRefusedByRebuildAndUpBeforeAnythingStarts(dir, "--replication-factor", "0", "--replication-factor must be 1 or more, not 0");
    }

    /** {@code rebuild} and {@code up} with {@code option value}: exit code 2, {@code message} first, no data folder made. */
    private static void assertRefusedByRebuildAndUpBeforeAnythingStarts(Path dir, String option, String value, String message) {
        for (Object command : List.of(new RebuildCommand(), new UpCommand())) {
            java.io.StringWriter err = new java.io.StringWriter();
            CommandLine cli = new CommandLine(command);
            cli.setErr(new java.io.PrintWriter(err));
            assertThat(cli.execute("--data-dir", dir.resolve("data").toString(), option, value)).isEqualTo(2);
            assertThat(err.toString()).as(command.getClass().getSimpleName()).startsWith(message);
        }
        assertThat(dir.resolve("data")).doesNotExist();
    }

    /** As a JSON tree (Avro's equals fails on arrays of records holding Instants). */
    private static Object tree(SessionView v) {
        return dev.ensemble.sessions.schema.EventJson.recordToJson(v);
    }

    private static String json(SessionView v) {
        return dev.ensemble.sessions.schema.EventJson.recordToJson(v).toString();
    }

    /** The end offsets of the session views' partitions ({@code read_committed}). */
    private static Map<TopicPartition, Long> ends(LocalKafka kafka) {
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(KafkaClients.merge(KafkaClients.config(kafka.bootstrapServers(),
                kafka.clientProperties()), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            c.partitionsFor(Topics.SESSIONS_VIEW.name()).forEach(i -> parts.add(new TopicPartition(i.topic(), i.partition())));
            return c.endOffsets(parts);
        }
    }

    /** The newest session view of each key among the records at or after {@code from} ({@code read_committed}). */
    private static Map<String, SessionView> sessionViews(LocalKafka kafka, Map<TopicPartition, Long> from) {
        Map<String, SessionView> out = new HashMap<>();
        var values = Topics.SESSIONS_VIEW.valueSerde().deserializer();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(KafkaClients.merge(KafkaClients.config(kafka.bootstrapServers(),
                kafka.clientProperties()), Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            c.partitionsFor(Topics.SESSIONS_VIEW.name()).forEach(i -> parts.add(new TopicPartition(i.topic(), i.partition())));
            c.assign(parts);
            for (TopicPartition tp : parts) c.seek(tp, from.getOrDefault(tp, 0L));
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long until = System.currentTimeMillis() + 60_000;
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) out.put(r.key(), values.deserialize(r.topic(), r.value()));
            }
        }
        return out;
    }

    @Test
    void eachStepOfARebuildIsPrintedInWords() {
        assertThat(RebuildCommand.progress("building", "2")).isEqualTo("generation g2 is being built (replaying the log)");
        assertThat(RebuildCommand.progress("serving", "2")).isEqualTo("generation g2 serves the views");
        assertThat(RebuildCommand.progress("reader/choice", "2")).isEqualTo("the choice service reads generation g2");
        assertThat(RebuildCommand.progress("other", "x")).isEqualTo("other = x");
    }
}
