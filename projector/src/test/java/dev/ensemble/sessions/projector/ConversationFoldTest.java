package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationView;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pure fold of the assistant conversations and the guard of their deletions ({@link ConversationFold}, guide §5, §6),
 * as tables: given turns and asks, when a request at an instant, expect a decision; each at its boundary.
 */
class ConversationFoldTest {
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    static final IdleRules.Config C = IdleRules.Config.defaults();

    static TurnDecided turn(String key, ConversationKind kind, String turnId, String computer, String sessionId, Integer keepDays) {
        return (TurnDecided) AssistantEvents.decided(key, kind, turnId, computer, sessionId, null, keepDays, T0).getPayload();
    }

    static TurnEnded end(String key, String turnId, String computer, boolean answered, String sessionId, String answer) {
        return (TurnEnded) AssistantEvents.ended(key, turnId, computer, answered, sessionId, 1, answer, T0).getPayload();
    }

    /** A conversation of {@code kind} with one answered turn on the laptop, decided at T0 and ended at {@code endedAt}. */
    static ConversationView used(ConversationKind kind, Integer keepDays, Instant endedAt) {
        ConversationView v = ConversationFold.turnDecided(null, "acct", turn("c", kind, "t1", "laptop", null, keepDays), T0);
        return ConversationFold.turnEnded(v, end("c", "t1", "laptop", true, "s-1", null), endedAt, false);
    }

    static ConversationDeletionRequested request(Requester by, String requester, String reason) {
        return ConversationDeletionRequested.newBuilder().setConversationKey("c").setRequestedBy(by).setRequesterId(requester).setReason(reason).build();
    }

    static String code(ConversationFold.Decision d) {
        return d.accepted() ? "accepted" : d.code();
    }

    @Nested
    class SessionsUnusedFor30DaysOrTheChatsKeepDaysAreDropped {
        @ParameterizedTest(name = "{0} keepDays {1}, {2} after the last use: {3}")
        @CsvSource({
                "CHAT,,PT720H,accepted",
                "CHAT,,PT719H59M,not-idle",
                "CHAT,3,PT72H,accepted",
                "CHAT,3,PT71H59M,not-idle",
                "CHAT,0,PT100000H,kept",
                "CHAT,-1,PT0S,not-idle",
                "CHAT,-1,PT719H59M,not-idle",
                "CHAT,-1,PT720H,accepted",
                "NODE_CONVERSATION,-3,PT167H59M,not-idle",
                "NODE_CONVERSATION,,PT168H,accepted",
                "NODE_CONVERSATION,,PT167H59M,not-idle",
                "ROUTINE,,PT2160H,accepted",
                "ROUTINE,,PT2159H59M,not-idle",
                "ONE_OFF,,PT100000H,kept",
        })
        void idle(ConversationKind kind, Integer keepDays, Duration after, String expected) {
            ConversationView v = used(kind, keepDays, T0);
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "idle"), T0.plus(after), C))).isEqualTo(expected);
        }

        @Test
        void aNegativeKeepDaysWrittenPastTheGatewayIsFoldedAsUnset() {
            assertThat(used(ConversationKind.CHAT, -5, T0).getKeepDays()).isNull();
            assertThat(used(ConversationKind.CHAT, 3, T0).getKeepDays()).isEqualTo(3);
        }

        @Test
        void aRunningTurnIsNotIdle() {
            ConversationView v = ConversationFold.turnDecided(used(ConversationKind.CHAT, null, T0), "acct",
                    turn("c", ConversationKind.CHAT, "t2", "laptop", "s-1", null), T0);
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "idle"), T0.plus(Duration.ofDays(60)), C)))
                    .isEqualTo("not-idle");
        }
    }

    @Nested
    class AnAskSessionIsDeleted30MinutesAfterTheLastAnswer {
        ConversationView answered(Instant answeredAt) {
            ConversationView v = ConversationFold.askRequested(null, "acct", "a1", ask("a1", "what?"), T0);
            v = ConversationFold.turnDecided(v, "acct", turn("c", ConversationKind.ASK, "a1", "laptop", null, 1), T0);
            return ConversationFold.turnEnded(v, end("c", "a1", "laptop", true, "s-a", "this"), answeredAt, false);
        }

        @ParameterizedTest(name = "{0} after the answer: {1}")
        @CsvSource({"PT30M,accepted", "PT29M59S,not-idle", "PT2H,accepted"})
        void afterTheAnswer(Duration after, String expected) {
            Instant answeredAt = T0.plusSeconds(60);
            for (String reason : List.of("ask-answered", "idle")) {
                assertThat(code(ConversationFold.guard(answered(answeredAt), request(Requester.system, null, reason), answeredAt.plus(after), C)))
                        .as(reason).isEqualTo(expected);
            }
        }

        @Test
        void anAskWaitingKeepsTheSession() {
            ConversationView v = ConversationFold.askRequested(answered(T0), "acct", "a2", ask("a2", "and?"), T0.plusSeconds(5));
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "ask-answered"), T0.plus(Duration.ofHours(3)), C)))
                    .isEqualTo("not-idle");
        }

        @Test
        void theLineMovesWaitingRunningAnsweredAndBoundsItsTexts() {
            ConversationView v = answered(T0);
            assertThat(v.getAsks()).singleElement().satisfies(a -> {
                assertThat(a.getStatus()).isEqualTo(AskStatus.ANSWERED);
                assertThat(a.getComputerId()).isEqualTo("laptop");
                assertThat(a.getAnswer()).isEqualTo("this");
            });
            String big = "x".repeat(2_001);
            ConversationView w = ConversationFold.askRequested(v, "acct", "a2", ask("a2", big), T0);
            assertThat(w.getAsks().get(1).getPrompt()).hasSize(2_000).endsWith("…");
            assertThat(ConversationFold.askRequested(v, "acct", "a2", ask("a2", "x".repeat(2_000)), T0).getAsks().get(1).getPrompt())
                    .hasSize(2_000).doesNotEndWith("…");
            w = ConversationFold.turnEnded(w, end("c", "a2", "laptop", true, "s-a", big), T0, false);
            assertThat(w.getAsks().get(1).getAnswer()).hasSize(2_000).endsWith("…");
        }

        @Test
        void aLineKeeps50AsksLeavingOutItsOldestFinishedOnesNeverAWaitingOne() {
            ConversationView v = null;
            for (int i = 1; i <= 51; i++) {
                v = ConversationFold.askRequested(v, "acct", "a" + i, ask("a" + i, "q"), T0);
            }
            assertThat(v.getAsks()).as("50 waiting: the 51st is not kept, the line's head stays").hasSize(50);
            assertThat(v.getAsks().get(0).getAskId()).isEqualTo("a1");
            assertThat(v.getAsks().get(49).getAskId()).isEqualTo("a50");
            v = ConversationFold.turnEnded(v, end("c", "a1", "laptop", true, "s-a", "answer"), T0, false);
            v = ConversationFold.askRequested(v, "acct", "a52", ask("a52", "q"), T0);
            assertThat(v.getAsks()).as("the answered a1 makes room").hasSize(50);
            assertThat(v.getAsks().get(0).getAskId()).isEqualTo("a2");
            assertThat(v.getAsks().get(49).getAskId()).isEqualTo("a52");
        }
    }

    @Nested
    class DeletingAChatDeletesItsSession {
        @Test
        void aPersonsRequestNamesEveryComputerAndSessionRetiredOnesToo() {
            ConversationView v = used(ConversationKind.CHAT, null, T0);
            TurnDecided touched = turn("c", ConversationKind.CHAT, "t2", "desktop", null, null);
            touched.setRetiredSessionId("s-old");
            v = ConversationFold.turnDecided(v, "acct", touched, T0);
            v = ConversationFold.turnEnded(v, end("c", "t2", "desktop", true, "s-2", null), T0, false);
            ConversationFold.Decision d = ConversationFold.guard(v, request(Requester.person, "ana", "person"), T0, C);
            assertThat(d.accepted()).isTrue();
            assertThat(d.computers()).containsExactly("laptop", "desktop");
            assertThat(d.agentSessionIds()).containsExactly("s-1", "s-2", "s-old");
        }

        @Test
        void unknownDeletedAndAnotherPersonsAskLineAreSkipped() {
            assertThat(code(ConversationFold.guard(null, request(Requester.person, "ana", "person"), T0, C))).isEqualTo("unknown-conversation");
            ConversationView v = used(ConversationKind.CHAT, null, T0);
            ConversationView deleted = ConversationFold.accepted(v, "r1", Requester.person, "person", List.of("laptop"), T0);
            assertThat(code(ConversationFold.guard(deleted, request(Requester.person, "ana", "person"), T0, C))).isEqualTo("already-deleted");
            ConversationView line = ConversationFold.askRequested(null, "acct", "a1", ask("a1", "q"), T0);
            assertThat(code(ConversationFold.guard(line, request(Requester.person, "bob", "person"), T0, C))).isEqualTo("not-owner");
            assertThat(code(ConversationFold.guard(line, request(Requester.person, "ana", "person"), T0, C))).isEqualTo("accepted");
            assertThat(code(ConversationFold.guard(v, request(Requester.node, "n1", "node-idle"), T0, C))).isEqualTo("not-owner");
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "retired"), T0, C))).isEqualTo("unknown-reason");
        }

        @Test
        void aRetryAsksTheComputersThatHaveNotConfirmed() {
            ConversationView v = used(ConversationKind.CHAT, null, T0);
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "retry"), T0, C))).isEqualTo("not-deleted");
            v = ConversationFold.accepted(v, "r1", Requester.person, "person", List.of("laptop", "desktop"), T0);
            ConversationFold.Decision d = ConversationFold.guard(v, request(Requester.system, null, "retry"), T0, C);
            assertThat(d.computers()).containsExactly("laptop", "desktop");
            v = ConversationFold.dropped(v, drop("laptop", true), T0);
            v = ConversationFold.dropped(v, drop("desktop", false), T0);
            assertThat(ConversationFold.guard(v, request(Requester.system, null, "retry"), T0, C).computers())
                    .as("a failed drop is still pending").containsExactly("desktop");
            v = ConversationFold.dropped(v, drop("desktop", true), T0);
            assertThat(code(ConversationFold.guard(v, request(Requester.system, null, "retry"), T0, C))).isEqualTo("nothing-pending");
            assertThat(ConversationFold.dropped(v, drop("phone", true), T0)).as("a computer never asked: nothing to fold").isNull();
        }
    }

    @Nested
    class OneChatOneSession {
        @Test
        void aNewSessionReplacesTheOldOneAndAnEntryKeepsItsNewest50Replaced() {
            ConversationView v = used(ConversationKind.CHAT, null, T0);
            for (int i = 0; i < 51; i++) {
                TurnDecided t = turn("c", ConversationKind.CHAT, "r" + i, "laptop", null, null);
                t.setReplacedSessionId("old-" + i);
                v = ConversationFold.turnDecided(v, "acct", t, T0);
            }
            assertThat(v.getSessions()).singleElement().satisfies(s -> {
                assertThat(s.getSessionId()).as("NEW: known when the turn ends").isNull();
                assertThat(s.getReplacedSessionIds()).hasSize(50).startsWith("old-1").endsWith("old-50");
            });
            assertThat(v.getTurns()).isEqualTo(52);
        }

        @Test
        void anEntryKeepsItsNewest50Retired() {
            ConversationView v = used(ConversationKind.CHAT, null, T0);
            for (int i = 0; i < 51; i++) {
                TurnDecided t = turn("c", ConversationKind.CHAT, "r" + i, "laptop", null, null);
                t.setRetiredSessionId("retired-" + i);
                v = ConversationFold.turnDecided(v, "acct", t, T0);
            }
            assertThat(v.getSessions()).singleElement().satisfies(s ->
                    assertThat(s.getRetiredSessionIds()).hasSize(ConversationFold.REPLACED).startsWith("retired-1").endsWith("retired-50"));
        }

        @Test
        void aOneOffKeepsNoEntry() {
            ConversationView v = ConversationFold.turnDecided(null, "acct", turn("c", ConversationKind.ONE_OFF, "t1", "laptop", null, null), T0);
            assertThat(v.getSessions()).isEmpty();
            assertThat(v.getRunningTurn().getTurnId()).isEqualTo("t1");
            v = ConversationFold.turnEnded(v, end("c", "t1", "laptop", true, null, null), T0.plusSeconds(1), false);
            assertThat(v.getRunningTurn()).isNull();
            assertThat(v.getSequence()).isEqualTo(2);
        }

        @Test
        void aTurnEndedOfNoConversationFoldsNothing() {
            assertThat(ConversationFold.turnEnded(null, end("c", "t1", "laptop", true, "s", null), T0, false)).isNull();
        }
    }

    static AskRequested ask(String askId, String prompt) {
        Event e = AssistantEvents.ask("c", askId, "ana", prompt, T0);
        return (AskRequested) e.getPayload();
    }

    static ConversationDroppedOnComputer drop(String computer, boolean ok) {
        return (ConversationDroppedOnComputer) AssistantEvents.dropped("c", "r1", computer, ok, T0).getPayload();
    }
}
