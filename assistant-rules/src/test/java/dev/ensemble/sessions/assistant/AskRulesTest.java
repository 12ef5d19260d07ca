package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.AskRules.Ask;
import dev.ensemble.sessions.assistant.AskRules.AskState;
import dev.ensemble.sessions.assistant.AskRules.Pending;
import dev.ensemble.sessions.assistant.AskRules.Place;
import dev.ensemble.sessions.assistant.AskRules.Sweep;
import dev.ensemble.sessions.assistant.TurnRules.Action;
import dev.ensemble.sessions.assistant.TurnRules.Chat;
import dev.ensemble.sessions.assistant.TurnRules.Decision;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.assistant.TurnRules.Message;
import dev.ensemble.sessions.assistant.TurnRules.Places;
import dev.ensemble.sessions.assistant.TurnRules.Reason;
import dev.ensemble.sessions.assistant.TurnRules.Role;
import dev.ensemble.sessions.assistant.TurnRules.SessionEntry;
import dev.ensemble.sessions.assistant.TurnRules.Turn;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The ask rules of the guide's §5 ({@link AskRules}), one nested class per sentence, tables at their boundaries. */
class AskRulesTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");

    @Nested
    class EachPageHasOneSessionPerPersonWhoAsksThere {
        @Test
        void theKeyIsAskKindAndAHashOfPersonKindAndId() {
            String key = AskRules.sessionKey("ana", "task", "t-42");
            assertThat(key).matches("ask-task-[0-9a-f]{32}");
            assertThat(AskRules.sessionKey("ana", "task", "t-42")).as("the same triple, the same key").isEqualTo(key);
            assertThat(List.of(AskRules.sessionKey("bob", "task", "t-42"), AskRules.sessionKey("ana", "page", "t-42"),
                    AskRules.sessionKey("ana", "task", "t-43"), AskRules.sessionKey("ana", "task", "t-4"),
                    AskRules.sessionKey("ana", "taskt", "-42")))
                    .as("another person, kind or id gives another key; parts do not run into each other")
                    .doesNotContain(key).doesNotHaveDuplicates();
        }

        @Test
        void aSurfacesKeyUsesTheSurfaceAndItsAnchorKey() {
            assertThat(AskRules.sessionKey("ana", "today", "today:2026-11-02")).startsWith("ask-today-");
        }
    }

    @Nested
    class AsksOnOnePageByOnePersonAreAnsweredOneAfterAnotherInTheOrderTheyWereMade {
        static Ask ask(String id, long inLine, AskState s) {
            return new Ask(id, inLine, s, s == AskState.RUNNING ? T : null);
        }

        @Test
        void table() {
            record Case(String name, List<Ask> asks, List<Place> expected) {
            }
            String w = AskRules.WAITING;
            for (Case c : List.of(
                    new Case("one ask runs at once", List.of(ask("a1", 1, AskState.WAITING)), List.of(new Place("a1", true, null))),
                    new Case("three asks: the first runs, the others wait",
                            List.of(ask("a3", 3, AskState.WAITING), ask("a1", 1, AskState.WAITING), ask("a2", 2, AskState.WAITING)),
                            List.of(new Place("a1", true, null), new Place("a2", false, w), new Place("a3", false, w))),
                    new Case("never two at once", List.of(ask("a1", 1, AskState.RUNNING), ask("a2", 2, AskState.WAITING)),
                            List.of(new Place("a2", false, w))),
                    new Case("never one ahead of an earlier one, even one that arrived running first",
                            List.of(ask("a2", 2, AskState.RUNNING), ask("a1", 1, AskState.WAITING)),
                            List.of(new Place("a1", false, w))),
                    new Case("answered, failed or cleared asks hold nothing up",
                            List.of(ask("a1", 1, AskState.ANSWERED), ask("a2", 2, AskState.FAILED), ask("a3", 3, AskState.CLEARED),
                                    ask("a4", 4, AskState.WAITING), ask("a5", 5, AskState.WAITING)),
                            List.of(new Place("a4", true, null), new Place("a5", false, w))))) {
                assertThat(AskRules.inLine(c.asks())).as(c.name()).isEqualTo(c.expected());
            }
            assertThat(w).isEqualTo("Waiting for the answer before this one…");
        }
    }

    @Nested
    class APageSessionGoneGetsThatSessionsEarlierAsksAndAnswersAtMost8 {
        static List<Message> pairs(int n, String sessionId) {
            List<Message> out = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                out.add(new Message(sessionId + "-q" + i, Role.USER, "ask " + i, null));
                out.add(new Message(sessionId + "-a" + i, Role.ASSISTANT, "answer " + i, sessionId));
            }
            return out;
        }

        @ParameterizedTest(name = "{0} earlier asks and answers → {1}, oldest kept {2}")
        @CsvSource({
                "0, 0,",
                "1, 1, s1-q1",
                "7, 7, s1-q1",
                "8, 8, s1-q1",
                "9, 8, s1-q2",
                "20, 8, s1-q13",
        })
        void table(int n, int kept, String oldest) {
            List<Message> h = AskRules.askHistory(pairs(n, "s1"), "s1");
            assertThat(h).hasSize(2 * kept);
            if (kept > 0) {
                assertThat(h.get(0).id()).isEqualTo(oldest);
                assertThat(h.get(h.size() - 1).id()).isEqualTo("s1-a" + n);
            }
            assertThat(AskRules.ASK_HISTORY).isEqualTo(8);
        }

        @Test
        void onlyThatSessionsAsksAndAnsweredOnes() {
            List<Message> m = new ArrayList<>(pairs(3, "s0"));
            m.addAll(pairs(2, "s1"));
            m.add(new Message("lost", Role.USER, "never answered", null));
            m.add(new Message("failed", Role.USER, "failed", null));
            m.add(new Message("err", Role.ERROR, "error", null));
            assertThat(AskRules.askHistory(m, "s1")).extracting(Message::id).containsExactly("s1-q1", "s1-a1", "s1-q2", "s1-a2");
            assertThat(AskRules.askHistory(m, null)).isEmpty();
        }

        @Test
        void theAskTurnStartsTheNewSessionWithThatHistoryAndKeepDays1() {
            List<Message> m = pairs(9, "s1");
            SessionEntry gone = new SessionEntry("s1", "claude-code", "sonnet", "laptop", 0, 9, List.of(), "/s/assistant/k", null, true);
            Chat c = new Chat("ask-task-x", Kind.ASK, null, null, gone, m);
            Decision d = TurnRules.decide(c, new Turn("claude-code", "sonnet", "laptop", 0, List.of(), null), new Places("/w", "/s"));
            assertThat(d.action()).isEqualTo(Action.NEW);
            assertThat(d.reason()).isEqualTo(Reason.SESSION_GONE);
            assertThat(d.history()).hasSize(16);
            assertThat(d.keepDays()).as("sent with keepDays: 1").isEqualTo(1);
        }
    }

    @Nested
    class ThirtyMinutesAfterTheLastAnswerTheSessionIsDeleted {
        @ParameterizedTest(name = "{0} after the last answer → delete {1}")
        @CsvSource({
                "PT0S,          false",
                "PT29M59.999S,  false",
                "PT30M,         true",
                "PT30M0.001S,   true",
                "PT31M,         true",
        })
        void table(Duration since, boolean delete) {
            Sweep s = AskRules.sweep(new Pending("k", T, List.of()), T.plus(since));
            assertThat(s.deleteNow()).isEqualTo(delete);
            assertThat(s.nextAt()).isEqualTo(delete ? null : T.plus(Duration.ofMinutes(30)));
            assertThat(s.cleared()).isEmpty();
        }

        @Test
        void anAskInLineKeepsTheSession() {
            Pending p = new Pending("k", T, List.of(new Ask("a2", 2, AskState.WAITING, null)));
            Sweep s = AskRules.sweep(p, T.plus(Duration.ofHours(1)));
            assertThat(s.deleteNow()).isFalse();
        }
    }

    @Nested
    class AnAskThatNeverReportedBackIsClearedTwoHoursAfterItBegan {
        @ParameterizedTest(name = "began {0} ago → cleared {1}")
        @CsvSource({
                "PT1H59M59.999S, false",
                "PT2H,           true",
                "PT2H0.001S,     true",
        })
        void table(Duration since, boolean cleared) {
            Pending p = new Pending("k", T.minus(Duration.ofHours(5)), List.of(new Ask("a1", 1, AskState.RUNNING, T)));
            Sweep s = AskRules.sweep(p, T.plus(since));
            assertThat(s.cleared()).isEqualTo(cleared ? List.of("a1") : List.of());
            if (cleared) {
                assertThat(s.deleteNow()).as("its last answer was hours ago").isTrue();
            } else {
                assertThat(s.deleteNow()).isFalse();
                assertThat(s.nextAt()).isEqualTo(T.plus(Duration.ofHours(2)));
            }
        }

        @Test
        void aSessionNeverAnsweredGoesWhenItsLastAskIsCleared() {
            Pending p = new Pending("k", null, List.of(new Ask("a1", 1, AskState.RUNNING, T)));
            assertThat(AskRules.sweep(p, T.plus(Duration.ofHours(2))).deleteNow()).isTrue();
        }

        @Test
        void aClearedAskAnsweredRecentlyStillWaitsThirtyMinutes() {
            Pending p = new Pending("k", T.plus(Duration.ofMinutes(110)), List.of(new Ask("a1", 1, AskState.RUNNING, T)));
            Sweep s = AskRules.sweep(p, T.plus(Duration.ofHours(2)));
            assertThat(s.cleared()).containsExactly("a1");
            assertThat(s.deleteNow()).isFalse();
            assertThat(s.nextAt()).isEqualTo(T.plus(Duration.ofMinutes(140)));
        }
    }
}
