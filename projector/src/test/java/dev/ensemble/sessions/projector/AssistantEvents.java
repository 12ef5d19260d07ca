package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnAction;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.events.TurnReason;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;

/** Builders of the assistant conversations' events (guide §5, §6) for the projector's tests, in {@link DeletionFixture}'s account. */
final class AssistantEvents {
    private AssistantEvents() {
    }

    static Event event(Object payload, Instant at, String source) {
        return DeletionFixture.event(payload, at, source);
    }

    /** A RESUME (sessionId not null) or NEW first turn decided by the gateway, eventId name-based on the turn. */
    static Event decided(String key, ConversationKind kind, String turnId, String computer, String sessionId, Instant at) {
        return decided(key, kind, turnId, computer, sessionId, null, null, at);
    }

    static Event decided(String key, ConversationKind kind, String turnId, String computer, String sessionId, String replaced,
                         Integer keepDays, Instant at) {
        TurnDecided t = TurnDecided.newBuilder().setTurnId(turnId).setConversationKey(key).setConversationKind(kind).setComputerId(computer)
                .setAgent("claude-code").setModel("opus").setPosition(0)
                .setAction(kind == ConversationKind.ONE_OFF ? TurnAction.NONE : sessionId != null ? TurnAction.RESUME : TurnAction.NEW)
                .setReason(kind == ConversationKind.ONE_OFF || sessionId != null ? null : replaced != null ? TurnReason.ROTATION_MESSAGES : TurnReason.FIRST_TURN)
                .setSessionId(sessionId).setReplacedSessionId(replaced).setFolder("/state/assistant/" + key).setKeepDays(keepDays).build();
        Event e = event(t, at, ConversationProcessor.GATEWAY);
        e.setEventId(UUID.nameUUIDFromBytes(("turn:" + turnId).getBytes(StandardCharsets.UTF_8)).toString());
        return e;
    }

    static Event ended(String key, String turnId, String computer, boolean answered, String sessionId, int messages, String answer, Instant at) {
        return event(TurnEnded.newBuilder().setTurnId(turnId).setConversationKey(key).setComputerId(computer).setAnswered(answered)
                .setAgentSessionId(sessionId).setMessages(messages).setAnswer(answer).setError(answered ? null : "failed").build(),
                at, "computer:" + computer);
    }

    static Event ask(String key, String askId, String person, String prompt, Instant at) {
        Event e = event(AskRequested.newBuilder().setAskId(askId).setConversationKey(key).setPersonId(person).setPageKind("task")
                .setPageId("task-1").setPrompt(prompt).build(), at, ConversationProcessor.GATEWAY);
        e.setEventId(askId);
        return e;
    }

    static Event deleteRequest(String key, Requester by, String requester, String reason, Instant at) {
        return event(ConversationDeletionRequested.newBuilder().setConversationKey(key).setRequestedBy(by).setRequesterId(requester)
                .setReason(reason).build(), at, by == Requester.system ? "service:cleanup" : "person:" + requester);
    }

    static Event dropped(String key, String requestId, String computer, boolean ok, Instant at) {
        return dropped(key, requestId, computer, ok, at, "computer:" + computer);
    }

    static Event dropped(String key, String requestId, String computer, boolean ok, Instant at, String source) {
        return event(ConversationDroppedOnComputer.newBuilder().setConversationKey(key).setRequestId(requestId).setComputerId(computer)
                .setOk(ok).setError(ok ? null : "disk full").build(), at, source);
    }
}
