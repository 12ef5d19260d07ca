package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
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
        Path folder = Files.createDirectories(source.resolve("-w"));
        Files.writeString(folder.resolve(ID + ".jsonl"), String.join("\n",
                "{\"type\":\"user\",\"sessionId\":\"" + ID + "\",\"cwd\":\"/w\",\"uuid\":\"u1\","
                        + "\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}",
                "{\"type\":\"assistant\",\"sessionId\":\"" + ID + "\",\"cwd\":\"/w\",\"uuid\":\"a1\","
                        + "\"timestamp\":\"2026-01-01T00:00:01Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-sonnet-4-5\","
                        + "\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"stop_reason\":\"end_turn\","
                        + "\"usage\":{\"input_tokens\":10,\"output_tokens\":2}}}",
                ""), StandardCharsets.UTF_8);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream before = System.out;
        int exit;
        try {
            System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
            exit = new CommandLine(new ImportBench()).execute("--sessions", "3", "--runs", "1", "--no-ccusage", "--prompts", "3",
                    "--source", source.toString());
        } finally {
            System.setOut(before);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);

        assertThat(exit).as(out).isZero();
        assertThat(out).contains("imported 3 sessions, 3 runs, 3 engine events from 3 files");
        assertThat(out).containsPattern("\\| 3 sessions, 0 MB \\| [0-9.]+ s \\| [0-9.]+ s \\| not run \\| - \\|");
        assertThat(out).containsPattern("CPU of the first import \\(medians\\): [0-9.]+ CPU-s: importer [0-9.]+ \\(");
        assertThat(out).containsPattern("\\| median of 3 prompts \\| [0-9.]+ s \\| [0-9.]+ s \\|");
        Matcher generated = Pattern.compile("generated 3 sessions .* in (\\S+)/claude").matcher(out);
        assertThat(generated.find()).as(out).isTrue();
        assertThat(Path.of(generated.group(1))).doesNotExist();
    }
}
