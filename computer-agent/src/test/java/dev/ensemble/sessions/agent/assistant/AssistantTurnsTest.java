package dev.ensemble.sessions.agent.assistant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.assistant.TurnRules.Message;
import dev.ensemble.sessions.assistant.TurnRules.Role;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TurnEnded;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.ensemble.sessions.agent.assistant.FakeHome.append;
import static dev.ensemble.sessions.agent.assistant.FakeHome.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The computer's turn client over HTTP, against a small HTTP server in the test standing in for the gateway's
 * {@code POST /api/assistant/turns}: what the request carries (the store entry, the prompt count of the session's own
 * transcript, the position, the token), and what the computer does with the answer and after the turn, on a fake HOME.
 */
class AssistantTurnsTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final String S1 = "11111111-aaaa-4aaa-8aaa-000000000001";
    static final String S2 = "22222222-aaaa-4aaa-8aaa-000000000002";
    static final String C1 = "c0c0c0c0-2222-4222-8222-000000000001";
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;
    FakeHome home;
    HttpServer server;
    /** The requests the stand-in got, with their Authorization header first. */
    final BlockingQueue<JsonNode> requests = new LinkedBlockingQueue<>();
    final BlockingQueue<String> auth = new LinkedBlockingQueue<>();
    /** The answers it gives, in order: status and body. */
    final BlockingQueue<Object[]> answers = new LinkedBlockingQueue<>();
    final List<Event> sent = new ArrayList<>();
    ChatLocks locks;
    AssistantTurns turns;
    AssistantStore store;

    @BeforeEach
    void setUp() throws Exception {
        home = new FakeHome(tmp.resolve("home"));
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/assistant/turns", ex -> {
            byte[] out;
            int status;
            try (ex) {
                if (!ex.getRequestMethod().equals("POST") || !"application/json".equals(ex.getRequestHeaders().getFirst("Content-Type"))) {
                    status = 405;
                    out = "{\"error\":\"POST JSON\"}".getBytes(StandardCharsets.UTF_8);
                } else {
                    auth.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
                    requests.add(JSON.readTree(ex.getRequestBody()));
                    Object[] a = answers.poll();
                    status = a == null ? 500 : (int) a[0];
                    out = (a == null ? "{\"error\":\"no answer queued\"}" : (String) a[1]).getBytes(StandardCharsets.UTF_8);
                }
                ex.getResponseHeaders().add("Content-Type", "application/json");
                ex.sendResponseHeaders(status, out.length);
                ex.getResponseBody().write(out);
            }
        });
        server.start();
        locks = new ChatLocks();
        store = AssistantStore.opening(home.state, Clock.fixed(T, ZoneOffset.UTC), Duration.ofSeconds(5));
        ImportConfig config = new ImportConfig("acct-ana", "laptop", Clock.fixed(T.plusSeconds(30), ZoneOffset.UTC),
                home.state.resolve("import-state.json"));
        turns = new AssistantTurns(new AssistantTurns.Gateway(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "tok-laptop"),
                store, new TranscriptPrompts(home.stores()), new AgentStoreDeleter(home.stores()), locks, new EventFactory(config),
                sent::add, Clock.fixed(T.plusSeconds(30), ZoneOffset.UTC));
    }

    @AfterEach
    void tearDown() {
        server.stop(0);
    }

    Path workspace() {
        return tmp.resolve("workspace");
    }

    AssistantTurns.TurnRequest chat(String turnId, String agent, List<Message> before) {
        return new AssistantTurns.TurnRequest(turnId, "chat-1", Kind.CHAT, agent, "sonnet", before, List.of("be brief", "cite files"),
                null, null, null, workspace(), null);
    }

    String chatFolder() {
        return home.state.toAbsolutePath().normalize().resolve("assistant/chat-1").toString();
    }

    Path claudeTranscript(String id) {
        return home.claudeProjects().resolve("-home-ana-x").resolve(id + ".jsonl");
    }

    static String claudePrompt(String id, String text) {
        return "{\"type\":\"user\",\"sessionId\":\"" + id + "\",\"message\":{\"role\":\"user\",\"content\":\"" + text + "\"}}\n"
                + "{\"type\":\"assistant\",\"sessionId\":\"" + id + "\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n";
    }

    void answer(int status, String body) {
        answers.add(new Object[]{status, body});
    }

    JsonNode request() throws InterruptedException {
        JsonNode r = requests.poll(5, TimeUnit.SECONDS);
        assertThat(r).as("the gateway was asked").isNotNull();
        return r;
    }

    @Test
    void aFirstTurnThenAResumedOneCarryTheEntryAndThePromptsCountedAndStoreTheEntryAfter() throws Exception {
        answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[],\"folder\":\"" + chatFolder() + "\"}");
        AssistantTurns.Began b = turns.begin(chat("t1", "claude-code", List.of()));

        JsonNode r = request();
        assertThat(auth.poll()).isEqualTo("Bearer tok-laptop");
        assertThat(r.path("turnId").asText()).isEqualTo("t1");
        assertThat(r.path("conversationKey").asText()).isEqualTo("chat-1");
        assertThat(r.path("kind").asText()).isEqualTo("chat");
        assertThat(r.path("agent").asText()).isEqualTo("claude-code");
        assertThat(r.path("model").asText()).isEqualTo("sonnet");
        assertThat(r.path("position").asInt(-1)).isEqualTo(0);
        assertThat(r.path("entry").isNull()).as("no entry yet").isTrue();
        assertThat(r.path("promptsNow").isNull()).isTrue();
        assertThat(r.path("instructionLines")).hasSize(2);
        assertThat(r.path("places").path("stateDir").asText()).isEqualTo(home.state.toAbsolutePath().normalize().toString());
        assertThat(r.path("places").path("workspace").asText()).isEqualTo(workspace().toAbsolutePath().normalize().toString());
        assertThat(b.decision().action()).isEqualTo(TurnRules.Action.NEW);
        assertThat(b.decision().reason()).isEqualTo(TurnRules.Reason.FIRST_TURN);
        assertThat(b.chatFolder()).isDirectory();
        assertThat(locks.held("chat-1")).as("the chat's lock is held until the turn ends").isTrue();

        // the agent runs: its transcript holds the turn's prompt
        write(claudeTranscript(S1), claudePrompt(S1, "first question"));
        Event ended = turns.end("t1", true, S1, 1200L, null, null);

        assertThat(locks.held("chat-1")).isFalse();
        assertThat(sent).containsExactly(ended);
        assertThat(ended.getEventId()).isEqualTo(EventFactory.eventId("turn-ended/laptop/t1"));
        assertThat(ended.getSource()).isEqualTo("computer:laptop");
        TurnEnded te = (TurnEnded) ended.getPayload();
        assertThat(te.getAnswered()).isTrue();
        assertThat(te.getAgentSessionId()).isEqualTo(S1);
        assertThat(te.getMessages()).isEqualTo(1);
        assertThat(te.getPromptsNoted()).isEqualTo(1);
        assertThat(te.getTokens()).isEqualTo(1200L);
        AssistantSessions.Entry e = store.with(s -> s.get("chat-1"));
        assertThat(e.sessionId()).isEqualTo(S1);
        assertThat(e.positionLeft()).isEqualTo(2);
        assertThat(e.messagesSent()).isEqualTo(1);
        assertThat(e.promptsNoted()).isEqualTo(1);
        assertThat(e.folder()).isEqualTo(chatFolder());

        // the second turn: the entry and the count read now go with it
        answer(200, "{\"action\":\"RESUME\",\"sessionId\":\"" + S1 + "\",\"folder\":\"" + chatFolder() + "\"}");
        List<Message> before = List.of(new Message("m1", Role.USER, "first question", null), new Message("m2", Role.ASSISTANT, "ok", S1));
        AssistantTurns.Began b2 = turns.begin(chat("t2", "claude-code", before));
        JsonNode r2 = request();
        assertThat(r2.path("position").asInt()).isEqualTo(2);
        assertThat(r2.path("messages")).hasSize(2);
        assertThat(r2.path("messages").get(1).path("role").asText()).isEqualTo("assistant");
        assertThat(r2.path("messages").get(1).path("sessionId").asText()).isEqualTo(S1);
        assertThat(r2.path("promptsNow").asInt()).isEqualTo(1);
        assertThat(r2.path("entry").path("sessionId").asText()).isEqualTo(S1);
        assertThat(r2.path("entry").path("positionLeft").asInt()).isEqualTo(2);
        assertThat(r2.path("entry").path("messagesSent").asInt()).isEqualTo(1);
        assertThat(r2.path("entry").path("promptsNoted").asInt()).isEqualTo(1);
        assertThat(r2.path("entry").path("computerId").asText()).isEqualTo("laptop");
        assertThat(b2.decision().sessionId()).isEqualTo(S1);

        append(claudeTranscript(S1), claudePrompt(S1, "second question"));
        turns.end("t2", true, S1, null, null, null);
        AssistantSessions.Entry e2 = store.with(s -> s.get("chat-1"));
        assertThat(e2.positionLeft()).isEqualTo(4);
        assertThat(e2.messagesSent()).isEqualTo(2);
        assertThat(e2.promptsNoted()).as("noted after the turn").isEqualTo(2);
    }

    @Test
    void aReplacedSessionIsDeletedAtOnceAndATouchedOneIsKeptRetired() throws Exception {
        Path ownFolder = store.with(s -> s.makeChatFolder("chat-1"));
        write(ownFolder.resolve("instructions.md"), "old");
        write(claudeTranscript(S1), claudePrompt(S1, "q"));
        write(claudeTranscript("99999999-aaaa-4aaa-8aaa-000000000009"), claudePrompt("99999999-aaaa-4aaa-8aaa-000000000009", "neighbour"));
        store.with(s -> {
            s.put(new AssistantSessions.Entry("chat-1", "claude-code", S1, "sonnet", List.of("be brief"), chatFolder(), null, 2, 80, 1,
                    "laptop", T, List.of()));
            return null;
        });

        answer(200, "{\"action\":\"new\",\"reason\":\"rotation-messages\",\"history\":[{\"id\":\"m1\",\"role\":\"user\",\"text\":\"q\"},"
                + "{\"id\":\"m2\",\"role\":\"assistant\",\"text\":\"ok\",\"sessionId\":\"" + S1 + "\"}],"
                + "\"replaced\":{\"sessionId\":\"" + S1 + "\",\"agent\":\"claude-code\",\"folder\":\"" + chatFolder() + "\",\"deleteFolder\":true},"
                + "\"folder\":\"" + chatFolder() + "\"}");
        AssistantTurns.Began b = turns.begin(chat("t1", "claude-code", List.of(new Message("m1", Role.USER, "q", null),
                new Message("m2", Role.ASSISTANT, "ok", S1))));
        request();
        assertThat(claudeTranscript(S1)).as("the replaced session is deleted at once").doesNotExist();
        assertThat(claudeTranscript("99999999-aaaa-4aaa-8aaa-000000000009")).exists();
        assertThat(ownFolder.resolve("instructions.md")).as("the chat's own folder is emptied").doesNotExist();
        assertThat(ownFolder).as("and stays for the new session").isDirectory();
        assertThat(b.replacedDrop().confirmed()).isTrue();
        assertThat(b.decision().history()).hasSize(2);
        write(claudeTranscript(S2), claudePrompt(S2, "q2"));
        turns.end("t1", true, S2, null, null, null);
        AssistantSessions.Entry e = store.with(s -> s.get("chat-1"));
        assertThat(e.sessionId()).isEqualTo(S2);
        assertThat(e.messagesSent()).as("a new session's count starts again").isEqualTo(1);
        assertThat(e.retired()).isEmpty();

        // touched outside: a prompt typed in Claude Code itself
        append(claudeTranscript(S2), claudePrompt(S2, "typed outside"));
        answer(200, "{\"action\":\"new\",\"reason\":\"TOUCHED_OUTSIDE\",\"retiredSessionId\":\"" + S2 + "\",\"history\":[],\"folder\":\""
                + chatFolder() + "\"}");
        turns.begin(chat("t2", "claude-code", List.of(new Message("m1", Role.USER, "q", null), new Message("m2", Role.ASSISTANT, "ok", S1),
                new Message("m3", Role.USER, "q2", null), new Message("m4", Role.ASSISTANT, "ok", S2))));
        JsonNode r = request();
        assertThat(r.path("promptsNow").asInt()).isEqualTo(2);
        assertThat(r.path("entry").path("promptsNoted").asInt()).isEqualTo(1);
        assertThat(claudeTranscript(S2)).as("a touched session is kept").exists();
        String s3 = "33333333-aaaa-4aaa-8aaa-000000000003";
        turns.end("t2", true, s3, null, null, null);
        AssistantSessions.Entry e2 = store.with(s -> s.get("chat-1"));
        assertThat(e2.sessionId()).isEqualTo(s3);
        assertThat(e2.retired()).containsExactly(new AssistantSessions.Retired("claude-code", S2));
    }

    @Test
    void beginningATurnOpensTheStoreOnceBeforeTheGatewayIsAskedAndOnceAfter() throws Exception {
        write(claudeTranscript(S1), claudePrompt(S1, "q"));
        store.with(s -> {
            s.put(new AssistantSessions.Entry("chat-1", "claude-code", S1, "sonnet", List.of("be brief"), chatFolder(), null, 2, 80, 1,
                    "laptop", T, List.of()));
            return null;
        });
        java.util.concurrent.atomic.AtomicInteger opened = new java.util.concurrent.atomic.AtomicInteger();
        AssistantStore counting = new AssistantStore() {
            @Override
            public <V> V with(java.util.function.Function<AssistantSessions, V> use) {
                opened.incrementAndGet();
                return store.with(use);
            }
        };
        ImportConfig config = new ImportConfig("acct-ana", "laptop", Clock.fixed(T.plusSeconds(30), ZoneOffset.UTC),
                home.state.resolve("import-state.json"));
        AssistantTurns counted = new AssistantTurns(new AssistantTurns.Gateway(URI.create("http://127.0.0.1:" + server.getAddress().getPort()),
                "tok-laptop"), counting, new TranscriptPrompts(home.stores()), new AgentStoreDeleter(home.stores()), locks,
                new EventFactory(config), sent::add, Clock.fixed(T.plusSeconds(30), ZoneOffset.UTC));
        answer(200, "{\"action\":\"NEW\",\"reason\":\"ROTATION_MESSAGES\",\"history\":[],"
                + "\"replaced\":{\"sessionId\":\"" + S1 + "\",\"agent\":\"claude-code\",\"folder\":\"" + chatFolder() + "\",\"deleteFolder\":true},"
                + "\"folder\":\"" + chatFolder() + "\"}");

        AssistantTurns.Began b = counted.begin(chat("t1", "claude-code", List.of(new Message("m1", Role.USER, "q", null),
                new Message("m2", Role.ASSISTANT, "ok", S1))));

        assertThat(request().path("entry").path("sessionId").asText()).isEqualTo(S1);
        assertThat(b.replacedDrop().confirmed()).isTrue();
        assertThat(b.chatFolder()).isDirectory();
        assertThat(opened.get()).as("the store is opened (locked, read) once before the gateway is asked and once after").isEqualTo(2);
        counted.end("t1", false, null, null, null, null);
    }

    @Test
    void aRefusedTurnReleasesTheChatAndSaysWhy() throws Exception {
        answer(409, "{\"error\":\"an earlier ask of this page is not answered yet\",\"waitingFor\":\"ask-1\"}");
        AssistantTurns.TurnRequest ask = new AssistantTurns.TurnRequest("ask-2", "ask-doc-abc", Kind.ASK, "claude-code", null,
                List.of(), List.of(), null, 1, null, workspace(), "ask-2");
        assertThatThrownBy(() -> turns.begin(ask)).isInstanceOfSatisfying(AssistantTurns.TurnRefused.class, e -> {
            assertThat(e.status()).isEqualTo(409);
            assertThat(e.body().path("waitingFor").asText()).isEqualTo("ask-1");
            assertThat(e.getMessage()).contains("HTTP 409").contains("not answered yet");
        });
        JsonNode r = request();
        assertThat(r.path("kind").asText()).isEqualTo("ask");
        assertThat(r.path("askId").asText()).isEqualTo("ask-2");
        assertThat(r.path("keepDays").asInt()).isEqualTo(1);
        assertThat(locks.held("ask-doc-abc")).isFalse();
        assertThat(turns.begun()).isEmpty();
        assertThat(sent).isEmpty();

        answer(200, "{\"action\":\"sideways\"}");
        assertThatThrownBy(() -> turns.begin(chat("t9", "claude-code", List.of())))
                .isInstanceOf(AssistantTurns.TurnRefused.class).hasMessageContaining("unknown action: sideways");
        assertThat(locks.held("chat-1")).isFalse();
    }

    @Test
    void aOneOffLeavesNoSessionAndNoFolderBehind() throws Exception {
        answer(200, "{\"action\":\"none\",\"oneOff\":\"delete-after-turn\",\"folder\":\"" + chatFolder() + "\"}");
        AssistantTurns.TurnRequest oneOff = new AssistantTurns.TurnRequest("t1", "chat-1", Kind.ONE_OFF, "copilot", "gpt-5", List.of(),
                List.of(), null, null, null, workspace(), null);
        AssistantTurns.Began b = turns.begin(oneOff);
        assertThat(request().path("kind").asText()).isEqualTo("one-off");
        write(b.chatFolder().resolve("prompt.md"), "summarise");
        write(home.copilotState().resolve(C1).resolve("events.jsonl"), "{\"type\":\"user.message\",\"data\":{\"content\":\"summarise\"}}\n");
        Event ended = turns.end("t1", true, C1, null, null, null);

        assertThat(home.copilotState().resolve(C1)).as("the agent's session is deleted after the turn").doesNotExist();
        assertThat(b.chatFolder()).doesNotExist();
        assertThat(store.<java.util.Map<String, AssistantSessions.Entry>>with(AssistantSessions::all)).isEmpty();
        assertThat(((TurnEnded) ended.getPayload()).getAgentSessionId()).as("a one-off keeps none").isNull();
    }

    @Test
    void aDropOfTheChatWaitsForItsRunningTurn() throws Exception {
        answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"folder\":\"" + chatFolder() + "\"}");
        turns.begin(chat("t1", "claude-code", List.of()));
        request();
        CompletableFuture<AssistantDrops.Dropped> early = CompletableFuture.supplyAsync(() -> store.with(s ->
                new AssistantDrops(s, new AgentStoreDeleter(home.stores()), locks, "laptop").drop("chat-1", Duration.ofMillis(200))));
        assertThat(early.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(AssistantDrops.Outcome.TURN_RUNNING);
        write(claudeTranscript(S1), claudePrompt(S1, "q"));
        CompletableFuture<AssistantDrops.Dropped> waiting = CompletableFuture.supplyAsync(() -> {
            ChatLocks.Held held;
            try {
                held = locks.tryHold("chat-1", Duration.ofSeconds(20)); // as the drop executor: the chat first, then the store
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            try (held) {
                return store.with(s -> new AssistantDrops(s, new AgentStoreDeleter(home.stores()), locks, "laptop").drop("chat-1", Duration.ZERO));
            }
        });
        Thread.sleep(300);
        assertThat(waiting).as("still waiting for the turn").isNotDone();
        turns.end("t1", true, S1, null, null, null);
        AssistantDrops.Dropped d = waiting.get(20, TimeUnit.SECONDS);
        assertThat(d.outcome()).isEqualTo(AssistantDrops.Outcome.DROPPED);
        assertThat(d.sessionId()).as("the drop saw the entry the turn stored").isEqualTo(S1);
        assertThat(claudeTranscript(S1)).doesNotExist();
        assertThat(Files.exists(home.state.resolve("assistant/chat-1"))).isFalse();
    }

    @Test
    void theLaunchersJsonIsReadAndBadInputNamesItsField() throws Exception {
        AssistantTurns.TurnRequest r = AssistantTurns.TurnRequest.fromJson(JSON.readTree("{\"turnId\":\"t1\",\"conversationKey\":\"node-7\","
                + "\"kind\":\"node-conversation\",\"agent\":\"copilot\",\"model\":\"gpt-5\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\","
                + "\"text\":\"q\"},{\"id\":\"m2\",\"role\":\"assistant\",\"text\":\"a\",\"sessionId\":\"s\"},{\"role\":\"user\",\"text\":\"x\"},"
                + "{\"role\":\"error\",\"text\":\"boom\"}],\"instructionLines\":[\"a\",\"b\"],\"group\":{\"id\":\"n7\",\"name\":\"Launch\"},"
                + "\"keepDays\":7,\"nextRunAt\":\"2026-11-09T09:00:00Z\"}"), workspace());
        assertThat(r.kind()).isEqualTo(Kind.NODE_CONVERSATION);
        assertThat(r.position()).as("a failed exchange does not count").isEqualTo(2);
        assertThat(r.group()).isEqualTo(new TurnRules.Group("n7", "Launch"));
        assertThat(r.keepDays()).isEqualTo(7);
        assertThat(r.nextRunAt()).isEqualTo(Instant.parse("2026-11-09T09:00:00Z"));
        assertThat(r.workspace()).isEqualTo(workspace());

        String base = "\"turnId\":\"t1\",\"conversationKey\":\"c\",\"agent\":\"claude-code\"";
        for (String[] bad : new String[][]{
                {"{\"conversationKey\":\"c\",\"kind\":\"chat\",\"agent\":\"x\"}", "turnId is required (a string)"},
                {"{" + base + "}", "kind is required (a string)"},
                {"{" + base + ",\"kind\":\"meeting\"}", "kind must be chat, routine, node-conversation, ask or one-off: meeting"},
                {"{" + base + ",\"kind\":\"ask\"}", "askId is required for an ask"},
                {"{" + base + ",\"kind\":\"chat\",\"keepDays\":-1}", "keepDays must be a whole number of days, 0 or more"},
                {"{" + base + ",\"kind\":\"chat\",\"messages\":[{\"role\":\"bot\"}]}", "messages[0].role must be user, assistant or error: bot"},
                {"{" + base + ",\"kind\":\"chat\",\"instructionLines\":[1]}", "instructionLines must be an array of strings"},
                {"{" + base + ",\"kind\":\"chat\",\"nextRunAt\":\"soon\"}", "nextRunAt must be an ISO-8601 instant: soon"},
                {"{" + base + ",\"kind\":\"chat\",\"model\":5}", "model must be a string"}}) {
            assertThatThrownBy(() -> AssistantTurns.TurnRequest.fromJson(JSON.readTree(bad[0]), workspace())).as(bad[0])
                    .isInstanceOf(IllegalArgumentException.class).hasMessage(bad[1]);
        }
        assertThat(AssistantTurns.Report.fromJson(JSON.readTree("{\"answered\":false,\"error\":\"quota\"}")))
                .isEqualTo(new AssistantTurns.Report(false, null, null, null, "quota"));
        assertThatThrownBy(() -> AssistantTurns.Report.fromJson(JSON.readTree("{\"answered\":\"yes\"}")))
                .hasMessage("answered is required: true or false");
        assertThatThrownBy(() -> AssistantTurns.Report.fromJson(JSON.readTree("{\"answered\":true,\"tokens\":1.5}")))
                .hasMessage("tokens must be a whole number, 0 or more");
    }
}
