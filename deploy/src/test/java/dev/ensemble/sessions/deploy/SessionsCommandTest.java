package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ensemble-sessions sessions} and {@code show} as a person reads them, from the API's JSON; against a running
 * {@code up} over HTTP they are tested in {@link ChooseCommandTest} (one start of {@code up} for both).
 */
class SessionsCommandTest {
    private static final String NL = System.lineSeparator();

    @Test
    void theListAsATable() throws Exception {
        JsonNode list = DataDir.JSON.readTree("""
                [{"id": "claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257", "agent": "claude-code", "model": "claude-sonnet-4-5-20250929",
                  "computer": "pc-1", "folder": "/tmp/private", "firstTask": {"id": null, "title": "create hello.py, md and js"},
                  "latestTask": {"id": null, "title": "delete js"}, "status": "idle", "resumable": true, "fill": 0.4237,
                  "runs": 3, "deleted": false, "deleting": false, "lastActiveAt": "2026-01-16T11:01:37.120Z"},
                 {"id": "run-7", "agent": "codex", "model": null, "computer": "pc-2",
                  "folder": "/Users/user/repos/a-very-long-folder-name/with/many/levels/app",
                  "firstTask": {"id": "t1", "title": "Build the ranking API\\nwith tests and a benchmark for the list page"},
                  "latestTask": {"id": "t1", "title": "Build the ranking API"}, "status": "gone", "resumable": false, "fill": null,
                  "runs": 12, "deleted": true, "deleting": false, "lastActiveAt": "2026-01-15T09:00:00Z"}]""");
        String table = SessionsCommand.table(list, ZoneOffset.UTC);
        String[] lines = table.split(NL);
        assertThat(lines).hasSize(6);
        assertThat(lines[0]).startsWith("┌─────────").endsWith("┐");
        assertThat(lines[1]).startsWith("│ Session              │ Agent       │ Model ").contains("│ Fill    │ Resumable │ Runs │ Last active      │");
        assertThat(lines[2]).startsWith("├").contains("┼").endsWith("┤");
        assertThat(lines[3]).startsWith("│ claude-code:4c2ddfdc │ claude-code │ claude-sonnet-4-5-2… │ pc-1 ")
                .contains("│ /tmp/private ", "│ create hello.py, md and js ", "│ delete js ", "│ idle ", "│     42% │ yes       │    3 │ 2026-01-16 11:01 │");
        assertThat(lines[4]).startsWith("│ run-7                │ codex ")
                .contains("│ …r-name/with/many/levels/app │")
                .contains("│ Build the ranking API with test… ", "│ gone, deleted ", "│ unknown │ no        │   12 │ 2026-01-15 09:00 │");
        assertThat(lines[5]).startsWith("└").endsWith("┘");
        assertThat(lines).extracting(String::length).containsOnly(lines[0].length());
    }

    @Test
    void aShortIdOnlyWhenUnique() throws Exception {
        JsonNode twins = DataDir.JSON.readTree("""
                [{"id": "codex:019e1625-789d-76c0-80ab-3724b5ddb799", "status": "idle", "runs": 1},
                 {"id": "codex:019e1625-0000-76c0-80ab-3724b5ddb799", "status": "idle", "runs": 1}]""");
        assertThat(SessionsCommand.table(twins, ZoneOffset.UTC))
                .contains("│ codex:019e1625-789d-76c0-80ab-3724b5ddb799 │", "│ codex:019e1625-0000-76c0-80ab-3724b5ddb799 │");
        assertThat(SessionsCommand.shortId("codex:019e1625-789d-76c0-80ab-3724b5ddb799")).isEqualTo("codex:019e1625");
        assertThat(SessionsCommand.shortId("run-7")).isEqualTo("run-7");
    }

    @Test
    void aSessionAsAPersonReadsIt() throws Exception {
        JsonNode s = DataDir.JSON.readTree("""
                {"id": "claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257", "agent": "claude-code", "agentSessionId": "4c2ddfdc-b619-4525-8d03-1950fb1b0257",
                 "model": "claude-sonnet-4-5", "computer": "pc-1", "computers": ["pc-1"], "folder": "/tmp/private", "folders": ["/tmp/private"],
                 "kind": "TERMINAL_CHAT", "status": "idle", "resumable": true, "fill": null, "runs": 2, "deleted": false,
                 "createdAt": "2026-01-16T10:00:00Z", "lastActiveAt": "2026-01-16T11:01:37Z", "filesChanged": ["/tmp/private/hello.py"],
                 "runList": [{"id": "r1", "title": "create hello.py, md and js", "computer": "pc-1", "status": "succeeded",
                              "claimedAt": "2026-01-16T10:00:00Z", "startedAt": "2026-01-16T10:00:01Z", "durationMs": 185000, "tokens": 23456},
                             {"id": "r2", "title": "delete js", "computer": "pc-1", "status": "succeeded",
                              "claimedAt": "2026-01-16T11:00:00Z", "startedAt": null, "durationMs": null, "tokens": null}]}""");
        String text = ShowCommand.text(s, ZoneOffset.UTC);
        assertThat(text).startsWith("Session       claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257" + NL + "Agent         claude-code" + NL)
                .contains(NL + "Fill          unknown" + NL, NL + "Runs          2" + NL, NL + "Last active   2026-01-16 11:01" + NL)
                .contains("│ 1 │ create hello.py, md and js │ pc-1     │ succeeded │ 2026-01-16 10:00 │   3m 05s │ 23,456 │" + NL)
                .contains("│ 2 │ delete js                  │ pc-1     │ succeeded │ 2026-01-16 11:00 │          │        │" + NL)
                .contains(NL + "Files changed (1):" + NL + "  /tmp/private/hello.py" + NL)
                .endsWith(NL + "Resume it: cd /tmp/private && claude --resume 4c2ddfdc-b619-4525-8d03-1950fb1b0257" + NL)
                .doesNotContain("Project", "Continues");

        JsonNode gone = DataDir.JSON.readTree("{\"id\": \"s\", \"agent\": \"grok\", \"agentSessionId\": \"9\", \"folder\": \"/w\","
                + " \"status\": \"gone\", \"resumable\": false, \"fill\": 0.5, \"contextUsed\": 100000, \"contextSize\": 200000}");
        assertThat(ShowCommand.text(gone, ZoneOffset.UTC)).contains("Fill          50% (100,000 of 200,000 tokens)" + NL)
                .endsWith(NL + "Not resumable (its agent's transcript is gone from the computer); its command would be: resume grok session 9 in /w" + NL);
        JsonNode task = DataDir.JSON.readTree("{\"id\": \"run-1\", \"agent\": \"codex\", \"status\": \"working\", \"resumable\": false}");
        assertThat(ShowCommand.text(task, ZoneOffset.UTC)).endsWith(NL + "Not resumable in its agent: its agent session id is not known (it is not resumable)" + NL);
        assertThat(ShowCommand.duration(DataDir.JSON.getNodeFactory().numberNode(7_500_000L))).isEqualTo("2h 05m");
        assertThat(ShowCommand.duration(DataDir.JSON.getNodeFactory().numberNode(42_400L))).isEqualTo("42s");
    }

    @Test
    void withNothingRunningBothSaySoInOneLine(@TempDir Path dir) {
        for (String command : new String[]{"sessions", "show"}) {
            ChooseCommandTest.Run none = command.equals("show") ? ChooseCommandTest.cli(command, "x", "--data-dir", dir.toString())
                    : ChooseCommandTest.cli(command, "--data-dir", dir.toString());
            assertThat(none.code()).as(command).isEqualTo(1);
            assertThat(none.err()).as(command).isEqualTo("error: no running system found in " + dir + " (" + dir.resolve("endpoints.json")
                    + " is missing or unreadable): start it with 'deploy/ensemble-sessions up'" + NL);
            assertThat(none.out()).isEmpty();
        }
    }
}
