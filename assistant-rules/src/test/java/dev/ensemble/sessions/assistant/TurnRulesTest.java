package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.TurnRules.Action;
import dev.ensemble.sessions.assistant.TurnRules.Chat;
import dev.ensemble.sessions.assistant.TurnRules.Decision;
import dev.ensemble.sessions.assistant.TurnRules.Group;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.assistant.TurnRules.Message;
import dev.ensemble.sessions.assistant.TurnRules.OneOff;
import dev.ensemble.sessions.assistant.TurnRules.Places;
import dev.ensemble.sessions.assistant.TurnRules.Reason;
import dev.ensemble.sessions.assistant.TurnRules.Replaced;
import dev.ensemble.sessions.assistant.TurnRules.Role;
import dev.ensemble.sessions.assistant.TurnRules.SessionEntry;
import dev.ensemble.sessions.assistant.TurnRules.Turn;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The turn rules of the guide's §5 ({@link TurnRules}), one nested class per sentence, each a table at and around
 * its boundary: a chat's store entry and a turn in, a decision out.
 */
class TurnRulesTest {
    static final Places P = new Places("/home/ana/Ensemble", "/home/ana/.ensemble");
    static final String KEY = "chat-1";
    static final String OWN = "/home/ana/.ensemble/assistant/chat-1";
    static final List<String> INSTR = lines("rule", 10);

    static List<String> lines(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + " " + i);
        }
        return out;
    }

    /** 100 lines of which the first {@code k} are replaced by new ones. */
    static List<String> replaced(List<String> first, int k) {
        List<String> out = new ArrayList<>(first);
        for (int i = 0; i < k; i++) {
            out.set(i, "new " + i);
        }
        return out;
    }

    static SessionEntry entry(String agent, int positionLeft, int messagesSent, List<String> instr, Integer promptsNoted, boolean gone) {
        return new SessionEntry("s1", agent, "sonnet", "laptop", positionLeft, messagesSent, instr, OWN, promptsNoted, gone);
    }

    static SessionEntry entry(String agent, int positionLeft) {
        return entry(agent, positionLeft, 5, INSTR, null, false);
    }

    static Chat chat(Kind kind, SessionEntry e, List<Message> messages) {
        return new Chat(KEY, kind, null, null, e, messages);
    }

    static Chat chat(SessionEntry e) {
        return chat(Kind.CHAT, e, exchanges(5));
    }

    static Turn turn(String agent, int position) {
        return new Turn(agent, "sonnet", "laptop", position, INSTR, null);
    }

    /** {@code n} answered exchanges: 2n counted messages. */
    static List<Message> exchanges(int n) {
        List<Message> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add(new Message("u" + i, Role.USER, "question " + i, null));
            out.add(new Message("a" + i, Role.ASSISTANT, "answer " + i, "s1"));
        }
        return out;
    }

    static Decision decide(Chat c, Turn t) {
        return TurnRules.decide(c, t, P);
    }

    @Nested
    class AResumesTheChatsSessionWhenTheAgentIsTheSameAndTheChatIsWhereThatSessionLeftIt {
        @ParameterizedTest(name = "session {0} left {1}, turn {2} at {3} → {4} {5}")
        @CsvSource({
                // entry agent, position left, turn agent, turn position, action, reason
                "claude-code, 10, claude-code, 10, RESUME,",
                "claude-code, 10, claude-code,  9, NEW, POSITION_MOVED",
                "claude-code, 10, claude-code, 11, NEW, POSITION_MOVED",
                "claude-code, 10, claude-code, 12, NEW, POSITION_MOVED",
                "claude-code, 10, codex,       10, NEW, OTHER_AGENT",
                "copilot,      0, copilot,      0, RESUME,",
        })
        void table(String entryAgent, int left, String turnAgent, int position, Action action, Reason reason) {
            Decision d = decide(chat(entry(entryAgent, left)), turn(turnAgent, position));
            assertThat(d.action()).isEqualTo(action);
            assertThat(d.reason()).isEqualTo(reason);
            assertThat(d.sessionId()).isEqualTo(action == Action.RESUME ? "s1" : null);
        }

        @Test
        void aNewChatIsANewSession() {
            Decision d = decide(chat(Kind.CHAT, null, List.of()), turn("claude-code", 0));
            assertThat(d.action()).isEqualTo(Action.NEW);
            assertThat(d.reason()).isEqualTo(Reason.FIRST_TURN);
            assertThat(d.replaced()).isNull();
            assertThat(d.history()).isEmpty();
        }

        @Test
        void anEntryOfAnotherComputerIsNotResumedHereNorDeletedFromThere() {
            Decision d = decide(chat(entry("claude-code", 10)), new Turn("claude-code", "sonnet", "desktop", 10, INSTR, null));
            assertThat(d.action()).isEqualTo(Action.NEW);
            assertThat(d.reason()).isEqualTo(Reason.OTHER_COMPUTER);
            assertThat(d.replaced()).isNull();
            assertThat(d.history()).hasSize(10);
        }

        @Test
        void anotherModelAloneDoesNotStartANewSessionOnlyTheTurnItMovesTheChatOnBy() {
            Turn opus = new Turn("claude-code", "opus", "laptop", 10, INSTR, null);
            assertThat(decide(chat(entry("claude-code", 10)), opus).action()).isEqualTo(Action.RESUME);
        }

        @Test
        void aResumedTurnSendsOnlyTheMessage() {
            Decision d = decide(chat(entry("claude-code", 10)), turn("claude-code", 10));
            assertThat(d.history()).isEmpty();
            assertThat(d.replaced()).isNull();
            assertThat(d.instructionsUpdate()).isNull();
        }
    }

    @Nested
    class ATurnOnAnotherModelOrComputerMovesItOn {
        /** Laptop, then desktop, then laptop again: each computer keeps its own entry; the laptop's is behind. */
        @Test
        void aChatThatWentToAnotherComputerAndCameBackStartsANewSessionThereAndTheOldOneIsDeleted() {
            List<Message> messages = new ArrayList<>(exchanges(2));
            SessionEntry laptop = entry("claude-code", 4);
            Decision onDesktop = decide(chat(Kind.CHAT, null, messages), new Turn("claude-code", "sonnet", "desktop", 4, INSTR, null));
            assertThat(onDesktop.reason()).as("no entry on the desktop").isEqualTo(Reason.FIRST_TURN);
            assertThat(onDesktop.history()).as("the chat so far").hasSize(4);
            messages.add(new Message("u3", Role.USER, "from the desktop", null));
            messages.add(new Message("a3", Role.ASSISTANT, "answer", "d1"));
            Decision back = decide(chat(Kind.CHAT, laptop, messages), turn("claude-code", TurnRules.position(messages)));
            assertThat(back.action()).isEqualTo(Action.NEW);
            assertThat(back.reason()).isEqualTo(Reason.POSITION_MOVED);
            assertThat(back.replaced().sessionId()).isEqualTo("s1");
            assertThat(back.history()).extracting(Message::id).endsWith("u3", "a3");
        }
    }

    @Nested
    class TurnsOfOneChatRunOneAtATime {
        @Test
        void table() {
            record Case(String name, List<Line.Entry> turns, String next, List<String> waiting) {
            }
            for (Case c : List.of(
                    new Case("nothing in line", List.of(), null, List.of()),
                    new Case("one turn starts", List.of(new Line.Entry("t1", 1, Line.State.WAITING)), "t1", List.of("t1")),
                    new Case("while one runs none other starts",
                            List.of(new Line.Entry("t1", 1, Line.State.RUNNING), new Line.Entry("t2", 2, Line.State.WAITING)), null, List.of("t2")),
                    new Case("in the order they arrived",
                            List.of(new Line.Entry("t3", 3, Line.State.WAITING), new Line.Entry("t2", 2, Line.State.WAITING),
                                    new Line.Entry("t1", 1, Line.State.ENDED)), "t2", List.of("t2", "t3")))) {
                assertThat(Line.next(c.turns())).as(c.name()).isEqualTo(c.next());
                assertThat(Line.waiting(c.turns())).as(c.name()).isEqualTo(c.waiting());
            }
        }
    }

    @Nested
    class AMessageThatGotNoAnswerAndAFailedExchangeDoNotCount {
        static Message u(String id) {
            return new Message(id, Role.USER, id, null);
        }

        static Message a(String id) {
            return new Message(id, Role.ASSISTANT, id, "s1");
        }

        static Message err(String id) {
            return new Message(id, Role.ERROR, "the turn failed", null);
        }

        @Test
        void positionTable() {
            record Case(String name, List<Message> messages, int position) {
            }
            for (Case c : List.of(
                    new Case("nothing yet", List.of(), 0),
                    new Case("one exchange", List.of(u("u1"), a("a1")), 2),
                    new Case("a message with no answer (computer offline)", List.of(u("u1"), a("a1"), u("u2")), 2),
                    new Case("two unanswered messages in a row", List.of(u("u1"), u("u2"), u("u3"), a("a3")), 2),
                    new Case("a failed exchange: the message and its error", List.of(u("u1"), a("a1"), u("u2"), err("e2")), 2),
                    new Case("failed, then answered", List.of(u("u1"), a("a1"), u("u2"), err("e2"), u("u3"), a("a3")), 4),
                    new Case("an answer no session took part in", List.of(u("u1"), new Message("a1", Role.ASSISTANT, "a1", null)), 0))) {
                assertThat(TurnRules.position(c.messages())).as(c.name()).isEqualTo(c.position());
            }
        }

        @Test
        void aRoutineWhoseRunFailedWhileItsComputerSleptGoesOnInTheSameSession() {
            SessionEntry e = entry("claude-code", 4);
            Turn failed = turn("claude-code", 4);
            Decision first = decide(chat(e), failed);
            assertThat(first.action()).isEqualTo(Action.RESUME);
            SessionEntry after = TurnRules.afterTurn(e, failed, false, null);
            assertThat(after.positionLeft()).as("a failed exchange leaves the position").isEqualTo(4);
            assertThat(after.messagesSent()).isEqualTo(e.messagesSent());
            List<Message> messages = new ArrayList<>(exchanges(2));
            messages.add(new Message("u3", Role.USER, "run", null));
            messages.add(new Message("e3", Role.ERROR, "offline", null));
            Decision next = decide(new Chat(KEY, Kind.ROUTINE, null, null, after, messages), turn("claude-code", TurnRules.position(messages)));
            assertThat(next.action()).isEqualTo(Action.RESUME);
            assertThat(next.sessionId()).isEqualTo("s1");
        }

        @Test
        void anAnsweredTurnMovesThePositionPastTheMessageAndItsAnswer() {
            SessionEntry e = entry("claude-code", 4);
            SessionEntry after = TurnRules.afterTurn(e, turn("claude-code", 4), true, 7);
            assertThat(after.positionLeft()).isEqualTo(6);
            assertThat(after.messagesSent()).isEqualTo(e.messagesSent() + 1);
            assertThat(after.promptsNoted()).isEqualTo(7);
        }
    }

    @Nested
    class After80MessagesInOneSessionItStartsANewSessionWithTheChatSoFar {
        @ParameterizedTest(name = "{1} sent to a {0} session → {2}")
        @CsvSource({
                "claude-code, 0,  RESUME",
                "claude-code, 78, RESUME",
                "claude-code, 79, RESUME",
                "claude-code, 80, NEW",
                "claude-code, 81, NEW",
                "copilot,     79, RESUME",
                "copilot,     80, NEW",
        })
        void table(String agent, int sent, Action action) {
            Decision d = decide(chat(entry(agent, 10, sent, INSTR, null, false)), turn(agent, 10));
            assertThat(d.action()).isEqualTo(action);
            if (action == Action.NEW) {
                assertThat(d.reason()).isEqualTo(Reason.ROTATION_MESSAGES);
                assertThat(d.history()).as("the chat so far").isEqualTo(TurnRules.history(exchanges(5)));
            }
            assertThat(TurnRules.ROTATE_MESSAGES).isEqualTo(80);
        }

        @Test
        void aChatOf85TurnsRotatesOnce() {
            List<Message> messages = new ArrayList<>();
            SessionEntry e = null;
            List<String> sessions = new ArrayList<>();
            List<Reason> reasons = new ArrayList<>();
            for (int i = 1; i <= 85; i++) {
                Turn t = turn("claude-code", TurnRules.position(messages));
                Decision d = decide(chat(Kind.CHAT, e, messages), t);
                if (d.action() == Action.NEW) {
                    String id = "s" + (sessions.size() + 1);
                    sessions.add(id);
                    reasons.add(d.reason());
                    e = TurnRules.afterTurn(d, t, id, true, null);
                } else {
                    e = TurnRules.afterTurn(e, t, true, null);
                }
                messages.add(new Message("u" + i, Role.USER, "q", null));
                messages.add(new Message("a" + i, Role.ASSISTANT, "a", e.sessionId()));
            }
            assertThat(sessions).containsExactly("s1", "s2");
            assertThat(reasons).containsExactly(Reason.FIRST_TURN, Reason.ROTATION_MESSAGES);
            assertThat(e.messagesSent()).as("turns 81..85").isEqualTo(5);
        }

        @Test
        void theReplacedSessionIsDeletedAtOnceWithItsFolderWhenTheFolderIsTheChatsOwn() {
            Decision own = decide(chat(entry("claude-code", 10, 80, INSTR, null, false)), turn("claude-code", 10));
            assertThat(own.replaced()).isEqualTo(new Replaced("s1", "claude-code", "laptop", OWN, true));
            SessionEntry inProject = new SessionEntry("s1", "claude-code", "sonnet", "laptop", 10, 80, INSTR,
                    "/home/ana/Ensemble/projects/Launch", null, false);
            Chat grouped = new Chat(KEY, Kind.CHAT, new Group("g1", "Launch"), null, inProject, exchanges(5));
            Decision d = decide(grouped, turn("claude-code", 10));
            assertThat(d.replaced()).isEqualTo(new Replaced("s1", "claude-code", "laptop", "/home/ana/Ensemble/projects/Launch", false));
        }

        @Test
        void anAskIsResumedHoweverManyAsksCameBefore() {
            Chat ask = chat(Kind.ASK, entry("claude-code", 3, 200, INSTR, null, false), List.of());
            Decision d = decide(ask, turn("claude-code", 0));
            assertThat(d.action()).as("sent without position, no rotation by count").isEqualTo(Action.RESUME);
            assertThat(d.keepDays()).isEqualTo(1);
        }
    }

    @Nested
    class ForAnAgentThatKeepsTheFirstInstructionsMoreThanHalfOfTheLinesChangedStartsANewSession {
        static final List<String> HUNDRED = lines("line", 100);

        @ParameterizedTest(name = "{0}: {1} of 100 lines replaced → {2}, update {3}")
        @CsvSource({
                "copilot,      0, RESUME, false",
                "copilot,      1, RESUME, true",
                "copilot,     40, RESUME, true",
                "copilot,     49, RESUME, true",
                "copilot,     50, RESUME, true",
                "copilot,     51, NEW,    false",
                "copilot,     60, NEW,    false",
                "cursor,      51, NEW,    false",
                "gemini-cli,  51, NEW,    false",
                "claude-code, 50, RESUME, false",
                "claude-code, 51, RESUME, false",
                "claude-code, 100, RESUME, false",
                "codex,       60, RESUME, false",
        })
        void table(String agent, int k, Action action, boolean update) {
            SessionEntry e = entry(agent, 10, 5, HUNDRED, null, false);
            Turn t = new Turn(agent, "m", "laptop", 10, replaced(HUNDRED, k), null);
            Decision d = decide(chat(e), t);
            assertThat(d.action()).isEqualTo(action);
            assertThat(d.instructionsUpdate() != null).isEqualTo(update);
            if (action == Action.NEW) {
                assertThat(d.reason()).isEqualTo(Reason.ROTATION_INSTRUCTIONS);
                assertThat(d.replaced().sessionId()).isEqualTo("s1");
            }
            if (update) {
                assertThat(d.instructionsUpdate().lead()).isEqualTo("Your instructions changed since this conversation began");
                assertThat(d.instructionsUpdate().added()).hasSize(k).first().isEqualTo("new 0");
                assertThat(d.instructionsUpdate().removed()).hasSize(k).first().isEqualTo("line 0");
            }
        }

        @ParameterizedTest(name = "changedShare: {0}")
        @CsvSource(delimiter = '|', value = {
                "both empty                 | 0  | 0  | 0   | 0.0",
                "from none                  | 0  | 4  | 0   | 1.0",
                "every line removed         | 4  | 0  | 0   | 1.0",
                "two lines added to four    | 4  | 6  | 0   | 0.2",
                "eight added to four: half  | 4  | 12 | 0   | 0.5",
                "twelve added to four       | 4  | 16 | 0   | 0.6",
                "one of four replaced       | 4  | 4  | 1   | 0.25",
                "two of four replaced       | 4  | 4  | 2   | 0.5",
                "three of four replaced     | 4  | 4  | 3   | 0.75",
        })
        void changedShareTable(String name, int first, int now, int replace, double share) {
            List<String> a = lines("line", first);
            List<String> b = new ArrayList<>(replaced(lines("line", Math.min(first, now)), replace));
            for (int i = first; i < now; i++) {
                b.add("extra " + i);
            }
            assertThat(TurnRules.changedShare(a, b)).as(name).isEqualTo(share);
        }

        @Test
        void blankLinesTrailingSpacesAndOrderDoNotCountAsChanges() {
            List<String> a = List.of("one", "", "two", "three");
            List<String> b = List.of("three  ", "two", "   ", "one");
            assertThat(TurnRules.changedShare(a, b)).isZero();
            assertThat(TurnRules.instructionsUpdate(a, b)).isNull();
        }

        @Test
        void theUpdateIsAlwaysAgainstTheSessionsFirstInstructions() {
            SessionEntry e = entry("copilot", 10, 5, List.of("a", "b", "c", "d"), null, false);
            SessionEntry after = TurnRules.afterTurn(e, new Turn("copilot", "m", "laptop", 10, List.of("a", "b", "c", "x"), null), true, null);
            assertThat(after.instructionLines()).containsExactly("a", "b", "c", "d");
            Decision d = decide(chat(after), new Turn("copilot", "m", "laptop", 12, List.of("a", "b", "c", "y"), null));
            assertThat(d.instructionsUpdate().added()).containsExactly("y");
            assertThat(d.instructionsUpdate().removed()).containsExactly("d");
        }
    }

    @Nested
    class OtherwiseItStartsOneWithTheChatSoFarTheLast12Messages {
        @ParameterizedTest(name = "{0} answered exchanges → history of {1}, first {2}")
        @CsvSource({
                "0, 0,",
                "5, 10, u1",
                "6, 12, u1",
                "7, 12, u2",
                "8, 12, u3",
        })
        void table(int exchanges, int size, String firstId) {
            List<Message> history = TurnRules.history(exchanges(exchanges));
            assertThat(history).hasSize(size);
            if (size > 0) {
                assertThat(history.get(0).id()).isEqualTo(firstId);
                assertThat(history.get(size - 1).id()).isEqualTo("a" + exchanges);
            }
            assertThat(TurnRules.HISTORY_MESSAGES).isEqualTo(12);
        }

        @Test
        void unansweredMessagesAndFailedExchangesAreLeftOutOfTheHistory() {
            List<Message> m = new ArrayList<>(exchanges(6));
            m.add(new Message("u7", Role.USER, "lost", null));
            m.add(new Message("u8", Role.USER, "failed", null));
            m.add(new Message("e8", Role.ERROR, "error", null));
            List<Message> h = TurnRules.history(m);
            assertThat(h).hasSize(12);
            assertThat(h).extracting(Message::id).doesNotContain("u7", "u8", "e8").startsWith("u1");
        }

        @Test
        void aSessionTheAgentCannotReopenFallsBackToANewSessionWithTheChatSoFar() {
            Decision d = decide(chat(entry("claude-code", 10, 5, INSTR, null, true)), turn("claude-code", 10));
            assertThat(d.action()).isEqualTo(Action.NEW);
            assertThat(d.reason()).isEqualTo(Reason.SESSION_GONE);
            assertThat(d.history()).hasSize(10);
        }
    }

    @Nested
    class WhenTheCountIsHigherBeforeTheNextTurnTheChatGoesOnInANewSessionAndTheTouchedOneIsRetired {
        @ParameterizedTest(name = "{0}: noted {1}, now {2} → {3}")
        @CsvSource({
                "claude-code, 3, 3, RESUME",
                "claude-code, 3, 4, NEW",
                "claude-code, 3, 9, NEW",
                "claude-code, 3, 2, RESUME",
                "claude-code,  , 4, RESUME",
                "claude-code, 3,  , RESUME",
                "copilot,     3, 4, NEW",
                "codex,       3, 4, RESUME",
                "gemini-cli,  3, 4, RESUME",
        })
        void table(String agent, Integer noted, Integer now, Action action) {
            SessionEntry e = entry(agent, 10, 5, INSTR, noted, false);
            Decision d = decide(chat(e), new Turn(agent, "m", "laptop", 10, INSTR, now));
            assertThat(d.action()).isEqualTo(action);
            if (action == Action.NEW) {
                assertThat(d.reason()).isEqualTo(Reason.TOUCHED_OUTSIDE);
                assertThat(d.retired()).as("kept unresumed").isEqualTo("s1");
                assertThat(d.replaced()).as("not deleted at once").isNull();
                assertThat(d.history()).as("Ensemble's own history").hasSize(10);
            } else {
                assertThat(d.retired()).isNull();
            }
        }

        @Test
        void aTouchedSessionIsRetiredEvenWhenTheAgentAlsoChanged() {
            Decision d = decide(chat(entry("claude-code", 10, 5, INSTR, 3, false)), new Turn("codex", "m", "laptop", 10, INSTR, 4));
            assertThat(d.reason()).isEqualTo(Reason.TOUCHED_OUTSIDE);
            assertThat(d.retired()).isEqualTo("s1");
            assertThat(d.replaced()).isNull();
        }
    }

    @Nested
    class ATurnMayNameAGroupItsAgentThenWorksInTheGroupsProjectFolder {
        @Test
        void table() {
            record Case(String name, Kind kind, Group group, String folder, String groupName, Integer keepDays) {
            }
            for (Case c : List.of(
                    new Case("a chat with no group works in its own folder", Kind.CHAT, null, OWN, null, null),
                    new Case("a grouped chat works in the group's project folder", Kind.CHAT, new Group("g1", "Launch"),
                            "/home/ana/Ensemble/projects/Launch", "Launch", null),
                    new Case("a node's turns use the node as the group and keep a session 7 days", Kind.NODE_CONVERSATION,
                            new Group("node-ada", "Ada"), "/home/ana/Ensemble/projects/Ada (Ensemble Node)", "Ada (Ensemble Node)", 7),
                    new Case("a routine", Kind.ROUTINE, null, OWN, null, null),
                    new Case("a group name with a slash stays one folder", Kind.CHAT, new Group("g2", "a/b"),
                            "/home/ana/Ensemble/projects/a-b", "a/b", null))) {
                Decision d = decide(new Chat(KEY, c.kind(), c.group(), null, null, List.of()), turn("claude-code", 0));
                assertThat(d.folder()).as(c.name()).isEqualTo(c.folder());
                assertThat(d.chatFolder()).as(c.name() + ": the turn's own files stay in the chat's folder").isEqualTo(OWN);
                assertThat(d.group() == null ? null : d.group().name()).as(c.name()).isEqualTo(c.groupName());
                assertThat(d.keepDays()).as(c.name()).isEqualTo(c.keepDays());
            }
        }

        @Test
        void aNodeConversationsOwnKeepDaysWins() {
            Decision d = decide(new Chat(KEY, Kind.NODE_CONVERSATION, new Group("n", "Ada"), 3, null, List.of()), turn("codex", 0));
            assertThat(d.keepDays()).isEqualTo(3);
        }
    }

    /** "a folder per chat, &lt;state&gt;/assistant/&lt;key&gt;": one folder of its own, never another chat's, never outside. */
    @Nested
    class AFolderPerChat {
        @ParameterizedTest(name = "key \"{0}\" is its own name")
        @CsvSource({
                "0f9c2a1e-6b7d-4a8e-9f00-123456789abc",
                "ask-page-3f2a9c0d1e4b5a6f",
                "chat_1.v2",
                "-",
        })
        void aPlainKeyIsItsOwnFolderName(String key) {
            assertThat(TurnRules.chatFolderName(key)).isEqualTo(key);
            assertThat(TurnRules.chatFolder(P, key)).isEqualTo("/home/ana/.ensemble/assistant/" + key);
        }

        /**
         * Pairs of keys that must get two folders, compared ignoring case (a file system that ignores case): a hashed
         * name a safe key could spell, keys differing only in case, and a key spelling the bare hash of another.
         */
        @ParameterizedTest(name = "\"{0}\" and \"{1}\" get two folders")
        @CsvSource(delimiter = '|', value = {
                "abc/             | abc--ee08f01097d67f87",
                "abc/             | abc---ee08f01097d67f87",
                "Chat-1           | chat-1",
                "CHAT-1           | Chat-1",
                "ABC              | abc",
                "a--b             | a-b",
                "''               | 09d67f87ee08f010",
                "x/y              | x-y",
        })
        void twoKeysNeverShareAFolderEvenIgnoringCase(String a, String b) {
            String na = TurnRules.chatFolderName(a);
            String nb = TurnRules.chatFolderName(b);
            assertThat(na).as(a + " vs " + b).isNotEqualToIgnoringCase(nb);
            // each name is of one kind only: a safe key's (no "--") or a hashed one (ends "--" + 16 hex)
            for (String n : List.of(na, nb)) {
                assertThat(n.contains("--")).as(n).isEqualTo(n.matches(".*--[0-9a-f]{16}"));
                assertThat(n).as(n).isLowerCase();
            }
        }

        @Test
        void aKeyWithAnUpperCaseLetterOrADoubleDashIsHashed() {
            assertThat(TurnRules.chatFolderName("Chat-1")).startsWith("chat-1--").hasSize(8 + 16);
            assertThat(TurnRules.chatFolderName("a--b")).startsWith("a--b--").hasSize(6 + 16);
            assertThat(TurnRules.chatFolderName("")).startsWith("chat--").hasSize(6 + 16);
        }

        @Test
        void anyOtherKeyIsItsSafeCharactersAndAHashSoTwoKeysNeverShareAFolder() {
            List<String> keys = List.of("", ".", "..", "../x", "..\\x", "a/b", "a\\b", "a-b", "a b", "a\nb", ".hidden",
                    "chat/../../etc", "ünïcode", "x".repeat(128), "x".repeat(129), "x".repeat(500));
            java.util.Set<String> names = new java.util.HashSet<>();
            for (String key : keys) {
                String name = TurnRules.chatFolderName(key);
                assertThat(name).as(key).isNotIn("", ".", "..").doesNotContain("/", "\\").doesNotStartWith(".")
                        .matches("[A-Za-z0-9._-]{1,128}");
                names.add(name);
            }
            assertThat(names).as("one folder per key").hasSize(keys.size());
            assertThat(TurnRules.chatFolderName("a/b")).startsWith("a-b--").hasSize(5 + 16);
            assertThat(TurnRules.chatFolderName("x".repeat(128))).isEqualTo("x".repeat(128));
            assertThat(TurnRules.chatFolderName("x".repeat(500))).hasSize(64 + 2 + 16);
            assertThat(TurnRules.chatFolderName("a/b")).as("the same key, the same folder").isEqualTo(TurnRules.chatFolderName("a/b"));
        }
    }

    @Nested
    class AOneOffCompletionKeepsNoSessionAndLeavesNoneInTheAgent {
        @ParameterizedTest(name = "{0} → {1}")
        @CsvSource({
                "claude-code, NO_SESSION_PERSISTENCE",
                "codex,       EPHEMERAL_THREAD",
                "copilot,     DELETE_AFTER_TURN",
                "cursor,      DELETE_AFTER_TURN",
                "opencode,    DELETE_AFTER_TURN",
        })
        void table(String agent, OneOff how) {
            Decision d = decide(chat(Kind.ONE_OFF, entry(agent, 0), List.of()), turn(agent, 0));
            assertThat(d.action()).isEqualTo(Action.NONE);
            assertThat(d.oneOff()).isEqualTo(how);
            assertThat(d.sessionId()).isNull();
            assertThat(d.replaced()).isNull();
            assertThatThrownBy(() -> TurnRules.afterTurn(d, turn(agent, 0), "x", true, null))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
