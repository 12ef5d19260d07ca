package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.ImportSummary.Skip;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Each unreadable file said once with its reason, and a summary that only repeats them not said again. */
class UnreadableFilesTest {
    private static final Path DB = Path.of("/home/ana/.local/share/opencode/opencode.db");
    private static final Path CHAT = Path.of("/home/ana/.gemini/tmp/p/chats/session-1.json");

    private static ImportSummary summary(int events, int filesRead, Skip... skips) {
        return new ImportSummary(0, 0, 0, events, filesRead, List.of(skips));
    }

    @Test
    void eachUnreadableFileIsSaidOnceWithItsReasonAndTheSameSummaryIsNotRepeated() {
        UnreadableFiles u = new UnreadableFiles();
        Skip db = new Skip(DB, "unreadable: file is not a database");
        Skip chat = new Skip(CHAT, "unreadable: Unexpected end-of-input\n at [Source: (File); line: 1, column: 80]");
        Skip sub = new Skip(Path.of("/home/ana/.claude/projects/p/s/subagents/a.jsonl"), "sub-agent transcript");

        UnreadableFiles.Said first = u.look(summary(0, 1, db, chat, sub), true);
        assertThat(first.lines()).containsExactly(
                CHAT + " is skipped, unreadable: Unexpected end-of-input (tried again at each import; said again only if this changes)",
                DB + " is skipped, unreadable: file is not a database (tried again at each import; said again only if this changes)");
        assertThat(first.summary()).isTrue();

        UnreadableFiles.Said again = u.look(summary(0, 1, db, chat, sub), true); // the reason's first line said, all of it compared
        assertThat(again.lines()).isEmpty();
        assertThat(again.summary()).as("only the same unreadable files again").isFalse();

        assertThat(u.look(summary(3, 2, db, chat), true).summary()).as("events: said").isTrue();
        assertThat(u.look(summary(0, 2, db), false).summary()).as("a file read besides the unreadable one").isTrue();

        UnreadableFiles.Said changed = u.look(summary(0, 1, new Skip(DB, "unreadable: database is locked"), chat), true);
        assertThat(changed.lines()).singleElement().asString().startsWith(DB + " is skipped, unreadable: database is locked");

        u.look(summary(1, 1), true); // both readable again: forgotten
        assertThat(u.look(summary(0, 1, chat), true).lines()).as("unreadable again: said again").hasSize(1);
    }

    @Test
    void anImportOfChangedFilesOnlyForgetsNothing() {
        UnreadableFiles u = new UnreadableFiles();
        Skip db = new Skip(DB, "unreadable: file is not a database");
        u.look(summary(0, 1, db), true);
        u.look(summary(1, 1), false); // the watch's import of another file: the database was not looked at
        assertThat(u.look(summary(0, 1, db), true).lines()).isEmpty();
    }
}
