package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A deletion in each agent's own store, on the files of {@code ../shared/data/agent-stores} laid out in a
 * temporary home (with a neighbour of the same agent beside each): a listing of the home before and after (and
 * for OpenCode's database a dump of every row) shows that exactly the session's own files or rows are gone.
 */
class AgentStoreDeleterNewAgentsTest {
    @TempDir
    Path tmp;
    Stores stores;
    AgentStoreDeleter deleter;

    @BeforeEach
    void setUp() {
        stores = Stores.empty(tmp);
        stores.copyAgentStores(SharedData.require("data/agent-stores"));
        deleter = new AgentStoreDeleter(stores.agentStores());
    }

    /** Every file and folder under the home, relative to it. */
    Set<String> listing() {
        return listing(stores.home);
    }

    /** Every file and folder under {@code root}, relative to it. */
    static Set<String> listing(Path root) {
        try (Stream<Path> all = Files.walk(root)) {
            return new TreeSet<>(all.map(p -> root.relativize(p).toString()).filter(s -> !s.isEmpty()).toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Set<String> minus(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }

    static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void geminiDeletesTheChatWhoseSessionIdItIsAndItsSubAgentsNotAChatWithTheSameShortId() {
        Path chats = stores.home.resolve(".gemini/tmp/907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f/chats");
        write(chats.resolve("session-2026-01-17T09-00-37b7abef.jsonl"), "{\"sessionId\":\"37b7abef-0000-0000-0000-000000000000\",\"projectHash\":\"x\"}\n");
        write(chats.resolve("37b7abef-713d-4522-85f0-8ff15a4e6d17/helper.jsonl"), "{\"sessionId\":\"helper\",\"kind\":\"subagent\"}\n");
        Set<String> before = listing();

        AgentStoreDeleter.Result r = deleter.delete("gemini-cli", List.of("37b7abef-713d-4522-85f0-8ff15a4e6d17"));

        assertThat(r.ok()).isTrue();
        String dir = ".gemini/tmp/907f20644716c92a8309a8b7c1ceec79d422233ff220b7fdb8772b360bd8273f/chats/";
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(
                dir + "session-2026-01-16T11-01-37b7abef.json",
                dir + "37b7abef-713d-4522-85f0-8ff15a4e6d17",
                dir + "37b7abef-713d-4522-85f0-8ff15a4e6d17/helper.jsonl");
        assertThat(minus(listing(), before)).isEmpty();
        assertThat(deleter.delete("gemini-cli", List.of("37b7abef-713d-4522-85f0-8ff15a4e6d17")))
                .satisfies(again -> assertThat(again.ok()).isTrue()).satisfies(again -> assertThat(again.removedPaths()).isEmpty());
    }

    @Test
    void copilotDeletesTheSessionStateFolder() {
        write(stores.home.resolve(".copilot/session-state/11111111-2222-3333-4444-555555555555/events.jsonl"), "{}\n");
        write(stores.home.resolve(".copilot/session-state/99999999-2222-3333-4444-555555555555.jsonl"), "{}\n");
        Set<String> before = listing();

        assertThat(deleter.delete("copilot", List.of("07c40cd0-ff51-4d6e-bdcd-ac2f90877203")).ok()).isTrue();

        String dir = ".copilot/session-state/07c40cd0-ff51-4d6e-bdcd-ac2f90877203";
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(dir, dir + "/events.jsonl", dir + "/workspace.yaml");

        Set<String> flat = listing();
        assertThat(deleter.delete("copilot", List.of("99999999-2222-3333-4444-555555555555")).ok()).isTrue();
        assertThat(minus(flat, listing())).containsExactly(".copilot/session-state/99999999-2222-3333-4444-555555555555.jsonl");
    }

    /** Every row of every table of the database, as {@code table|col=value|...}. */
    static Set<String> dump(Path db) {
        Set<String> rows = new TreeSet<>();
        try (Connection c = AgentDiscovery.openReadOnly(db); Statement st = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            for (String t : tables) {
                try (ResultSet rs = st.executeQuery("SELECT * FROM " + t)) {
                    ResultSetMetaData md = rs.getMetaData();
                    while (rs.next()) {
                        StringBuilder b = new StringBuilder(t);
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            b.append('|').append(md.getColumnName(i)).append('=').append(rs.getString(i));
                        }
                        rows.add(b.toString());
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return rows;
    }

    @Test
    void openCodeDeletesTheRowsOfTheSessionAndItsChildInOneTransactionAndNothingElse() {
        Path db = stores.home.resolve(".local/share/opencode/opencode.db");
        Set<String> before = dump(db);
        Set<String> files = listing();

        AgentStoreDeleter.Result r = deleter.delete("opencode", List.of("ses_main001"));

        assertThat(r.ok()).as(r.error()).isTrue();
        Set<String> gone = minus(before, dump(db));
        assertThat(gone).allSatisfy(row -> assertThat(row).containsAnyOf("session_id=ses_main001", "session_id=ses_sub001",
                "session|id=ses_main001|", "session|id=ses_sub001|"));
        assertThat(before.stream().filter(row -> row.contains("ses_main001") || row.contains("ses_sub001"))).containsExactlyInAnyOrderElementsOf(gone);
        // 2 sessions, 7 messages (5 of the main session, 2 of the child), their 11 + 2 parts
        assertThat(gone.stream().filter(row -> row.startsWith("session|"))).hasSize(2);
        assertThat(gone.stream().filter(row -> row.startsWith("message|"))).hasSize(7);
        assertThat(gone.stream().filter(row -> row.startsWith("part|"))).hasSize(13);
        assertThat(dump(db)).anySatisfy(row -> assertThat(row).startsWith("session|id=ses_err001|"));
        assertThat(r.removedPaths()).containsExactly(db.toAbsolutePath() + "#session/ses_main001", db.toAbsolutePath() + "#session/ses_sub001");
        // the database file stays (the agent's other sessions are in it); no other file changed
        assertThat(minus(files, listing())).isEmpty();
    }

    @Test
    void openCodeStorageDeletesTheSessionFileItsMessagesAndTheirParts() {
        Set<String> before = listing();

        assertThat(deleter.delete("opencode", List.of("s_stage0_small")).ok()).isTrue();

        String s = ".local/share/opencode/storage/";
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(
                s + "session/proj_test/ses_s_stage0_small.json",
                s + "message/s_stage0_small", s + "message/s_stage0_small/msg_0001.json", s + "message/s_stage0_small/msg_0002.json",
                s + "part/m_user_small", s + "part/m_user_small/001.json",
                s + "part/m_assistant_small", s + "part/m_assistant_small/001.json", s + "part/m_assistant_small/002.json");
    }

    @Test
    void qwenDeletesTheChatFile() {
        Set<String> before = listing();

        assertThat(deleter.delete("qwen-code", List.of("019f0000-0000-7000-8000-000000000001")).ok()).isTrue();

        assertThat(minus(before, listing())).containsExactly(
                ".qwen/projects/-tmp-as-qwen-fixture-project/chats/019f0000-0000-7000-8000-000000000001.jsonl");
    }

    @Test
    void cursorDeletesTheTranscriptFolderWithItsSubAgentsAndTheChatsStoreDb() {
        write(stores.home.resolve(".cursor/projects/tmp/agent-transcripts/ffffffff-e5f6-7890-abcd-ef1234567890/ffffffff-e5f6-7890-abcd-ef1234567890.jsonl"), "{}\n");
        Set<String> before = listing();

        assertThat(deleter.delete("cursor", List.of("a1b2c3d4-e5f6-7890-abcd-ef1234567890")).ok()).isTrue();

        String t = ".cursor/projects/tmp/agent-transcripts/a1b2c3d4-e5f6-7890-abcd-ef1234567890";
        String c = ".cursor/chats/d42b9c57d24cf5db3bd8d332dc35437f/a1b2c3d4-e5f6-7890-abcd-ef1234567890";
        assertThat(minus(before, listing())).containsExactlyInAnyOrder(
                t, t + "/a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl", t + "/subagents",
                t + "/subagents/b7e3c1d2-4f5a-4b6c-8d9e-0a1b2c3d4e5f.jsonl", c, c + "/store.db");
    }
}
