package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.assistant.AssistantSessions;
import dev.ensemble.sessions.agent.assistant.AssistantStore;
import dev.ensemble.sessions.agent.assistant.ChatLocks;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.Event;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The conversation drop executor's answers (its {@code handle}, no broker) to drops it cannot or need not do. */
class ConversationDropHostileTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");

    @TempDir
    Path tmp;

    ConversationDropExecutor executor(Path state, Duration storeWait) {
        Clock clock = Clock.fixed(T, ZoneOffset.UTC);
        ImportConfig config = new ImportConfig("acct-ana", "laptop", clock, state.resolve("import-state.json"));
        return new ConversationDropExecutor("unused:9092", Map.of(), config, AssistantStore.opening(state, clock, storeWait),
                new AgentStoreDeleter(AgentStores.underHome(tmp.resolve("home"))), new ChatLocks(state), Duration.ofMillis(200), e -> {
        });
    }

    static Event accepted(String key) {
        return Event.newBuilder().setEventId("acc-" + Integer.toHexString(key.hashCode())).setAccount("acct-ana").setSpace("assistant")
                .setOccurredAt(T).setRecordedAt(T).setSource(DeletionExecutor.DECIDER)
                .setPayload(ConversationDeletionAccepted.newBuilder().setConversationKey(key).setRequestId("r-1")
                        .setComputerIds(List.of("laptop")).build()).build();
    }

    @Test
    void aDropForAChatWithNoEntryOrAHostileKeyIsAnsweredOkAndTouchesNothingOutside() throws Exception {
        Path state = Files.createDirectories(tmp.resolve("state"));
        Path outside = Files.createDirectories(tmp.resolve("precious"));
        Files.writeString(outside.resolve("keep.txt"), "keep");
        ConversationDropExecutor x = executor(state, Duration.ofSeconds(5));
        for (String key : List.of("never-seen", "../precious", "../../precious", "k".repeat(5_000))) {
            Event answer = x.handle(accepted(key));
            assertThat(answer.getPayload()).isInstanceOfSatisfying(ConversationDroppedOnComputer.class, d -> {
                assertThat(d.getOk()).as(d.getError()).isTrue();
                assertThat(d.getRemovedPaths()).isEmpty();
            });
        }
        assertThat(outside.resolve("keep.txt")).exists();
    }

    @Test
    void aDropWhileAnotherProcessHoldsTheStoreIsAnsweredNotOkToBeAskedAgain() throws Exception {
        Path state = Files.createDirectories(tmp.resolve("state"));
        try (AssistantSessions other = AssistantSessions.open(state, Clock.fixed(T, ZoneOffset.UTC))) {
            Event answer = executor(state, Duration.ofMillis(200)).handle(accepted("chat-1"));
            assertThat(answer.getPayload()).isInstanceOfSatisfying(ConversationDroppedOnComputer.class, d -> {
                assertThat(d.getOk()).isFalse();
                assertThat(d.getError()).contains("assistant sessions store");
            });
        }
    }
}
