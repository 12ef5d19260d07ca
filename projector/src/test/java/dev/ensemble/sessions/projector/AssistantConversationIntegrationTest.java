package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.DeletionAudit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static dev.ensemble.sessions.projector.AssistantEvents.ask;
import static dev.ensemble.sessions.projector.AssistantEvents.decided;
import static dev.ensemble.sessions.projector.AssistantEvents.deleteRequest;
import static dev.ensemble.sessions.projector.AssistantEvents.dropped;
import static dev.ensemble.sessions.projector.AssistantEvents.ended;
import static dev.ensemble.sessions.projector.DeletionFixture.computer;
import static dev.ensemble.sessions.projector.DeletionFixture.min;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant conversations on a real in-process KRaft broker, exactly-once on (guide §5, §6): a chat's turns on two
 * computers and an ask line come out on {@code sessions.view.assistant}; the chat's deletion asks both computers (its
 * decision appended to the log in the projector's transaction), one confirms, the other is offline, is asked again when it
 * comes online and confirms: the view and the deletion audit say the chat is gone from both.
 */
class AssistantConversationIntegrationTest {
    static final String ACCOUNT = DeletionFixture.ACCOUNT;

    @Test
    void aChatsTurnsAnAskAndADeletionWithAComputerComingOnlineLater(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
            String bootstrap = cluster.bootstrapServers();
            try (Projector projector = new Projector(bootstrap, state, 1, Map.of("commit.interval.ms", 100));
                 Watch watch = new Watch(bootstrap)) {
                projector.start();
                String askKey = "ask-task-0123456789abcdef0123456789abcdef";
                ProjectorRebuildTest.send(bootstrap, List.of(
                        computer("laptop", true, 1, min(0)), computer("desktop", true, 1, min(0)),
                        decided("chat-1", ConversationKind.CHAT, "t1", "laptop", null, min(1)),
                        ended("chat-1", "t1", "laptop", true, "s-laptop", 1, null, min(2)),
                        decided("chat-1", ConversationKind.CHAT, "t2", "laptop", "s-laptop", min(3)),
                        ended("chat-1", "t2", "laptop", true, "s-laptop", 2, null, min(4)),
                        decided("chat-1", ConversationKind.CHAT, "t3", "desktop", null, min(5)),
                        ended("chat-1", "t3", "desktop", true, "s-desktop", 1, null, min(6)),
                        ask(askKey, "ask-1", "ana", "what is this task?", min(7)),
                        decided(askKey, ConversationKind.ASK, "ask-1", "laptop", null, min(8)),
                        ended(askKey, "ask-1", "laptop", true, "s-ask", 1, "a ranking task", min(9)),
                        computer("desktop", false, 1, min(10))));
                watch.until("the chat's three turns and the answered ask are published", () -> {
                    ConversationView chat = watch.views.get(ACCOUNT + "/chat-1");
                    ConversationView line = watch.views.get(ACCOUNT + "/" + askKey);
                    return chat != null && chat.getTurns() == 3 && chat.getRunningTurn() == null
                            && line != null && line.getAsks().size() == 1 && line.getAsks().get(0).getStatus() == AskStatus.ANSWERED;
                });
                ConversationView chat = watch.views.get(ACCOUNT + "/chat-1");
                assertThat(chat.getSessions()).extracting(s -> s.getComputerId() + "=" + s.getSessionId())
                        .containsExactly("laptop=s-laptop", "desktop=s-desktop");
                assertThat(watch.views.get(ACCOUNT + "/" + askKey).getAsks().get(0).getAnswer()).isEqualTo("a ranking task");

                Event request = deleteRequest("chat-1", Requester.person, "ana", "person", min(11));
                ProjectorRebuildTest.send(bootstrap, List.of(request, dropped("chat-1", request.getEventId(), "laptop", true, min(12))));
                watch.until("the decision naming both computers is in the log and the laptop confirmed", () ->
                        watch.accepted.size() == 1 && drop(watch, "laptop") != null && Boolean.TRUE.equals(drop(watch, "laptop").getOk()));
                assertThat(watch.accepted.get(0).getComputerIds()).containsExactly("laptop", "desktop");
                assertThat(watch.accepted.get(0).getAgentSessionIds()).containsExactly("s-laptop", "s-desktop");
                assertThat(watch.audits.get(ACCOUNT + "/" + request.getEventId()).getStatus()).isEqualTo("DELETING");

                ProjectorRebuildTest.send(bootstrap, List.of(computer("desktop", true, 1, min(20))));
                watch.until("the desktop, online again, is asked again", () -> watch.accepted.size() == 2);
                assertThat(watch.accepted.get(1).getComputerIds()).containsExactly("desktop");
                assertThat(watch.accepted.get(1).getRequestId()).isEqualTo(request.getEventId());

                ProjectorRebuildTest.send(bootstrap, List.of(dropped("chat-1", request.getEventId(), "desktop", true, min(21))));
                watch.until("the audit says deleted", () -> {
                    DeletionAudit a = watch.audits.get(ACCOUNT + "/" + request.getEventId());
                    return a != null && "DELETED".equals(a.getStatus());
                });
                DeletionAudit audit = watch.audits.get(ACCOUNT + "/" + request.getEventId());
                assertThat(audit.getConversationKey()).isEqualTo("chat-1");
                assertThat(audit.getComputersAsked()).containsExactly("laptop", "desktop");
                assertThat(audit.getAnswers()).extracting(a -> a.getComputerId() + ":" + a.getOk()).containsExactly("laptop:true", "desktop:true");
                watch.until("the view says both dropped", () -> drop(watch, "desktop") != null && Boolean.TRUE.equals(drop(watch, "desktop").getOk()));
                assertThat(watch.views.get(ACCOUNT + "/chat-1").getDeleted()).isTrue();
                assertThat(drop(watch, "desktop").getAskedAt()).isEqualTo(min(20));
            }
        }
    }

    private static ConversationDrop drop(Watch w, String computer) {
        ConversationView v = w.views.get(ACCOUNT + "/chat-1");
        if (v == null || v.getDeletion() == null) {
            return null;
        }
        return v.getDeletion().getComputers().stream().filter(d -> d.getComputerId().equals(computer)).findFirst().orElse(null);
    }

    /** Reads the assistant view, the audit view and the projector's decisions in the log (read_committed) as they come. */
    static final class Watch implements AutoCloseable {
        final Map<String, ConversationView> views = new HashMap<>();
        final Map<String, DeletionAudit> audits = new HashMap<>();
        final List<ConversationDeletionAccepted> accepted = new ArrayList<>();
        private final KafkaConsumer<String, byte[]> consumer;

        Watch(String bootstrap) {
            consumer = ProjectorRebuildTest.consumer(bootstrap);
            List<org.apache.kafka.common.TopicPartition> parts = new ArrayList<>();
            for (String t : List.of(Topics.ASSISTANT_VIEW.name(), Topics.DELETION_AUDIT.name(), Topics.EVENTS.name())) {
                consumer.partitionsFor(t).forEach(i -> parts.add(new org.apache.kafka.common.TopicPartition(t, i.partition())));
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
        }

        void until(String what, BooleanSupplier done) {
            long until = System.currentTimeMillis() + 120_000;
            while (!done.getAsBoolean()) {
                assertThat(System.currentTimeMillis()).as("waited 120 s for: " + what).isLessThan(until);
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.topic().equals(Topics.ASSISTANT_VIEW.name())) {
                        views.put(r.key(), Topics.ASSISTANT_VIEW.valueSerde().deserializer().deserialize(r.topic(), r.value()));
                    } else if (r.topic().equals(Topics.DELETION_AUDIT.name())) {
                        audits.put(r.key(), Topics.DELETION_AUDIT.valueSerde().deserializer().deserialize(r.topic(), r.value()));
                    } else {
                        Event e = Topics.EVENTS.valueSerde().deserializer().deserialize(r.topic(), r.value());
                        if (e.getPayload() instanceof ConversationDeletionAccepted a && DeletionWorkflow.SOURCE.equals(e.getSource())) {
                            accepted.add(a);
                        }
                    }
                }
            }
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
