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
}
