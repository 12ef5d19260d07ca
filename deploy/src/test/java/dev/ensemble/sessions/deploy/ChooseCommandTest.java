package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ensemble-sessions choose} (issue 20, step 3), and {@code sessions} and {@code show} (issue 19, item 5): against
 * a running {@code up} (a JVM of its own, its embedded broker, every service; started once for all three) that imported
 * the real transcripts of {@code ../shared/data/agent-stores} from a home laid out as on a computer, over HTTP; and
 * what they say when nothing runs.
 */
class ChooseCommandTest {
    /** The Claude Code session of {@code claude/projects/-tmp-private} (PROVENANCE.txt): prompts "create hello.py, md and
     * js", "update py with one liner comment", "delete js"; its tools wrote hello.py, hello.md, hello.js in /tmp/private. */
    static final String HELLO = "4c2ddfdc-b619-4525-8d03-1950fb1b0257";
    /** Worded like that session's later prompts. */
    static final String LATER = "update hello.py with a one-liner comment and delete hello.js";
    static final String UNRELATED = "Translate the settings page into German";

    record Run(int code, String out, String err) {
    }

    static Run choose(String... args) {
        List<String> all = new ArrayList<>(List.of("choose"));
        all.addAll(List.of(args));
        return cli(all.toArray(String[]::new));
    }

    /** Runs the command line {@code args} as {@code main} would, its output and errors caught. */
    static Run cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = EnsembleSessions.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    static JsonNode json(Run r) throws IOException {
        assertThat(r.code()).as(r.err()).isZero();
        return DataDir.JSON.readTree(r.out());
    }

    /**
     * The transcripts imported by {@code up} from a home holding every agent's store: a task worded like the later
     * prompts of one Claude Code session continues it (CONFIDENT) and prints the command that resumes it in its folder;
     * an unrelated task gets NEW; {@code --folder} elsewhere leaves the session out; and with
     * {@code importedSessions.candidates} turned off in the config file the same task gets NEW.
     */
    @Test
    @Timeout(value = 12, unit = TimeUnit.MINUTES)
    void chooseAgainstARunningUpOnTheSharedAgentStores(@TempDir Path dir) throws Exception {
        Path stores = SharedData.require("data/agent-stores"); // skipped, saying so, when the shared data is absent
        Path home = dir.resolve("home");
        copy(stores.resolve("claude"), home.resolve(".claude"));
        copy(stores.resolve("codex"), home.resolve(".codex"));
        copy(stores.resolve("gemini"), home.resolve(".gemini"));
        copy(stores.resolve("copilot"), home.resolve(".copilot"));
        copy(stores.resolve("opencode"), home.resolve(".local/share/opencode"));
        copy(stores.resolve("qwen"), home.resolve(".qwen"));
        copy(stores.resolve("cursor"), home.resolve(".cursor"));
        touchAll(home, Instant.now().minus(Duration.ofHours(2))); // idle for 2 hours: every turn is over
        // the transcripts are from 2025-12 and 2026-01: the guide's 30 days of activity would leave them all out
        Path config = dir.resolve("choice-config.json");
        Files.writeString(config, "{\"version\": \"choose-test-1\", \"limits\": {\"maxAgeDays\": 3650}}");
        Path data = dir.resolve("data");
        Path log = dir.resolve("up.log");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                "-cp", System.getProperty("java.class.path"), EnsembleSessions.class.getName(), "up", "--data-dir", data.toString(),
                "--port", "0", "--kafka-port", "0", "--poll-seconds", "3600", "--account", "acct-choose")
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("HOME", home.toString());
        pb.environment().put("ENSEMBLE_SESSION_CHOICE_CONFIG", config.toString());
        pb.environment().remove("CLAUDE_CONFIG_DIR");
        pb.environment().remove("CODEX_HOME");
        Process up = pb.start();
        try {
            long until = System.currentTimeMillis() + 240_000;
            while (!Files.readString(log).contains(UpProcess.READY)) {
                assertThat(up.isAlive()).as("up ended before it was ready:%n%s", Files.readString(log)).isTrue();
                assertThat(System.currentTimeMillis()).as("up was not ready in time:%n%s", Files.readString(log)).isLessThan(until);
                Thread.sleep(200);
            }
            awaitImported(data, "claude-code:" + HELLO);
            String dataDir = data.toString();

            // the config file is in force, and the rarity table is there (a topic is measured): the views have caught up
            JsonNode first = null;
            long ready = System.currentTimeMillis() + 120_000;
            while (System.currentTimeMillis() < ready) {
                first = json(choose(LATER, "--data-dir", dataDir, "--agent", "claude-code", "--json"));
                if (first.path("configVersion").asText().equals("choose-test-1") && first.path("candidates").size() > 0
                        && first.path("candidates").get(0).path("signals").path("topic").asDouble() > 0) {
                    break;
                }
                Thread.sleep(1000);
            }
            assertThat(first.path("configVersion").asText()).as(first.toString()).isEqualTo("choose-test-1");
            assertThat(first.path("decision").asText()).as(first.toString()).isEqualTo("CONTINUE");
            assertThat(first.path("band").asText()).isEqualTo("CONFIDENT");
            assertThat(first.path("sessionId").asText()).isEqualTo("claude-code:" + HELLO);
            assertThat(first.path("candidates").get(0).path("signals").path("anchorsShared").toString())
                    .contains("hello.py", "hello.js");
            assertThat(first.path("resume").path("folder").asText()).isEqualTo("/tmp/private");
            assertThat(first.path("resume").path("command").asText()).isEqualTo("cd /tmp/private && claude --resume " + HELLO);

            // without --agent: every agent with sessions here is asked, the continue wins; printed for a person
            Run text = choose(LATER, "--data-dir", dataDir);
            assertThat(text.code()).as(text.err()).isZero();
            String nl = System.lineSeparator();
            assertThat(text.out()).startsWith("CONTINUE  band CONFIDENT, score ").contains(", agent claude-code" + nl)
                    .contains(nl + "Continued the agent's session: both name hello.js, hello.py")
                    .endsWith(nl + "Resume it: cd /tmp/private && claude --resume " + HELLO + nl);

            Run unrelated = choose(UNRELATED, "--data-dir", dataDir);
            assertThat(unrelated.code()).as(unrelated.err()).isZero();
            // every agent with sessions here was asked: each one's band and reason on a line of its own
            assertThat(unrelated.out()).startsWith("NEW  band ").contains(nl + "claude-code (band ").contains(nl + "codex (band ")
                    .contains("): Started a new session: ").endsWith(nl + "Start a new session." + nl);
            assertThat(json(choose(UNRELATED, "--data-dir", dataDir, "--json")).path("byAgent").size()).isGreaterThan(1);
            assertThat(json(choose(UNRELATED, "--data-dir", dataDir, "--agent", "claude-code", "--json")).path("decision").asText())
                    .isEqualTo("NEW");

            // a misspelt agent is refused, naming the known ones, not answered NEW
            Run misspelt = choose(LATER, "--data-dir", dataDir, "--agent", "claude");
            assertThat(misspelt.code()).as(misspelt.out()).isEqualTo(2);
            assertThat(misspelt.err()).contains("--agent 'claude' is not an agent this system knows (claude-code, codex, ")
                    .contains("agents with sessions here: ").contains("claude-code");

            // in another folder the session is not offered
            JsonNode elsewhere = json(choose(LATER, "--data-dir", dataDir, "--agent", "claude-code", "--folder", "/Users/user/repo", "--json"));
            assertThat(elsewhere.path("decision").asText()).as(elsewhere.toString()).isEqualTo("NEW");
            assertThat(elsewhere.path("candidates").toString()).doesNotContain(HELLO).contains("claude-code:624a4a58");
            JsonNode here = json(choose(LATER, "--data-dir", dataDir, "--agent", "claude-code", "--folder", "/tmp/private", "--json"));
            assertThat(here.path("decision").asText()).as(here.toString()).isEqualTo("CONTINUE");
            assertThat(here.path("candidates")).hasSize(1);

            sessionsAndShow(dataDir);

            // the switch off (the file is re-read within a minute): imported sessions are chats again, never candidates
            Files.writeString(config, "{\"version\": \"choose-test-2\", \"limits\": {\"maxAgeDays\": 3650},"
                    + " \"importedSessions\": {\"candidates\": false}}");
            JsonNode off = null;
            long switched = System.currentTimeMillis() + 150_000;
            while (System.currentTimeMillis() < switched) {
                off = json(choose(LATER, "--data-dir", dataDir, "--agent", "claude-code", "--json"));
                if (off.path("configVersion").asText().equals("choose-test-2")) break;
                Thread.sleep(2000);
            }
            assertThat(off.path("configVersion").asText()).as(off.toString()).isEqualTo("choose-test-2");
            assertThat(off.path("decision").asText()).isEqualTo("NEW");
            assertThat(off.path("candidates")).isEmpty();
            assertThat(off.path("reason").asText()).startsWith("Started a new session: no session on this computer fits the candidate rules (of ")
                    .endsWith(" chats)"); // imported sessions are chats now

            up.destroy(); // SIGTERM
            assertThat(up.waitFor(120, TimeUnit.SECONDS)).as("stopped in time").isTrue();
        } finally {
            up.destroyForcibly();
        }
        // and once it is stopped: one line saying nothing runs there
        Run stopped = choose(LATER, "--data-dir", data.toString());
        assertThat(stopped.code()).isEqualTo(1);
        assertThat(stopped.err()).startsWith("error: nothing runs at http://localhost:")
                .contains("start the system with 'ensemble-sessions up --data-dir " + data + "'");
        Run list = cli("sessions", "--data-dir", data.toString());
        assertThat(list.code()).isEqualTo(1);
        assertThat(list.err()).startsWith("error: nothing runs at http://localhost:");
    }

    /** The Codex session of {@code codex/sessions/2026/05/11} (PROVENANCE.txt). */
    static final String CODEX = "codex:019e1625-789d-76c0-80ab-3724b5ddb799";
    /** The sessions of the Claude Code and Codex stores (PROVENANCE.txt). */
    static final List<String> CLAUDE_AND_CODEX = List.of("claude-code:" + HELLO, "claude-code:624a4a58-b34c-462d-a70d-13421c8125a8",
            "claude-code:196820da-1026-4b6f-a513-a6aae42da1a6", "claude-code:9eda1058-9706-484a-b992-d03f9cfa2546",
            "claude-code:3fe1b6bc-dbd0-4320-b980-4f147befa187", CODEX);

    /**
     * {@code ensemble-sessions sessions} and {@code show} (issue 19, item 5) against the same running {@code up}: the
     * table lists the imported sessions, {@code --agent codex} only the Codex one, {@code --q} finds a session by a word
     * of a later prompt (not its first), {@code --json} parses; {@code show} prints a session's runs and the command
     * that resumes it, also from the short id the table shows; an unknown id is one line and exit code 1.
     */
    private static void sessionsAndShow(String dataDir) throws Exception {
        JsonNode all = null;
        long until = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < until) {
            all = json(cli("sessions", "--data-dir", dataDir, "--json"));
            if (ids(all).containsAll(CLAUDE_AND_CODEX)) break;
            Thread.sleep(1000);
        }
        assertThat(ids(all)).as(String.valueOf(all)).containsAll(CLAUDE_AND_CODEX);

        Run table = cli("sessions", "--data-dir", dataDir);
        assertThat(table.code()).as(table.err()).isZero();
        assertThat(table.err()).isEmpty();
        String nl = System.lineSeparator();
        String[] lines = table.out().split(nl);
        assertThat(lines[1]).startsWith("│ Session ").contains("│ Agent ", "│ First prompt or task ", "│ Fill ", "│ Last active ");
        assertThat(lines).hasSize(all.path("sessions").size() + 4);
        for (String id : CLAUDE_AND_CODEX) {
            assertThat(table.out()).contains("│ " + SessionsCommand.shortId(id) + " ");
        }
        Files.writeString(Path.of("target", "cli-sessions.txt"), table.out()); // for a person to look at
        String hello = java.util.Arrays.stream(lines).filter(l -> l.startsWith("│ claude-code:4c2ddfdc ")).findFirst().orElseThrow();
        assertThat(hello).contains("│ /tmp/private ", "│ create hello.py", "│ delete js ", "│ idle ", "│ yes ", "│    3 │");

        JsonNode codex = json(cli("sessions", "--data-dir", dataDir, "--agent", "codex", "--json"));
        assertThat(ids(codex)).containsExactly(CODEX);
        Run codexTable = cli("sessions", "--data-dir", dataDir, "--agent", "codex");
        assertThat(codexTable.out().split(nl)).hasSize(5);
        assertThat(codexTable.out()).contains("│ codex:019e1625 │ codex ");
        Run misspelt = cli("sessions", "--data-dir", dataDir, "--agent", "claude", "--json"); // claude-code is meant
        assertThat(misspelt.code()).isEqualTo(2);
        assertThat(misspelt.err()).startsWith("--agent 'claude' is not an agent this system knows (").contains("claude-code");
        assertThat(cli("sessions", "--data-dir", dataDir, "--agent", "gemini-cli", "--q", "no-such-word-anywhere").out()).as("a known agent, nothing found")
                .isEqualTo("No session matches." + nl);
        assertThat(cli("sessions", "--data-dir", dataDir, "--agent", "Codex", "--q", "no-such-word-anywhere").out())
                .as("the name in another case, nothing found by the other filters").isEqualTo("No session matches." + nl);

        // "liner" is in the second prompt ("update py with one liner comment"), not in the first
        assertThat(ids(json(cli("sessions", "--data-dir", dataDir, "--q", "liner", "--json")))).containsExactly("claude-code:" + HELLO);
        assertThat(cli("sessions", "--data-dir", dataDir, "--q", "liner").out()).contains("│ claude-code:4c2ddfdc │");
        assertThat(cli("sessions", "--data-dir", dataDir, "--q", "no-such-word-anywhere").out()).isEqualTo("No session matches." + nl);
        assertThat(json(cli("sessions", "--data-dir", dataDir, "--limit", "2", "--json")).path("sessions")).hasSize(2);

        Run show = cli("show", "claude-code:" + HELLO, "--data-dir", dataDir);
        assertThat(show.code()).as(show.err()).isZero();
        assertThat(show.out()).startsWith("Session       claude-code:" + HELLO + nl)
                .contains(nl + "Folder        /tmp/private" + nl, nl + "Runs          3" + nl, "│ create hello.py", "│ delete js ", "hello.py" + nl)
                .endsWith(nl + "Resume it: cd /tmp/private && claude --resume " + HELLO + nl);
        Files.writeString(Path.of("target", "cli-show.txt"), show.out());
        assertThat(cli("show", "claude-code:4c2ddfdc", "--data-dir", dataDir).out()).isEqualTo(show.out());
        JsonNode codexShown = json(cli("show", "codex:019e1625", "--data-dir", dataDir, "--json"));
        assertThat(codexShown.path("id").asText()).isEqualTo(CODEX);
        assertThat(codexShown.path("resume").path("command").asText()).endsWith("codex resume 019e1625-789d-76c0-80ab-3724b5ddb799");

        Run unknown = cli("show", "claude-code:no-such-session", "--data-dir", dataDir);
        assertThat(unknown.code()).isEqualTo(1);
        assertThat(unknown.err()).isEqualTo("error: no session 'claude-code:no-such-session' in your account"
                + " (list them with 'ensemble-sessions sessions')" + nl);
        assertThat(unknown.out()).isEmpty();
        Run several = cli("show", "claude-code:", "--data-dir", dataDir);
        assertThat(several.code()).isEqualTo(1);
        assertThat(several.err()).startsWith("error: 'claude-code:' starts the ids of ").contains(" sessions (").endsWith("): give more of the id" + nl);
    }

    private static List<String> ids(JsonNode list) {
        List<String> ids = new ArrayList<>();
        list.path("sessions").forEach(s -> ids.add(s.path("id").asText()));
        return ids;
    }

    /** Waits until the session is listed over HTTP, idle and resumable with its three runs. */
    private static void awaitImported(Path data, String sessionId) throws Exception {
        JsonNode endpoints = DataDir.JSON.readTree(data.resolve("endpoints.json").toFile());
        String token = Files.readString(data.resolve("token")).strip();
        HttpClient http = HttpClient.newHttpClient();
        long until = System.currentTimeMillis() + 120_000;
        String last = "";
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(endpoints.path("http").asText()
                    + "/api/agent/sessions/" + sessionId)).header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            last = r.body();
            if (r.statusCode() == 200) {
                JsonNode s = DataDir.JSON.readTree(r.body());
                if (s.path("status").asText().equals("idle") && s.path("resumable").asBoolean() && s.path("runs").asInt() == 3) {
                    return;
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("the session " + sessionId + " was not imported in time: " + last);
    }

    @Test
    void withNothingRunningItSaysSoInOneLine(@TempDir Path dir) throws Exception {
        Run none = choose("Fix the login", "--data-dir", dir.toString());
        assertThat(none.code()).isEqualTo(1);
        assertThat(none.err()).isEqualTo("error: no running system found in " + dir + " (" + dir.resolve("endpoints.json")
                + " is missing or unreadable): start it with 'deploy/ensemble-sessions up', or name the data folder it runs with"
                + " (--data-dir, or ENSEMBLE_DATA_DIR)" + System.lineSeparator());
        assertThat(none.out()).isEmpty();

        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort(); // free again once closed: nothing listens there
        }
        new DataDir(dir).writeEndpoints("http://127.0.0.1:" + port, "127.0.0.1:1");
        Files.writeString(dir.resolve("token"), "t\n");
        Files.writeString(dir.resolve("computer-id"), "pc-1\n");
        Run stopped = choose("Fix the login", "--data-dir", dir.toString(), "--agent", "codex");
        assertThat(stopped.code()).isEqualTo(1);
        assertThat(stopped.err()).isEqualTo("error: nothing runs at http://127.0.0.1:" + port + " (the address in "
                + dir.resolve("endpoints.json") + "): start the system with 'ensemble-sessions up --data-dir " + dir + "'"
                + System.lineSeparator());
    }

    @Test
    void theAnswerAsAPersonReadsIt() throws Exception {
        String nl = System.lineSeparator();
        JsonNode unknownAgent = DataDir.JSON.readTree("{\"decision\":\"CONTINUE\",\"band\":\"CONFIDENT\",\"score\":7.5,"
                + "\"agent\":\"grok\",\"reason\":\"Continued the agent's session: both name Upload.java\",\"sessionId\":\"grok:9\","
                + "\"resume\":{\"agent\":\"grok\",\"agentSessionId\":\"9\",\"folder\":\"/w\",\"command\":null}}");
        assertThat(ChooseCommand.text(unknownAgent)).isEqualTo("CONTINUE  band CONFIDENT, score 7.50, agent grok" + nl
                + "Continued the agent's session: both name Upload.java" + nl + "Resume grok session 9 in /w" + nl);
        JsonNode fresh = DataDir.JSON.readTree("{\"decision\":\"NEW\",\"band\":\"NONE\",\"score\":null,\"agent\":\"codex\","
                + "\"reason\":\"Started a new session: no session on this computer fits the candidate rules\",\"resume\":null}");
        assertThat(ChooseCommand.text(fresh)).isEqualTo("NEW  band NONE" + nl
                + "Started a new session: no session on this computer fits the candidate rules" + nl + "Start a new session." + nl);
        JsonNode unsure = DataDir.JSON.readTree("{\"decision\":\"NEW\",\"band\":\"UNSURE\",\"score\":4}");
        assertThat(ChooseCommand.better(DataDir.JSON.readTree("{\"decision\":\"CONTINUE\",\"band\":\"CONFIDENT\",\"score\":6}"), unsure)).isTrue();
        assertThat(ChooseCommand.better(fresh, unsure)).as("a NEW of band NONE is not better than an unsure one").isFalse();
        assertThat(ChooseCommand.better(unsure, fresh)).isTrue();
    }

    @Test
    void aNewSessionAfterAskingForSeveralAgentsGivesEachAgentsReason() throws Exception {
        String nl = System.lineSeparator();
        JsonNode codex = DataDir.JSON.readTree("{\"decision\":\"NEW\",\"band\":\"UNSURE\",\"score\":4.2,\"agent\":\"codex\","
                + "\"reason\":\"Started a new session: the best session shares only a folder\",\"resume\":null}");
        JsonNode claude = DataDir.JSON.readTree("{\"decision\":\"NEW\",\"band\":\"NONE\",\"score\":null,\"agent\":\"claude-code\","
                + "\"reason\":\"Started a new session: of 3 sessions: 3 inactive for more than limits.maxAgeDays (30 days)\",\"resume\":null}");
        JsonNode best = ChooseCommand.best(List.of(claude, codex));
        assertThat(best.path("agent").asText()).isEqualTo("codex");
        assertThat(best.path("byAgent")).hasSize(2);
        assertThat(ChooseCommand.text(best)).isEqualTo("NEW  band UNSURE, score 4.20" + nl
                + "claude-code (band NONE): Started a new session: of 3 sessions: 3 inactive for more than limits.maxAgeDays (30 days)" + nl
                + "codex (band UNSURE, score 4.20): Started a new session: the best session shares only a folder" + nl
                + "Start a new session." + nl);
        // one agent asked, or a continue: the answer as it is
        assertThat(ChooseCommand.best(List.of(codex))).isSameAs(codex);
        JsonNode go = DataDir.JSON.readTree("{\"decision\":\"CONTINUE\",\"band\":\"CONFIDENT\",\"score\":8,\"agent\":\"codex\",\"reason\":\"r\"}");
        assertThat(ChooseCommand.best(List.of(claude, go))).isSameAs(go);
    }

    static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                Files.createDirectories(target.getParent());
                Files.copy(f, target);
            }
        }
    }

    static void touchAll(Path root, Instant at) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(Files::isRegularFile).forEach(f -> {
                try {
                    Files.setLastModifiedTime(f, FileTime.from(at));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
