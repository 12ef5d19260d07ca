package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDeletion;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conversation tick on a real broker (guide §5, §6): assistant views put on {@code sessions.view.assistant} and a
 * computer's status on {@code sessions.events} → the cleanup service appends each due request (an idle chat, an ask
 * line 30 minutes after its answer, a stale ask cleared, a drop asked again while the computer is online) to
 * {@code sessions.events} exactly once, also across a view published again and a restart of the service; nothing for
 * a chat in use, a deleted chat or a drop whose computer is offline.
 */
class ConversationCleanupBrokerTest {
    static final String ACCOUNT = "acct-conv";
    static final int PARTITIONS = 2;
    static KafkaTestCluster cluster;

    @BeforeAll
    static void broker() {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, PARTITIONS, (short) 1);
        }
    }

    @AfterAll
    static void stopBroker() {
        cluster.close();
    }

    static ConversationView.Builder view(String key, ConversationKind kind, Instant lastUsedAt) {
        return ConversationView.newBuilder().setAccount(ACCOUNT).setConversationKey(key).setKind(kind).setSequence(1)
                .setFirstTurnAt(lastUsedAt).setLastUsedAt(lastUsedAt);
    }

    static ConversationView deleting(String key, Instant acceptedAt, String computer) {
        return view(key, ConversationKind.CHAT, acceptedAt.minus(Duration.ofDays(2))).setSequence(5).setDeleted(true)
                .setDeletion(ConversationDeletion.newBuilder().setRequestId("req-" + key).setRequestedBy(Requester.person)
                        .setReason("person").setAcceptedAt(acceptedAt).setComputers(new ArrayList<>(List.of(
                                ConversationDrop.newBuilder().setComputerId(computer).setAskedAt(acceptedAt).build()))).build())
                .build();
    }

    @Test
    void dueConversationsAreAskedForOnceAcrossARepublishAndARestart(@TempDir Path dir) throws Exception {
        String bootstrap = cluster.bootstrapServers();
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Instant answered = now.minus(Duration.ofMinutes(31));
        Instant accepted = now.minus(Duration.ofMinutes(6));
        List<ConversationView> views = List.of(
                view("chat-idle", ConversationKind.CHAT, now.minus(Duration.ofDays(31))).build(),
                view("chat-in-use", ConversationKind.CHAT, now.minus(Duration.ofDays(1))).build(),
                view("chat-kept", ConversationKind.CHAT, now.minus(Duration.ofDays(400))).setKeepDays(0).build(),
                view("chat-deleted", ConversationKind.CHAT, now.minus(Duration.ofDays(400))).setDeleted(true).build(),
                view("node-idle", ConversationKind.NODE_CONVERSATION, now.minus(Duration.ofDays(7))).build(),
                view("ask-answered", ConversationKind.ASK, answered).setLastAnswerAt(answered).setAsks(new ArrayList<>(List.of(
                        AskState.newBuilder().setAskId("ask-1").setPrompt("what changed?").setRequestedAt(answered.minusSeconds(30))
                                .setStatus(AskStatus.ANSWERED).setComputerId("laptop").setStartedAt(answered.minusSeconds(20))
                                .setEndedAt(answered).build()))).build(),
                view("ask-stale", ConversationKind.ASK, now.minus(Duration.ofHours(3))).setAsks(new ArrayList<>(List.of(
                        AskState.newBuilder().setAskId("ask-2").setPrompt("summarise").setRequestedAt(now.minus(Duration.ofHours(3)))
                                .setStatus(AskStatus.RUNNING).setComputerId("laptop").setStartedAt(now.minus(Duration.ofHours(3)))
                                .build()))).build(),
                deleting("chat-dropping-online", accepted, "laptop"),
                deleting("chat-dropping-offline", accepted, "desk"));

        Map<String, Object> fast = Map.of("commit.interval.ms", 100);
        CleanupConfig config = CleanupConfig.defaults().withConversationTick(Duration.ofSeconds(1));
        try (KafkaProducer<String, Object> producer = producer(bootstrap)) {
            producer.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, status("laptop", true, now))).get();
            producer.send(new ProducerRecord<>(Topics.EVENTS.name(), ACCOUNT, status("desk", false, now))).get();
            for (ConversationView v : views) {
                put(producer, v);
            }
        }

        List<Event> seen = new ArrayList<>();
        try (KafkaConsumer<String, Event> consumer = consumer(bootstrap)) {
            try (CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1, config, fast)) {
                cleanup.start();
                readUntil(consumer, seen, 6, Duration.ofMinutes(3));
                // the same views published again (a higher sequence), and a few more ticks
                try (KafkaProducer<String, Object> producer = producer(bootstrap)) {
                    for (ConversationView v : views) {
                        put(producer, ConversationView.newBuilder(v).setSequence(v.getSequence() + 1).build());
                    }
                }
                readFor(consumer, seen, Duration.ofSeconds(8));
            }
            // a restart of the service on the same state
            try (CleanupService cleanup = new CleanupService(bootstrap, dir.resolve("cleanup"), 1, config, fast)) {
                cleanup.start();
                readFor(consumer, seen, Duration.ofSeconds(20));
            }
        }

        assertThat(seen.stream().map(Event::getEventId).distinct().count()).as("no event appended twice").isEqualTo(seen.size());
        Map<String, List<String>> byConversation = new TreeMap<>();
        for (Event e : seen) {
            assertThat(e.getSource()).isEqualTo("service:cleanup");
            assertThat(e.getAccount()).isEqualTo(ACCOUNT);
            String what = e.getPayload() instanceof ConversationDeletionRequested r
                    ? r.getConversationKey() + " " + r.getReason() + " " + r.getRequestedBy()
                    : ((TurnEnded) e.getPayload()).getConversationKey() + " cleared " + ((TurnEnded) e.getPayload()).getTurnId();
            byConversation.computeIfAbsent(what, k -> new ArrayList<>()).add(e.getEventId());
        }
        assertThat(byConversation.keySet()).containsExactly(
                "ask-answered ask-answered system",
                "ask-stale ask-cleared system",
                "ask-stale cleared ask-2",
                "chat-dropping-online retry system",
                "chat-idle idle system",
                "node-idle idle system");
        byConversation.forEach((what, ids) -> {
            if (!what.contains("retry")) {
                assertThat(ids).as("appended once: " + what).hasSize(1);
            }
        });
        // the drop is asked again once per 5 minutes: once at the boundary it reached (and once more only if this test
        // ran past the next one)
        assertThat(byConversation.get("chat-dropping-online retry system")).as("name-based on the 5-minute boundary reached")
                .startsWith(ConversationSweepPlanner.requestId(ACCOUNT, "chat-dropping-online", "retry", accepted.plus(Duration.ofMinutes(5))))
                .hasSizeLessThanOrEqualTo((int) (Duration.between(accepted, Instant.now()).toMinutes() / 5));
        TurnEnded cleared = seen.stream().map(Event::getPayload).filter(TurnEnded.class::isInstance).map(TurnEnded.class::cast)
                .findFirst().orElseThrow();
        assertThat(cleared.getAnswered()).isFalse();
        assertThat(cleared.getError()).isEqualTo("cleared: no report within 2 hours");
        assertThat(cleared.getComputerId()).isEqualTo("laptop");
    }

    static Event status(String computer, boolean online, Instant at) {
        return Event.newBuilder().setEventId("status-" + computer).setAccount(ACCOUNT).setSpace("local:" + computer)
                .setOccurredAt(at).setRecordedAt(at).setSource("computer:" + computer)
                .setPayload(ComputerStatus.newBuilder().setComputerId(computer).setOnline(online).setCapabilities(Map.of("assistantTurns", 3)).build())
                .build();
    }

    static void put(KafkaProducer<String, Object> producer, ConversationView v) throws Exception {
        String key = Keys.of(v.getAccount(), v.getConversationKey());
        producer.send(new ProducerRecord<>(Topics.ASSISTANT_VIEW.name(), Keys.accountPartition(key, PARTITIONS), key, v)).get();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static KafkaProducer<String, Object> producer(String bootstrap) {
        org.apache.kafka.common.serialization.Serializer<Object> values = (topic, value) -> value instanceof Event e
                ? Topics.EVENTS.valueSerde().serializer().serialize(topic, e)
                : Topics.ASSISTANT_VIEW.valueSerde().serializer().serialize(topic, (ConversationView) value);
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
                Topics.EVENTS.keySerde().serializer(), values);
    }

    static KafkaConsumer<String, Event> consumer(String bootstrap) {
        KafkaConsumer<String, Event> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer());
        List<TopicPartition> parts = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            parts.add(new TopicPartition(Topics.EVENTS.name(), p));
        }
        c.assign(parts);
        c.seekToBeginning(parts);
        return c;
    }

    /** Reads the cleanup's events until {@code count} were seen or {@code timeout} passed. */
    static void readUntil(KafkaConsumer<String, Event> c, List<Event> seen, int count, Duration timeout) {
        long until = System.nanoTime() + timeout.toNanos();
        while (seen.size() < count && System.nanoTime() < until) {
            poll(c, seen);
        }
        assertThat(seen).as("the cleanup's events within " + timeout).hasSizeGreaterThanOrEqualTo(count);
    }

    static void readFor(KafkaConsumer<String, Event> c, List<Event> seen, Duration d) {
        long until = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < until) {
            poll(c, seen);
        }
    }

    private static void poll(KafkaConsumer<String, Event> c, List<Event> seen) {
        c.poll(Duration.ofMillis(250)).forEach(r -> {
            if (r.value() != null && "service:cleanup".equals(r.value().getSource())) {
                seen.add(r.value());
            }
        });
    }
}
