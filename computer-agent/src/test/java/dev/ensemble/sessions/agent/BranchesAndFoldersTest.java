package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.ensemble.sessions.agent.AgentDetailsTest.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Qwen Code chat whose person went back and edited an earlier message (a {@code uuid}/{@code parentUuid} branch),
 * and a Gemini CLI chat whose project folder no known path hashes to.
 */
class BranchesAndFoldersTest {
    static final String T = "2026-03-01T10:00:0";
    static final String QWEN = "019f0000-0000-7000-8000-0000000000aa";

    @TempDir
    Path tmp;

    static String qwen(String uuid, String parent, int second, String type, String subtype, String parts) {
        return "{\"uuid\":\"" + uuid + "\",\"parentUuid\":" + (parent == null ? "null" : "\"" + parent + "\"")
                + ",\"sessionId\":\"" + QWEN + "\",\"timestamp\":\"" + T + second + "Z\",\"type\":\"" + type + "\""
                + (subtype == null ? "" : ",\"subtype\":\"" + subtype + "\"") + ",\"cwd\":\"/home/ana/q\","
                + "\"model\":\"qwen3-coder-plus\",\"message\":{\"role\":\"" + ("assistant".equals(type) ? "model" : type)
                + "\",\"parts\":" + parts + "}}";
    }

    static String text(String t) {
        return "[{\"text\":\"" + t + "\"}]";
    }

    @Test
    void aQwenAnswerOnABranchThePersonLeftByEditingTheirPromptIsNoReportAndItsRunIsDone() {
        Stores stores = Stores.empty(tmp);
        write(stores.home.resolve(".qwen/projects/-home-ana-q/chats/" + QWEN + ".jsonl"),
                qwen("u1", null, 1, "user", null, text("first prompt")),
                qwen("a1", "u1", 2, "assistant", null, text("Answer one.")),
                qwen("u2", "a1", 3, "user", null, text("second prompt")),
                qwen("a2", "u2", 4, "assistant", null, text("Discarded answer.")),
                // the person went back and edited the second prompt: the new one hangs off the first answer
                qwen("u3", "a1", 5, "user", null, text("second prompt, edited")),
                qwen("a3", "u3", 6, "assistant", null, text("Kept answer.")));

        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(QWEN);
        assertThat(claims).extracting(c -> c.getTask().getTitle())
                .containsExactly("first prompt", "second prompt", "second prompt, edited");
        // the left branch's run is done, and its discarded answer is no report
        RunStatusChanged left = got.done(claims.get(1).getRunId());
        assertThat(left.getReportSummary()).isNull();
        assertThat(got.payloads(RunStatusChanged.class)).extracting(RunStatusChanged::getReportSummary)
                .doesNotContain("Discarded answer.");
        assertThat(got.done(claims.get(0).getRunId()).getReportSummary()).isEqualTo("Answer one.");
        // the run on the branch the chat goes on with stays open until the 30-minute rule
        assertThat(got.statuses(claims.get(2).getRunId())).extracting(RunStatusChanged::getStatus)
                .containsExactly(RunStatus.WORKING);
    }

    @Test
    void aQwenRewindWithinATurnDropsTheAnswerItTookBackFromTheReport() {
        Stores stores = Stores.empty(tmp);
        write(stores.home.resolve(".qwen/projects/-home-ana-q/chats/" + QWEN + ".jsonl"),
                qwen("u1", null, 1, "user", null, text("first prompt")),
                qwen("a1", "u1", 2, "assistant", null, text("Discarded answer.")),
                // rewound to the prompt, and the answer given again
                "{\"uuid\":\"r1\",\"parentUuid\":\"u1\",\"sessionId\":\"" + QWEN + "\",\"timestamp\":\"" + T + "3Z\","
                        + "\"type\":\"system\",\"subtype\":\"rewind\",\"systemPayload\":{\"targetUuid\":\"u1\"}}",
                qwen("u2", "r1", 4, "user", null, text("second prompt")));

        Imported got = stores.importStores(stores.importer());

        List<RunClaimed> claims = got.claims(QWEN);
        assertThat(claims).hasSize(2);
        assertThat(got.done(claims.get(0).getRunId()).getReportSummary()).isNull();
    }

    @Test
    void aGeminiChatWhoseProjectHashNoKnownPathHasTakesTheFolderItsToolsWorkedIn() {
        Stores stores = Stores.empty(tmp);
        Path chats = stores.home.resolve(".gemini/tmp/0123abcd/chats");
        write(chats.resolve("session-2026-03-01T10-00-bbbbbbbb.jsonl"),
                "{\"sessionId\":\"bbbbbbbb-1\",\"projectHash\":\"0123abcd\",\"startTime\":\"" + T + "0Z\",\"kind\":\"main\"}",
                "{\"id\":\"u1\",\"timestamp\":\"" + T + "1Z\",\"type\":\"user\",\"content\":[{\"text\":\"fix the tests\"}]}",
                "{\"id\":\"g1\",\"timestamp\":\"" + T + "2Z\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"gemini-2.5-pro\","
                        + "\"toolCalls\":[{\"id\":\"t1\",\"name\":\"read_file\",\"args\":{\"absolute_path\":\"/home/ana/app/src/a.ts\"}},"
                        + "{\"id\":\"t2\",\"name\":\"replace\",\"args\":{\"file_path\":\"/home/ana/app/test/a.test.ts\"}}]}");
        write(stores.home.resolve(".gemini/tmp/4567cdef/chats/session-2026-03-01T10-00-cccccccc.jsonl"),
                "{\"sessionId\":\"cccccccc-1\",\"projectHash\":\"4567cdef\",\"startTime\":\"" + T + "0Z\",\"kind\":\"main\"}",
                "{\"id\":\"u1\",\"timestamp\":\"" + T + "1Z\",\"type\":\"user\",\"content\":[{\"text\":\"compare\"}]}",
                "{\"id\":\"g1\",\"timestamp\":\"" + T + "2Z\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"gemini-2.5-pro\","
                        + "\"toolCalls\":[{\"id\":\"t1\",\"name\":\"read_file\",\"args\":{\"absolute_path\":\"/etc/hosts\"}},"
                        + "{\"id\":\"t2\",\"name\":\"read_file\",\"args\":{\"absolute_path\":\"/home/ana/notes.md\"}}]}");

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims("bbbbbbbb-1")).singleElement().satisfies(c -> assertThat(c.getFolder()).isEqualTo("/home/ana/app"));
        // paths with no common folder but the root: unknown
        assertThat(got.claims("cccccccc-1")).singleElement().satisfies(c -> assertThat(c.getFolder()).isNull());
    }

    /**
     * The folder is looked for again when tool calls come in a later read: a prompt read before its tools ran is
     * claimed without a folder, the next one in the folder the tools named since.
     */
    @Test
    void aGeminiChatsFolderFromToolsCalledAfterAnEarlierReadReachesTheNextRun() throws Exception {
        Stores stores = Stores.empty(tmp);
        StoreImporter importer = stores.importer();
        Path chat = stores.home.resolve(".gemini/tmp/0123abcd/chats/session-2026-03-01T10-00-dddddddd.jsonl");
        write(chat,
                "{\"sessionId\":\"dddddddd-1\",\"projectHash\":\"0123abcd\",\"startTime\":\"" + T + "0Z\",\"kind\":\"main\"}",
                "{\"id\":\"u1\",\"timestamp\":\"" + T + "1Z\",\"type\":\"user\",\"content\":[{\"text\":\"look around\"}]}",
                "{\"id\":\"g1\",\"timestamp\":\"" + T + "2Z\",\"type\":\"gemini\",\"content\":\"Hello.\",\"model\":\"gemini-2.5-pro\"}");
        assertThat(stores.importStores(importer).claims("dddddddd-1")).singleElement()
                .satisfies(c -> assertThat(c.getFolder()).isNull());

        // a reply with no tool calls: still unknown
        java.nio.file.Files.writeString(chat, "{\"id\":\"g2\",\"timestamp\":\"" + T + "3Z\",\"type\":\"gemini\","
                + "\"content\":\"Anything else?\",\"model\":\"gemini-2.5-pro\"}\n", java.nio.file.StandardOpenOption.APPEND);
        Stores.touch(chat, Stores.NOW.minusSeconds(50));
        stores.importStores(importer);

        java.nio.file.Files.writeString(chat, String.join("\n",
                "{\"id\":\"g3\",\"timestamp\":\"" + T + "4Z\",\"type\":\"gemini\",\"content\":\"\",\"model\":\"gemini-2.5-pro\","
                        + "\"toolCalls\":[{\"id\":\"t1\",\"name\":\"read_file\",\"args\":{\"absolute_path\":\"/home/ana/app/src/a.ts\"}},"
                        + "{\"id\":\"t2\",\"name\":\"read_file\",\"args\":{\"absolute_path\":\"/home/ana/app/b.ts\"}}]}",
                "{\"id\":\"u2\",\"timestamp\":\"" + T + "5Z\",\"type\":\"user\",\"content\":[{\"text\":\"now fix it\"}]}",
                "{\"id\":\"g4\",\"timestamp\":\"" + T + "6Z\",\"type\":\"gemini\",\"content\":\"Fixed.\",\"model\":\"gemini-2.5-pro\"}",
                ""), java.nio.file.StandardOpenOption.APPEND);
        Stores.touch(chat, Stores.NOW.minusSeconds(40));
        assertThat(stores.importStores(importer).claims("dddddddd-1")).singleElement()
                .satisfies(c -> assertThat(c.getFolder()).isEqualTo("/home/ana/app"));
    }

    /** A branch left after the import read part of the chat: the open turn's records are known from the state. */
    @Test
    void aQwenEditReadInALaterImportStillLeavesTheTurnItBranchedFrom() throws Exception {
        Stores stores = Stores.empty(tmp);
        StoreImporter importer = stores.importer();
        Path chat = stores.home.resolve(".qwen/projects/-home-ana-q/chats/" + QWEN + ".jsonl");
        write(chat,
                qwen("u1", null, 1, "user", null, text("first prompt")),
                qwen("a1", "u1", 2, "assistant", null, text("Answer one.")),
                qwen("u2", "a1", 3, "user", null, text("second prompt")),
                qwen("a2", "u2", 4, "assistant", null, text("Discarded answer.")));
        Imported first = stores.importStores(importer);
        String left = first.claims(QWEN).get(1).getRunId();

        java.nio.file.Files.writeString(chat, String.join("\n",
                qwen("u3", "a1", 5, "user", null, text("second prompt, edited")),
                qwen("a3", "u3", 6, "assistant", null, text("Kept answer.")), ""), java.nio.file.StandardOpenOption.APPEND);
        Stores.touch(chat, Stores.NOW.minusSeconds(30));
        Imported second = stores.importStores(importer);

        assertThat(second.claims(QWEN)).extracting(c -> c.getTask().getTitle()).containsExactly("second prompt, edited");
        assertThat(second.done(left).getReportSummary()).isNull();
    }

    /** A path beginning with a Windows drive is absolute: not taken as relative to the folder, nor a tool's relative path. */
    @Test
    void aWindowsDriveBeginsAnAbsolutePath() {
        assertThat(List.of("C:\\src\\app", "d:/work", "Z:\\")).allMatch(SessionParser::hasDrive);
        assertThat(List.of("C:", "C:app", "1:/x", "src/C:/x", "/c/x", "\\\\server\\share", "")).noneMatch(SessionParser::hasDrive);
    }
}
