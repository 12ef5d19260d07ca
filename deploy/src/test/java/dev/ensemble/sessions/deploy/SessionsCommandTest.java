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

        JsonNode gone = DataDir.JSON.readTree("{\"id\": \"s\", \"agent\": \"some-agent\", \"agentSessionId\": \"9\", \"folder\": \"/w\","
                + " \"status\": \"gone\", \"resumable\": false, \"fill\": 0.5, \"contextUsed\": 100000, \"contextSize\": 200000}");
        assertThat(ShowCommand.text(gone, ZoneOffset.UTC)).contains("Fill          50% (100,000 of 200,000 tokens)" + NL)
                .endsWith(NL + "Not resumable (its agent's transcript is gone from the computer); its command would be: resume some-agent session 9 in /w" + NL);
        JsonNode task = DataDir.JSON.readTree("{\"id\": \"run-1\", \"agent\": \"codex\", \"status\": \"working\", \"resumable\": false}");
        assertThat(ShowCommand.text(task, ZoneOffset.UTC)).endsWith(NL + "Not resumable in its agent: its agent session id is not known (it is not resumable)" + NL);
        assertThat(ShowCommand.duration(DataDir.JSON.getNodeFactory().numberNode(7_500_000L))).isEqualTo("2h 05m");
        assertThat(ShowCommand.duration(DataDir.JSON.getNodeFactory().numberNode(42_400L))).isEqualTo("42s");
    }

    /**
     * Against a stand-in for the API that holds 1,200 sessions (600 Codex, 600 Claude Code), pages them with {@code limit}
     * and {@code cursor} ({@code next} until the last page) and filters {@code agent}, and records the queries: every
     * session is printed, page after page; {@code --agent}, {@code --computer}, {@code --q} and {@code --limit} are asked
     * of the API; a refused token is named with its file.
     */
    @Test
    void everyPageIsFollowedAndTheFiltersAreTheApis(@TempDir Path dir) throws Exception {
        java.util.List<String> queries = new java.util.concurrent.CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/agent/sessions", x -> {
            String query = x.getRequestURI().getRawQuery();
            queries.add(query);
            java.util.Map<String, String> p = new java.util.HashMap<>();
            for (String kv : query.split("&")) {
                p.put(kv.substring(0, kv.indexOf('=')), java.net.URLDecoder.decode(kv.substring(kv.indexOf('=') + 1), java.nio.charset.StandardCharsets.UTF_8));
            }
            boolean known = "Bearer t-1".equals(x.getRequestHeaders().getFirst("Authorization"));
            StringBuilder body = new StringBuilder(known ? "{\"sessions\": [" : "{\"error\": \"unauthorized\", \"message\": \"this token is not known\"}");
            int limit = Integer.parseInt(p.get("limit"));
            int n = 0;
            int i = p.containsKey("cursor") ? Integer.parseInt(p.get("cursor")) : 0;
            for (; known && i < 1200 && n < limit; i++) {
                String agent = i % 2 == 0 ? "codex" : "claude-code";
                if (p.containsKey("agent") && !p.get("agent").equals(agent)) continue;
                body.append(n++ == 0 ? "" : ",").append("{\"id\": \"s-").append(i).append("\", \"agent\": \"")
                        .append(agent).append("\", \"status\": \"idle\", \"runs\": 1}");
            }
            body.append(known ? "]" + (i < 1200 ? ", \"next\": \"" + i + "\"" : "") + "}" : "");
            byte[] bytes = body.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(known ? 200 : 401, bytes.length);
            x.getResponseBody().write(bytes);
            x.close();
        });
        server.start();
        try {
            new DataDir(dir).writeEndpoints("http://127.0.0.1:" + server.getAddress().getPort(), "127.0.0.1:1");
            java.nio.file.Files.writeString(dir.resolve("token"), "t-1\n");
            ChooseCommandTest.Run all = ChooseCommandTest.cli("sessions", "--data-dir", dir.toString(), "--json");
            JsonNode printed = DataDir.JSON.readTree(all.out()).path("sessions");
            assertThat(printed).hasSize(1200);
            assertThat(printed.get(1199).path("id").asText()).isEqualTo("s-1199");
            assertThat(all.err()).isEmpty();
            assertThat(queries).containsExactly("limit=500", "limit=500&cursor=500", "limit=500&cursor=1000");

            queries.clear();
            ChooseCommandTest.Run codex = ChooseCommandTest.cli("sessions", "--data-dir", dir.toString(), "--agent", "codex",
                    "--limit", "3", "--q", "hello world", "--computer", "pc 1");
            assertThat(codex.code()).as(codex.err()).isZero();
            assertThat(codex.out()).contains("│ s-0 ", "│ s-2 ", "│ s-4 ").doesNotContain("│ s-1 ", "│ s-6 ", "claude-code");
            assertThat(codex.err()).isEmpty();
            assertThat(queries).containsExactly("limit=3&q=hello+world&agent=codex&computer=pc+1");

            queries.clear();
            ChooseCommandTest.Run some = ChooseCommandTest.cli("sessions", "--data-dir", dir.toString(), "--limit", "700", "--json");
            assertThat(DataDir.JSON.readTree(some.out()).path("sessions")).hasSize(700);
            assertThat(queries).containsExactly("limit=500", "limit=200&cursor=500");

            java.nio.file.Files.writeString(dir.resolve("token"), "t-old\n");
            ChooseCommandTest.Run refused = ChooseCommandTest.cli("sessions", "--data-dir", dir.toString());
            assertThat(refused.code()).isEqualTo(1);
            assertThat(refused.err()).isEqualTo("error: the system at http://127.0.0.1:" + server.getAddress().getPort()
                    + " refused the token in " + dir.resolve("token") + " (this token is not known)" + NL);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aSearchShowsWhatMatched() throws Exception {
        JsonNode found = DataDir.JSON.readTree("""
                [{"id": "run-7", "agent": "codex", "status": "idle", "runs": 1,
                  "snippet": "We looked at many things before the checkout [[runs]] faster than before, and then more", "snippetField": "report"},
                 {"id": "run-8", "agent": "codex", "status": "idle", "runs": 1}]""");
        String table = SessionsCommand.table(found, ZoneOffset.UTC);
        assertThat(table.split(NL)[1]).endsWith("│ Matched                                          │");
        assertThat(table).contains("│ …e checkout [[runs]] faster than before, and th… │");
        assertThat(SessionsCommand.table(found.get(1).isNull() ? found : DataDir.JSON.readTree("[" + found.get(1) + "]"), ZoneOffset.UTC))
                .doesNotContain("Matched");
    }

    /**
     * {@code show} with the start of an id, against a stand-in for the API whose search ({@code q=}) matches no part
     * of an id: the most recent sessions are looked through then; several matches are one line naming them, exit 1.
     */
    @Test
    void showFindsTheOneSessionAnIdStartsWith(@TempDir Path dir) throws Exception {
        java.util.List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/agent/sessions", x -> {
            String path = x.getRequestURI().getRawPath();
            String query = x.getRequestURI().getRawQuery();
            asked.add(path + (query == null ? "" : "?" + query));
            int code = 200;
            StringBuilder body = new StringBuilder();
            if (path.equals("/api/agent/sessions/s-499")) {
                body.append("{\"id\": \"s-499\", \"agent\": \"codex\", \"agentSessionId\": \"uuid-499-x\", \"folder\": \"/w\","
                        + " \"status\": \"idle\", \"resumable\": true, \"runs\": 1}");
            } else if (!path.equals("/api/agent/sessions")) {
                code = 404;
                body.append("{\"error\": \"not_found\", \"message\": \"no session in your account\"}");
            } else {
                body.append("{\"sessions\": [");
                for (int i = 0; !query.contains("q=") && i < 500; i++) {
                    body.append(i == 0 ? "" : ",").append("{\"id\": \"s-").append(i).append("\", \"agentSessionId\": \"uuid-")
                            .append(i).append("-x\", \"agent\": \"codex\", \"status\": \"idle\", \"runs\": 1}");
                }
                body.append("]}");
            }
            byte[] bytes = body.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            x.sendResponseHeaders(code, bytes.length);
            x.getResponseBody().write(bytes);
            x.close();
        });
        server.start();
        try {
            new DataDir(dir).writeEndpoints("http://127.0.0.1:" + server.getAddress().getPort(), "127.0.0.1:1");
            java.nio.file.Files.writeString(dir.resolve("token"), "t-1\n");
            ChooseCommandTest.Run one = ChooseCommandTest.cli("show", "uuid-499", "--data-dir", dir.toString());
            assertThat(one.code()).as(one.err()).isZero();
            assertThat(one.out()).startsWith("Session       s-499" + NL).endsWith(NL + "Resume it: cd /w && codex resume uuid-499-x" + NL);
            assertThat(asked).containsExactly("/api/agent/sessions/uuid-499", "/api/agent/sessions?limit=500&q=uuid-499",
                    "/api/agent/sessions?limit=500", "/api/agent/sessions/s-499");

            ChooseCommandTest.Run several = ChooseCommandTest.cli("show", "s-49", "--data-dir", dir.toString());
            assertThat(several.code()).isEqualTo(1);
            assertThat(several.err()).isEqualTo("error: 's-49' starts the ids of 11 sessions (s-49, s-490, s-491, s-492, s-493, …):"
                    + " give more of the id" + NL);
            assertThat(several.out()).isEmpty();
        } finally {
            server.stop(0);
        }
    }

    /** An unknown status is a usage error (exit 2) before anything is asked, like the other bad options. */
    @Test
    void anUnknownStatusIsAUsageError(@TempDir Path dir) {
        ChooseCommandTest.Run bad = ChooseCommandTest.cli("sessions", "--status", "foo", "--data-dir", dir.toString());
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).startsWith("--status must be one of working, waiting, queued, idle, gone, not 'foo'");
    }

    /** A misspelt option is named with what was meant and where the help is, not followed by the whole usage. */
    @Test
    void aMisspeltOptionSaysWhatWasMeantInAFewLines(@TempDir Path dir) {
        ChooseCommandTest.Run bad = ChooseCommandTest.cli("sessions", "--stauts", "idle", "--data-dir", dir.toString());
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).startsWith("Unknown options: '--stauts', 'idle'" + NL + "Possible solutions: --status" + NL)
                .endsWith("See 'ensemble-sessions sessions --help' for its options." + NL).doesNotContain("Usage:");
        assertThat(bad.err().lines().count()).as(bad.err()).isLessThanOrEqualTo(4);
        assertThat(bad.out()).isEmpty();
    }

    /** A misspelt option that leaves a required one missing is named first, with what was meant. */
    @Test
    void aMisspeltRequiredOptionIsNamedBeforeTheMissingOne() {
        ChooseCommandTest.Run bad = ChooseCommandTest.cli("recalibrate", "--confg", "x.json");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).isEqualTo("Unknown options: '--confg', 'x.json'" + NL + "Possible solutions: --config" + NL
                + "Missing required option: '--config=<config>'" + NL + "See 'ensemble-sessions recalibrate --help' for its options." + NL);
    }

    /** Every command's --version prints the program's version, as its help says it does. */
    @Test
    void eachCommandsVersionOptionPrintsTheVersion() {
        for (String[] args : new String[][]{{"--version"}, {"sessions", "--version"}, {"run", "projector", "--version"}}) {
            ChooseCommandTest.Run v = ChooseCommandTest.cli(args);
            assertThat(v.code()).as(String.join(" ", args)).isZero();
            assertThat(v.out()).as(String.join(" ", args)).isEqualTo("ensemble-sessions 0.1.0" + NL);
        }
    }

    /** A value refused that came from an ENSEMBLE_ variable, not the command line, says so. */
    @Test
    void aRefusedValueFromTheEnvironmentNamesItsVariable(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("run.log");
        Process p = ServicesAloneTest.start(log, java.util.Map.of("ENSEMBLE_PARTITIONS", "abc"), "projector", "--bootstrap-servers", "x:1");
        assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(java.nio.file.Files.readString(log)).isEqualTo("Invalid value for option '--partitions': 'abc' is not an int" + NL
                + "The value came from the environment variable ENSEMBLE_PARTITIONS." + NL
                + "See 'ensemble-sessions run projector --help' for its options." + NL);
        // refused by a check of ours rather than picocli's conversion
        Path log2 = dir.resolve("run2.log");
        Process p2 = ServicesAloneTest.start(log2, java.util.Map.of("ENSEMBLE_PARTITIONS", "0"), "projector", "--bootstrap-servers", "x:1");
        assertThat(p2.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p2.exitValue()).isEqualTo(2);
        assertThat(java.nio.file.Files.readString(log2)).startsWith("--partitions must be 1 or more, not 0" + NL
                + "The value came from the environment variable ENSEMBLE_PARTITIONS." + NL);
    }

    @Test
    void withNothingRunningBothSaySoInOneLine(@TempDir Path dir) {
        for (String command : new String[]{"sessions", "show"}) {
            ChooseCommandTest.Run none = command.equals("show") ? ChooseCommandTest.cli(command, "x", "--data-dir", dir.toString())
                    : ChooseCommandTest.cli(command, "--data-dir", dir.toString());
            assertThat(none.code()).as(command).isEqualTo(1);
            assertThat(none.err()).as(command).isEqualTo("error: no running system found in " + dir + " (" + dir.resolve("endpoints.json")
                    + " is missing or unreadable): start it with 'deploy/ensemble-sessions up', or name the data folder it runs with"
                    + " (--data-dir, or ENSEMBLE_DATA_DIR)" + NL);
            assertThat(none.out()).isEmpty();
        }
    }
}
