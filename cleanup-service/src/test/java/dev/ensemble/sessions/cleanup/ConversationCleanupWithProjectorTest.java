package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnAction;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.events.TurnReason;
import dev.ensemble.sessions.projector.Projector;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.views.ConversationView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cleanup's minute tick with the real projector on one broker (guide §5, §6): turns and asks in the log (their times
 * in the past) → the projector's conversation views → the cleanup asks for an idle chat's and an answered ask line's
 * deletion and asks a drop again for a computer online that never confirmed → the projector's guard accepts each, and
 * the idle chat and the ask line are deleted; a chat in use is left alone.
 */
class ConversationCleanupWithProjectorTest {
    static final String ACCOUNT = "acct-conv-e2e";

    @Test
    void theProjectorsGuardAcceptsWhatTheTickAsksFor(@TempDir Path dir) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            String bootstrap = cluster.bootstrapServers();
            Map<String, Object> fast = Map.of("commit.interval.ms", 100);
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            Instant monthAgo = now.minus(Duration.ofDays(31));
            Instant dayAgo = now.minus(Duration.ofDays(1));
            String askKey = "ask-task-00112233445566778899aabbccddeeff";
            Event person = event(ConversationDeletionRequested.newBuilder().setConversationKey("chat-person").setRequestedBy(Requester.person)
                    .setRequesterId("ana").setReason("person").build(), now.minus(Duration.ofMinutes(6)), "person:ana");
            Event ask = event(AskRequested.newBuilder().setAskId("ask-1").setConversationKey(askKey).setPersonId("ana").setPageKind("task")
                    .setPageId("task-1").setPrompt("what is this task?").build(), now.minus(Duration.ofMinutes(40)), "service:gateway");
            ask.setEventId("ask-1"); // an AskRequested's event id is the ask id
            List<Event> log = List.of(
                    event(ComputerStatus.newBuilder().setComputerId("laptop").setOnline(true)
                            .setCapabilities(Map.of("sessionDelete", 1, "assistantTurns", 3)).build(), now.minus(Duration.ofHours(1)), "computer:laptop"),
                    decided("chat-idle", ConversationKind.CHAT, "t1", monthAgo), ended("chat-idle", "t1", monthAgo.plusSeconds(60)),
                    decided("chat-in-use", ConversationKind.CHAT, "t2", dayAgo), ended("chat-in-use", "t2", dayAgo.plusSeconds(60)),
                    decided("chat-person", ConversationKind.CHAT, "t3", dayAgo), ended("chat-person", "t3", dayAgo.plusSeconds(60)),
                    ask,
                    decided(askKey, ConversationKind.ASK, "ask-1", now.minus(Duration.ofMinutes(39))),
                    ended(askKey, "ask-1", now.minus(Duration.ofMinutes(35))),
                    person);

            Map<String, ConversationView> views = new HashMap<>();
            List<String> requests = new ArrayList<>();
            List<String> accepted = new ArrayList<>();
            try (Projector projector = new Projector(bootstrap, dir.resolve("projector"), 1, fast);
                 CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1,
                         CleanupConfig.defaults().withConversationTick(Duration.ofSeconds(1)), fast);
                 KafkaConsumer<String, byte[]> consumer = consumer(bootstrap)) {
                projector.start();
                cleanup.start();
                try (KafkaProducer<String, Event> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        ProducerConfig.ACKS_CONFIG, "all"), Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer())) {
                    for (Event e : log) {
                        producer.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, e)).get();
                    }
                }
                BooleanSupplier done = () -> {
                    ConversationView idle = views.get(ACCOUNT + "/chat-idle");
                    ConversationView line = views.get(ACCOUNT + "/" + askKey);
                    return idle != null && idle.getDeleted() && line != null && line.getDeleted()
                            && requests.contains("chat-person retry")
                            && accepted.stream().filter(a -> a.startsWith("chat-person ")).count() >= 2;
                };
                long until = System.currentTimeMillis() + 240_000; // generous: a loaded machine
                while (!done.getAsBoolean()) {
                    assertThat(System.currentTimeMillis()).as("waited for the deletions; requests " + requests + ", accepted " + accepted)
                            .isLessThan(until);
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(250))) {
                        if (r.topic().equals(Topics.ASSISTANT_VIEW.name())) {
                            views.put(r.key(), Topics.ASSISTANT_VIEW.valueSerde().deserializer().deserialize(r.topic(), r.value()));
                        } else if (r.value() != null) {
                            Event e = Topics.EVENTS.valueSerde().deserializer().deserialize(r.topic(), r.value());
                            if (e == null) {
                                continue;
                            }
                            if (e.getPayload() instanceof ConversationDeletionRequested q && "service:cleanup".equals(e.getSource())) {
                                requests.add(q.getConversationKey() + " " + q.getReason());
                            } else if (e.getPayload() instanceof ConversationDeletionAccepted a) {
                                accepted.add(a.getConversationKey() + " " + a.getComputerIds());
                            }
                        }
                    }
                }
                // a few more ticks: nothing asked twice, nothing for the chat in use
                long more = System.currentTimeMillis() + 5_000;
                while (System.currentTimeMillis() < more) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(250))) {
                        if (r.topic().equals(Topics.EVENTS.name()) && r.value() != null) {
                            Event e = Topics.EVENTS.valueSerde().deserializer().deserialize(r.topic(), r.value());
                            if (e != null && e.getPayload() instanceof ConversationDeletionRequested q && "service:cleanup".equals(e.getSource())) {
                                requests.add(q.getConversationKey() + " " + q.getReason());
                            }
                        }
                    }
                }
            }
            assertThat(requests).containsExactlyInAnyOrder("chat-idle idle", askKey + " ask-answered", "chat-person retry");
            assertThat(accepted).contains("chat-idle [laptop]", askKey + " [laptop]", "chat-person [laptop]");
            assertThat(views.get(ACCOUNT + "/chat-in-use").getDeleted()).isFalse();
        }
    }

    static Event event(Object payload, Instant at, String source) {
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace("local:laptop")
                .setOccurredAt(at).setRecordedAt(at).setSource(source).setPayload(payload).build();
    }

    static Event decided(String key, ConversationKind kind, String turnId, Instant at) {
        return event(TurnDecided.newBuilder().setTurnId(turnId).setConversationKey(key).setConversationKind(kind).setComputerId("laptop")
                .setAgent("claude-code").setModel("opus").setPosition(0).setAction(TurnAction.NEW).setReason(TurnReason.FIRST_TURN)
                .setFolder("/state/assistant/" + key).build(), at, "service:gateway");
    }

    static Event ended(String key, String turnId, Instant at) {
        return event(TurnEnded.newBuilder().setTurnId(turnId).setConversationKey(key).setComputerId("laptop").setAnswered(true)
                .setAgentSessionId("s-" + key).setMessages(1).setAnswer("done").build(), at, "computer:laptop");
    }

    static KafkaConsumer<String, byte[]> consumer(String bootstrap) {
        KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> parts = new ArrayList<>();
        for (String t : List.of(Topics.ASSISTANT_VIEW.name(), Topics.EVENTS.name())) {
            c.partitionsFor(t).forEach(i -> parts.add(new TopicPartition(t, i.partition())));
        }
        c.assign(parts);
        c.seekToBeginning(parts);
        return c;
    }
}
