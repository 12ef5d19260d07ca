package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDeletionSkipped;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.DeletionAudit;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ensemble.sessions.projector.AssistantEvents.ask;
import static dev.ensemble.sessions.projector.AssistantEvents.decided;
import static dev.ensemble.sessions.projector.AssistantEvents.deleteRequest;
import static dev.ensemble.sessions.projector.AssistantEvents.dropped;
import static dev.ensemble.sessions.projector.AssistantEvents.ended;
import static dev.ensemble.sessions.projector.DeletionFixture.computer;
import static dev.ensemble.sessions.projector.DeletionFixture.min;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant conversations through the projector's real topology (guide §5, §6): given events, expect the published
 * {@code sessions.view.assistant}, the conversation deletion decisions appended to the log, the audit, and the dead letters.
 */
class ConversationProcessorTest {

    @Test
    void aChatsTurnsArePublishedWithTheComputersSession() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)),
                    decided("chat-1", ConversationKind.CHAT, "t2", "laptop", "s-1", min(2)));

            ConversationView v = f.conversation("chat-1");
            assertThat(v.getTurns()).isEqualTo(2);
            assertThat(v.getRunningTurn().getTurnId()).isEqualTo("t2");
            assertThat(v.getSessions()).singleElement().satisfies(s -> {
                assertThat(s.getComputerId()).isEqualTo("laptop");
                assertThat(s.getSessionId()).isEqualTo("s-1");
            });
            assertThat(v.getLastAnswerAt()).isEqualTo(min(1));
            assertThat(f.dead).isEmpty();
        }
    }

    @Test
    void anAskMovesWaitingRunningAnswered() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(ask("ask-task-x", "ask-1", "ana", "what is this?", min(0)));
            assertThat(f.conversation("ask-task-x").getAsks().get(0).getStatus()).isEqualTo(AskStatus.WAITING);
            f.given(decided("ask-task-x", ConversationKind.ASK, "ask-1", "laptop", null, min(1)));
            assertThat(f.conversation("ask-task-x").getAsks().get(0).getStatus()).isEqualTo(AskStatus.RUNNING);
            f.given(ended("ask-task-x", "ask-1", "laptop", true, "s-a", 1, "a task", min(2)));
            assertThat(f.conversation("ask-task-x").getAsks().get(0)).satisfies(a -> {
                assertThat(a.getStatus()).isEqualTo(AskStatus.ANSWERED);
                assertThat(a.getAnswer()).isEqualTo("a task");
            });
        }
    }

    @Test
    void aPersonsDeletionAsksEachComputerAndOneComingOnlineIsAskedAgain() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("chat-1", Requester.person, "ana", "person", min(10));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)),
                    decided("chat-1", ConversationKind.CHAT, "t2", "desktop", null, min(2)),
                    ended("chat-1", "t2", "desktop", true, "s-2", 1, null, min(3)),
                    req);

            assertThat(f.appended(ConversationDeletionAccepted.class)).singleElement().satisfies(a -> {
                assertThat(a.getComputerIds()).containsExactly("laptop", "desktop");
                assertThat(a.getAgentSessionIds()).containsExactly("s-1", "s-2");
                assertThat(a.getRequestId()).isEqualTo(req.getEventId());
            });
            assertThat(f.appended.get(0).getEventId()).isEqualTo(ConversationProcessor.decisionId(req.getEventId()));
            assertThat(f.conversation("chat-1").getDeleted()).isTrue();
            assertThat(f.audit(req.getEventId()).getConversationKey()).isEqualTo("chat-1");
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("DELETING");

            f.given(dropped("chat-1", req.getEventId(), "laptop", true, min(11)),
                    computer("desktop", true, 1, min(20)));
            assertThat(f.appended(ConversationDeletionAccepted.class)).hasSize(2).last()
                    .satisfies(a -> assertThat(a.getComputerIds()).as("only the computer that came online").containsExactly("desktop"));
            assertThat(drop(f, "desktop").getAskedAt()).isEqualTo(min(20));

            f.given(dropped("chat-1", req.getEventId(), "desktop", true, min(21)));
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("DELETED");
            assertThat(f.audit(req.getEventId()).getAnswers()).extracting(a -> a.getComputerId()).containsExactly("laptop", "desktop");
            assertThat(drop(f, "laptop").getOk()).isTrue();
            assertThat(drop(f, "desktop").getOk()).isTrue();
            f.given(computer("desktop", true, 1, min(30)));
            assertThat(f.appended(ConversationDeletionAccepted.class)).as("nothing pending: not asked again").hasSize(2);
            assertThat(f.dead).isEmpty();
        }
    }

    @Test
    void aRetryAsksThePendingComputerAndItsAnswerCompletesTheDeletion() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("chat-1", Requester.person, "ana", "person", min(10));
            Event retry = deleteRequest("chat-1", Requester.system, null, "retry", min(15));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)),
                    decided("chat-1", ConversationKind.CHAT, "t2", "desktop", null, min(2)),
                    ended("chat-1", "t2", "desktop", true, "s-2", 1, null, min(3)),
                    req, dropped("chat-1", req.getEventId(), "laptop", true, min(11)),
                    dropped("chat-1", req.getEventId(), "desktop", false, min(12)),
                    retry);
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("FAILED");
            assertThat(f.appended(ConversationDeletionAccepted.class)).hasSize(2).last().satisfies(a -> {
                assertThat(a.getRequestId()).isEqualTo(retry.getEventId());
                assertThat(a.getComputerIds()).as("the one that failed, not the one that confirmed").containsExactly("desktop");
            });
            assertThat(f.audit(retry.getEventId()).getRetryOf()).isEqualTo(req.getEventId());

            f.given(dropped("chat-1", retry.getEventId(), "desktop", true, min(16)),
                    dropped("chat-1", retry.getEventId(), "laptop", true, min(16)));
            assertThat(f.deadReasons).as("the retry did not ask the laptop").singleElement()
                    .satisfies(r -> assertThat(r).contains("did not ask computer 'laptop'"));
            assertThat(f.audit(retry.getEventId()).getStatus()).isEqualTo("DELETED");
            assertThat(f.audit(req.getEventId()).getStatus()).as("the first request's audit says so too").isEqualTo("DELETED");
            assertThat(drop(f, "desktop").getOk()).isTrue();
            f.given(deleteRequest("chat-1", Requester.system, null, "retry", min(20)));
            assertThat(f.appended(ConversationDeletionSkipped.class)).singleElement()
                    .satisfies(s -> assertThat(s.getReason()).startsWith("nothing-pending"));
        }
    }

    @Test
    void anAskOnADeletedLineStartsItAnewAndTheOldLinesDropsAreNotAskedAgain() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("ask-task-x", Requester.system, null, "ask-answered", min(40));
            f.given(ask("ask-task-x", "ask-1", "ana", "q1", min(0)),
                    decided("ask-task-x", ConversationKind.ASK, "ask-1", "laptop", null, min(1)),
                    ended("ask-task-x", "ask-1", "laptop", true, "s-a", 1, "a1", min(2)),
                    req);
            assertThat(f.conversation("ask-task-x").getDeleted()).isTrue();
            long sequence = f.conversation("ask-task-x").getSequence();
            f.given(ask("ask-task-x", "ask-2", "ana", "q2", min(50)), computer("laptop", true, 1, min(51)));
            ConversationView v = f.conversation("ask-task-x");
            assertThat(v.getDeleted()).isFalse();
            assertThat(v.getSequence()).isGreaterThan(sequence);
            assertThat(v.getAsks()).extracting(a -> a.getAskId()).containsExactly("ask-2");
            assertThat(f.appended(ConversationDeletionAccepted.class)).as("the new line's computer is not asked to drop it").hasSize(1);
        }
    }

    @Test
    void theCleanupsReportClearsAnAskThatNeverReportedBack() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event cleared = ended("ask-task-x", "ask-1", "laptop", false, null, 0, null, min(121));
            cleared.setSource(ConversationProcessor.CLEANUP);
            f.given(ask("ask-task-x", "ask-1", "ana", "q1", min(0)),
                    decided("ask-task-x", ConversationKind.ASK, "ask-1", "laptop", null, min(1)), cleared);
            assertThat(f.conversation("ask-task-x").getAsks().get(0).getStatus()).isEqualTo(AskStatus.CLEARED);
            assertThat(f.conversation("ask-task-x").getRunningTurn()).isNull();
        }
    }

    @Test
    void theCleanupsClearOfATurnThatHadEndedChangesNothing() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event late = ended("chat-1", "t1", "laptop", false, null, 0, null, min(60 * 25));
            late.setSource(ConversationProcessor.CLEANUP); // it saw the turn running; the computer's end came first
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)));
            long sequence = f.conversation("chat-1").getSequence();
            f.given(late);
            ConversationView v = f.conversation("chat-1");
            assertThat(v.getLastUsedAt()).as("the chat's last use stays its real end: it goes idle 30 days after it").isEqualTo(min(1));
            assertThat(v.getSequence()).isEqualTo(sequence);
        }
    }

    private static ConversationDrop drop(DeletionFixture f, String computer) {
        return f.conversation("chat-1").getDeletion().getComputers().stream().filter(d -> d.getComputerId().equals(computer)).findFirst().orElseThrow();
    }

    @Test
    void anIdleRequestBeforeThirtyDaysIsSkippedAndAtThirtyDaysAccepted() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event early = deleteRequest("chat-1", Requester.system, null, "idle", DeletionFixture.T0.plus(java.time.Duration.ofDays(30)).minusSeconds(61));
            Event due = deleteRequest("chat-1", Requester.system, null, "idle", DeletionFixture.T0.plus(java.time.Duration.ofDays(30)).plusSeconds(60));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)), early, due);
            assertThat(f.appended(ConversationDeletionSkipped.class)).singleElement()
                    .satisfies(s -> assertThat(s.getReason()).startsWith("not-idle"));
            assertThat(f.appended(ConversationDeletionAccepted.class)).singleElement()
                    .satisfies(a -> assertThat(a.getRequestId()).isEqualTo(due.getEventId()));
            assertThat(f.audit(early.getEventId()).getSkipReason()).isEqualTo("not-idle");
        }
    }

    @Test
    void forgedEventsGoToTheDeadLetterTopicWithTheirReasonAndChangeNothing() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("chat-1", Requester.person, "ana", "person", min(10));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)), req);
            long sequence = f.conversation("chat-1").getSequence();
            int appended = f.appended.size();

            Event turnFromComputer = decided("chat-1", ConversationKind.CHAT, "t9", "laptop", "s-1", min(11));
            turnFromComputer.setSource("computer:laptop");
            f.given(AssistantEvents.event(ConversationDeletionAccepted.newBuilder().setConversationKey("chat-1").setRequestId("r-x")
                            .setComputerIds(List.of("laptop")).build(), min(11), "computer:laptop"),
                    AssistantEvents.event(ConversationDeletionSkipped.newBuilder().setConversationKey("chat-1").setRequestId("r-x")
                            .setReason("no").build(), min(11), DeletionWorkflow.SOURCE),
                    turnFromComputer,
                    dropped("chat-1", req.getEventId(), "laptop", true, min(12), "computer:desktop"),
                    dropped("chat-1", "no-such-request", "laptop", true, min(12)),
                    dropped("chat-1", req.getEventId(), "desktop", true, min(12)));

            assertThat(f.deadReasons).hasSize(6);
            assertThat(f.deadReasons.get(0)).contains("made only by the projector's guard");
            assertThat(f.deadReasons.get(1)).contains("made only by the projector's guard");
            assertThat(f.deadReasons.get(2)).contains("only by the gateway");
            assertThat(f.deadReasons.get(3)).contains("only by the computer it names");
            assertThat(f.deadReasons.get(4)).contains("no pending drop");
            assertThat(f.deadReasons.get(5)).contains("did not ask computer 'desktop'");
            assertThat(f.conversation("chat-1").getSequence()).isEqualTo(sequence);
            assertThat(f.appended).hasSize(appended);
            DeletionAudit audit = f.audit(req.getEventId());
            assertThat(audit.getAnswers()).isEmpty();
        }
    }

    @Test
    void aGenerationThatDoesNotServeFoldsTheSameAndAppendsNothing() {
        dev.ensemble.sessions.schema.Generation g2 = new dev.ensemble.sessions.schema.Generation(2);
        try (var driver = new org.apache.kafka.streams.TopologyTestDriver(
                Projector.buildTopology(RetirementRules.Config.defaults(), true, g2),
                dev.ensemble.sessions.streams.StreamsDefaults.properties("test-projector-g2", "dummy:9092",
                        java.nio.file.Files.createTempDirectory("ttd"), 1, java.util.Map.of()))) {
            var in = driver.createInputTopic(dev.ensemble.sessions.schema.Topics.EVENTS.name(), new org.apache.kafka.common.serialization.StringSerializer(),
                    dev.ensemble.sessions.schema.Topics.EVENTS.valueSerde().serializer());
            var log = driver.createOutputTopic(dev.ensemble.sessions.schema.Topics.EVENTS.name(),
                    dev.ensemble.sessions.schema.Topics.EVENTS.keySerde().deserializer(), dev.ensemble.sessions.schema.Topics.EVENTS.valueSerde().deserializer());
            var views = driver.createOutputTopic(g2.view(dev.ensemble.sessions.schema.Topics.ASSISTANT_VIEW).name(),
                    dev.ensemble.sessions.schema.Topics.ASSISTANT_VIEW.keySerde().deserializer(),
                    dev.ensemble.sessions.schema.Topics.ASSISTANT_VIEW.valueSerde().deserializer());
            for (Event e : List.of(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    deleteRequest("chat-1", Requester.person, "ana", "person", min(10)))) {
                in.pipeInput(e.getAccount(), e, e.getRecordedAt());
            }
            driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            assertThat(log.readValuesToList()).as("generation 1 serves: g2 appends nothing").isEmpty();
            assertThat(views.readValuesToList()).last().satisfies(v -> assertThat(v.getDeleted()).isTrue());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
