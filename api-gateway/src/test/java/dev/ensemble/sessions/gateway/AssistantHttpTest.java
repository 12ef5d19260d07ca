package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDeletion;
import dev.ensemble.sessions.views.ConversationSession;
import dev.ensemble.sessions.views.ConversationView;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant endpoints over HTTP on a real broker (guide §5, issue 17). The test plays the computer: it keeps each
 * chat's store entry itself with {@link TurnRules#afterTurn}, asks {@code POST /api/assistant/turns} before each turn and
 * reports {@code TurnEnded} through {@code POST /api/events}. Where a read needs the conversation view, the test writes
 * the view to {@code sessions.view.assistant} itself (as the projector publishes it, with sequences far above any the
 * projector gives, so those are the ones kept).
 */
class AssistantHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static GatewayOnBroker rig;
    static final HttpClient http = HttpClient.newHttpClient();
    static final String ANA = "t-ana";
    static final String BO = "t-bo";
    static final String LAPTOP = "t-laptop";
    static final String DESK = "t-desk";
    static final String WEB = "t-web";
    static final String ACCOUNT = "acct-ana";
    static final String WORKSPACE = "/home/ana/workspace";
    static final String STATE = "/home/ana/.ensemble";
    /** Sequences of the views the test writes: above any the projector gives in a test. */
    static final AtomicLong SEQUENCE = new AtomicLong(1_000_000_000L);

    @BeforeAll
    static void start() throws Exception {
        Tokens tokens = Tokens.inMemory();
        tokens.register(ANA, new Principal(ACCOUNT, "person", "ana"));
        tokens.register(BO, new Principal("acct-bo", "person", "bo"));
        tokens.register(LAPTOP, new Principal(ACCOUNT, "computer", "laptop"));
        tokens.register(DESK, new Principal(ACCOUNT, "computer", "desk"));
        tokens.register(WEB, new Principal(ACCOUNT, "service", "web"));
        rig = GatewayOnBroker.start("gw-assistant", tokens, Duration.ofSeconds(90));
    }

    @AfterAll
    static void stop() {
        if (rig != null) {
            rig.close();
        }
    }

    // ---- HTTP ------------------------------------------------------------------------------------------------------

    static HttpResponse<String> send(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rig.gateway.port() + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(120))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String path, String token, Object body) throws Exception {
        return send("POST", path, token, body == null ? null : body.toString());
    }

    static JsonNode ok(HttpResponse<String> r, int status) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        return JSON.readTree(r.body());
    }

    static JsonNode await(String path, String token, Predicate<JsonNode> ready) throws Exception {
        long until = System.currentTimeMillis() + 60_000;
        String last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send("GET", path, token, null);
            last = r.statusCode() + " " + r.body();
            if (r.statusCode() == 200 && ready.test(JSON.readTree(r.body()))) {
                return JSON.readTree(r.body());
            }
            Thread.sleep(100);
        }
        throw new AssertionError(path + " never became ready; last: " + last);
    }

    // ---- the computer --------------------------------------------------------------------------------------------

    /** One chat as the computer keeps it: its messages and its store entry. */
    static final class Chat {
        final String key;
        final String kind;
        final String agent;
        final List<TurnRules.Message> messages = new ArrayList<>();
        TurnRules.SessionEntry entry;
        int sessions;

        Chat(String key, String kind, String agent) {
            this.key = key;
            this.kind = kind;
            this.agent = agent;
        }
    }

    static ObjectNode turnRequest(Chat chat, String turnId, List<String> lines, Integer promptsNow) {
        ObjectNode b = JSON.createObjectNode();
        b.put("turnId", turnId);
        b.put("conversationKey", chat.key);
        b.put("kind", chat.kind);
        b.put("agent", chat.agent);
        b.put("model", "model-1");
        b.put("position", TurnRules.position(chat.messages));
        ArrayNode ms = b.putArray("messages");
        for (TurnRules.Message m : chat.messages) {
            ms.addObject().put("id", m.id()).put("role", m.role().name().toLowerCase()).put("text", m.text()).put("sessionId", m.sessionId());
        }
        lines.forEach(b.putArray("instructionLines")::add);
        if (promptsNow != null) {
            b.put("promptsNow", promptsNow);
        }
        if (chat.entry == null) {
            b.putNull("entry");
        } else {
            TurnRules.SessionEntry e = chat.entry;
            ObjectNode n = b.putObject("entry");
            n.put("sessionId", e.sessionId()).put("agent", e.agent()).put("model", e.model()).put("computerId", e.computerId())
                    .put("positionLeft", e.positionLeft()).put("messagesSent", e.messagesSent()).put("folder", e.folder())
                    .put("gone", e.gone());
            e.instructionLines().forEach(n.putArray("instructionLines")::add);
            if (e.promptsNoted() != null) {
                n.put("promptsNoted", e.promptsNoted());
            }
        }
        b.putObject("places").put("workspace", WORKSPACE).put("stateDir", STATE);
        return b;
    }

    /**
     * One turn of {@code chat} on the laptop: asks which session, "runs" it (answered; a new session gets a new id),
     * keeps the entry with {@link TurnRules#afterTurn} and reports TurnEnded. Returns the decision.
     */
    static JsonNode turn(Chat chat, List<String> lines, Integer promptsNow, Integer promptsAfter) throws Exception {
        String turnId = UUID.randomUUID().toString();
        ObjectNode req = turnRequest(chat, turnId, lines, promptsNow);
        JsonNode d = ok(post("/api/assistant/turns", LAPTOP, req), 200);
        TurnRules.Turn turn = new TurnRules.Turn(chat.agent, "model-1", "laptop", req.get("position").asInt(), lines, promptsNow);
        String sessionId;
        if (d.get("action").asText().equals("RESUME")) {
            sessionId = d.get("sessionId").asText();
            chat.entry = TurnRules.afterTurn(chat.entry, turn, true, promptsAfter);
        } else {
            sessionId = chat.key + "-s" + ++chat.sessions;
            TurnRules.Decision decided = new TurnRules.Decision(TurnRules.Action.valueOf(d.get("action").asText()), null, null,
                    List.of(), null, null, null, d.get("folder").asText(), d.get("chatFolder").asText(), null, null, null);
            chat.entry = TurnRules.afterTurn(decided, turn, sessionId, true, promptsAfter);
        }
        int n = chat.messages.size();
        chat.messages.add(new TurnRules.Message("m" + n, TurnRules.Role.USER, "question " + n, null));
        chat.messages.add(new TurnRules.Message("m" + (n + 1), TurnRules.Role.ASSISTANT, "answer " + n, sessionId));
        String ended = event("TurnEnded", "computer:laptop", JSON.createObjectNode().put("turnId", turnId).put("conversationKey", chat.key)
                .put("computerId", "laptop").put("answered", true).put("agentSessionId", sessionId)
                .put("messages", chat.entry.messagesSent()).put("promptsNoted", promptsAfter));
        JsonNode r = ok(post("/api/events", LAPTOP, ended), 200);
        assertThat(r.get("accepted").asInt()).as(r.toString()).isEqualTo(1);
        return d;
    }

    static String event(String type, String source, JsonNode payload) {
        ObjectNode e = JSON.createObjectNode();
        e.put("eventId", UUID.randomUUID().toString()).put("type", type).put("account", ACCOUNT).put("space", "local:laptop")
                .put("occurredAt", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString()).put("source", source);
        e.set("payload", payload);
        return e.toString();
    }

    static List<String> lines(String prefix, int n) {
        return IntStream.range(0, n).mapToObj(i -> prefix + " line " + i).toList();
    }

    // ---- the log and the views -------------------------------------------------------------------------------------

    /** Every event in sessions.events now (read committed). */
    static List<Event> log() {
        try (KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of("bootstrap.servers", rig.cluster.bootstrapServers(),
                "isolation.level", "read_committed"), new StringDeserializer(), Topics.EVENTS.valueSerde().deserializer())) {
            List<TopicPartition> parts = c.partitionsFor(Topics.EVENTS.name()).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            List<Event> out = new ArrayList<>();
            long until = System.currentTimeMillis() + 30_000;
            while (parts.stream().anyMatch(p -> c.position(p) < end.get(p)) && System.currentTimeMillis() < until) {
                for (ConsumerRecord<String, Event> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                }
            }
            return out;
        }
    }

    /** Publishes a view as the projector does: key {@code <account>/<conversationKey>}, the account's partition. */
    static void publish(ConversationView v) throws Exception {
        String key = Keys.of(v.getAccount(), v.getConversationKey());
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of("bootstrap.servers", rig.cluster.bootstrapServers()),
                new StringSerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            p.send(new ProducerRecord<>(Topics.ASSISTANT_VIEW.name(), Keys.accountPartition(key, GatewayOnBroker.PARTITIONS), key,
                    Topics.ASSISTANT_VIEW.valueSerde().serializer().serialize(Topics.ASSISTANT_VIEW.name(), v))).get();
        }
    }

    static ConversationView.Builder view(String key, ConversationKind kind) {
        return ConversationView.newBuilder().setAccount(ACCOUNT).setConversationKey(key).setKind(kind)
                .setSequence(SEQUENCE.incrementAndGet());
    }

    static dev.ensemble.sessions.views.ConversationDrop drop(String computer, Boolean ok) {
        return dev.ensemble.sessions.views.ConversationDrop.newBuilder().setComputerId(computer).setAskedAt(Instant.now())
                .setOk(ok).setConfirmedAt(ok == null ? null : Instant.now()).build();
    }

    static AskState ask(String askId, AskStatus status, String computer) {
        Instant t = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return AskState.newBuilder().setAskId(askId).setPrompt("prompt of " + askId).setRequestedAt(t).setStatus(status)
                .setComputerId(computer).setStartedAt(status == AskStatus.WAITING ? null : t).build();
    }

    // ---- the tests -----------------------------------------------------------------------------------------------

    @Test
    void aChatOf85TurnsRotatesOnceAtThe81stMessage() throws Exception {
        Chat chat = new Chat("chat-85", "chat", "claude-code");
        List<String> lines = lines("be brief", 3);
        List<String> decisions = new ArrayList<>();
        String first = null;
        for (int i = 1; i <= 85; i++) {
            JsonNode d = turn(chat, lines, null, null);
            decisions.add(d.get("action").asText() + (d.get("reason").isNull() ? "" : " " + d.get("reason").asText()));
            if (i == 1) {
                first = chat.entry.sessionId();
                assertThat(d.get("folder").asText()).isEqualTo(STATE + "/assistant/chat-85");
                assertThat(d.get("history")).isEmpty();
            }
            if (i == 81) {
                assertThat(d.get("replaced").get("sessionId").asText()).as("the replaced session is deleted at once").isEqualTo(first);
                assertThat(d.get("replaced").get("deleteFolder").asBoolean()).as("its folder is the chat's own").isTrue();
                assertThat(d.get("history")).as("the chat so far: the last 12 messages").hasSize(TurnRules.HISTORY_MESSAGES);
                assertThat(d.get("history").get(11).get("text").asText()).isEqualTo("answer 158");
            }
        }
        assertThat(decisions.get(0)).isEqualTo("NEW FIRST_TURN");
        assertThat(decisions.subList(1, 80)).containsOnly("RESUME");
        assertThat(decisions.get(80)).as("the 81st message goes to a new session").isEqualTo("NEW ROTATION_MESSAGES");
        assertThat(decisions.subList(81, 85)).containsOnly("RESUME");
        assertThat(decisions).filteredOn(s -> s.startsWith("NEW")).hasSize(2);
        assertThat(chat.entry.messagesSent()).isEqualTo(5);

        List<TurnDecided> decided = log().stream().filter(e -> e.getPayload() instanceof TurnDecided t && t.getConversationKey().equals("chat-85"))
                .map(e -> (TurnDecided) e.getPayload()).toList();
        assertThat(decided).hasSize(85);
        assertThat(decided.get(80).getReason()).hasToString("ROTATION_MESSAGES");
        assertThat(decided.get(80).getReplacedSessionId()).isEqualTo(first);
        assertThat(decided.get(80).getHistoryMessages()).isEqualTo(12);
        assertThat(decided.get(80).getPosition()).isEqualTo(160);
    }

    @Test
    void aCopilotChatWhoseInstructionsChangeBy40PercentGetsAnUpdateAndBy60PercentANewSession() throws Exception {
        Chat chat = new Chat("chat-copilot", "chat", "copilot");
        List<String> first = lines("rule", 10);
        assertThat(turn(chat, first, null, 1).get("reason").asText()).isEqualTo("FIRST_TURN");
        String session = chat.entry.sessionId();

        List<String> forty = new ArrayList<>(first.subList(0, 6));
        forty.addAll(lines("new rule", 4));
        JsonNode update = turn(chat, forty, 1, 2);
        assertThat(update.get("action").asText()).isEqualTo("RESUME");
        assertThat(update.get("sessionId").asText()).isEqualTo(session);
        assertThat(update.get("instructionsUpdate").get("lead").asText()).isEqualTo(TurnRules.INSTRUCTIONS_CHANGED);
        assertThat(update.get("instructionsUpdate").get("added")).extracting(JsonNode::asText).containsExactlyElementsOf(lines("new rule", 4));
        assertThat(update.get("instructionsUpdate").get("removed")).extracting(JsonNode::asText).containsExactlyElementsOf(first.subList(6, 10));

        List<String> sixty = new ArrayList<>(first.subList(0, 4));
        sixty.addAll(lines("other rule", 6));
        JsonNode rotated = turn(chat, sixty, 2, 1);
        assertThat(rotated.get("action").asText()).isEqualTo("NEW");
        assertThat(rotated.get("reason").asText()).isEqualTo("ROTATION_INSTRUCTIONS");
        assertThat(rotated.get("replaced").get("sessionId").asText()).isEqualTo(session);
        assertThat(rotated.get("history")).as("the chat so far").hasSize(4);
        assertThat(rotated.get("instructionsUpdate").isNull()).isTrue();

        TurnDecided logged = log().stream().filter(e -> e.getPayload() instanceof TurnDecided t && t.getConversationKey().equals("chat-copilot"))
                .map(e -> (TurnDecided) e.getPayload()).toList().get(1);
        assertThat(logged.getInstructionsAdded()).containsExactlyElementsOf(lines("new rule", 4));
        assertThat(logged.getInstructionsRemoved()).hasSize(4);
    }

    @Test
    void aClaudeCodeSessionTouchedOutsideIsRetiredAndTheChatGoesOnInANewOne() throws Exception {
        Chat chat = new Chat("chat-touched", "chat", "claude-code");
        turn(chat, List.of(), null, 1);
        JsonNode same = turn(chat, List.of(), 1, 2);
        assertThat(same.get("action").asText()).as("the count as noted: resumed").isEqualTo("RESUME");
        String touched = chat.entry.sessionId();
        JsonNode d = turn(chat, List.of(), 4, 1);
        assertThat(d.get("action").asText()).isEqualTo("NEW");
        assertThat(d.get("reason").asText()).isEqualTo("TOUCHED_OUTSIDE");
        assertThat(d.get("retiredSessionId").asText()).isEqualTo(touched);
        assertThat(d.get("replaced").isNull()).as("a touched session is kept, not deleted at once").isTrue();
        assertThat(d.get("history")).as("Ensemble's own history").hasSize(4);
        assertThat(chat.entry.sessionId()).isNotEqualTo(touched);
    }

    @Test
    void aTurnPostedAgainAnswersTheSameDecisionAndAppendsOneTurnDecided() throws Exception {
        Chat chat = new Chat("chat-again", "routine", "codex");
        ObjectNode req = turnRequest(chat, "turn-again-1", List.of("a", "b"), null);
        req.putObject("group").put("id", "g-1").put("name", "Ranking");
        req.put("keepDays", 45);
        req.put("nextRunAt", "2026-12-09T09:00:00Z");
        JsonNode first = ok(post("/api/assistant/turns", LAPTOP, req), 200);
        JsonNode again = ok(post("/api/assistant/turns", LAPTOP, req), 200);
        assertThat(first.has("duplicate")).isFalse();
        assertThat(again.get("duplicate").asBoolean()).isTrue();
        ((ObjectNode) again).remove("duplicate");
        assertThat(again).isEqualTo(first);
        assertThat(first.get("folder").asText()).as("the group's project folder").isEqualTo(WORKSPACE + "/projects/Ranking");
        assertThat(first.get("keepDays").asInt()).isEqualTo(45);
        HttpResponse<String> other = post("/api/assistant/turns", DESK, req);
        assertThat(other.statusCode()).as(other.body()).isEqualTo(409);
        assertThat(JSON.readTree(other.body()).get("error").asText()).isEqualTo("taken");
        assertThat(JSON.readTree(other.body()).get("computerId").asText()).isEqualTo("laptop");

        List<Event> decided = log().stream().filter(e -> e.getPayload() instanceof TurnDecided t && t.getTurnId().equals("turn-again-1")).toList();
        assertThat(decided).hasSize(1);
        Event e = decided.get(0);
        assertThat(e.getEventId()).isEqualTo(first.get("eventId").asText())
                .isEqualTo(UUID.nameUUIDFromBytes(("TurnDecided\u0000" + ACCOUNT + "\u0000turn-again-1").getBytes()).toString());
        assertThat(e.getSource()).isEqualTo("service:gateway");
        assertThat(e.getSpace()).isEqualTo("local:laptop");
        TurnDecided t = (TurnDecided) e.getPayload();
        assertThat(t.getConversationKind()).isEqualTo(ConversationKind.ROUTINE);
        assertThat(t.getComputerId()).isEqualTo("laptop");
        assertThat(t.getAgent()).isEqualTo("codex");
        assertThat(t.getGroupName()).isEqualTo("Ranking");
        assertThat(t.getKeepDays()).isEqualTo(45);
        assertThat(t.getNextRunAt()).isEqualTo(Instant.parse("2026-12-09T09:00:00Z"));
        assertThat(t.getFolder()).isEqualTo(WORKSPACE + "/projects/Ranking");
    }

    @Test
    void aBadTurnRequestIsAnswered400NamingTheField() throws Exception {
        Chat chat = new Chat("chat-bad", "chat", "claude-code");
        java.util.function.Function<java.util.function.Consumer<ObjectNode>, HttpResponse<String>> with = change -> {
            ObjectNode b = turnRequest(chat, "turn-bad", List.of(), null);
            change.accept(b);
            try {
                return post("/api/assistant/turns", LAPTOP, b);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        Map<String, java.util.function.Consumer<ObjectNode>> cases = new java.util.LinkedHashMap<>();
        cases.put("turnId", b -> b.remove("turnId"));
        cases.put("conversationKey", b -> b.put("conversationKey", " "));
        cases.put("kind", b -> b.put("kind", "banana"));
        cases.put("agent", b -> b.put("agent", "claude\u0000code"));
        cases.put("position", b -> b.put("position", -1));
        cases.put("messages[0].role", b -> b.putArray("messages").addObject().put("role", "robot"));
        cases.put("messages", b -> b.put("messages", "hello"));
        cases.put("instructionLines[1]", b -> b.putArray("instructionLines").add("ok").add(3));
        cases.put("group.name", b -> b.putObject("group").put("id", "g"));
        cases.put("keepDays", b -> b.put("keepDays", -2));
        cases.put("nextRunAt", b -> b.put("nextRunAt", "next tuesday"));
        cases.put("promptsNow", b -> b.put("promptsNow", "three"));
        cases.put("entry.sessionId", b -> b.putObject("entry").put("agent", "claude-code"));
        cases.put("entry.positionLeft", b -> b.putObject("entry").put("sessionId", "s").put("agent", "claude-code").put("positionLeft", 1.5));
        cases.put("places", b -> b.remove("places"));
        cases.put("places.stateDir", b -> b.putObject("places").put("workspace", "/w"));
        cases.put("askId", b -> b.put("askId", "ask-1"));
        for (Map.Entry<String, java.util.function.Consumer<ObjectNode>> c : cases.entrySet()) {
            HttpResponse<String> r = with.apply(c.getValue());
            assertThat(r.statusCode()).as(c.getKey() + ": " + r.body()).isEqualTo(400);
            JsonNode j = JSON.readTree(r.body());
            assertThat(j.get("error").asText()).isEqualTo("bad_request");
            assertThat(j.get("field").asText()).as(r.body()).isEqualTo(c.getKey());
            assertThat(j.get("message").asText()).startsWith(c.getKey() + ":");
        }
        HttpResponse<String> askWithoutId = with.apply(b -> b.put("kind", "ask"));
        assertThat(JSON.readTree(askWithoutId.body()).get("field").asText()).isEqualTo("askId");
        // sizes are bounded
        HttpResponse<String> many = with.apply(b -> {
            ArrayNode ms = b.putArray("messages");
            for (int i = 0; i <= AssistantJson.MAX_MESSAGES; i++) {
                ms.addObject().put("role", "user");
            }
        });
        assertThat(many.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(many.body()).get("field").asText()).isEqualTo("messages");
        assertThat(JSON.readTree(many.body()).get("limit").asText()).isEqualTo("2000");
        HttpResponse<String> longId = with.apply(b -> b.put("turnId", "t".repeat(257)));
        assertThat(JSON.readTree(longId.body()).get("field").asText()).isEqualTo("turnId");
        assertThat(JSON.readTree(longId.body()).get("limit").asText()).isEqualTo("256");
        HttpResponse<String> longMessage = with.apply(b -> b.putArray("messages").addObject().put("role", "assistant")
                .put("text", "x".repeat(AssistantJson.MAX_MESSAGE_CHARS + 1)));
        assertThat(JSON.readTree(longMessage.body()).get("field").asText()).isEqualTo("messages[0].text");
        assertThat(JSON.readTree(longMessage.body()).get("limit").asText()).isEqualTo("262144");
        HttpResponse<String> longLine = with.apply(b -> b.putArray("instructionLines").add("x".repeat(4097)));
        assertThat(JSON.readTree(longLine.body()).get("field").asText()).isEqualTo("instructionLines[0]");
        // not JSON, not an object, not a computer, another computer
        assertThat(ok(post("/api/assistant/turns", LAPTOP, "{\"turnId\": "), 400).get("message").asText()).contains("not valid JSON");
        assertThat(ok(post("/api/assistant/turns", LAPTOP, "[1]"), 400).get("message").asText()).contains("JSON object");
        assertThat(ok(post("/api/assistant/turns", ANA, turnRequest(chat, "turn-bad", List.of(), null)), 403).get("error").asText())
                .isEqualTo("forbidden");
        HttpResponse<String> otherComputer = with.apply(b -> b.put("computerId", "desk"));
        assertThat(otherComputer.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(otherComputer.body()).get("field").asText()).isEqualTo("computerId");
        assertThat(log().stream().filter(e -> e.getPayload() instanceof TurnDecided t && t.getConversationKey().equals("chat-bad")))
                .as("nothing of a refused turn is in the log").isEmpty();
    }

    @Test
    void asksOnOnePageGoInLineAndTheTurnOfOneNotNextIsRefused() throws Exception {
        String key = AskRules.sessionKey("ana", "task", "t-42");
        JsonNode a1 = ok(post("/api/pages/task/t-42/ensemble", ANA, "{\"prompt\":\"What is left to do?\"}"), 202);
        assertThat(a1.get("conversationKey").asText()).isEqualTo(key);
        assertThat(a1.get("status").asText()).isEqualTo("requested");
        String ask1 = a1.get("askId").asText();
        Event logged = log().stream().filter(e -> e.getEventId().equals(ask1)).findFirst().orElseThrow();
        AskRequested r = (AskRequested) logged.getPayload();
        assertThat(r.getAskId()).isEqualTo(ask1);
        assertThat(r.getConversationKey()).isEqualTo(key);
        assertThat(r.getPersonId()).isEqualTo("ana");
        assertThat(r.getPageKind()).isEqualTo("task");
        assertThat(r.getPageId()).isEqualTo("t-42");
        assertThat(r.getPrompt()).isEqualTo("What is left to do?");
        assertThat(logged.getSource()).isEqualTo("person:ana");

        // the projector's view: the first ask waits
        publish(view(key, ConversationKind.ASK).setPersonId("ana").setPageKind("task").setPageId("t-42")
                .setAsks(List.of(ask(ask1, AskStatus.WAITING, null))).build());
        await("/api/asks/" + ask1, ANA, j -> j.get("status").asText().equals("WAITING"));
        JsonNode a2 = ok(post("/api/pages/task/t-42/ensemble", ANA, "{\"prompt\":\"And after that?\"}"), 202);
        assertThat(a2.get("conversationKey").asText()).as("one session per person and page").isEqualTo(key);
        assertThat(a2.get("status").asText()).isEqualTo("waiting");
        assertThat(a2.get("message").asText()).isEqualTo("Waiting for the answer before this one…");
        assertThat(a2.get("waitingFor").asText()).isEqualTo(ask1);
        String ask2 = a2.get("askId").asText();
        publish(view(key, ConversationKind.ASK).setPersonId("ana").setPageKind("task").setPageId("t-42")
                .setAsks(List.of(ask(ask1, AskStatus.WAITING, null), ask(ask2, AskStatus.WAITING, null))).build());
        JsonNode second = await("/api/asks/" + ask2, ANA, j -> j.get("status").asText().equals("WAITING"));
        assertThat(second.get("message").asText()).isEqualTo(AskRules.WAITING);
        assertThat(await("/api/asks/" + ask1, ANA, j -> true).get("message").isNull()).as("the first is next").isTrue();

        Chat page = new Chat(key, "ask", "claude-code");
        ObjectNode turn2 = turnRequest(page, ask2, List.of(), null).put("askId", ask2);
        HttpResponse<String> early = post("/api/assistant/turns", LAPTOP, turn2);
        assertThat(early.statusCode()).as(early.body()).isEqualTo(409);
        assertThat(JSON.readTree(early.body()).get("error").asText()).isEqualTo("not_next");
        assertThat(JSON.readTree(early.body()).get("waitingFor").asText()).isEqualTo(ask1);
        ObjectNode turn1 = turnRequest(page, ask1, List.of(), null).put("askId", ask1);
        JsonNode d1 = ok(post("/api/assistant/turns", LAPTOP, turn1), 200);
        assertThat(d1.get("reason").asText()).isEqualTo("FIRST_TURN");
        assertThat(d1.get("keepDays").asInt()).as("an ask's session is sent with keepDays 1").isEqualTo(1);

        // the first runs: the second still waits for it; once answered the second is next
        publish(view(key, ConversationKind.ASK).setAsks(List.of(ask(ask1, AskStatus.RUNNING, "laptop"), ask(ask2, AskStatus.WAITING, null))).build());
        await("/api/asks/" + ask1, ANA, j -> j.get("status").asText().equals("RUNNING"));
        assertThat(JSON.readTree(post("/api/assistant/turns", LAPTOP, turn2).body()).get("waitingFor").asText()).isEqualTo(ask1);
        assertThat(ok(post("/api/assistant/turns", LAPTOP, turn1), 200).get("duplicate").asBoolean())
                .as("the running ask's decision asked for again").isTrue();
        AskState answered = AskState.newBuilder(ask(ask1, AskStatus.ANSWERED, "laptop")).setAnswer("Two tests.").setEndedAt(Instant.now()).build();
        publish(view(key, ConversationKind.ASK).setAsks(List.of(answered, ask(ask2, AskStatus.WAITING, null))).build());
        JsonNode done = await("/api/asks/" + ask1, ANA, j -> j.get("status").asText().equals("ANSWERED"));
        assertThat(done.get("answer").asText()).isEqualTo("Two tests.");
        assertThat(ok(post("/api/assistant/turns", LAPTOP, turn2), 200).get("action").asText()).isEqualTo("NEW");

        // a view with a lower sequence than the one kept changes nothing
        ConversationView stale = view(key, ConversationKind.ASK).setSequence(5).setAsks(List.of(ask(ask1, AskStatus.WAITING, null))).build();
        publish(stale);
        String unknown = UUID.randomUUID().toString();
        HttpResponse<String> notInView = post("/api/assistant/turns", LAPTOP, turnRequest(page, unknown, List.of(), null).put("askId", unknown));
        assertThat(notInView.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(notInView.body()).get("error").asText()).isEqualTo("ask_unknown");
        assertThat(notInView.headers().firstValue("Retry-After")).hasValue("1");
        Thread.sleep(1_000);
        assertThat(await("/api/asks/" + ask1, ANA, j -> true).get("status").asText()).isEqualTo("ANSWERED");
        assertThat(send("GET", "/api/asks/" + ask1, BO, null).statusCode()).as("another account's ask").isEqualTo(404);
    }

    @Test
    void anAskOnASurfaceAndBadAsksAreAnsweredNamingTheField() throws Exception {
        JsonNode a = ok(post("/api/ensemble/invoke", ANA, "{\"surface\":\"editor\",\"anchorKey\":\"doc-7\",\"prompt\":\"Summarise\"}"), 202);
        assertThat(a.get("conversationKey").asText()).isEqualTo(AskRules.sessionKey("ana", "editor", "doc-7"));
        assertThat(a.get("conversationKey").asText()).startsWith("ask-editor-");
        assertThat(log().stream().filter(e -> e.getEventId().equals(a.get("askId").asText()))).hasSize(1);

        assertThat(ok(post("/api/pages/widget/w1/ensemble", ANA, "{\"prompt\":\"x\"}"), 400).get("field").asText()).isEqualTo("kind");
        assertThat(ok(post("/api/pages/task/t1/ensemble", ANA, "{\"prompt\":\" \"}"), 400).get("field").asText()).isEqualTo("prompt");
        assertThat(ok(post("/api/pages/task/t1/ensemble", ANA, null), 400).get("field").asText()).isEqualTo("prompt");
        JsonNode tooLong = ok(post("/api/pages/task/t1/ensemble", ANA, JSON.createObjectNode().put("prompt", "x".repeat(4097))), 400);
        assertThat(tooLong.get("field").asText()).isEqualTo("prompt");
        assertThat(tooLong.get("limit").asText()).isEqualTo("4096");
        assertThat(ok(post("/api/ensemble/invoke", ANA, "{\"anchorKey\":\"a\",\"prompt\":\"x\"}"), 400).get("field").asText()).isEqualTo("surface");
        assertThat(ok(post("/api/ensemble/invoke", ANA, "{\"surface\":\"Bad Surface\",\"anchorKey\":\"a\",\"prompt\":\"x\"}"), 400)
                .get("field").asText()).isEqualTo("surface");
        assertThat(ok(post("/api/ensemble/invoke", ANA, "{\"surface\":\"editor\",\"prompt\":\"x\"}"), 400).get("field").asText()).isEqualTo("anchorKey");
        assertThat(ok(post("/api/pages/task/t1/ensemble", LAPTOP, "{\"prompt\":\"x\"}"), 403).get("error").asText()).isEqualTo("forbidden");
        assertThat(send("GET", "/api/asks/no-such-ask", ANA, null).statusCode()).isEqualTo(404);
    }

    @Test
    void conversationsAreListedReadAndDeletedAndTheDeletionIsAudited() throws Exception {
        Instant t = Instant.parse("2026-11-30T10:00:00Z");
        ConversationSession s = ConversationSession.newBuilder().setComputerId("laptop").setAgent("claude-code").setSessionId("s-1")
                .setMessages(3).setUpdatedAt(t).build();
        publish(view("chat-list-a", ConversationKind.CHAT).setLastUsedAt(t).setTurns(3).setSessions(List.of(s)).build());
        publish(view("routine-list-b", ConversationKind.ROUTINE).setLastUsedAt(t.plusSeconds(60)).setTurns(1)
                .setNextRunAt(t.plus(7, ChronoUnit.DAYS)).build());
        publish(view("chat-list-gone", ConversationKind.CHAT).setLastUsedAt(t.minusSeconds(60)).setDeleted(true)
                .setDeletion(ConversationDeletion.newBuilder().setRequestId("r-0").setRequestedBy(Requester.person).setReason("person")
                        .setAcceptedAt(t).setComputers(List.of(drop("laptop", true), drop("desk", null))).build()).build());
        JsonNode all = await("/api/assistant/conversations?limit=500", ANA, j -> j.get("conversations").findValuesAsText("conversationKey")
                .containsAll(List.of("chat-list-a", "routine-list-b", "chat-list-gone")));
        List<String> keys = all.get("conversations").findValuesAsText("conversationKey");
        assertThat(keys.indexOf("routine-list-b")).as("newest use first").isLessThan(keys.indexOf("chat-list-a"));
        JsonNode a = all.get("conversations").get(keys.indexOf("chat-list-a"));
        assertThat(a.get("kind").asText()).isEqualTo("chat");
        assertThat(a.get("turns").asInt()).isEqualTo(3);
        assertThat(a.get("computers")).extracting(JsonNode::asText).containsExactly("laptop");
        assertThat(all.get("conversations").get(keys.indexOf("chat-list-gone")).get("dropsPending").asInt())
                .as("the desk has not confirmed its drop").isEqualTo(1);
        assertThat(a.get("dropsPending").asInt()).isZero();
        assertThat(JSON.readTree(send("GET", "/api/assistant/conversations?kind=routine", ANA, null).body()).get("conversations")
                .findValuesAsText("kind")).containsOnly("routine");
        assertThat(JSON.readTree(send("GET", "/api/assistant/conversations?deleted=true", ANA, null).body()).get("conversations")
                .findValuesAsText("conversationKey")).contains("chat-list-gone").doesNotContain("chat-list-a");
        for (String bad : List.of("kind=novel", "deleted=maybe", "limit=0")) {
            HttpResponse<String> r = send("GET", "/api/assistant/conversations?" + bad, ANA, null);
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).get("field").asText()).isEqualTo(bad.substring(0, bad.indexOf('=')));
        }
        JsonNode detail = ok(send("GET", "/api/assistant/conversations/chat-list-a", ANA, null), 200);
        assertThat(detail.get("sessions").get(0).get("sessionId").asText()).isEqualTo("s-1");
        assertThat(detail.get("lastUsedAt").asText()).isEqualTo("2026-11-30T10:00:00Z");
        assertThat(send("GET", "/api/assistant/conversations/chat-list-a", BO, null).statusCode()).as("another account").isEqualTo(404);
        assertThat(JSON.readTree(send("GET", "/api/assistant/conversations", BO, null).body()).get("conversations")).isEmpty();

        assertThat(send("DELETE", "/api/assistant/conversations/chat-list-a", LAPTOP, null).statusCode()).isEqualTo(403);
        assertThat(send("DELETE", "/api/assistant/conversations/no-such-chat", ANA, null).statusCode()).isEqualTo(404);
        assertThat(ok(send("DELETE", "/api/assistant/conversations/chat-list-gone", ANA, null), 409).get("error").asText()).isEqualTo("already_deleted");
        JsonNode req = ok(send("DELETE", "/api/assistant/conversations/chat-list-a", ANA, null), 202);
        String requestId = req.get("requestId").asText();
        assertThat(req.get("conversationKey").asText()).isEqualTo("chat-list-a");
        Event e = log().stream().filter(x -> x.getEventId().equals(requestId)).findFirst().orElseThrow();
        ConversationDeletionRequested d = (ConversationDeletionRequested) e.getPayload();
        assertThat(d.getConversationKey()).isEqualTo("chat-list-a");
        assertThat(d.getRequestedBy()).isEqualTo(Requester.person);
        assertThat(d.getRequesterId()).isEqualTo("ana");
        assertThat(d.getReason()).isEqualTo("person");
        assertThat(e.getSource()).isEqualTo("person:ana");

        // the projector's audit record of it (conversationKey, and sessionId the conversation key) is shown as any deletion's;
        // the views above were written by this test, not folded from turns, so the projector's guard knows no such
        // conversation and skips it (AssistantWithProjectorHttpTest has an accepted one, asked of its computers)
        JsonNode shown = await(req.get("audit").asText(), ANA, j -> j.get("deletions").size() == 1
                && !j.get("deletions").get(0).path("decision").isNull()).get("deletions").get(0);
        assertThat(shown.get("requestId").asText()).isEqualTo(requestId);
        assertThat(shown.get("conversationKey").asText()).isEqualTo("chat-list-a");
        assertThat(shown.get("decision").asText()).isEqualTo("SKIPPED");
        assertThat(shown.get("skipReason").asText()).startsWith("unknown-conversation");
        assertThat(req.get("audit").asText()).isEqualTo("/api/audit/deletions?conversationKey=chat-list-a");
        assertThat(JSON.readTree(send("GET", "/api/audit/deletions?conversationKey=chat-list-b", ANA, null).body()).get("deletions"))
                .as("another conversation's").isEmpty();
        assertThat(JSON.readTree(send("GET", "/api/audit/deletions?sessionId=chat-list-a", ANA, null).body()).get("deletions")).hasSize(1);
    }

    @Test
    void nobodyPostsTheGatewaysOrTheGuardsAssistantEventsAndAComputerReportsOnlyForItself() throws Exception {
        ObjectNode decided = JSON.createObjectNode().put("turnId", "x").put("conversationKey", "c").put("conversationKind", "CHAT")
                .put("computerId", "laptop").put("agent", "codex").put("position", 0).put("action", "RESUME").put("folder", "/f");
        ObjectNode askRequested = JSON.createObjectNode().put("askId", "a").put("conversationKey", "ask-task-x").put("personId", "ana")
                .put("pageKind", "task").put("pageId", "t").put("prompt", "p");
        ObjectNode accepted = JSON.createObjectNode().put("conversationKey", "c").put("requestId", "r");
        accepted.putArray("computerIds").add("laptop");
        ObjectNode skipped = JSON.createObjectNode().put("conversationKey", "c").put("requestId", "r").put("reason", "kept: no");
        ObjectNode ended = JSON.createObjectNode().put("turnId", "x").put("conversationKey", "c").put("computerId", "desk").put("answered", true);
        ObjectNode dropped = JSON.createObjectNode().put("conversationKey", "c").put("requestId", "r").put("computerId", "laptop").put("ok", true);
        ObjectNode requested = JSON.createObjectNode().put("conversationKey", "c").put("requestedBy", "person").put("requesterId", "bo")
                .put("reason", "person");
        record Case(String token, String type, String source, JsonNode payload, String reason) {
        }
        List<Case> refused = List.of(
                new Case(LAPTOP, "TurnDecided", "service:gateway", decided, "decided only by the gateway"),
                new Case(WEB, "TurnDecided", "service:gateway", decided, "decided only by the gateway"),
                new Case(ANA, "AskRequested", "person:ana", askRequested, "POST /api/pages/{kind}/{id}/ensemble"),
                new Case(LAPTOP, "AskRequested", "computer:laptop", askRequested, "POST /api/pages/{kind}/{id}/ensemble"),
                new Case(LAPTOP, "ConversationDeletionAccepted", "service:projector", accepted, "projector's guard"),
                new Case(ANA, "ConversationDeletionSkipped", "service:projector", skipped, "projector's guard"),
                new Case(LAPTOP, "TurnEnded", "computer:laptop", ended, "only computer 'desk'"),
                new Case(ANA, "TurnEnded", "computer:desk", ended, "only computer 'desk'"),
                new Case(DESK, "ConversationDroppedOnComputer", "computer:desk", dropped, "only computer 'laptop'"),
                new Case(ANA, "ConversationDroppedOnComputer", "computer:laptop", dropped, "only computer 'laptop'"),
                new Case(ANA, "ConversationDeletionRequested", "person:ana", requested, "only as itself"),
                new Case(LAPTOP, "ConversationDeletionRequested", "computer:laptop", requested, "does not ask"));
        for (Case c : refused) {
            JsonNode r = ok(post("/api/events", c.token(), event(c.type(), c.source(), c.payload())), 403);
            assertThat(r.get("results").get(0).get("reason").asText()).as(c.toString()).startsWith("forbidden:").contains(c.reason());
        }
        assertThat(ok(post("/api/events", DESK, event("TurnEnded", "computer:desk", ended)), 200).get("accepted").asInt()).isEqualTo(1);
        assertThat(ok(post("/api/events", LAPTOP, event("ConversationDroppedOnComputer", "computer:laptop", dropped)), 200)
                .get("accepted").asInt()).isEqualTo(1);
        assertThat(ok(post("/api/events", WEB, event("TurnEnded", "service:cleanup", ended)), 200).get("accepted").asInt())
                .as("the cleanup's report of an ask that never reported back").isEqualTo(1);
    }

    @Test
    void theOpenApiDocumentListsTheAssistantEndpoints() throws Exception {
        String spec = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rig.gateway.port() + "/api/openapi.yaml")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        for (String path : List.of("/api/assistant/turns:", "/api/pages/{kind}/{id}/ensemble:", "/api/ensemble/invoke:",
                "/api/asks/{askId}:", "/api/assistant/conversations:", "/api/assistant/conversations/{id}:")) {
            assertThat(spec).contains("\n  " + path);
        }
        for (String schema : List.of("TurnRequest:", "TurnDecision:", "AskAnswer:", "Ask:", "ConversationSummary:", "ConversationView:")) {
            assertThat(spec).contains("\n    " + schema);
        }
        for (String type : List.of("TurnDecided", "TurnEnded", "AskRequested", "ConversationDeletionRequested",
                "ConversationDeletionAccepted", "ConversationDeletionSkipped", "ConversationDroppedOnComputer")) {
            assertThat(spec).contains(type);
        }
    }
}
