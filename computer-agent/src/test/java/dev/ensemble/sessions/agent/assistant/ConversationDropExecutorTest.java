package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.ConversationDropExecutor;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.EventSink;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static dev.ensemble.sessions.agent.assistant.FakeHome.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A computer's drops of deleted assistant conversations against a real in-process Kafka broker (guide §6: "a computer
 * away or not confirming is asked again when it next connects"): the request accepted while it was away is carried out
 * when it starts, answered once; a second delivery drops nothing more and answers with the same id.
 */
class ConversationDropExecutorTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final String ACCOUNT = "acct-ana";
    static final String S1 = "11111111-aaaa-4aaa-8aaa-000000000001";
    static final String NEIGHBOUR = "33333333-aaaa-4aaa-8aaa-000000000003";
    static KafkaTestCluster cluster;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start();
        cluster.createTopics(2, Topics.EVENTS);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    static Event accepted(String eventId, String source, String key, String requestId, List<String> computers) {
        return accepted(ACCOUNT, eventId, source, key, requestId, computers);
    }

    static Event accepted(String account, String eventId, String source, String key, String requestId, List<String> computers) {
        return Event.newBuilder().setEventId(eventId).setAccount(account).setSpace("web:s").setOccurredAt(T).setRecordedAt(T)
                .setSource(source).setPayload(ConversationDeletionAccepted.newBuilder().setConversationKey(key).setRequestId(requestId)
                        .setComputerIds(computers).setAgentSessionIds(List.of(S1)).build())
                .build();
    }

    @Test
    void aComputerAwayWhenTheDeletionWasAcceptedDropsTheChatWhenItStartsAndAnswersOnce() throws Exception {
        FakeHome home = new FakeHome(tmp.resolve("home"));
        Path transcript = write(home.claudeProjects().resolve("-home-ana-x").resolve(S1 + ".jsonl"), "{}\n");
        Path neighbour = write(home.claudeProjects().resolve("-home-ana-x").resolve(NEIGHBOUR + ".jsonl"), "{}\n");
        Path chatFile;
        Path otherChatFile;
        try (AssistantSessions s = AssistantSessions.open(home.state, Clock.fixed(T, ZoneOffset.UTC))) {
            chatFile = write(s.makeChatFolder("chat-1").resolve("instructions.md"), "be brief");
            otherChatFile = write(s.makeChatFolder("chat-2").resolve("instructions.md"), "be long");
            s.put(new AssistantSessions.Entry("chat-1", "claude-code", S1, "sonnet", List.of("be brief"),
                    s.chatFolder("chat-1").toString(), null, 4, 2, 2, "laptop", T, List.of()));
            s.put(new AssistantSessions.Entry("chat-2", "claude-code", NEIGHBOUR, "sonnet", List.of("be long"),
                    s.chatFolder("chat-2").toString(), null, 2, 1, 1, "laptop", T, List.of()));
        }
        // accepted while the computer was away, beside requests that are not its to carry out
        try (KafkaProducer<String, Event> p = producer()) {
            p.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, accepted("a-desk", "service:projector", "chat-2", "req-0", List.of("desk"))));
            p.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, accepted("a-person", "person:ana", "chat-2", "req-9", List.of("laptop"))));
            p.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, accepted("a-1", "service:projector", "chat-1", "req-1", List.of("desk", "laptop"))));
            p.flush();
        }

        ImportConfig config = new ImportConfig(ACCOUNT, "laptop", Clock.fixed(T.plusSeconds(60), ZoneOffset.UTC), home.state.resolve("import-state.json"));
        List<Event> answers = Collections.synchronizedList(new ArrayList<>());
        EventSink sink = answers::add;
        ChatLocks locks = new ChatLocks(home.state);
        AssistantStore store = AssistantStore.opening(home.state, config.clock(), Duration.ofSeconds(10));
        ConversationDropExecutor x = new ConversationDropExecutor(cluster.bootstrapServers(), Map.of(), config, store,
                new AgentStoreDeleter(home.stores()), locks, Duration.ofSeconds(30), sink);
        try {
            x.start();
            waitUntil(() -> answers.size() >= 1);
            Event answer = answers.get(0);
            assertThat(answer.getEventId()).isEqualTo(EventFactory.eventId("dropped-on-computer/laptop/a-1"));
            assertThat(answer.getSource()).isEqualTo("computer:laptop");
            ConversationDroppedOnComputer a = (ConversationDroppedOnComputer) answer.getPayload();
            assertThat(a.getOk()).isTrue();
            assertThat(a.getConversationKey()).isEqualTo("chat-1");
            assertThat(a.getRequestId()).isEqualTo("req-1");
            assertThat(a.getComputerId()).isEqualTo("laptop");
            assertThat(a.getError()).isNull();
            assertThat(a.getRemovedPaths()).contains(transcript.toString(), chatFile.toString(), chatFile.getParent().toString());
            assertThat(transcript).doesNotExist();
            assertThat(chatFile.getParent()).doesNotExist();
            assertThat(store.<AssistantSessions.Entry>with(s -> s.get("chat-1"))).as("the entry is gone").isNull();
            assertThat(neighbour).as("another chat's session stays").exists();
            assertThat(otherChatFile).exists();
            assertThat(store.<AssistantSessions.Entry>with(s -> s.get("chat-2"))).isNotNull();

            // the projector asks again (the computer came back): nothing more to drop; an answer of its own, so that had
            // the first drop failed, this one's ok would not be taken for a duplicate of it
            try (KafkaProducer<String, Event> p = producer()) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, accepted("a-1-again", "service:projector", "chat-1", "req-1",
                        List.of("laptop"))));
                p.flush();
            }
            waitUntil(() -> answers.size() >= 2);
            Event again = answers.get(1);
            assertThat(again.getEventId()).isEqualTo(EventFactory.eventId("dropped-on-computer/laptop/a-1-again")).isNotEqualTo(answer.getEventId());
            ConversationDroppedOnComputer b = (ConversationDroppedOnComputer) again.getPayload();
            assertThat(b.getOk()).as("nothing left counts as dropped").isTrue();
            assertThat(b.getRemovedPaths()).isEmpty();
            assertThat(neighbour).exists();
        } finally {
            x.stop();
        }

        // started again: the position was committed after the answers, so nothing is answered again
        ConversationDropExecutor restarted = new ConversationDropExecutor(cluster.bootstrapServers(), Map.of(), config, store,
                new AgentStoreDeleter(home.stores()), locks, Duration.ofSeconds(30), sink);
        try {
            restarted.start();
            Thread.sleep(3_000);
        } finally {
            restarted.stop();
        }
        assertThat(answers).as("one answer per delivery, none for the requests of another computer or not the guard's").hasSize(2);
        assertThat(otherChatFile).exists();
    }

    @Test
    void aDropWaitsForTheChatsRunningTurnAndATurnThatRunsOnIsAnsweredNotOk() throws Exception {
        FakeHome home = new FakeHome(tmp.resolve("home"));
        Path transcript = write(home.claudeProjects().resolve("-home-ana-x").resolve(S1 + ".jsonl"), "{}\n");
        try (AssistantSessions s = AssistantSessions.open(home.state, Clock.fixed(T, ZoneOffset.UTC))) {
            s.put(new AssistantSessions.Entry("chat-9", "claude-code", S1, "sonnet", List.of(), null, null, 4, 2, 2, "laptop", T, List.of()));
        }
        ImportConfig config = new ImportConfig("acct-ana-2", "laptop", Clock.fixed(T.plusSeconds(60), ZoneOffset.UTC),
                home.state.resolve("import-state.json"));
        List<Event> answers = Collections.synchronizedList(new ArrayList<>());
        // the turn runs in "another process": its own locks on the same state folder (the chat's lock file)
        ChatLocks turnSide = new ChatLocks(home.state);
        ConversationDropExecutor x = new ConversationDropExecutor(cluster.bootstrapServers(), Map.of(), config,
                AssistantStore.opening(home.state, config.clock(), Duration.ofSeconds(10)), new AgentStoreDeleter(home.stores()),
                new ChatLocks(home.state), Duration.ofSeconds(2), answers::add);
        ChatLocks.Held turn = turnSide.hold("chat-9");
        try {
            x.start();
            try (KafkaProducer<String, Event> p = producer()) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), "acct-ana-2", accepted("acct-ana-2", "b-1", "service:projector", "chat-9", "req-a",
                        List.of("laptop"))));
                p.flush();
            }
            waitUntil(() -> answers.size() >= 1);
            ConversationDroppedOnComputer a = (ConversationDroppedOnComputer) answers.get(0).getPayload();
            assertThat(a.getOk()).as("the turn ran on past the wait").isFalse();
            assertThat(a.getError()).isEqualTo("a turn of the chat is still running after PT2S");
            assertThat(transcript).exists();

            try (KafkaProducer<String, Event> p = producer()) {
                p.send(new ProducerRecord<>(Topics.EVENTS.name(), "acct-ana-2", accepted("acct-ana-2", "b-2", "service:projector", "chat-9", "req-b",
                        List.of("laptop"))));
                p.flush();
            }
            Thread.sleep(800);
            assertThat(answers).as("waiting for the running turn").hasSize(1);
            assertThat(transcript).exists();
            turn.close();
            waitUntil(() -> answers.size() >= 2);
            ConversationDroppedOnComputer b = (ConversationDroppedOnComputer) answers.get(1).getPayload();
            assertThat(b.getOk()).isTrue();
            assertThat(b.getRequestId()).isEqualTo("req-b");
            assertThat(b.getRemovedPaths()).containsExactly(transcript.toString());
            assertThat(transcript).doesNotExist();
        } finally {
            turn.close();
            x.stop();
        }
    }

    private static KafkaProducer<String, Event> producer() {
        return new KafkaProducer<>(Map.of("bootstrap.servers", cluster.bootstrapServers()),
                Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer());
    }

    private static void waitUntil(BooleanSupplier done) throws InterruptedException {
        long until = System.currentTimeMillis() + 60_000;
        while (!done.getAsBoolean() && System.currentTimeMillis() < until) {
            Thread.sleep(100);
        }
        assertThat(done.getAsBoolean()).as("in time").isTrue();
    }
}
