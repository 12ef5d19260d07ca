package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rebuilding the views by replay (DESIGN.md §1) gives the live views back, key by key, after a random history of
 * several accounts (chains, statuses, reports, engine events, deletion requests and computers' answers; assistant chats'
 * turns, asks, conversation deletions, computers' drops and their coming online); and also
 * when the replaying process is killed (SIGKILL) half-way and the projector is started again. Every view is
 * compared: sessions, rarity tables, retirement (but its publication counter), the deletion audit and the assistant
 * conversations. The guards'
 * decisions, which the projector appends to the log, are decided again in the replay with the same name-based
 * eventIds: appended once more, they are duplicates and change nothing.
 */
class ProjectorRebuildTest {
    static final List<String> VIEWS = List.of(Topics.SESSIONS_VIEW.name(), Topics.CORPUS_VIEW.name(),
            Topics.RETIREMENT_VIEW.name(), Topics.DELETION_AUDIT.name(), Topics.ASSISTANT_VIEW.name());

    @Test
    void rebuiltViewsEqualTheLiveOnesAlsoAfterAKillMidReplay(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
            int events = produceRandomHistory(cluster.bootstrapServers(), new Random(42), 3000);
            Map<String, Object> fast = Map.of("commit.interval.ms", 100, "session.timeout.ms", 6000);

            // live
            try (Projector p = new Projector(cluster.bootstrapServers(), state, 1, fast)) {
                p.start();
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(600), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(300))).isTrue();
            }
            Map<String, Object> live = latest(cluster.bootstrapServers(), Map.of());
            assertThat(live.keySet()).anyMatch(k -> k.startsWith(Topics.SESSIONS_VIEW.name())).anyMatch(k -> k.startsWith(Topics.CORPUS_VIEW.name()))
                    .anyMatch(k -> k.startsWith(Topics.RETIREMENT_VIEW.name())).anyMatch(k -> k.startsWith(Topics.DELETION_AUDIT.name()));
            assertThat(live.entrySet()).as("the history deleted some sessions")
                    .anyMatch(en -> en.getKey().startsWith(Topics.DELETION_AUDIT.name()) && en.getValue().toString().contains("\"DELETED\""))
                    .anyMatch(en -> en.getKey().startsWith(Topics.DELETION_AUDIT.name()) && en.getValue().toString().contains("\"SKIPPED\""));
            assertThat(live.entrySet()).as("the history has assistant conversations, deleted ones and asks")
                    .anyMatch(en -> en.getKey().startsWith(Topics.ASSISTANT_VIEW.name()) && en.getValue().toString().contains("\"deleted\":true"))
                    .anyMatch(en -> en.getKey().startsWith(Topics.ASSISTANT_VIEW.name()) && en.getValue().toString().contains("\"ANSWERED\""))
                    .anyMatch(en -> en.getKey().startsWith(Topics.DELETION_AUDIT.name()) && en.getValue().toString().contains("\"conversationKey\":\"chat-")
                            && en.getValue().toString().contains("\"DELETED\""));

            // rebuild (beside another generation's changelog, which the reset of generation 1 leaves alone)
            String otherGeneration = "ensemble-projector-g2-" + StoreNames.RUNS + "-changelog";
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(otherGeneration, 1, (short) 1))).all().get();
            Map<TopicPartition, Long> mark = ends(cluster.bootstrapServers());
            assertThat(ProjectorRebuild.reset(cluster.bootstrapServers(), state)).as("the history and the guard's decisions").isGreaterThan(events);
            assertThat(admin.listTopics().names().get()).contains(otherGeneration)
                    .doesNotContain(Projector.APPLICATION_ID + "-" + StoreNames.RUNS + "-changelog");
            try (Projector p = new Projector(cluster.bootstrapServers(), state, 1, fast)) {
                p.start();
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(600), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(300))).isTrue();
            }
            assertSameViews("rebuild", live, latest(cluster.bootstrapServers(), mark));

            // rebuild again, killed half-way, then started again
            Map<TopicPartition, Long> mark2 = ends(cluster.bootstrapServers());
            ProjectorRebuild.reset(cluster.bootstrapServers(), state);
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-cp", System.getProperty("java.class.path"), RebuildChild.class.getName(), cluster.bootstrapServers(), state.toString())
                    .redirectErrorStream(true).redirectOutput(state.resolveSibling(state.getFileName() + "-child.log").toFile()).start();
            AtomicLong processed = new AtomicLong();
            long until = System.currentTimeMillis() + 600_000;
            while (processed.get() < events / 5 && System.currentTimeMillis() < until && child.isAlive()) {
                ProjectorRebuild.awaitCaughtUp(admin, Duration.ZERO, processed::set);
                Thread.sleep(50);
            }
            child.destroyForcibly().waitFor();
            assertThat(processed.get()).as("killed mid-replay").isBetween((long) events / 5, (long) events - 1);
            try (Projector p = new Projector(cluster.bootstrapServers(), state, 1, fast)) {
                p.start();
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(600), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(300))).isTrue();
            }
            assertSameViews("rebuild killed and started again", live, latest(cluster.bootstrapServers(), mark2));
        }
    }

    /** Several accounts' runs: new sessions, continued ones, statuses, engine events, and some deletions. */
    static int produceRandomHistory(String bootstrap, Random rnd, int n) throws Exception {
        return send(bootstrap, randomHistory(rnd, n));
    }

    /** Appends the events to the log, keyed by their account, and waits for every acknowledgement. */
    static int send(String bootstrap, List<Event> events) throws Exception {
        List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
        try (KafkaProducer<String, Event> p = new KafkaProducer<>(dev.ensemble.sessions.schema.LogProducers.config(bootstrap,
                "rebuild-test", Map.of()), new StringSerializer(),
                Topics.eventSerde().serializer())) {
            for (Event e : events) sent.add(p.send(new ProducerRecord<>(Topics.EVENTS.name(), e.getAccount(), e)));
            p.flush();
            for (var f : sent) f.get();
        }
        return sent.size();
    }

    /** The events of {@link #produceRandomHistory}, in the order they are appended (about n of them). */
    static List<Event> randomHistory(Random rnd, int n) {
        List<String> accounts = List.of("acct-ana", "acct-bo", "acct-cy", "acct-dee");
        Map<String, List<String>> runs = new HashMap<>();
        Map<String, String> sessionOf = new HashMap<>();
        Map<String, List<String>> sessionRuns = new HashMap<>();
        List<Event> out = new ArrayList<>();
        List<String> deletionRequestIds = new ArrayList<>();
        Map<String, AssistantHistory> assistant = new HashMap<>();
        for (int i = 0; i < n; i++) {
            String acct = accounts.get(rnd.nextInt(accounts.size()));
            if (rnd.nextInt(8) == 0) {
                for (Event a : assistant.computeIfAbsent(acct, AssistantHistory::new).next(rnd, i)) {
                    out.add(Event.newBuilder(a).setAccount(acct).build());
                }
                continue;
            }
            List<String> mine = runs.computeIfAbsent(acct, a -> new ArrayList<>());
            Event e = null;
            int kind = mine.isEmpty() ? 0 : rnd.nextInt(10);
            String some = mine.isEmpty() ? null : mine.get(rnd.nextInt(mine.size()));
            if (kind <= 2) {
                String run = acct + "-r" + i;
                String parent = kind == 0 || some == null ? null : some;
                e = ChainFixture.claimed(run, parent, "Task " + rnd.nextInt(50) + " ranking api " + i, i);
                mine.add(run);
                String session = parent == null ? run : sessionOf.get(parent);
                sessionOf.put(run, session);
                sessionRuns.computeIfAbsent(session, k -> new ArrayList<>()).add(run);
            } else if (kind <= 5) {
                e = ChainFixture.status(some, RunStatus.values()[rnd.nextInt(RunStatus.values().length)], i);
            } else if (kind <= 8) {
                e = ChainFixture.engine(some, "agent-" + some, (long) rnd.nextInt(100_000), 200_000L, i);
            } else if (rnd.nextInt(3) == 0) {
                // a person deletes the session of one of the account's runs: the computer is online, the request
                // names the runs they saw, and the computer answers (accepted or skipped, the guard decides)
                String session = sessionOf.get(some);
                for (Event d : ChainFixture.deleted(session, List.copyOf(sessionRuns.get(session)), i)) {
                    d = Event.newBuilder(d).setAccount(acct).build();
                    if (d.getPayload() instanceof dev.ensemble.sessions.events.SessionDeletedOnComputer a) {
                        a.setRequestId(deletionRequestIds.get(deletionRequestIds.size() - 1));
                    } else if (d.getPayload() instanceof dev.ensemble.sessions.events.SessionDeletionRequested) {
                        deletionRequestIds.add(d.getEventId());
                    }
                    out.add(d);
                }
                continue;
            } else {
                e = ChainFixture.done(some, "did it", List.of("src/A.java"), i);
            }
            out.add(Event.newBuilder(e).setAccount(acct).build());
        }
        return out;
    }

    /**
     * One account's assistant conversations in a random history (guide §5, §6): chats' turns on two computers, an ask
     * line, a person's deletions answered by one computer at once and by the other later or after it comes online
     * again, the system's idle requests (skipped this soon), and computers coming online.
     */
    static final class AssistantHistory {
        final String account;
        final List<String> chats = new ArrayList<>();
        final Map<String, java.util.LinkedHashSet<String>> ranOn = new HashMap<>();
        final java.util.Set<String> deleted = new java.util.HashSet<>();
        /** chat → request id, computers still to answer */
        final Map<String, String> requestOf = new HashMap<>();
        final Map<String, List<String>> owed = new HashMap<>();
        int asks;

        AssistantHistory(String account) {
            this.account = account;
        }

        List<Event> next(Random rnd, int i) {
            java.time.Instant at = ChainFixture.at(i);
            String computer = rnd.nextBoolean() ? "laptop" : "desktop";
            List<String> live = chats.stream().filter(c -> !deleted.contains(c)).toList();
            int r = rnd.nextInt(10);
            if (r <= 3 || live.isEmpty()) {
                String chat = live.isEmpty() || rnd.nextInt(4) == 0 ? "chat-" + account + "-" + i : live.get(rnd.nextInt(live.size()));
                if (!chats.contains(chat)) {
                    chats.add(chat);
                }
                ranOn.computeIfAbsent(chat, k -> new java.util.LinkedHashSet<>()).add(computer);
                String turn = chat + "-t" + i;
                return List.of(AssistantEvents.decided(chat, dev.ensemble.sessions.events.ConversationKind.CHAT, turn, computer, null, at),
                        AssistantEvents.ended(chat, turn, computer, rnd.nextInt(5) > 0, "s-" + turn, 1 + rnd.nextInt(80), null, at.plusSeconds(20)));
            }
            if (r <= 5) {
                String key = "ask-task-" + account;
                String askId = account + "-ask-" + (++asks);
                return List.of(AssistantEvents.ask(key, askId, "ana", "what is task " + i + "?", at),
                        AssistantEvents.decided(key, dev.ensemble.sessions.events.ConversationKind.ASK, askId, computer, null, at.plusSeconds(1)),
                        AssistantEvents.ended(key, askId, computer, true, "s-" + askId, 1, "answer " + i, at.plusSeconds(10)));
            }
            if (r == 6) {
                String chat = live.get(rnd.nextInt(live.size()));
                Event req = AssistantEvents.deleteRequest(chat, dev.ensemble.sessions.events.Requester.person, "ana", "person", at);
                deleted.add(chat);
                List<String> asked = new ArrayList<>(ranOn.get(chat));
                requestOf.put(chat, req.getEventId());
                List<Event> out = new ArrayList<>(List.of(req));
                out.add(AssistantEvents.dropped(chat, req.getEventId(), asked.get(0), true, at.plusSeconds(5)));
                owed.put(chat, new ArrayList<>(asked.subList(1, asked.size())));
                return out;
            }
            if (r == 7) {
                return List.of(DeletionFixture.computer(computer, true, 1, at));
            }
            if (r == 8) {
                for (var en : owed.entrySet()) {
                    if (!en.getValue().isEmpty()) {
                        String c = en.getValue().remove(0);
                        return List.of(AssistantEvents.dropped(en.getKey(), requestOf.get(en.getKey()), c, rnd.nextInt(4) > 0, at));
                    }
                }
                return List.of();
            }
            return List.of(AssistantEvents.deleteRequest(live.get(rnd.nextInt(live.size())), dev.ensemble.sessions.events.Requester.system, null, "idle", at));
        }
    }

    /** Key by key; on a difference, names the first keys that differ (values are long). */
    static void assertSameViews(String what, Map<String, Object> live, Map<String, Object> rebuilt) {
        List<String> missing = live.keySet().stream().filter(k -> !rebuilt.containsKey(k)).sorted().limit(5).toList();
        List<String> extra = rebuilt.keySet().stream().filter(k -> !live.containsKey(k)).sorted().limit(5).toList();
        List<String> differ = live.keySet().stream().filter(k -> rebuilt.containsKey(k) && !rebuilt.get(k).equals(live.get(k))).sorted().toList();
        assertThat(missing).as(what + ": keys missing").isEmpty();
        assertThat(extra).as(what + ": keys not live").isEmpty();
        assertThat(differ).as(what + ": " + differ.size() + " of " + live.size() + " values differ" + firstDifference(differ, live, rebuilt)).isEmpty();
    }

    private static String firstDifference(List<String> differ, Map<String, Object> live, Map<String, Object> rebuilt) {
        if (differ.isEmpty()) return "";
        Object a = live.get(differ.get(0)), b = rebuilt.get(differ.get(0));
        if (a instanceof com.fasterxml.jackson.databind.node.ObjectNode x && b instanceof com.fasterxml.jackson.databind.node.ObjectNode y) {
            StringBuilder sb = new StringBuilder("; first: ").append(differ.get(0));
            x.fieldNames().forEachRemaining(f -> {
                if (!java.util.Objects.equals(x.get(f), y.get(f))) {
                    sb.append("; ").append(f).append(": live ").append(x.get(f)).append(" rebuilt ").append(y.get(f));
                }
            });
            return sb.toString();
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                if (!java.util.Objects.equals(x.get(i), y.get(i))) {
                    return "; first at element " + i + " of " + x.size() + "/" + y.size() + ": live " + String.valueOf(x.get(i)).substring(0, Math.min(200, String.valueOf(x.get(i)).length()))
                            + " rebuilt " + String.valueOf(y.get(i)).substring(0, Math.min(200, String.valueOf(y.get(i)).length()));
                }
            }
            return "; sizes " + x.size() + "/" + y.size();
        }
        String sa = String.valueOf(a), sb = String.valueOf(b);
        return "; first: " + differ.get(0) + ": live " + sa.substring(0, Math.min(400, sa.length())) + " rebuilt "
                + sb.substring(0, Math.min(400, sb.length()));
    }

    static Map<TopicPartition, Long> ends(String bootstrap) {
        try (KafkaConsumer<String, byte[]> c = consumer(bootstrap)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : VIEWS) c.partitionsFor(t).forEach(i -> parts.add(new TopicPartition(t, i.partition())));
            return c.endOffsets(parts);
        }
    }

    /**
     * The latest value of each view key (topic|key → the decoded view record) among the records at or after
     * {@code from}. Decoded, because a view's Avro maps (the corpus' term counts) may be encoded in another order with
     * the same content: session views are compared as JSON trees (an object's fields have no order), rarity tables by
     * {@link #canonicalStats}.
     */
    static Map<String, Object> latest(String bootstrap, Map<TopicPartition, Long> from) {
        Map<String, Object> out = new HashMap<>();
        var sessions = Topics.SESSIONS_VIEW.valueSerde().deserializer();
        var corpus = Topics.CORPUS_VIEW.valueSerde().deserializer();
        var retirement = Topics.RETIREMENT_VIEW.valueSerde().deserializer();
        var audit = Topics.DELETION_AUDIT.valueSerde().deserializer();
        var assistant = Topics.ASSISTANT_VIEW.valueSerde().deserializer();
        readAll(bootstrap, VIEWS, from, r -> {
            if (r.topic().equals(Topics.SESSIONS_VIEW.name())) {
                out.put(r.topic() + "|" + r.key(), dev.ensemble.sessions.schema.EventJson.recordToJson(sessions.deserialize(r.topic(), r.value())));
            } else if (r.topic().equals(Topics.RETIREMENT_VIEW.name())) {
                // its sequence grows with each publication, and a rebuild publishes fewer
                var json = dev.ensemble.sessions.schema.EventJson.recordToJson(retirement.deserialize(r.topic(), r.value()));
                json.remove("sequence");
                out.put(r.topic() + "|" + r.key(), json);
            } else if (r.topic().equals(Topics.ASSISTANT_VIEW.name())) {
                out.put(r.topic() + "|" + r.key(), dev.ensemble.sessions.schema.EventJson.recordToJson(assistant.deserialize(r.topic(), r.value())));
            } else if (r.topic().equals(Topics.DELETION_AUDIT.name())) {
                out.put(r.topic() + "|" + r.key(), dev.ensemble.sessions.schema.EventJson.recordToJson(audit.deserialize(r.topic(), r.value())));
            } else {
                dev.ensemble.sessions.views.CorpusView v = corpus.deserialize(r.topic(), r.value());
                List<Object> c2 = new ArrayList<>(List.of(v.getAccount(), v.getComputerId(), v.getSequence(), v.getTasks()));
                c2.addAll(canonicalStats(v.getStats()));
                out.put(r.topic() + "|" + r.key(), c2);
            }
        });
        return out;
    }

    /**
     * Calls {@code each} with every record of {@code topics} at or after {@code from} (a partition not in it: from its
     * beginning) up to their ends taken now, each partition in order ({@code read_committed}); gives up after 60 s.
     */
    static void readAll(String bootstrap, List<String> topics, Map<TopicPartition, Long> from,
                        java.util.function.Consumer<ConsumerRecord<String, byte[]>> each) {
        try (KafkaConsumer<String, byte[]> c = consumer(bootstrap)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : topics) c.partitionsFor(t).forEach(i -> parts.add(new TopicPartition(t, i.partition())));
            c.assign(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            for (TopicPartition tp : parts) c.seek(tp, from.getOrDefault(tp, 0L));
            long until = System.currentTimeMillis() + 60_000;
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < until) {
                c.poll(Duration.ofMillis(200)).forEach(each);
            }
        }
    }

    /**
     * A rarity table's window as a list of (task id, sorted terms, sorted anchors), from CorpusStats' binary form: the
     * order of a task's terms in that form follows a hash set's, which may differ between a live and a rebuilt table
     * with the same content.
     */
    static List<Object> canonicalStats(java.nio.ByteBuffer buf) {
        byte[] data = new byte[buf.remaining()];
        buf.duplicate().get(data);
        List<Object> out = new ArrayList<>();
        try (java.io.DataInputStream in = new java.io.DataInputStream(new java.util.zip.InflaterInputStream(new java.io.ByteArrayInputStream(data)))) {
            out.add(in.readInt());
            if (in.readBoolean()) out.add(in.readUTF());
            if (in.readBoolean()) out.add(in.readUTF());
            out.add(in.readInt());
            String[] dict = new String[in.readInt()];
            for (int i = 0; i < dict.length; i++) dict[i] = in.readUTF();
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                out.add(in.readUTF());
                for (int k = 0; k < 2; k++) {
                    java.util.TreeSet<String> set = new java.util.TreeSet<>();
                    int m = varint(in);
                    for (int j = 0; j < m; j++) set.add(dict[varint(in)]);
                    out.add(List.copyOf(set));
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }

    static int varint(java.io.DataInputStream in) throws java.io.IOException {
        int v = 0, shift = 0;
        while (true) {
            int b = in.readUnsignedByte();
            v |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) return v;
            shift += 7;
        }
    }

    static KafkaConsumer<String, byte[]> consumer(String bootstrap) {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024 * 1024),
                new StringDeserializer(), new ByteArrayDeserializer());
    }
}
