package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code bench import} on a tiny generated store, without ccusage: it imports into its embedded broker (which takes
 * SASL clients only), prints the table and the CPU split, times new prompts reaching the log while the computer agent
 * runs, and removes its folder.
 */
class ImportBenchTest {
    static final String ID = "11111111-2222-4333-8444-555555555555";

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void importsAGeneratedStoreIntoItsBrokerAndPrintsTheTable(@TempDir Path source) throws Exception {
        writeTranscript(source);
        String out = bench("--sessions", "3", "--runs", "1", "--no-ccusage", "--prompts", "3", "--source", source.toString());

        assertThat(out).doesNotContain("failed:").contains("imported 3 sessions, 3 runs, 3 engine events from 3 files");
        assertThat(out).containsPattern("\\| 3 sessions, 0 MB \\| [0-9.]+ s \\| [0-9.]+ s \\| not run \\| - \\|");
        assertThat(out).containsPattern("CPU of the first import \\(medians\\): [0-9.]+ CPU-s: importer [0-9.]+ \\(");
        assertThat(out).containsPattern("\\| median of 3 prompts \\| [0-9.]+ s \\| [0-9.]+ s \\|");
        assertThat(out).containsPattern("load average at the start: [0-9.]+ [0-9.]+ [0-9.]+");
        assertThat(out).containsPattern("load average at the end: [0-9.]+ [0-9.]+ [0-9.]+");
        assertGeneratedStoreRemoved(out);
    }

    /**
     * --fresh-jvm: each run's import happens in a child JVM (its own broker), for the defaults and each
     * --jvm-variant in turn; the child's own CPU split comes back, and a variant's options reach the child (one the
     * JVM refuses fails the bench, naming it).
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void timesTheFirstImportInAFreshJvmForEachVariant(@TempDir Path source) throws Exception {
        writeTranscript(source);
        String out = bench("--sessions", "3", "--runs", "2", "--no-ccusage", "--fresh-jvm", "--source", source.toString(),
                "--jvm-variant", "serial=-XX:+UseSerialGC -XX:TieredStopAtLevel=1");

        assertThat(out).doesNotContain("failed:");
        assertThat(out).containsPattern("run 1, defaults: first import in a fresh JVM [0-9.]+ s \\(the child [0-9.]+ s from its start\\); "
                + "CPU of the import: [0-9.]+ CPU-s: importer [0-9.]+ \\([0-9]+ %\\), broker [0-9.]+ \\([0-9]+ %\\), producer [0-9.]+, "
                + "JIT compiler [0-9.]+, GC [0-9.]+; of the whole JVM: [0-9.]+ CPU-s");
        assertThat(out).contains("run 1, serial: ", "run 2, defaults: ", "run 2, serial: ");
        assertThat(out).containsPattern("\\| defaults \\| [0-9.]+ s \\| not run \\| - \\| [0-9.]+ \\([0-9.]+, [0-9.]+, [0-9.]+, [0-9.]+\\) \\| [0-9.]+ s \\|");
        assertThat(out).containsPattern("\\| serial: -XX:\\+UseSerialGC -XX:TieredStopAtLevel=1 \\| [0-9.]+ s \\|");
        assertThat(out).doesNotContain("median of 3 prompts");
        assertGeneratedStoreRemoved(out);

        // the variant's options reach the child: an option the JVM refuses makes the run fail with the child's output
        String bad = bench("--sessions", "1", "--runs", "1", "--no-ccusage", "--fresh-jvm", "--source", source.toString(),
                "--jvm-variant", "bad=-XX:+NoSuchOptionAnywhere");
        assertThat(bad).contains("run 1, defaults: ", "failed: the fresh JVM's import failed", "-XX:+NoSuchOptionAnywhere")
                .doesNotContain("run 1, bad: ");
    }

    @Test
    void aVariantWithoutFreshJvmIsRefused(@TempDir Path source) throws Exception {
        writeTranscript(source);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = new CommandLine(new ImportBench()).setErr(new java.io.PrintWriter(err, true))
                .execute("--no-ccusage", "--source", source.toString(), "--jvm-variant", "c1=-XX:TieredStopAtLevel=1");
        assertThat(exit).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--jvm-variant goes with --fresh-jvm");
    }

    @Test
    void readsBackTheCpuSplitItPrints() {
        ImportBench.CpuSplit split = new ImportBench.CpuSplit(9.81, 1.40, 0.53, 3.37, 0.50);
        ImportBench.CpuSplit back = ImportBench.CpuSplit.parse(split.toString());
        assertThat(back.total()).isEqualTo(9.81);
        assertThat(back.broker()).isEqualTo(1.40);
        assertThat(back.producer()).isEqualTo(0.53);
        assertThat(back.jit()).isEqualTo(3.37);
        assertThat(back.gc()).isEqualTo(0.50);
    }

    private static void assertGeneratedStoreRemoved(String out) {
        Matcher generated = Pattern.compile("generated [0-9]+ sessions? .* in (\\S+)/claude").matcher(out);
        assertThat(generated.find()).as(out).isTrue();
        assertThat(Path.of(generated.group(1))).doesNotExist();
    }

    /** Runs the bench and returns what it printed, with the error's message when it failed. */
    private static String bench(String... args) {
        return CapturedStdout.run(() -> new CommandLine(new ImportBench()).setExecutionExceptionHandler((ex, cmd, parsed) -> {
            System.out.println("failed: " + ex.getMessage());
            return 1;
        }).execute(args)).out();
    }

    private static void writeTranscript(Path source) throws java.io.IOException {
        Path folder = Files.createDirectories(source.resolve("-w"));
        Files.writeString(folder.resolve(ID + ".jsonl"), String.join("\n",
                "{\"type\":\"user\",\"sessionId\":\"" + ID + "\",\"cwd\":\"/w\",\"uuid\":\"u1\","
                        + "\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}",
                "{\"type\":\"assistant\",\"sessionId\":\"" + ID + "\",\"cwd\":\"/w\",\"uuid\":\"a1\","
                        + "\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-sonnet-4-5\","
                        + "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"stop_reason\":\"end_turn\","
                        + "\"usage\":{\"input_tokens\":10,\"output_tokens\":2}}}",
                ""), StandardCharsets.UTF_8);
    }
}
