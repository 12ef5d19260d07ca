package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code evaluate-choice} with a history or config it cannot use, or a report it cannot write: one line naming the file
 * and why (the line and column of a JSON error), no exception class, before any replay.
 */
class EvaluateChoiceCommandTest {
    static final String TASK = "{\"id\": \"t1\", \"at\": \"2026-11-01T09:00:00Z\", \"title\": \"Fix the login\"}";

    record Run(int code, String out, String err) {
    }

    static Run evaluate(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cli = EnsembleSessions.commandLine();
        cli.setErr(new PrintWriter(err, true));
        List<String> all = new ArrayList<>(List.of("evaluate-choice"));
        all.addAll(List.of(args));
        CapturedStdout.Printed printed = CapturedStdout.run(() -> cli.execute(all.toArray(String[]::new)));
        return new Run(printed.code(), printed.out(), err.toString());
    }

    @Test
    void aHistoryThatIsNotJsonLinesIsNamedWithTheLineAndColumn(@TempDir Path dir) throws Exception {
        Path history = Files.writeString(dir.resolve("tasks.jsonl"), TASK + "\n" + "{\"id\": \"t2\", \"at\": \"2026-11-01T10:00:00Z\"\n");
        Run r = evaluate("--history", history.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("error: " + history + ": not valid JSON at line 2, column 42: unexpected end of input: "
                + "expected close marker for Object" + System.lineSeparator());
        assertThat(r.out()).isEmpty();

        Files.writeString(history, TASK + "\n{\"title\": \"no id\"}\n");
        assertThat(evaluate("--history", history.toString()).err())
                .isEqualTo("error: " + history + ": line 2 is no task: it has no \"id\"" + System.lineSeparator());
        Files.writeString(history, TASK + "\n{\"id\": null, \"at\": \"2026-11-01T10:00:00Z\"}\n");
        assertThat(evaluate("--history", history.toString()).err()).as("a null id is none")
                .isEqualTo("error: " + history + ": line 2 is no task: it has no \"id\"" + System.lineSeparator());
        Files.writeString(history, "{\"id\": \"t1\", \"at\": \"yesterday\"}\n");
        assertThat(evaluate("--history", history.toString()).err()).isEqualTo("error: " + history
                + ": line 1: \"at\" must be an ISO-8601 time such as 2026-11-01T09:30:00Z, not \"yesterday\"" + System.lineSeparator());
    }

    @Test
    void aFolderOrAMissingFileIsNamedAsSuch(@TempDir Path dir) {
        Run folder = evaluate("--history", dir.toString());
        assertThat(folder.code()).isEqualTo(1);
        assertThat(folder.err()).isEqualTo("error: " + dir + " is a folder, not a file" + System.lineSeparator());
        assertThat(evaluate("--history", dir.resolve("none.jsonl").toString()).err())
                .isEqualTo("error: " + dir.resolve("none.jsonl") + " does not exist" + System.lineSeparator());
    }

    @Test
    void aConfigThatIsNotJsonOrAFolderIsNamedWithTheReason(@TempDir Path dir) throws Exception {
        Path history = Files.writeString(dir.resolve("tasks.jsonl"), TASK + "\n");
        Path config = Files.writeString(dir.resolve("c.json"), "{\"bands\": {\"confident\": 4}");
        Run r = evaluate("--history", history.toString(), "--config", config.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("error: " + config + ": not valid JSON at line 1, column 27: unexpected end of input: "
                + "expected close marker for Object" + System.lineSeparator());
        assertThat(evaluate("--history", history.toString(), "--config", dir.toString()).err())
                .isEqualTo("error: " + dir + " is a folder, not a file" + System.lineSeparator());
        Files.writeString(config, "{\"bands\": {\"confident\": \"high\"}}");
        assertThat(evaluate("--history", history.toString(), "--config", config.toString()).err())
                .isEqualTo("error: " + config + ": bands.confident: must be a number (got \"high\")" + System.lineSeparator());
    }

    @Test
    void aReportThatCannotBeWrittenIsRefusedBeforeTheReplay(@TempDir Path dir) throws Exception {
        Path history = Files.writeString(dir.resolve("tasks.jsonl"), TASK + "\n");
        Path report = dir.resolve("missing/report.md");
        Run r = evaluate("--history", history.toString(), "--out", report.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("--out: cannot write the report to " + report + ": its folder " + report.getParent()
                + " does not exist" + System.lineSeparator());
        assertThat(r.out()).as("no replay").isEmpty();

        Run written = evaluate("--history", history.toString(), "--out", dir.resolve("report.md").toString());
        assertThat(written.code()).as(written.err()).isZero();
        assertThat(dir.resolve("report.md")).isNotEmptyFile();
    }
}
