package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.assistant.DropRules;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDeletion;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The minute tick's look at one assistant conversation ({@link ConversationSweepPlanner}), one nested table per
 * sentence of the guide (§5, §6), at the boundaries: 30 days, keepDays 0, 7 days, the routine's 30..90 days, 30
 * minutes, 2 hours, 5 minutes.
 */
class ConversationSweepPlannerTest {
    static final IdleRules.Config C = IdleRules.Config.defaults();
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final String ACCOUNT = "acct-1";
    static final Duration MS = Duration.ofMillis(1);

    static ConversationView.Builder view(String key, ConversationKind kind) {
        return ConversationView.newBuilder().setAccount(ACCOUNT).setConversationKey(key).setKind(kind).setSequence(1)
                .setLastUsedAt(T).setFirstTurnAt(T);
    }

    static ConversationSweepPlanner.Plan plan(ConversationView v, Duration since) {
        return ConversationSweepPlanner.plan(v, Map.of(), T.plus(since), C);
    }

    static String reasonOf(ConversationSweepPlanner.Plan p) {
        return p.request() == null ? null : p.request().reason();
    }

    @Nested
    class ChatsUnusedFor30DaysOrTheirKeepDaysAreDeleted {
        @ParameterizedTest(name = "chat, keepDays {0}, unused {1} → {2}")
        @CsvSource({
                " , P29DT23H59M59.999S, ",
                " , P30D,               idle",
                " , P31D,               idle",
                "3, P2DT23H59M59.999S,  ",
                "3, P3D,                idle",
                "60, P30D,              ",
                "60, P60D,              idle",
                "0, P30D,               ",
                "0, P10000D,            ",
        })
        void table(Integer keepDays, Duration since, String reason) {
            assertThat(reasonOf(plan(view("chat-1", ConversationKind.CHAT).setKeepDays(keepDays).build(), since))).isEqualTo(reason);
        }

        @Test
        void notDueIsLookedAtAgainAtItsDeadlineAndKeepDaysZeroNeverAgain() {
            assertThat(plan(view("chat-1", ConversationKind.CHAT).build(), Duration.ofDays(1)).nextAt()).isEqualTo(T.plus(Duration.ofDays(30)));
            assertThat(plan(view("chat-1", ConversationKind.CHAT).setKeepDays(0).build(), Duration.ofDays(1)).nextAt()).isNull();
        }

        @Test
        void notWhileATurnRunsItsEndChangesTheView() {
            Instant started = T.plus(Duration.ofDays(30));
            ConversationView v = view("chat-1", ConversationKind.CHAT).setRunningTurn(dev.ensemble.sessions.views.RunningTurn.newBuilder()
                    .setTurnId("t9").setComputerId("laptop").setStartedAt(started).build()).build();
            ConversationSweepPlanner.Plan p = plan(v, Duration.ofDays(31).minus(MS));
            assertThat(p.request()).as("unused 31 days, but a turn began a day ago less 1 ms").isNull();
            assertThat(p.clears()).isEmpty();
            assertThat(p.nextAt()).as("looked at again when the turn is a day old").isEqualTo(started.plus(ConversationSweepPlanner.TURN_STALE));
        }

        @ParameterizedTest(name = "{0}: a turn without its report for {1} → cleared {2}")
        @CsvSource({
                "CHAT,              PT23H59M59.999S, false",
                "CHAT,              P1D,             true",
                "ROUTINE,           P1D,             true",
                "NODE_CONVERSATION, P2D,             true",
        })
        void aTurnThatNeverReportedBackIsEndedAsFailedADayAfterItBegan(ConversationKind kind, Duration running, boolean cleared) {
            ConversationView v = view("chat-1", kind).setLastUsedAt(T).setRunningTurn(dev.ensemble.sessions.views.RunningTurn.newBuilder()
                    .setTurnId("t9").setComputerId("laptop").setStartedAt(T).build()).build();
            ConversationSweepPlanner.Plan p = plan(v, running);
            assertThat(p.request()).as("the idle rules wait for the turn's end").isNull();
            assertThat(p.clears()).hasSize(cleared ? 1 : 0);
            if (cleared) {
                List<dev.ensemble.sessions.events.Event> events = ConversationSweepPlanner.events(v, p, T.plus(running));
                dev.ensemble.sessions.events.TurnEnded ended = (dev.ensemble.sessions.events.TurnEnded) events.get(0).getPayload();
                assertThat(ended.getTurnId()).isEqualTo("t9");
                assertThat(ended.getComputerId()).isEqualTo("laptop");
                assertThat(ended.getAnswered()).isFalse();
                assertThat(ended.getError()).isEqualTo(ConversationSweepPlanner.TURN_CLEARED_ERROR);
                assertThat(events.get(0).getEventId()).as("the same turn cleared again has the same id")
                        .isEqualTo(ConversationSweepPlanner.events(v, plan(v, running.plusHours(3)), T).get(0).getEventId());
            }
        }

        @Test
        void aConversationNeverUsedAndAOneOffAreLeftAlone() {
            assertThat(plan(view("chat-1", ConversationKind.CHAT).setLastUsedAt(null).build(), Duration.ofDays(400)))
                    .isEqualTo(new ConversationSweepPlanner.Plan(List.of(), null, null));
            assertThat(plan(view("once", ConversationKind.ONE_OFF).build(), Duration.ofDays(400)))
                    .isEqualTo(new ConversationSweepPlanner.Plan(List.of(), null, null));
        }
    }

    @Nested
    class ANodeConversationIsDeleted7DaysUnused {
        @ParameterizedTest(name = "unused {0} → {1}")
        @CsvSource({
                "P6DT23H59M59.999S, ",
                "P7D,               idle",
        })
        void table(Duration since, String reason) {
            assertThat(reasonOf(plan(view("node-n1", ConversationKind.NODE_CONVERSATION).build(), since))).isEqualTo(reason);
        }
    }

    @Nested
    class ARoutineIsKeptTwiceTheGapToItsNextRunWithin30To90Days {
        @ParameterizedTest(name = "next run after {0}, unused {1} → {2}")
        @CsvSource({
                "P1D,  P29DT23H59M59.999S, ",
                "P1D,  P30D,               idle",
                "P20D, P39DT23H59M59.999S, ",
                "P20D, P40D,               idle",
                "P45D, P89DT23H59M59.999S, ",
                "P45D, P90D,               idle",
                "P200D, P90D,              idle",
        })
        void table(Duration gap, Duration since, String reason) {
            ConversationView v = view("routine-r1", ConversationKind.ROUTINE).setNextRunAt(T.plus(gap)).build();
            assertThat(reasonOf(plan(v, since))).isEqualTo(reason);
        }

        @Test
        void aRoutineWhoseNextRunIsNotKnownIsKept90Days() {
            ConversationView v = view("routine-r1", ConversationKind.ROUTINE).build();
            assertThat(plan(v, Duration.ofDays(90).minus(MS)).request()).isNull();
            assertThat(reasonOf(plan(v, Duration.ofDays(90)))).isEqualTo("idle");
        }
    }

    static AskState ask(String id, AskStatus status, Instant requestedAt, Instant startedAt) {
        return AskState.newBuilder().setAskId(id).setPrompt("why?").setRequestedAt(requestedAt).setStatus(status)
                .setComputerId(startedAt == null ? null : "laptop").setStartedAt(startedAt).build();
    }

    static ConversationView askLine(Instant lastAnswerAt, AskState... asks) {
        return view("ask-page-0123", ConversationKind.ASK).setLastAnswerAt(lastAnswerAt).setAsks(new ArrayList<>(List.of(asks)))
                .setPersonId("p1").setPageKind("page").setPageId("pg1").build();
    }

    @Nested
    class AnAskSessionIsDeleted30MinutesAfterTheLastAnswer {
        @ParameterizedTest(name = "since the last answer {0} → {1}")
        @CsvSource({
                "PT29M59.999S, ",
                "PT30M,        ask-answered",
                "PT2H,         ask-answered",
        })
        void table(Duration since, String reason) {
            ConversationView v = askLine(T, ask("a1", AskStatus.ANSWERED, T.minusSeconds(60), T.minusSeconds(50)));
            assertThat(reasonOf(plan(v, since))).isEqualTo(reason);
        }

        @Test
        void notWhileAnAskWaitsOrRuns() {
            Instant later = T.plus(Duration.ofMinutes(20));
            ConversationView running = askLine(T, ask("a1", AskStatus.ANSWERED, T.minusSeconds(60), T.minusSeconds(50)),
                    ask("a2", AskStatus.RUNNING, later, later));
            ConversationSweepPlanner.Plan p = plan(running, Duration.ofMinutes(31));
            assertThat(p.request()).isNull();
            assertThat(p.nextAt()).as("looked at again when the running ask would be cleared").isEqualTo(later.plus(Duration.ofHours(2)));
            ConversationView waiting = askLine(T, ask("a1", AskStatus.ANSWERED, T.minusSeconds(60), T.minusSeconds(50)),
                    ask("a2", AskStatus.WAITING, later, null));
            p = plan(waiting, Duration.ofMinutes(31));
            assertThat(p.request()).isNull();
            assertThat(p.nextAt()).as("when the waiting ask would be cleared").isEqualTo(later.plus(Duration.ofHours(2)));
        }

        @Test
        void notDueIsLookedAtAgainAt30Minutes() {
            ConversationView v = askLine(T, ask("a1", AskStatus.ANSWERED, T.minusSeconds(60), T.minusSeconds(50)));
            assertThat(plan(v, Duration.ofMinutes(1)).nextAt()).isEqualTo(T.plus(Duration.ofMinutes(30)));
        }
    }

    @Nested
    class AnAskThatNeverReportedBackIsClearedTwoHoursAfterItBegan {
        @ParameterizedTest(name = "{0} for {1} → cleared {2}")
        @CsvSource({
                "RUNNING, PT1H59M59.999S, false",
                "RUNNING, PT2H,           true",
                "WAITING, PT1H59M59.999S, false",
                "WAITING, PT2H,           true",
        })
        void table(AskStatus status, Duration since, boolean cleared) {
            ConversationView v = askLine(null, ask("a1", status, T, status == AskStatus.RUNNING ? T : null));
            ConversationSweepPlanner.Plan p = plan(v, since);
            assertThat(p.clears()).extracting(ConversationSweepPlanner.Clear::askId).isEqualTo(cleared ? List.of("a1") : List.of());
            assertThat(reasonOf(p)).as("none answered: the line goes with its last ask cleared").isEqualTo(cleared ? "ask-cleared" : null);
        }

        @Test
        void theClearIsATurnEndedNotAnsweredFromTheCleanupBeforeTheRequest() {
            ConversationView v = askLine(T.minus(Duration.ofHours(3)),
                    ask("a1", AskStatus.ANSWERED, T.minus(Duration.ofHours(4)), T.minus(Duration.ofHours(4))),
                    ask("a2", AskStatus.RUNNING, T, T));
            Instant now = T.plus(Duration.ofHours(2));
            ConversationSweepPlanner.Plan p = ConversationSweepPlanner.plan(v, Map.of(), now, C);
            List<Event> events = ConversationSweepPlanner.events(v, p, now);
            assertThat(events).hasSize(2);
            TurnEnded ended = (TurnEnded) events.get(0).getPayload();
            assertThat(ended.getTurnId()).isEqualTo("a2");
            assertThat(ended.getComputerId()).isEqualTo("laptop");
            assertThat(ended.getAnswered()).isFalse();
            assertThat(ended.getError()).isEqualTo("cleared: no report within 2 hours");
            assertThat(events.get(0).getSource()).isEqualTo("service:cleanup");
            ConversationDeletionRequested r = (ConversationDeletionRequested) events.get(1).getPayload();
            assertThat(r.getReason()).as("answered once, over 30 minutes ago").isEqualTo("ask-answered");
            assertThat(r.getRequestedBy()).isEqualTo(Requester.system);
            assertThat(r.getConversationKey()).isEqualTo("ask-page-0123");
            assertThat(events.get(1).getEventId()).isEqualTo(p.request().requestId());
            assertThat(events).allSatisfy(e -> assertThat(e.getAccount()).isEqualTo(ACCOUNT));
        }
    }

    static ConversationView deleting(Instant acceptedAt, ConversationDrop... drops) {
        return view("chat-1", ConversationKind.CHAT).setDeleted(true).setDeletion(ConversationDeletion.newBuilder().setRequestId("req-1")
                .setRequestedBy(Requester.person).setReason("person").setAcceptedAt(acceptedAt)
                .setComputers(new ArrayList<>(List.of(drops))).build()).build();
    }

    static ConversationDrop drop(String computer, Instant askedAt) {
        return ConversationDrop.newBuilder().setComputerId(computer).setAskedAt(askedAt).build();
    }

    static Map<String, DropRules.Computer> online(String... ids) {
        Map<String, DropRules.Computer> m = new java.util.HashMap<>();
        for (String id : ids) {
            m.put(id, new DropRules.Computer(id, true, true, true, null));
        }
        return m;
    }

    @Nested
    class APendingDropIsAskedAgainEvery5MinutesWhileItsComputerIsOnline {
        @ParameterizedTest(name = "online {0}, since asked {1} → {2}")
        @CsvSource({
                "true,  PT4M59.999S, ",
                "true,  PT5M,        retry",
                "true,  PT12M,       retry",
                "false, PT12M,       ",
                "true,  P30D,        ",
        })
        void table(boolean isOnline, Duration since, String reason) {
            ConversationView v = deleting(T, drop("laptop", T));
            ConversationSweepPlanner.Plan p = ConversationSweepPlanner.plan(v, isOnline ? online("laptop") : Map.of(), T.plus(since), C);
            assertThat(reasonOf(p)).isEqualTo(reason);
        }

        @Test
        void theRequestIdIsTheSameWithinOne5MinutesAndAnotherInTheNext() {
            ConversationView v = deleting(T, drop("laptop", T));
            String at5 = ConversationSweepPlanner.plan(v, online("laptop"), T.plus(Duration.ofMinutes(5)), C).request().requestId();
            String at9 = ConversationSweepPlanner.plan(v, online("laptop"), T.plus(Duration.ofMinutes(9)), C).request().requestId();
            String at10 = ConversationSweepPlanner.plan(v, online("laptop"), T.plus(Duration.ofMinutes(10)), C).request().requestId();
            assertThat(at9).isEqualTo(at5);
            assertThat(at10).isNotEqualTo(at5);
            assertThat(ConversationSweepPlanner.plan(v, online("laptop"), T.plus(Duration.ofMinutes(6)), C).nextAt())
                    .isEqualTo(T.plus(Duration.ofMinutes(10)));
        }

        @Test
        void confirmedAndExpiredDropsAreNotAskedAgainButAnErrorIs() {
            Instant asked = T;
            ConversationDrop confirmed = drop("laptop", asked);
            confirmed.setConfirmedAt(asked.plusSeconds(5));
            confirmed.setOk(true);
            ConversationDrop expired = drop("desk", asked);
            expired.setExpired(true);
            Instant now = T.plus(Duration.ofMinutes(5));
            assertThat(ConversationSweepPlanner.plan(deleting(T, confirmed, expired), online("laptop", "desk"), now, C))
                    .isEqualTo(new ConversationSweepPlanner.Plan(List.of(), null, null));
            ConversationDrop failed = drop("laptop", asked);
            failed.setConfirmedAt(asked.plusSeconds(5));
            failed.setOk(false);
            failed.setError("disk full");
            assertThat(reasonOf(ConversationSweepPlanner.plan(deleting(T, failed), online("laptop"), now, C))).isEqualTo("retry");
        }

        @Test
        void anOfflineComputerIsLookedAtAgainIn5Minutes() {
            Instant now = T.plus(Duration.ofMinutes(12));
            assertThat(ConversationSweepPlanner.plan(deleting(T, drop("laptop", T)), Map.of(), now, C).nextAt())
                    .isEqualTo(now.plus(Duration.ofMinutes(5)));
        }
    }

    @Nested
    class NothingForADeletedConversationOrOneBeingDeletedButRetry {
        @Test
        void deleted() {
            ConversationView v = view("chat-1", ConversationKind.CHAT).setDeleted(true).build();
            assertThat(plan(v, Duration.ofDays(400))).isEqualTo(new ConversationSweepPlanner.Plan(List.of(), null, null));
            ConversationDrop confirmed = drop("laptop", T);
            confirmed.setConfirmedAt(T.plusSeconds(5));
            confirmed.setOk(true);
            assertThat(ConversationSweepPlanner.plan(deleting(T, confirmed), online("laptop"), T.plus(Duration.ofDays(40)), C))
                    .as("every drop confirmed").isEqualTo(new ConversationSweepPlanner.Plan(List.of(), null, null));
        }

        @Test
        void beingDeletedIsNotAskedIdleNorAnsweredNorCleared() {
            ConversationView idleChat = deleting(T, drop("laptop", T.plus(Duration.ofDays(400))));
            ConversationSweepPlanner.Plan p = ConversationSweepPlanner.plan(idleChat, Map.of(), T.plus(Duration.ofDays(400)), C);
            assertThat(p.request()).isNull();
            ConversationView line = ConversationView.newBuilder(askLine(null, ask("a1", AskStatus.RUNNING, T, T)))
                    .setDeletion(idleChat.getDeletion()).build();
            p = ConversationSweepPlanner.plan(line, Map.of(), T.plus(Duration.ofHours(3)), C);
            assertThat(p.clears()).isEmpty();
            assertThat(p.request()).isNull();
        }
    }

    @Nested
    class RequestIdsAreNameBased {
        @Test
        void theSameDueThingGivesTheSameIdAtAnyLaterLook() {
            ConversationView v = view("chat-1", ConversationKind.CHAT).build();
            String first = plan(v, Duration.ofDays(30)).request().requestId();
            assertThat(plan(v, Duration.ofDays(31)).request().requestId()).isEqualTo(first);
            ConversationView usedAgain = view("chat-1", ConversationKind.CHAT).setLastUsedAt(T.plusSeconds(1)).build();
            assertThat(plan(usedAgain, Duration.ofDays(31)).request().requestId()).as("another deadline, another request")
                    .isNotEqualTo(first);
            ConversationView otherAccount = view("chat-1", ConversationKind.CHAT).setAccount("acct-2").build();
            assertThat(plan(otherAccount, Duration.ofDays(31)).request().requestId()).isNotEqualTo(first);
        }
    }
}
