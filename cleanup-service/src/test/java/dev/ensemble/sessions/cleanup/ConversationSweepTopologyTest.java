package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDeletion;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The conversation tick through the cleanup's real topology, the wall clock driven by the test a minute at a time. */
class ConversationSweepTopologyTest {
    static final Instant START = Instant.parse("2026-11-02T09:00:00Z");
    static final String ACCOUNT = "acct-1";

    static final class Fixture implements AutoCloseable {
        final TopologyTestDriver driver;
        final TestInputTopic<String, ConversationView> views;
        final TestInputTopic<String, Event> events;
        final TestOutputTopic<String, Event> out;

        Fixture() throws Exception {
            driver = new TopologyTestDriver(CleanupTopology.build(CleanupConfig.defaults(), true),
                    StreamsDefaults.properties("test-conversations", "dummy:9092", Files.createTempDirectory("ttd"), 1, Map.of()), START);
            views = driver.createInputTopic(Topics.ASSISTANT_VIEW.name(), Topics.ASSISTANT_VIEW.keySerde().serializer(),
                    Topics.ASSISTANT_VIEW.valueSerde().serializer());
            events = driver.createInputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer());
            out = driver.createOutputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer());
        }

        void view(ConversationView v) {
            views.pipeInput(Keys.of(v.getAccount(), v.getConversationKey()), v);
        }

        void status(String computer, boolean online) {
            Instant now = Instant.ofEpochMilli(START.toEpochMilli()); // the event's own time does not matter here
            events.pipeInput(ACCOUNT, Event.newBuilder().setEventId("status-" + computer + "-" + online).setAccount(ACCOUNT)
                    .setSpace("local:" + computer).setOccurredAt(now).setRecordedAt(now).setSource("computer:" + computer)
                    .setPayload(ComputerStatus.newBuilder().setComputerId(computer).setOnline(online).build()).build());
        }

        /** Advances the wall clock a minute and returns the cleanup's requests ("key reason") appended on that tick. */
        List<String> minute() {
            driver.advanceWallClockTime(Duration.ofMinutes(1));
            return out.readValuesToList().stream().filter(e -> "service:cleanup".equals(e.getSource()))
                    .map(e -> e.getPayload() instanceof ConversationDeletionRequested r ? r.getConversationKey() + " " + r.getReason()
                            : e.getPayload().getClass().getSimpleName())
                    .toList();
        }

        @Override
        public void close() {
            driver.close();
        }
    }

    @Test
    void anAskLineIsAskedForAtTheTickThatReaches30MinutesAfterItsAnswerAndOnlyThen() throws Exception {
        try (Fixture f = new Fixture()) {
            Instant answered = START.minus(Duration.ofMinutes(27));
            f.view(ConversationView.newBuilder().setAccount(ACCOUNT).setConversationKey("ask-page-1").setKind(ConversationKind.ASK)
                    .setSequence(1).setLastUsedAt(answered).setLastAnswerAt(answered).setAsks(new ArrayList<>(List.of(
                            AskState.newBuilder().setAskId("a1").setPrompt("?").setRequestedAt(answered.minusSeconds(10))
                                    .setStatus(AskStatus.ANSWERED).setStartedAt(answered.minusSeconds(5)).setEndedAt(answered).build())))
                    .build());
            assertThat(f.minute()).as("28 minutes").isEmpty();
            assertThat(f.minute()).as("29 minutes").isEmpty();
            assertThat(f.minute()).as("30 minutes").containsExactly("ask-page-1 ask-answered");
            for (int i = 0; i < 5; i++) {
                assertThat(f.minute()).as("asked once").isEmpty();
            }
        }
    }

    @Test
    void aDropIsAskedAgainOnlyWhileItsComputerIsOnlineEvery5Minutes() throws Exception {
        try (Fixture f = new Fixture()) {
            Instant asked = START.minus(Duration.ofMinutes(4));
            f.view(ConversationView.newBuilder().setAccount(ACCOUNT).setConversationKey("chat-1").setKind(ConversationKind.CHAT)
                    .setSequence(3).setLastUsedAt(asked).setDeleted(true).setDeletion(ConversationDeletion.newBuilder().setRequestId("r1")
                            .setRequestedBy(Requester.person).setReason("person").setAcceptedAt(asked).setComputers(new ArrayList<>(List.of(
                                    ConversationDrop.newBuilder().setComputerId("laptop").setAskedAt(asked).build()))).build())
                    .build());
            f.status("laptop", false);
            assertThat(f.minute()).as("offline, 5 minutes after the last ask: not asked").isEmpty();
            assertThat(f.minute()).as("offline, 6 minutes").isEmpty();
            f.status("laptop", true);
            assertThat(f.minute()).as("online, 7 minutes: at the next tick").containsExactly("chat-1 retry");
            assertThat(f.minute()).as("8 minutes").isEmpty();
            assertThat(f.minute()).as("9 minutes").isEmpty();
            assertThat(f.minute()).as("10 minutes: the next 5").containsExactly("chat-1 retry");
            assertThat(f.minute()).isEmpty();
        }
    }
}
