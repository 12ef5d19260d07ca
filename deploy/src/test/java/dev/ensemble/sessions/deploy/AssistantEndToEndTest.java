package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ConversationDropExecutor;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.KafkaEventSink;
import dev.ensemble.sessions.agent.assistant.AssistantSessions;
import dev.ensemble.sessions.agent.assistant.AssistantStore;
import dev.ensemble.sessions.agent.assistant.AssistantTurns;
import dev.ensemble.sessions.agent.assistant.ChatLocks;
import dev.ensemble.sessions.agent.assistant.TranscriptPrompts;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.assistant.TurnRules.Message;
import dev.ensemble.sessions.assistant.TurnRules.Role;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An assistant chat as the computer runs it (issue 17, guide §5 and §6), every part real: the computer agent's turn
 * client ({@link AssistantTurns}, its store {@code assistant-sessions.json} and chat folders on a fake HOME, the Claude
 * Code transcripts it counts) asks the gateway over HTTP, which decides with the turn rules and records
 * {@code TurnDecided}; the computer reports {@code TurnEnded} through its Kafka sink; the projector folds the
 * conversation into its view. A first turn starts a session, the second resumes it, a prompt typed into the agent's own
 * transcript between turns makes the third start a new session and retire the touched one; a person's DELETE is
 * accepted by the projector's guard, carried out by the computer's drop executor (its store entry, both sessions'
 * transcripts and the chat's folder gone), and audited as deleted.
 */
class AssistantEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final String ACCOUNT = "acct-ana";
    static final String S1 = "11111111-aaaa-4aaa-8aaa-000000000001";
    static final String S2 = "22222222-aaaa-4aaa-8aaa-000000000002";
    int port;

    @Test
    void aChatResumesRetiresATouchedSessionAndIsDeletedFromTheComputer(@TempDir Path dir) throws Exception {
        Path home = dir.resolve("home");
        Path state = home.resolve(".ensemble/computer-agent");
        Path projects = home.resolve(".claude/projects/-home-ana-notes");
        Files.createDirectories(projects);
        Files.createDirectories(state);
        projectsDir = projects;
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            try (Admin admin = cluster.admin()) {
                TopicAdmin.ensureTopics(admin, 2, (short) 1);
            }
            String bootstrap = cluster.bootstrapServers();
            Projector projector = new Projector(bootstrap, dir.resolve("projector"), 1, Map.of("commit.interval.ms", 100));
            projector.start();
            Tokens tokens = Tokens.inMemory();
            tokens.register("t-ana", new Principal(ACCOUNT, "person", "ana"));
            tokens.register("t-laptop", new Principal(ACCOUNT, "computer", "laptop"));
            Gateway gateway = new Gateway(new Gateway.Settings(bootstrap, "127.0.0.1", 0, dir.resolve("gateway"), 1, tokens,
                    Clock.systemUTC())).start();
            ImportConfig config = new ImportConfig(ACCOUNT, "laptop", Clock.systemUTC(), state.resolve("import-state.json"));
            AgentStores stores = AgentStores.underHome(home);
            ChatLocks locks = new ChatLocks(state);
            AssistantStore store = AssistantStore.opening(state, Clock.systemUTC(), Duration.ofSeconds(10));
            try (KafkaEventSink sink = new KafkaEventSink(bootstrap)) {
                gateway.awaitReady(Duration.ofSeconds(120));
                port = gateway.port();
                EventFactory events = new EventFactory(config);
                sink.accept(events.event("status/laptop/online", java.time.Instant.now(), dev.ensemble.sessions.events.ComputerStatus.newBuilder()
                        .setComputerId("laptop").setOnline(true).setCapabilities(Map.of("sessionDelete", 1, "assistantTurns", 3)).build()));
                AssistantTurns turns = new AssistantTurns(new AssistantTurns.Gateway(URI.create("http://127.0.0.1:" + port), "t-laptop"),
                        store, new TranscriptPrompts(stores), new AgentStoreDeleter(stores), locks, events, sink, Clock.systemUTC());
                Path workspace = dir.resolve("workspace");
                List<Message> chat = new ArrayList<>();

                // first turn: a new session; the agent writes its transcript (one prompt)
                AssistantTurns.Began first = turns.begin(turn("t1", chat, workspace));
                assertThat(first.decision().action()).isEqualTo(TurnRules.Action.NEW);
                assertThat(first.decision().reason()).isEqualTo(TurnRules.Reason.FIRST_TURN);
                transcript(S1, "what is in my notes?");
                turns.end("t1", true, S1, 1200L, null, null);
                chat.add(new Message("m1", Role.USER, "what is in my notes?", S1));
                chat.add(new Message("m2", Role.ASSISTANT, "three lists", S1));

                // second turn: the chat is where the session left it, so it resumes
                AssistantTurns.Began second = turns.begin(turn("t2", chat, workspace));
                assertThat(second.decision().action()).isEqualTo(TurnRules.Action.RESUME);
                assertThat(second.decision().sessionId()).isEqualTo(S1);
                transcript(S1, "and the shopping list?");
                turns.end("t2", true, S1, 900L, null, null);
                chat.add(new Message("m3", Role.USER, "and the shopping list?", S1));
                chat.add(new Message("m4", Role.ASSISTANT, "milk", S1));

                // the person types into the session in Claude Code itself: the third turn goes on in a new session
                transcript(S1, "a prompt of my own, outside Ensemble");
                AssistantTurns.Began third = turns.begin(turn("t3", chat, workspace));
                assertThat(third.decision().action()).isEqualTo(TurnRules.Action.NEW);
                assertThat(third.decision().reason()).isEqualTo(TurnRules.Reason.TOUCHED_OUTSIDE);
                assertThat(third.decision().history()).as("the chat so far, Ensemble's own").hasSize(4);
                transcript(S2, "and the bread?");
                turns.end("t3", true, S2, 700L, null, null);

                AssistantSessions.Entry entry = store.with(s -> s.get("chat-notes"));
                assertThat(entry.sessionId()).isEqualTo(S2);
                assertThat(entry.retired().stream().map(AssistantSessions.Retired::sessionId).toList())
                        .as("the touched session is kept, never resumed").containsExactly(S1);
                JsonNode view = await("/api/assistant/conversations/chat-notes", j -> j.path("turns").asInt() == 3
                        && j.path("runningTurn").isNull());
                assertThat(view.toString()).contains(S2, S1, "laptop");

                // the person deletes the chat: accepted, dropped on the computer, audited
                ConversationDropExecutor drops = new ConversationDropExecutor(bootstrap, Map.of(), config, store,
                        new AgentStoreDeleter(stores), locks, Duration.ofSeconds(30), sink);
                drops.start();
                try {
                    HttpResponse<String> deleted = send("DELETE", "/api/assistant/conversations/chat-notes", "t-ana");
                    assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(202);
                    await("/api/audit/deletions?conversationKey=chat-notes", j -> j.path("deletions").size() == 1
                            && "ACCEPTED".equals(j.get("deletions").get(0).path("decision").asText())
                            && "DELETED".equals(j.get("deletions").get(0).path("status").asText()));
                } finally {
                    drops.stop();
                }
                assertThat(store.<AssistantSessions.Entry>with(s -> s.get("chat-notes"))).as("the store entry").isNull();
                assertThat(projects.resolve(S1 + ".jsonl")).as("the retired session's transcript").doesNotExist();
                assertThat(projects.resolve(S2 + ".jsonl")).as("the session's transcript").doesNotExist();
                assertThat(state.resolve("assistant/chat-notes")).as("the chat's own folder").doesNotExist();
            } finally {
                gateway.stop();
                projector.stop();
            }
        }
    }

    static AssistantTurns.TurnRequest turn(String turnId, List<Message> before, Path workspace) {
        return new AssistantTurns.TurnRequest(turnId, "chat-notes", TurnRules.Kind.CHAT, "claude-code", "sonnet", List.copyOf(before),
                List.of("be brief"), null, null, null, workspace, null);
    }

    /** Claude Code's transcript of {@code session} gets one more prompt and its answer, as the agent writes them. */
    void transcript(String session, String prompt) throws Exception {
        Path file = projectsDir.resolve(session + ".jsonl");
        Files.writeString(file, "{\"type\":\"user\",\"sessionId\":\"" + session + "\",\"message\":{\"role\":\"user\",\"content\":\""
                        + prompt + "\"}}\n{\"type\":\"assistant\",\"sessionId\":\"" + session
                        + "\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n",
                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    Path projectsDir;

    HttpResponse<String> send(String method, String path, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + token)
                .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    JsonNode await(String path, Predicate<JsonNode> done) throws Exception {
        long until = System.currentTimeMillis() + 90_000;
        String last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send("GET", path, "t-ana");
            last = r.statusCode() + " " + r.body();
            if (r.statusCode() == 200) {
                JsonNode j = JSON.readTree(r.body());
                if (done.test(j)) {
                    return j;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not reached within 90 s: " + path + "; last answer " + last);
    }
}
