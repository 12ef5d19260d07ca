package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.ThreadMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14 item 2 on a real broker with exactly-once: poison events for one account, written straight to the log (no
 * gateway), must not delay another account's new session view by 5 s or more, must themselves be bounded or
 * dead-lettered with their reason, and must never cost the projector its stream thread.
 * <ol>
 *   <li>A claim whose texts and lists are huge (a 300,000-character title, a 200,000-character description, thousands of
 *       labels and linked tasks): its view is published bounded ({@link ViewBounds}).</li>
 *   <li>A session whose view, although bounded, exceeds the view topic's {@code max.message.bytes} (lowered for the
 *       test to 32 KiB, as a cluster may have it): each such view goes to the dead-letter topic with the reason, and the
 *       other views go on.</li>
 * </ol>
 */
class PoisonEventTest {
    private static final String POISONED = "acct-poison";
    private static final String NEIGHBOUR = "acct-neighbour";
    private static final Random RANDOM = new Random(14);

    @Test
    void aPoisonEventNeitherStallsAnotherAccountNorKillsTheStreamThread(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            try (Admin admin = cluster.admin()) {
                TopicAdmin.ensureTopics(admin, 2, (short) 1);
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, Topics.SESSIONS_VIEW.name()),
                        List.of(new AlterConfigOp(new ConfigEntry(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, String.valueOf(32 * 1024)),
                                AlterConfigOp.OpType.SET)))).all().get();
            }
            List<String> threadsSeen = new CopyOnWriteArrayList<>();
            try (Projector projector = new Projector(cluster.bootstrapServers(), state, 1, Map.of("commit.interval.ms", 100));
                 KafkaProducer<String, byte[]> log = new KafkaProducer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                         "max.request.size", 2 * 1024 * 1024), new StringSerializer(), new ByteArraySerializer());
                 KafkaConsumer<String, SessionView> views = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                         "group.id", "poison-views", "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                         Topics.SESSIONS_VIEW.keySerde().deserializer(), Topics.SESSIONS_VIEW.valueSerde().deserializer())) {
                projector.start();
                views.subscribe(List.of(Topics.SESSIONS_VIEW.name()));
                Map<String, SessionView> seen = new HashMap<>();

                // warm up: the neighbour's first session, so the groups, transactions and topics are all in place
                append(log, claim(NEIGHBOUR, "warm-up", null, "Warm up", "short"));
                awaitView(views, seen, Keys.of(NEIGHBOUR, "warm-up"), Duration.ofSeconds(120));
                threadsSeen.addAll(threadNames(projector.streams()));

                // 1. huge texts and lists: published bounded
                Event huge = claim(POISONED, "huge-1", null, random(300_000), random(200_000));
                RunClaimed hc = (RunClaimed) huge.getPayload();
                List<String> labels = new ArrayList<>();
                List<String> linked = new ArrayList<>();
                for (int i = 0; i < 3_000; i++) {
                    labels.add("label-" + i + "-" + random(8));
                    linked.add("task-" + i + "-" + random(20));
                }
                hc.getTask().setLabels(labels);
                hc.getTask().setLinkedTaskIds(linked);
                hc.setFolder("/" + random(100_000));
                append(log, huge);
                long delay1 = neighbourDelay(log, views, seen, "after-huge");
                threadsSeen.addAll(threadNames(projector.streams()));

                SessionView bounded = awaitView(views, seen, Keys.of(POISONED, "huge-1"), Duration.ofSeconds(30));
                assertThat(bounded).as("the huge claim's session is published, bounded").isNotNull();
                assertThat(bounded.getFirstTaskTitle()).hasSize(ViewBounds.TITLE_CHARS).endsWith(ViewBounds.ELLIPSIS);
                assertThat(bounded.getRuns().get(0).getTitle()).hasSize(ViewBounds.TITLE_CHARS);
                assertThat(bounded.getFolder()).hasSize(ViewBounds.PATH_CHARS).endsWith(ViewBounds.ELLIPSIS);
                assertThat(bounded.getTasks().get(0).getFacts().getDescription()).hasSize(ViewBounds.LONG_TEXT_CHARS);
                assertThat(bounded.getTasks().get(0).getFacts().getLabels()).hasSize(ViewBounds.LABELS)
                        .as("the newest kept").endsWith(labels.get(labels.size() - 1));
                assertThat(bounded.getTasks().get(0).getFacts().getLinkedTaskIds()).hasSize(ViewBounds.LINKED_TASKS);
                // 3,000 each: cut to ten times the view's bound as the event arrived, then to the bound, counted, as stored
                assertThat(bounded.getOmitted())
                        .containsEntry("tasks.facts.labels", (ViewBounds.EVENT_LIST_FACTOR - 1) * ViewBounds.LABELS)
                        .containsEntry("tasks.facts.linkedTaskIds", (ViewBounds.EVENT_LIST_FACTOR - 1) * ViewBounds.LINKED_TASKS);

                // 2. a session whose bounded view outgrows the topic's 32 KiB: dead-lettered with its reason
                // (about 4.3 KB a task: six fit, and are published; the 8th makes it too large)
                String previous = null;
                for (int i = 0; i < 8; i++) {
                    if (i == 6) {
                        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                        while (System.nanoTime() < until && (seen.get(Keys.of(POISONED, "long-0")) == null
                                || seen.get(Keys.of(POISONED, "long-0")).getRuns().size() < 6)) {
                            awaitView(views, seen, "none", Duration.ofMillis(200));
                        }
                        assertThat(seen.get(Keys.of(POISONED, "long-0")).getRuns()).as("six tasks fit in 32 KiB").hasSize(6);
                    }
                    String run = "long-" + i;
                    append(log, claim(POISONED, run, previous, "Step " + i + " " + random(40), random(ViewBounds.LONG_TEXT_CHARS)));
                    previous = run;
                }
                long delay2 = neighbourDelay(log, views, seen, "after-long");
                threadsSeen.addAll(threadNames(projector.streams()));

                List<ConsumerRecord<byte[], byte[]>> dead = deadLetters(cluster, Keys.of(POISONED, "long-0"), Duration.ofSeconds(30));
                assertThat(dead).as("the too-large view is in the dead-letter topic").isNotEmpty();
                ConsumerRecord<byte[], byte[]> d = dead.get(0);
                assertThat(header(d, "__streams.errors.exception")).isEqualTo(org.apache.kafka.common.errors.RecordTooLargeException.class.getName());
                assertThat(header(d, "__streams.errors.message")).contains(Topics.SESSIONS_VIEW.name()).contains("max.message.bytes");
                assertThat(header(d, "ensemble.error.output-topic")).isEqualTo(Topics.SESSIONS_VIEW.name());

                // the session's earlier, smaller views were published; the neighbour goes on after it too
                long delay3 = neighbourDelay(log, views, seen, "after-all");
                threadsSeen.addAll(threadNames(projector.streams()));

                System.out.printf("PoisonEventTest: the neighbour's view %d, %d, %d ms after its append%n", delay1, delay2, delay3);
                assertThat(List.of(delay1, delay2, delay3)).as("the neighbour's new session view, ms after its append")
                        .allSatisfy(ms -> assertThat(ms).isLessThan(5_000));
                assertThat(projector.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);
                assertThat(threadsSeen).as("the stream thread was never replaced").isNotEmpty()
                        .allSatisfy(name -> assertThat(name).endsWith("-StreamThread-1"));
            }
        }
    }

    /** Appends the neighbour's new session and returns the ms from the append's acknowledgement to its view on the topic. */
    private static long neighbourDelay(KafkaProducer<String, byte[]> log, KafkaConsumer<String, SessionView> views,
                                       Map<String, SessionView> seen, String run) throws Exception {
        append(log, claim(NEIGHBOUR, run, null, "Neighbour " + run, "short"));
        long appended = System.nanoTime();
        SessionView v = awaitView(views, seen, Keys.of(NEIGHBOUR, run), Duration.ofSeconds(60));
        long ms = (System.nanoTime() - appended) / 1_000_000;
        assertThat(v).as("the neighbour's session %s is published (after %d ms)", run, ms).isNotNull();
        return ms;
    }

    private static SessionView awaitView(KafkaConsumer<String, SessionView> views, Map<String, SessionView> seen, String key,
                                         Duration timeout) {
        long until = System.nanoTime() + timeout.toNanos();
        while (!seen.containsKey(key) && System.nanoTime() < until) {
            for (ConsumerRecord<String, SessionView> r : views.poll(Duration.ofMillis(20))) {
                seen.put(r.key(), r.value());
            }
        }
        return seen.get(key);
    }

    private static List<ConsumerRecord<byte[], byte[]>> deadLetters(KafkaTestCluster cluster, String key, Duration timeout) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "poison-dlq-" + UUID.randomUUID(), "auto.offset.reset", "earliest", "isolation.level", "read_committed"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(Topics.DEAD_LETTER.name()));
            long until = System.nanoTime() + timeout.toNanos();
            while (out.isEmpty() && System.nanoTime() < until) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.key() != null && key.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        out.add(r);
                    }
                }
            }
        }
        return out;
    }

    private static List<String> threadNames(KafkaStreams streams) {
        return streams.metadataForLocalThreads().stream().map(ThreadMetadata::threadName).toList();
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static void append(KafkaProducer<String, byte[]> log, Event e) throws Exception {
        log.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), Topics.EVENTS.valueSerde().serializer()
                .serialize(Topics.EVENTS.name(), e))).get();
    }

    private static Event claim(String account, String runId, String continueFrom, String title, String description) {
        Instant now = Instant.now();
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(account).setSpace("web:space-1")
                .setOccurredAt(now).setRecordedAt(now).setSource("computer:laptop")
                .setPayload(RunClaimed.newBuilder().setRunId(runId).setTaskId("task-" + runId).setComputerId("laptop")
                        .setAgent("claude-code").setFolder("/work/poison").setKind(RunKind.TASK_RUN).setContinueFromJobId(continueFrom)
                        .setTask(TaskFacts.newBuilder().setTitle(title).setDescription(description).build()).build())
                .build();
    }

    /** Text that does not compress (so the broker's limit, which counts compressed bytes, is met by the text's size). */
    private static String random(int chars) {
        StringBuilder b = new StringBuilder(chars);
        for (int i = 0; i < chars; i++) {
            b.append((char) ('a' + RANDOM.nextInt(26)));
        }
        return b.toString();
    }
}
