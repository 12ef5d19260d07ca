package dev.ensemble.sessions.deploy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bench} refuses settings it cannot run, with a message naming the option, before it starts a broker. */
class BenchCommandTest {
    @ParameterizedTest
    @CsvSource({
            "--events, 0, --events must be 1 or more",
            "--warmup-events, -1, --warmup-events must be 0 or more",
            "--accounts, 0, --accounts must be 1 or more",
            "--partitions, 0, --partitions must be 1 or more",
            "--recalibrate-decisions, -5, --recalibrate-decisions must be 0 or more",
            "--events, 60000000, must be 50,000,000 or fewer",
    })
    void aSettingOutOfRangeIsRefusedWithItsName(String option, String value, String message) {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(option, value);
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains(message);
    }

    @org.junit.jupiter.api.Test
    void anUnknownStreamsSettingIsRefusedAndKnownOnesAndClientPrefixesPass() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchCommand());
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("--set", "foo=bar")).isEqualTo(2);
        assertThat(err.toString()).contains("--set foo: not a Kafka Streams setting");
        assertThat(BenchCommand.isStreamsSetting("commit.interval.ms")).isTrue();
        assertThat(BenchCommand.isStreamsSetting("producer.linger.ms")).isTrue();
        assertThat(BenchCommand.isStreamsSetting("producer.")).isFalse();
    }

    /**
     * A small run end to end on a real embedded broker: the projector's row, the replay table (the rebuild by the
     * projector, the recalibration), the three reference topologies, each with a positive rate over every event of
     * the log, the ratio of the projector to the "store" reference and the rebuild's to the live projector's rate, and
     * the projector's restore into an empty state folder.
     */
    @org.junit.jupiter.api.Test
    void aSmallRunPrintsTheProjectorRowTheReplayTableAndTheReferenceTopologies() {
        CapturedStdout.Printed printed = CapturedStdout.run(() -> new CommandLine(new BenchCommand()).execute("--events", "4000",
                "--warmup-events", "0", "--accounts", "50", "--recalibrate-decisions", "1000", "--ceiling", "--restore"));
        int code = printed.code();
        String out = printed.out();
        assertThat(code).as(out).isZero();
        assertThat(out).containsPattern("\\| 4,000 \\| 2 \\| [0-9.]+ \\| [1-9][0-9,]* \\|");
        assertThat(out).containsPattern("\\| rebuild: replayed by the projector \\(reset excluded; to the last view visible\\) \\| 4,000 events \\| [0-9.]+ \\| [1-9][0-9,]* \\|");
        assertThat(out).containsPattern("\\| recalibrate \\(re-score, summary, HTML\\) \\| 1,000 decisions \\|");
        assertThat(out).containsPattern("(?m)^ratio: projector [0-9,]+ events/s ÷ store reference [0-9,]+ events/s = [0-9]+\\.[0-9]{2}$");
        // the stream threads' CPU: the application's own threads (none found would print no line, or 0.0 µs)
        assertThat(out).containsPattern("(?m)^stream thread CPU during the measurement: (?!0\\.0 )[0-9]+\\.[0-9] µs per event$");
        assertThat(out).containsPattern("(?m)^CPU ratio: store reference [0-9.]+ µs ÷ projector [0-9.]+ µs of stream thread CPU per event = [0-9]+\\.[0-9]{2}$");
        assertThat(out).containsPattern("(?m)^restore: [1-9][0-9,]* records of [1-9][0-9]* changelogs restored into an empty "
                + "state folder in [0-9.]+ s \\([0-9,]+ records/s\\)$");
        assertThat(out).containsPattern("(?m)^the state of 4,000 events \\(50 accounts\\):\\nrestore: [1-9][0-9,]* records");
        assertThat(out).containsPattern("(?m)^rebuild ÷ live: [0-9,]+ ÷ [0-9,]+ events/s = [0-9]+\\.[0-9]{2}$");
        for (String topology : java.util.List.of("read: decode every event", "forward: decode, write every event to a topic",
                "store: decode, one store entry per event")) {
            assertThat(out).containsPattern(java.util.regex.Pattern.quote(topology) + "[^|]*\\| (3,600|4,000) \\| [0-9.]+ \\| [1-9][0-9,]* \\| (?!0\\.0 )[0-9]+\\.[0-9] \\|");
        }
    }

    /** CPU per event: the threads' sum between two readings; none when a reading is missing or a thread was replaced. */
    @org.junit.jupiter.api.Test
    void cpuPerEventIsTheThreadsSumAndNoneWhenAThreadWasReplaced() {
        var before = new StreamThreadCpu.Reading(java.util.Map.of(1L, 1_000_000L, 2L, 500_000L));
        assertThat(StreamThreadCpu.microsPerEvent(before, new StreamThreadCpu.Reading(java.util.Map.of(1L, 3_000_000L, 2L, 1_500_000L)), 1000))
                .isEqualTo(3.0);
        assertThat(StreamThreadCpu.microsPerEvent(before, new StreamThreadCpu.Reading(java.util.Map.of(1L, 3_000_000L, 3L, 100L)), 1000))
                .as("thread 2 replaced by 3").isNaN();
        assertThat(StreamThreadCpu.microsPerEvent(null, before, 1000)).isNaN();
    }
}
