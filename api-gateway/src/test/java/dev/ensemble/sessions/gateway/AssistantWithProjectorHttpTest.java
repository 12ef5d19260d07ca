package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.Event;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;

import static dev.ensemble.sessions.gateway.AssistantHttpTest.ANA;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.DESK;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.JSON;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.LAPTOP;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.await;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.event;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.log;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.ok;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.post;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.send;
import static dev.ensemble.sessions.gateway.AssistantHttpTest.turnRequest;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant endpoints with the projector's conversation fold and guard on a real broker (no view written by the
 * test): three asks on one page answered in order, each refused while an earlier one is unanswered; a chat on two
 * computers deleted with one of them offline, that one asked again when it comes back, and the audit of it all.
 */
class AssistantWithProjectorHttpTest {
    @BeforeAll
    static void start() throws Exception {
        AssistantHttpTest.start();
    }

    @AfterAll
    static void stop() {
        AssistantHttpTest.stop();
    }

    @Test
    void threeAsksOnOnePageAreAnsweredInOrder() throws Exception {
        String key = AskRules.sessionKey("ana", "page", "p-1");
        String[] asks = new String[3];
        for (int i = 0; i < 3; i++) {
            JsonNode a = ok(post("/api/pages/page/p-1/ensemble", ANA, "{\"prompt\":\"question " + i + "\"}"), 202);
            assertThat(a.get("status").asText()).isEqualTo(i == 0 ? "requested" : "waiting");
            asks[i] = a.get("askId").asText();
            String id = asks[i];
            await("/api/asks/" + id, ANA, j -> j.get("status").asText().equals("WAITING"));
        }
        assertThat(await("/api/asks/" + asks[2], ANA, j -> true).get("message").asText()).isEqualTo(AskRules.WAITING);
        AssistantHttpTest.Chat page = new AssistantHttpTest.Chat(key, "ask", "claude-code");
        for (int i = 0; i < 3; i++) {
            for (int later = i + 1; later < 3; later++) {
                HttpResponse<String> early = post("/api/assistant/turns", LAPTOP,
                        turnRequest(page, asks[later], List.of(), null).put("askId", asks[later]));
                assertThat(early.statusCode()).as(early.body()).isEqualTo(409);
                assertThat(JSON.readTree(early.body()).get("waitingFor").asText()).isEqualTo(asks[i]);
            }
            JsonNode d = ok(post("/api/assistant/turns", LAPTOP, turnRequest(page, asks[i], List.of(), null).put("askId", asks[i])), 200);
            assertThat(d.get("keepDays").asInt()).isEqualTo(1);
            String id = asks[i];
            await("/api/asks/" + id, ANA, j -> j.get("status").asText().equals("RUNNING") && j.get("computerId").asText().equals("laptop"));
            ObjectNode ended = JSON.createObjectNode().put("turnId", id).put("conversationKey", key).put("computerId", "laptop")
                    .put("answered", true).put("agentSessionId", "ask-session").put("messages", i + 1).put("answer", "answer " + i);
            ok(post("/api/events", LAPTOP, event("TurnEnded", "computer:laptop", ended)), 200);
            JsonNode done = await("/api/asks/" + id, ANA, j -> j.get("status").asText().equals("ANSWERED"));
            assertThat(done.get("answer").asText()).isEqualTo("answer " + i);
        }
    }

    @Test
    void aChatDeletedWithOneComputerOfflineIsAskedAgainWhenItComesBackAndAudited() throws Exception {
        ok(post("/api/events", LAPTOP, event("ComputerStatus", "computer:laptop", JSON.createObjectNode().put("computerId", "laptop")
                .put("online", true))), 200);
        AssistantHttpTest.Chat chat = new AssistantHttpTest.Chat("chat-two-computers", "chat", "claude-code");
        AssistantHttpTest.turn(chat, List.of(), null, null);
        // the next turn runs on the desk (no entry there: a new session of the chat so far)
        String turnId = UUID.randomUUID().toString();
        ObjectNode onDesk = turnRequest(chat, turnId, List.of(), null);
        onDesk.putNull("entry");
        JsonNode d = ok(post("/api/assistant/turns", DESK, onDesk), 200);
        assertThat(d.get("reason").asText()).isEqualTo("FIRST_TURN");
        ok(post("/api/events", DESK, event("TurnEnded", "computer:desk", JSON.createObjectNode().put("turnId", turnId)
                .put("conversationKey", chat.key).put("computerId", "desk").put("answered", true).put("agentSessionId", "desk-s1")
                .put("messages", 1))), 200);
        ok(post("/api/events", DESK, event("ComputerStatus", "computer:desk", JSON.createObjectNode().put("computerId", "desk")
                .put("online", false))), 200);
        await("/api/assistant/conversations/" + chat.key, ANA, j -> j.get("sessions").size() == 2 && !j.get("running").asBoolean());

        JsonNode req = ok(send("DELETE", "/api/assistant/conversations/" + chat.key, ANA, null), 202);
        String requestId = req.get("requestId").asText();
        JsonNode audit = await(req.get("audit").asText(), ANA, j -> j.get("deletions").size() == 1).get("deletions").get(0);
        assertThat(audit.get("requestId").asText()).isEqualTo(requestId);
        assertThat(audit.get("decision").asText()).isEqualTo("ACCEPTED");
        assertThat(audit.get("computersAsked")).extracting(JsonNode::asText).containsExactlyInAnyOrder("laptop", "desk");
        ok(post("/api/events", LAPTOP, event("ConversationDroppedOnComputer", "computer:laptop", JSON.createObjectNode()
                .put("conversationKey", chat.key).put("requestId", requestId).put("computerId", "laptop").put("ok", true))), 200);
        await("/api/assistant/conversations?deleted=true", ANA, j -> j.toString().contains("\"conversationKey\":\"" + chat.key + "\"")
                && summary(j, chat.key).get("dropsPending").asInt() == 1);

        // the desk comes back: asked again, naming only it
        ok(post("/api/events", DESK, event("ComputerStatus", "computer:desk", JSON.createObjectNode().put("computerId", "desk")
                .put("online", true))), 200);
        long until = System.currentTimeMillis() + 60_000;
        List<ConversationDeletionAccepted> accepted = List.of();
        while (accepted.size() < 2 && System.currentTimeMillis() < until) {
            accepted = log().stream().map(Event::getPayload).filter(p -> p instanceof ConversationDeletionAccepted a
                    && a.getRequestId().equals(requestId)).map(p -> (ConversationDeletionAccepted) p).toList();
            Thread.sleep(200);
        }
        assertThat(accepted).hasSize(2);
        assertThat(accepted.get(1).getComputerIds()).containsExactly("desk");
        ok(post("/api/events", DESK, event("ConversationDroppedOnComputer", "computer:desk", JSON.createObjectNode()
                .put("conversationKey", chat.key).put("requestId", requestId).put("computerId", "desk").put("ok", true))), 200);
        await("/api/assistant/conversations?deleted=true", ANA, j -> summary(j, chat.key).get("dropsPending").asInt() == 0);
        JsonNode done = await(req.get("audit").asText(), ANA, j -> "DELETED".equals(j.get("deletions").get(0).get("status").asText()))
                .get("deletions").get(0);
        assertThat(done.get("answers").findValuesAsText("computerId")).containsExactlyInAnyOrder("laptop", "desk");
    }

    private static JsonNode summary(JsonNode list, String key) {
        for (JsonNode c : list.get("conversations")) {
            if (c.get("conversationKey").asText().equals(key)) {
                return c;
            }
        }
        return JSON.createObjectNode().put("dropsPending", -1);
    }
}
