package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The soak end to end, small: 2,000 events over 50 accounts (1% bad, some batches posted twice, also at once) to a real
 * {@code up} in a process of its own, killed with SIGKILL halfway and started again; every check of the soak must hold.
 */
class SoakTest {
    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void everyAcceptedEventShowsNothingRefusedDoesTheViewsFlowAndTheLogHasNoDuplicateAcrossAKillMinus9(
            @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir) throws Exception {
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        Soak.Result r;
        try {
            r = Soak.run(new Soak.Settings(2_000, 50, 0.01, 0.05, 0.5, 4, 0.5, dir, List.of("-Xmx1g"),
                    Duration.ofSeconds(300), Duration.ofMinutes(8), 14), new PrintStream(progress, true, StandardCharsets.UTF_8));
        } catch (Exception e) {
            // what the soak printed up to the failure (the kill, the restart, the settling) says where it stopped
            throw new AssertionError("the soak ended with " + e + "; its progress:\n" + progress.toString(StandardCharsets.UTF_8), e);
        } finally {
            keepUpLogs(dir);
        }
        String table = Soak.table(r);
        String context = table + "\n" + progress.toString(StandardCharsets.UTF_8);

        assertThat(r.killAtEvents()).as("up was killed halfway: %s", context).isBetween(900, 1_400);
        assertThat(r.restartSeconds()).as(context).isPositive();
        assertThat(r.sentByKind().getOrDefault(SoakWorkload.Kind.GOOD, 0)).as(context).isBetween(1_900, 2_000);
        assertThat(r.events() - r.sentByKind().get(SoakWorkload.Kind.GOOD)).as("bad events were mixed in: %s", context).isPositive();
        assertThat(r.accepted()).as(context).isGreaterThanOrEqualTo(r.sentByKind().get(SoakWorkload.Kind.GOOD));
        assertThat(r.viewsChecked()).as(context).isEqualTo(r.accepted());
        assertThat(r.accountsChecked()).isEqualTo(50);
        assertThat(r.missing()).as("accepted but not in the views: %s", context).isZero();
        assertThat(r.leakedInViews() + r.leakedInLog()).as("refused but shown: %s", context).isZero();
        assertThat(r.acceptedNotInLog()).as(context).isZero();
        assertThat(r.duplicatesInLog()).as("duplicates in the log: %s", context).isZero();
        assertThat(r.errored() + r.unanswered() + r.goodRejected() + r.conflictingAnswers()).as(context).isZero();
        assertThat(r.accountsProbed()).as("every account's views were sampled: %s", context).isEqualTo(50);
        assertThat(r.accountsFlowing()).as("every account's views kept flowing: %s", context).isEqualTo(50);
        assertThat(r.probesNeverSeen()).as(context).isZero();
        assertThat(r.logRecords()).as(context).isGreaterThanOrEqualTo(r.accepted());
        assertThat(r.passed()).as(context).isTrue();
    }

    /** Copies each start's output of {@code up} to {@code target/soak-up-logs/} (the temporary folder stays only when the test fails). */
    private static void keepUpLogs(Path dir) throws java.io.IOException {
        Path keep = Path.of("target", "soak-up-logs");
        Files.createDirectories(keep);
        try (var logs = Files.newDirectoryStream(dir, "up-*.log")) {
            for (Path log : logs) {
                Files.copy(log, keep.resolve(log.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    @Test
    void theTableGoesUnderSoakWithTheDateAndCommitKeepingTheOtherSections(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("docs/reliability.md");
        Soak.Result r = new Soak.Result(100, 2, 20, 1, 1, 99, 3, java.util.Map.of(SoakWorkload.Kind.GOOD, 99, SoakWorkload.Kind.OVERSIZED, 1),
                java.util.Map.of(SoakWorkload.Kind.OVERSIZED, 1), List.of(new Soak.Variant(SoakWorkload.Kind.OVERSIZED,
                "title of 300,000 characters", 1, 0, 1, 0, java.util.Set.of("413 too_large"))), 0, 0, 0, 0, 4, 50, 3.0, 30.5, 12.0, 99, 0, "", 0, 2, 0, 0,
                0, 0, 10, 0, 2, 2, 800, 400, 900, 31_000, 1_200, "soak-00001 (31000 ms)", 99, 0, 0, 0, 2.0, "the projector is 0 records behind", 60.0, List.of());
        String first = SoakCommand.block(r, "ensemble-sessions soak --events 100", ZonedDateTime.of(2026, 12, 1, 15, 0, 0, 0, ZoneOffset.UTC), "abc1234");
        SoakCommand.appendUnderSoak(file, first);
        String text = Files.readString(file);
        assertThat(text).startsWith("# Reliability\n\n## Soak\n\n`ensemble-sessions soak`").contains("### 2026-12-01 15:00 UTC, commit abc1234")
                .contains("| duplicates in the log | 0 ").contains("| title of 300,000 characters | oversized | 1 | 0 | 1 | 0 | 413 too_large |")
                .contains("| verdict | every check held |");

        Files.writeString(file, text + "\n## Limits\n\nothers' words\n"); // another section after it
        SoakCommand.appendUnderSoak(file, first.replace("15:00", "16:00"));
        String both = Files.readString(file);
        assertThat(both.indexOf("### 2026-12-01 15:00")).isLessThan(both.indexOf("### 2026-12-01 16:00"));
        assertThat(both.indexOf("### 2026-12-01 16:00")).isLessThan(both.indexOf("## Limits"));
        assertThat(both).endsWith("## Limits\n\nothers' words\n").containsOnlyOnce("## Soak");
    }

    @Test
    void theRecordedCommandNamesEveryOptionWithItsValueSoTheRunCanBeRepeated() {
        SoakCommand soak = new SoakCommand();
        new picocli.CommandLine(soak).parseArgs("--events", "2000", "--repost-share", "0.05", "--no-kill", "--seed", "7",
                "--up-java-options", "-Xmx1g -XX:+UseSerialGC");
        assertThat(soak.commandLine()).isEqualTo("ensemble-sessions soak --events 2000 --accounts 2000 --bad-share 0.01"
                + " --repost-share 0.05 --kill-at 0.5 --no-kill --clients 16 --probe-share 0.25 --settle-seconds 180"
                + " --timeout-minutes 30 --up-java-options '-Xmx1g -XX:+UseSerialGC' --seed 7");
        assertThat(SoakCommand.shellWord("it's")).isEqualTo("'it'\\''s'");
        assertThat(SoakCommand.cores(1)).isEqualTo("1 core");
        assertThat(SoakCommand.cores(8)).isEqualTo("8 cores");
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aPostingThatFailsLeavesNoKillerWaitingBehind(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        // no time for the posting: the first client fails long before the kill's share (90%) is answered
        assertThatThrownBy(() -> Soak.run(new Soak.Settings(200, 20, 0, 0, 0.9, 1, 0.5, dir, List.of("-Xmx512m"),
                Duration.ofSeconds(10), Duration.ZERO, 14), new PrintStream(progress, true, StandardCharsets.UTF_8)))
                .as(progress.toString(StandardCharsets.UTF_8)).hasMessageContaining("the posting took longer than 0 s");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (killerAlive() && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        assertThat(killerAlive()).as("the soak's killer thread still waits").isFalse();
    }

    private static boolean killerAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("soak-killer") && t.isAlive());
    }

    @Test
    void aFailedRestartIsRecordedAlsoWhenItsFailureHasNoMessage() {
        assertThat(Soak.firstLine(new IllegalStateException())).isEqualTo("java.lang.IllegalStateException");
        assertThat(Soak.firstLine(new IllegalStateException("up ended (exit code 1)\nits output ends with: …")))
                .isEqualTo("up ended (exit code 1)");
    }
}
