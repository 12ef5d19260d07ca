package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.choice.ChoiceRecords;
import dev.ensemble.sessions.choice.Scorer;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.Signals;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import dev.ensemble.sessions.deploy.examples.SessionEventsConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * recalibrate reads the recorded decisions and outcomes from a real log, honours --since, and writes its report; the
 * example consumer of docs/events.md reads the same log.
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class RecalibrateCommandTest {
    static KafkaTestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = KafkaTestCluster.start();
        cluster.createTopics(2, Topics.EVENTS);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    @org.junit.jupiter.api.Order(1)
    void readsRecordedDecisionsFromTheLog() throws Exception {
        {
            try (KafkaProducer<String, Event> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()),
                    new StringSerializer(), Topics.eventSerde().serializer())) {
                // an unsure decision (anchor 3 + warm 1 = 4) by two accounts, and one older than --since
                send(p, "acct-a", "2026-11-01T10:00:00Z", decision("run-1"));
                send(p, "acct-b", "2026-11-01T11:00:00Z", decision("run-2"));
                send(p, "acct-a", "2026-10-01T10:00:00Z", decision("run-old"));
                send(p, "acct-a", "2026-11-01T10:30:00Z", SessionChoiceOutcome.newBuilder().setRunId("run-1")
                        .setStatus(RunStatus.DONE).setTokens(1200L).setResumed(null).build());
                p.flush();
            }
            Path dir = Files.createTempDirectory("recal");
            Files.writeString(dir.resolve("c.json"), "{\"version\": \"cand-1\", \"bands\": {\"confident\": 4}}");
            RecalibrateCommand cmd = new RecalibrateCommand();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            cmd.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
            int code = new CommandLine(cmd).execute("--config", dir.resolve("c.json").toString(), "--since", "2026-10-15T00:00:00Z",
                    "--bootstrap-servers", cluster.bootstrapServers(), "--report", dir.resolve("r.html").toString());
            String out = buf.toString(StandardCharsets.UTF_8);
            assertThat(code).as(out).isZero();
            assertThat(out).contains("Read 4 events (2 recorded decisions, 1 outcomes)")
                    .contains("2 decisions; 2 change: 0 continue → new, 2 new → continue")
                    .contains("| unsure | 2 | 0 |").contains("| confident | 2 | 2 |".replace("2 | 2", "0 | 2"));
            assertThat(Files.readString(dir.resolve("r.html"))).contains("<svg").contains("cand-1");
        }
    }

    @Test
    @org.junit.jupiter.api.Order(2)
    void theExampleConsumerReadsTheLog() {
        try (KafkaProducer<String, Event> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()),
                new StringSerializer(), Topics.eventSerde().serializer())) {
            send(p, "acct-c", "2026-11-01T10:00:00Z", decision("run-c"));
            p.flush();
        }
        java.util.List<Event> seen = new java.util.ArrayList<>();
        long n = SessionEventsConsumer.consume(cluster.bootstrapServers(), "example-test", Long.MAX_VALUE, java.time.Duration.ofSeconds(8), seen::add);
        assertThat(n).isEqualTo(seen.size());
        assertThat(seen).anySatisfy(e -> assertThat(e.getAccount()).isEqualTo("acct-c"));
    }

    @Test
    @org.junit.jupiter.api.Order(3)
    void aReportThatCannotBeWrittenOrAConfigThatIsNotJsonIsRefusedWithTheReasonBeforeTheLogIsRead(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path config = Files.writeString(dir.resolve("c.json"), "{\"version\": \"cand-1\"");
        Path report = dir.resolve("missing/r.html");
        for (String[] args : new String[][]{{"--report", report.toString()}, {"--report", dir.toString()}, {}}) {
            java.io.StringWriter err = new java.io.StringWriter();
            CommandLine cli = EnsembleSessions.commandLine(); // as main runs it: its "error: " line for a failure
            cli.setErr(new java.io.PrintWriter(err, true));
            java.util.List<String> all = new java.util.ArrayList<>(List.of("recalibrate", "--config", config.toString(),
                    "--bootstrap-servers", cluster.bootstrapServers()));
            all.addAll(List.of(args));
            CapturedStdout.Printed printed = CapturedStdout.run(() -> cli.execute(all.toArray(String[]::new)));
            int code = printed.code();
            assertThat(printed.out()).as("nothing was read or reported").isEmpty();
            if (args.length == 0) {
                assertThat(code).isEqualTo(1);
                assertThat(err.toString()).isEqualTo("error: " + config + ": not valid JSON at line 1, column 21: unexpected end of input: "
                        + "expected close marker for Object" + System.lineSeparator());
            } else if (args[1].equals(report.toString())) {
                assertThat(code).isEqualTo(2);
                assertThat(err.toString()).startsWith("--report: cannot write the report to " + report + ": its folder "
                        + report.getParent() + " does not exist" + System.lineSeparator());
            } else {
                assertThat(code).isEqualTo(2);
                assertThat(err.toString()).startsWith("--report: cannot write the report to " + dir + ": it is a folder; give a file's path");
            }
        }
    }

    static Object decision(String runId) {
        Signals s = new Signals(false, false, false, false, 1, List.of("src/A.java"), 0, 0, List.of(), false, false, true, 0.1, 2, null);
        Scorer.Ranking r = Scorer.rescore(List.of(new Scorer.StoredCandidate("sess-" + runId, Instant.parse("2026-11-01T09:00:00Z"), s)),
                SessionChoiceConfig.defaults());
        return ChoiceRecords.toEvent(new dev.ensemble.sessions.choice.Decision(runId, "task-" + runId, "claude-code", "laptop", null,
                r.decision(), r.band(), r.best().sessionId(), r.best().score(), "test", null, null, null,
                SessionChoiceConfig.DEFAULT_VERSION, "h", r.candidates(), false));
    }

    static void send(KafkaProducer<String, Event> p, String account, String at, Object payload) {
        Event e = Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(account).setSpace("web:s")
                .setOccurredAt(Instant.parse(at)).setRecordedAt(Instant.parse(at)).setSource("service:choice").setPayload(payload).build();
        p.send(new ProducerRecord<>(Topics.EVENTS.name(), account, e));
    }

    @Test
    void aCandidateSettingWhatARecalibrationCannotApplyIsToldSo() throws Exception {
        assertThat(RecalibrateCommand.unapplied("{\"weights\": {\"anchor\": 4}, \"bands\": {}, \"version\": \"v\"}")).isNull();
        assertThat(RecalibrateCommand.unapplied("{\"limits\": {\"maxAgeDays\": 30}}"))
                .startsWith("Note: a recalibration does not apply the candidate's limits:");
        assertThat(RecalibrateCommand.unapplied("{\"text\": {}, \"weights\": {}, \"importedSessions\": {\"candidates\": false}, \"enabled\": false}"))
                .startsWith("Note: a recalibration does not apply the candidate's importedSessions, enabled:");
    }
}
