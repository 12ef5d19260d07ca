package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.ImportSummary;
import dev.ensemble.sessions.agent.ImportSummary.Skip;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The import lines {@code up} and {@code import} print: the first import always says what it did, later ones only when
 * they read something.
 */
class ImportProgressBarTest {
    final ByteArrayOutputStream buf = new ByteArrayOutputStream();
    final ImportProgressBar progress = new ImportProgressBar(new PrintStream(buf, true, StandardCharsets.UTF_8));

    static Skip skip(String file, String reason) {
        return new Skip(Path.of("/home/ana/.claude/projects/p", file), reason);
    }

    String printed() {
        String out = buf.toString(StandardCharsets.UTF_8);
        buf.reset();
        return out;
    }

    void importOnce(int changedFiles, ImportSummary summary) {
        progress.onStart(changedFiles, changedFiles * 100L);
        progress.onDone(summary);
    }

    @Test
    void aRestartThatFindsNothingNewSaysSoOnceAndLaterQuietImportsStayQuiet() {
        ImportSummary nothingNew = new ImportSummary(0, 0, 0, 0, 0,
                List.of(skip("a.jsonl", "unchanged"), skip("b.jsonl", "unchanged"), skip("c.jsonl", "unchanged")));
        importOnce(0, nothingNew);
        assertThat(printed()).isEqualTo("imported nothing new (3 transcript files unchanged)" + System.lineSeparator());
        importOnce(0, nothingNew);
        assertThat(printed()).as("the importer polls every few seconds: only the first import reports nothing new").isEmpty();
        ImportSummary one = new ImportSummary(1, 0, 2, 2, 1, List.of(skip("a.jsonl", "unchanged"), skip("b.jsonl", "unchanged")));
        importOnce(1, one);
        assertThat(printed()).isEqualTo("imported 1 session, 0 runs, 2 engine events from 1 file; 2 files skipped (2 unchanged)"
                + System.lineSeparator());
    }

    /**
     * The summary and its store lines go out in one write, so that nothing another thread prints (up's Ready block) lands
     * between them.
     */
    @Test
    void theFirstImportsSummaryAndStoreLinesAreOneWrite() {
        List<String> writes = new java.util.ArrayList<>();
        java.io.OutputStream recording = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                writes.add(String.valueOf((char) b));
            }

            @Override
            public void write(byte[] b, int off, int len) {
                writes.add(new String(b, off, len, StandardCharsets.UTF_8));
            }
        };
        ImportProgressBar bar = new ImportProgressBar(new PrintStream(recording, true, StandardCharsets.UTF_8));
        bar.onStart(0, 0);
        writes.clear();
        bar.onDone(new ImportSummary(1, 1, 1, 1, 1, List.of(), 0, 0, List.of(
                new ImportSummary.Store("claude-code", Path.of("/home/ana/.claude/projects"), true, 1, 1, 1, 1, 0, null),
                new ImportSummary.Store("qwen-code", Path.of("/home/ana/.qwen"), false, 0, 0, 0, 0, 0, null))));
        assertThat(writes).singleElement().asString().startsWith("imported 1 session").contains("  Claude Code (")
                .contains("  Qwen Code (");
    }

    @Test
    void theFirstImportNamesEveryAgentStoreWhatItImportedFromEachAndWhyOneIsUnreadable() {
        ImportSummary first = new ImportSummary(3, 9, 9, 30, 3, List.of(), 0, 0, List.of(
                new ImportSummary.Store("claude-code", Path.of("/home/ana/.claude/projects"), true, 2, 2, 2, 7, 0, null),
                new ImportSummary.Store("gemini-cli", Path.of("/home/ana/.gemini"), true, 1, 1, 1, 2, 0, null),
                new ImportSummary.Store("opencode", Path.of("/home/ana/.local/share/opencode"), true, 0, 0, 0, 0, 0,
                        "/home/ana/.local/share/opencode/opencode.db: [SQLITE_NOTADB] file is not a database"),
                new ImportSummary.Store("qwen-code", Path.of("/home/ana/.qwen"), false, 0, 0, 0, 0, 0, null)));
        importOnce(3, first);
        String nl = System.lineSeparator();
        assertThat(printed()).isEqualTo("imported 3 sessions, 9 runs, 9 engine events from 3 files" + nl
                + "  Claude Code (/home/ana/.claude/projects): 2 sessions, imported 2 (7 new runs)" + nl
                + "  Gemini CLI (/home/ana/.gemini): 1 session, imported 1 (2 new runs)" + nl
                + "  OpenCode (/home/ana/.local/share/opencode): unreadable: /home/ana/.local/share/opencode/opencode.db:"
                + " [SQLITE_NOTADB] file is not a database" + nl
                + "  Qwen Code (/home/ana/.qwen): not found" + nl);
        // the 30-minute rule's closes say what happened, not "imported 30 sessions, 0 runs ... from 0 files"
        importOnce(0, new ImportSummary(0, 0, 0, 30, 0, List.of(), 30, 0, List.of()));
        assertThat(printed()).isEqualTo("30 runs marked done after 30 minutes without change" + nl);
    }

    @Test
    void nothingNewNamesTheOtherFilesLeftOutAndAStoreWithNoTranscripts() {
        importOnce(0, new ImportSummary(0, 0, 0, 0, 0, List.of(skip("a.jsonl", "unchanged"), skip("agent-1.jsonl", "sub-agent transcript"))));
        assertThat(printed()).isEqualTo("imported nothing new (1 transcript file unchanged); 1 file skipped (1 sub-agent transcript)"
                + System.lineSeparator());
        ImportProgressBar fresh = new ImportProgressBar(new PrintStream(buf, true, StandardCharsets.UTF_8));
        fresh.onStart(0, 0);
        fresh.onDone(new ImportSummary(0, 0, 0, 0, 0, List.of()));
        assertThat(printed()).isEqualTo("imported nothing new (no transcript files found)" + System.lineSeparator());
        assertThat(ImportProgressBar.line(new ImportSummary(0, 0, 0, 0, 0, List.of(skip("x.jsonl", "unreadable: permission denied")))))
                .isEqualTo("imported nothing new; 1 file skipped (1 unreadable)");
    }

    @Test
    void aLaterImportThatSentEventsWithoutReadingAFileStillSaysWhatItDid() {
        ImportSummary nothingNew = new ImportSummary(0, 0, 0, 0, 0, List.of(skip("a.jsonl", "unchanged")));
        importOnce(0, nothingNew);
        printed();
        // 30 minutes on, a poll marks a session whose transcript stayed untouched idle: one event, no file read
        importOnce(0, new ImportSummary(0, 0, 0, 1, 0, List.of(skip("a.jsonl", "unchanged")), 1, 0, List.of()));
        assertThat(printed()).isEqualTo("1 run marked done after 30 minutes without change" + System.lineSeparator());
    }

    @Test
    void anImportOfTouchedTranscriptsSaysWhatHappenedNotThatItImportedThem() {
        // 5 files touched (their time changed, nothing written), 3 of them with a run open for over 30 minutes
        importOnce(5, new ImportSummary(0, 0, 0, 3, 5, List.of(skip("a.jsonl", "unchanged")), 3, 0, List.of()));
        assertThat(printed()).isEqualTo("5 files checked, nothing new; 3 runs marked done after 30 minutes without change"
                + System.lineSeparator());
    }
}
