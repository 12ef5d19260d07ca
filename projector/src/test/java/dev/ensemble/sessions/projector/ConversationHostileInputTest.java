package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationView;
import org.junit.jupiter.api.Test;

import static dev.ensemble.sessions.projector.AssistantEvents.ask;
import static dev.ensemble.sessions.projector.AssistantEvents.decided;
import static dev.ensemble.sessions.projector.AssistantEvents.deleteRequest;
import static dev.ensemble.sessions.projector.AssistantEvents.dropped;
import static dev.ensemble.sessions.projector.AssistantEvents.ended;
import static dev.ensemble.sessions.projector.DeletionFixture.min;
import static org.assertj.core.api.Assertions.assertThat;

/** Hostile and out-of-order assistant conversation events through the projector's real topology. */
class ConversationHostileInputTest {

    @Test
    void aTurnEndedForAnUnknownConversationOrTurnAndDuplicatesChangeNothing() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(ended("nobody", "t-x", "laptop", true, "s-x", 1, null, min(0)));
            assertThat(f.conversation("nobody")).isNull();
            Event end = ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(2));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(1)), end);
            long seq = f.conversation("chat-1").getSequence();
            f.given(end, decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(1)));
            assertThat(f.conversation("chat-1").getSequence()).as("duplicates").isEqualTo(seq);
            f.given(ended("chat-1", "t-unknown", "laptop", true, "s-1", 1, null, min(0)));
            ConversationView v = f.conversation("chat-1");
            assertThat(v.getLastUsedAt()).as("an earlier time never moves last use back").isEqualTo(min(2));
            assertThat(f.dead).isEmpty();
        }
    }

    @Test
    void overLongOrBlankKeysAndIdsAreRefused() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(decided("chat-1", ConversationKind.CHAT, "t".repeat(257), "laptop", null, min(0)));
            assertThat(f.dead).hasSize(1);
            f.given(decided("k".repeat(257), ConversationKind.CHAT, "t2", "laptop", null, min(0)));
            assertThat(f.conversation("k".repeat(257))).isNull();
            f.given(ask(" ", "ask-1", "ana", "q", min(0)));
            assertThat(f.conversation(" ")).isNull();
            assertThat(f.dead).hasSize(3);
        }
    }

    @Test
    void aDropBeforeItsRequestIsRefused() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("chat-1", Requester.person, "ana", "person", min(10));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)),
                    dropped("chat-1", req.getEventId(), "laptop", true, min(9)), req);
            assertThat(f.dead).hasSize(1);
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("DELETING");
        }
    }

    @Test
    void aTurnDecidedOnADeletedConversationAsksItsComputerToDropItToo() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event req = deleteRequest("chat-1", Requester.person, "ana", "person", min(10));
            f.given(decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(0)),
                    ended("chat-1", "t1", "laptop", true, "s-1", 1, null, min(1)), req,
                    decided("chat-1", ConversationKind.CHAT, "t2", "desktop", null, min(11)),
                    ended("chat-1", "t2", "desktop", true, "s-2", 1, null, min(12)));
            ConversationView v = f.conversation("chat-1");
            assertThat(v.getDeleted()).isTrue();
            assertThat(v.getDeletion().getComputers()).extracting(d -> d.getComputerId()).containsExactly("laptop", "desktop");
            assertThat(f.appended(ConversationDeletionAccepted.class)).as("the desktop that began a turn is asked to drop it too")
                    .hasSize(2).last().satisfies(a -> {
                        assertThat(a.getRequestId()).isEqualTo(req.getEventId());
                        assertThat(a.getComputerIds()).containsExactly("desktop");
                    });
            assertThat(f.audit(req.getEventId()).getComputersAsked()).containsExactly("laptop", "desktop");

            f.given(dropped("chat-1", req.getEventId(), "laptop", true, min(13)));
            assertThat(f.audit(req.getEventId()).getStatus()).as("the desktop has not confirmed").isEqualTo("DELETING");
            f.given(dropped("chat-1", req.getEventId(), "desktop", true, min(14)));
            assertThat(f.dead).isEmpty();
            assertThat(f.audit(req.getEventId()).getStatus()).isEqualTo("DELETED");
            assertThat(f.conversation("chat-1").getDeletion().getComputers()).allSatisfy(d -> assertThat(d.getOk()).isTrue());
        }
    }

    @Test
    void sixtyAsksInOneLineKeepTheRunningAndEarliestWaiting() {
        try (DeletionFixture f = new DeletionFixture()) {
            f.given(ask("ask-task-x", "ask-0", "ana", "q0", min(0)),
                    decided("ask-task-x", ConversationKind.ASK, "ask-0", "laptop", null, min(0)));
            Event[] more = new Event[60];
            for (int i = 1; i <= 60; i++) {
                more[i - 1] = ask("ask-task-x", "ask-" + i, "ana", "q" + i, min(0).plusSeconds(i));
            }
            f.given(more);
            ConversationView v = f.conversation("ask-task-x");
            assertThat(v.getAsks()).as("the running ask and the earliest waiting stay; the ones over 50 open are not kept")
                    .hasSize(50).extracting(a -> a.getAskId()).contains("ask-0", "ask-1", "ask-49").doesNotContain("ask-50", "ask-60");
            f.given(ended("ask-task-x", "ask-0", "laptop", true, "s-a", 1, "a0", min(1)));
            assertThat(f.conversation("ask-task-x").getRunningTurn()).isNull();
            assertThat(f.conversation("ask-task-x").getAsks()).filteredOn(a -> a.getAskId().equals("ask-0"))
                    .singleElement().satisfies(a -> assertThat(a.getStatus()).isEqualTo(AskStatus.ANSWERED));
        }
    }

    @Test
    void oneAccountsRefusedEventsDoNotStopAnothersViews() {
        try (DeletionFixture f = new DeletionFixture()) {
            Event bad = decided("chat-1", ConversationKind.CHAT, "t".repeat(300), "laptop", null, min(0));
            bad.setAccount("acct-bo");
            Event good = decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(1));
            f.given(bad, good);
            assertThat(f.conversation("chat-1")).isNotNull();
            assertThat(f.dead).hasSize(1);
            assertThat(f.appended(ConversationDeletionAccepted.class)).isEmpty();
        }
    }
}
