package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ensemble.sessions.projector.ProjectorRebuildTest.assertSameViews;
import static dev.ensemble.sessions.projector.ProjectorRebuildTest.ends;
import static dev.ensemble.sessions.projector.ProjectorRebuildTest.latest;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The batch rebuild ({@link BatchRebuild}) against a real broker: it gives the live projector's views back, key by key,
 * after a random history of several accounts (chains, statuses, engine events, deletions decided by the guard), and a
 * consumer that keeps the newest sequence of each retirement view takes the rebuilt ones; the
 * projector started after it restores its stores from the changelogs the batch wrote and goes on from its offsets as if
 * it had replayed the log itself (checked against a replay by Kafka Streams); and a batch killed after sending
 * everything but before its commit leaves nothing visible: the projector then replays the log itself, and a second
 * batch rebuild works.
 */
class BatchRebuildTest {
    static final Map<String, Object> FAST = Map.of("commit.interval.ms", 100, "session.timeout.ms", 6000);

    @Test
    void batchRebuildGivesTheLiveViewsAndTheProjectorGoesOnFromIt(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
            List<Event> history = ProjectorRebuildTest.randomHistory(new Random(42), 4500);
            int first = history.size() * 2 / 3;
            ProjectorRebuildTest.send(bootstrap, history.subList(0, first));
            Map<String, Object> live = replayWithStreams(admin, bootstrap, state, false);

            Map<String, dev.ensemble.sessions.views.RetirementView> liveRetirement = retirementViews(bootstrap, Map.of());
            Map<TopicPartition, Long> mark = ends(bootstrap);
            long liveDeadLetters = count(bootstrap, dev.ensemble.sessions.schema.Topics.DEAD_LETTER.name());
            assertThat(liveDeadLetters).as("the history holds invalid events").isPositive();
            long total = ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
            long[] progress = new long[1];
            BatchRebuild.Result r = BatchRebuild.run(bootstrap, state, 1, RetirementRules.Config.defaults(), n -> progress[0] = n);
            assertThat(r.events()).as("every record of the log (the offsets also count transaction markers)")
                    .isEqualTo(progress[0]).isGreaterThanOrEqualTo(first).isLessThanOrEqualTo(total);
            assertThat(r.appended()).as("the guard decided the history's deletion requests again").isPositive();
            assertThat(r.storeRecords()).isPositive();
            assertThat(r.deadLettered()).as("the same invalid events dead-lettered again").isEqualTo(liveDeadLetters);
            assertThat(count(bootstrap, dev.ensemble.sessions.schema.Topics.DEAD_LETTER.name())).isEqualTo(2 * liveDeadLetters);
            Map<String, Object> rebuilt = latest(bootstrap, mark);
            assertSameViews("batch rebuild", live, rebuilt);

            // the projector restores what the batch wrote and goes on with the rest of the history
            Map<String, Object> continued;
            try (Projector p = new Projector(bootstrap, state, 1, FAST)) {
                p.start();
                ProjectorRebuildTest.send(bootstrap, history.subList(first, history.size()));
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(120), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(60))).isTrue();
                continued = latest(bootstrap, mark);
            }
            assertThat(continued).isNotEqualTo(live);

            // a consumer that held the live retirement views and keeps the newest sequence of each (as the gateway
            // does) ends with the views the rebuild and the projector after it published
            Map<String, dev.ensemble.sessions.views.RetirementView> held = new java.util.HashMap<>(liveRetirement);
            Map<String, dev.ensemble.sessions.views.RetirementView> published = new java.util.HashMap<>();
            for (var v : retirementRecords(bootstrap, mark)) {
                String key = v.getAccount() + "/" + v.getSessionId();
                published.put(key, v);
                if (!held.containsKey(key) || v.getSequence() > held.get(key).getSequence()) held.put(key, v);
            }
            assertThat(published).isNotEmpty();
            List<String> stale = published.keySet().stream()
                    .filter(k -> !dev.ensemble.sessions.schema.AvroEquality.equalBut(held.get(k), published.get(k), "sequence")).sorted().toList();
            assertThat(stale).as("retirement views a consumer of the newest sequence kept from before the rebuild").isEmpty();
            Map<String, Object> reference = replayWithStreams(admin, bootstrap, state, true);
            assertSameViews("the projector after a batch rebuild, against a replay of the whole log by Kafka Streams", reference, continued);
        }
    }

    @Test
    void aBatchRebuildKilledBeforeItsCommitLeavesNothingVisible(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 3, (short) 1);
            ProjectorRebuildTest.produceRandomHistory(bootstrap, new Random(7), 3000);
            Map<String, Object> live = replayWithStreams(admin, bootstrap, state, false);

            Map<TopicPartition, Long> mark = ends(bootstrap);
            ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                    "-cp", System.getProperty("java.class.path"), BatchRebuildChild.class.getName(), bootstrap, state.toString())
                    .redirectErrorStream(true).start();
            try {
                CompletableFuture<Boolean> sent = CompletableFuture.supplyAsync(() -> {
                    try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = in.readLine()) != null; ) {
                            if (line.contains(BatchRebuildChild.SENT)) return true;
                        }
                        return false;
                    } catch (java.io.IOException e) {
                        return false;
                    }
                });
                assertThat(sent.get(120, TimeUnit.SECONDS)).as("the child sent everything").isTrue();
            } finally {
                child.destroyForcibly().waitFor();
            }
            assertThat(latest(bootstrap, mark)).as("nothing of the killed batch is visible").isEmpty();

            // the projector, started now, replays the log itself (the group's offsets are still at the beginning)
            try (Projector p = new Projector(bootstrap, state, 1, FAST)) {
                p.start();
                assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(120), n -> { })).isTrue();
                assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(60))).isTrue();
            }
            assertSameViews("the projector after a killed batch rebuild", live, latest(bootstrap, mark));
            Map<String, Object> streamsState = changelogs(bootstrap);

            // and a batch rebuild after the kill works, and leaves the projector the state its own replay left
            Map<TopicPartition, Long> mark2 = ends(bootstrap);
            ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
            BatchRebuild.run(bootstrap, state, 1, RetirementRules.Config.defaults(), n -> { });
            assertSameViews("a batch rebuild after a killed one", live, latest(bootstrap, mark2));
            Map<String, Object> batchState = changelogs(bootstrap);
            assertThat(batchState.keySet()).as("store keys").anyMatch(k -> k.startsWith(StoreNames.SESSION_CHAINS + "|"))
                    .anyMatch(k -> k.startsWith(StoreNames.CORPUS_DOCS + "|")).anyMatch(k -> k.startsWith(StoreNames.DELETION_STATES + "|"));
            assertSameViews("the stores (changelogs) of a batch rebuild, against those of the projector's replay", streamsState, batchState);
        }
    }

    /**
     * A processor that throws on a record for a reason other than the record (a bug) stops the batch: it names the
     * processor and the record, asks no dead-letter handler (the projector's replay, the fallback, would then
     * dead-letter a good event), and commits nothing.
     */
    @Test
    void aProcessorWithABugStopsTheBatchNamingItAndNothingIsCommitted(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            ProjectorRebuildTest.send(bootstrap, ProjectorRebuildTest.randomHistory(new Random(7), 600));
            long deadLetters = count(bootstrap, dev.ensemble.sessions.schema.Topics.DEAD_LETTER.name());
            ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
            BatchRebuild.processorSuppliers = dev.ensemble.sessions.projector.testing.BuggyProcessor.throwingOn(DeletionProcessor.CHAINS, 50, "a bug in the chains");
            try {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> BatchRebuild.run(bootstrap, state, 1, RetirementRules.Config.defaults(), n -> { }))
                        .isInstanceOf(BatchRebuild.Failed.class)
                        .hasMessageContaining("processor " + DeletionProcessor.CHAINS + " failed on sessions.events-")
                        .hasMessageContaining("for a reason other than the record")
                        .hasRootCauseMessage("a bug in the chains");
            } finally {
                BatchRebuild.processorSuppliers = p -> p;
            }
            assertThat(count(bootstrap, dev.ensemble.sessions.schema.Topics.DEAD_LETTER.name())).as("nothing dead-lettered").isEqualTo(deadLetters);
            assertNothingCommitted(bootstrap, admin, false);
        }
    }

    @Test
    void aWriteTheBrokerRefusesStopsTheBatchAndNothingIsCommitted(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            String bootstrap = cluster.bootstrapServers();
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            ProjectorRebuildTest.send(bootstrap, ProjectorRebuildTest.randomHistory(new Random(11), 400));
            ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
            // the session views' topic takes no batch bigger than 64 bytes: the broker refuses the batch's view records
            var views = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC,
                    dev.ensemble.sessions.schema.Topics.SESSIONS_VIEW.name());
            admin.incrementalAlterConfigs(Map.of(views, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("max.message.bytes", "64"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
            var groupOffsets = admin.listConsumerGroupOffsets(Projector.APPLICATION_ID).partitionsToOffsetAndMetadata().get();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> BatchRebuild.run(bootstrap, state, 1, RetirementRules.Config.defaults(), n -> { }))
                    .isInstanceOf(BatchRebuild.Failed.class)
                    .hasMessage("batch rebuild: Kafka refused its writes")
                    .hasCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
            assertNothingCommitted(bootstrap, admin, true);
            assertThat(admin.listConsumerGroupOffsets(Projector.APPLICATION_ID).partitionsToOffsetAndMetadata().get())
                    .as("the group's offsets are where they were").isEqualTo(groupOffsets);
        }
    }

    /**
     * A stopped batch left nothing readable: no view, nothing in its changelogs (which must exist when
     * {@code changelogsCreated}), and no transaction left open on them.
     */
    private static void assertNothingCommitted(String bootstrap, Admin admin, boolean changelogsCreated) throws Exception {
        assertThat(latest(bootstrap, Map.of())).as("no view committed").isEmpty();
        java.util.Set<String> topics = admin.listTopics().names().get();
        List<String> written = new java.util.ArrayList<>(List.of(dev.ensemble.sessions.schema.Topics.SESSIONS_VIEW.name()));
        for (Projector.StoreSpec spec : Projector.STORES) {
            String changelog = BatchRebuild.changelog(spec.name());
            if (changelogsCreated) assertThat(topics).as("the batch created its changelogs").contains(changelog);
            if (topics.contains(changelog)) {
                assertThat(count(bootstrap, changelog)).as("%s: nothing readable", changelog).isZero();
                written.add(changelog);
            }
        }
        assertNoOpenTransaction(admin, written);
    }

    /**
     * Every partition of the topics is readable to its end by {@code read_committed} readers within 30 s: the batch's
     * transaction was aborted, not left open (an open one would also read as "nothing committed").
     */
    private static void assertNoOpenTransaction(Admin admin, List<String> topics) throws Exception {
        List<TopicPartition> parts = new java.util.ArrayList<>();
        for (String t : topics) parts.addAll(TopicAdmin.partitions(admin, t));
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            Map<TopicPartition, Long> committed = TopicAdmin.offsets(admin, parts, org.apache.kafka.clients.admin.OffsetSpec.latest(),
                    org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
            Map<TopicPartition, Long> all = TopicAdmin.offsets(admin, parts, org.apache.kafka.clients.admin.OffsetSpec.latest(),
                    org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED);
            if (committed.equals(all)) return;
            if (System.nanoTime() > until) {
                assertThat(committed).as("read_committed ends equal the log ends: no transaction left open").isEqualTo(all);
            }
            Thread.sleep(100);
        }
    }

    @Test
    void resetWaitsForTheProjectorsGroupToEmptyAndRefusesWhileAMemberStays(@TempDir Path state) throws Exception {
        try (KafkaTestCluster cluster = KafkaTestCluster.start(); Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
            var member = new org.apache.kafka.clients.consumer.KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                    "group.id", Projector.APPLICATION_ID, "group.protocol", "classic"),
                    new org.apache.kafka.common.serialization.ByteArrayDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer());
            member.subscribe(List.of(dev.ensemble.sessions.schema.Topics.EVENTS.name()));
            long until = System.currentTimeMillis() + 30_000;
            while (member.assignment().isEmpty() && System.currentTimeMillis() < until) member.poll(Duration.ofMillis(100));
            List<String> notices = new java.util.ArrayList<>();
            long start = System.nanoTime();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30),
                            Duration.ofSeconds(3), notices::add))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("the projector is still running (1 members");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
            assertThat(notices).singleElement().asString().contains("waiting up to 3 s");
            // the member leaves while reset waits: reset goes on
            CompletableFuture<Long> reset = CompletableFuture.supplyAsync(() -> {
                try {
                    return ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30), Duration.ofSeconds(30), n -> { });
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(1500);
            assertThat(reset).isNotDone();
            member.close();
            assertThat(reset.get(30, TimeUnit.SECONDS)).isZero();
        }
    }

    /** The newest retirement view of each key among the records at or after {@code from} ({@code read_committed}). */
    private static Map<String, dev.ensemble.sessions.views.RetirementView> retirementViews(String bootstrap, Map<TopicPartition, Long> from) {
        Map<String, dev.ensemble.sessions.views.RetirementView> out = new java.util.HashMap<>();
        for (var v : retirementRecords(bootstrap, from)) out.put(v.getAccount() + "/" + v.getSessionId(), v);
        return out;
    }

    /** The retirement view records at or after {@code from}, in each partition's order ({@code read_committed}). */
    private static List<dev.ensemble.sessions.views.RetirementView> retirementRecords(String bootstrap, Map<TopicPartition, Long> from) {
        List<dev.ensemble.sessions.views.RetirementView> out = new java.util.ArrayList<>();
        String topic = dev.ensemble.sessions.schema.Topics.RETIREMENT_VIEW.name();
        var values = dev.ensemble.sessions.schema.Topics.RETIREMENT_VIEW.valueSerde().deserializer();
        ProjectorRebuildTest.readAll(bootstrap, List.of(topic), from, r -> out.add(values.deserialize(topic, r.value())));
        return out;
    }

    /** Records in a topic, all partitions ({@code read_committed}). */
    private static long count(String bootstrap, String topic) {
        long[] n = new long[1];
        ProjectorRebuildTest.readAll(bootstrap, List.of(topic), Map.of(), r -> n[0]++);
        return n[0];
    }

    /**
     * The projector's stores as their changelogs hold them: {@code store|key} → the newest value, decoded (records as
     * JSON trees, a retirement view without its publication counter; other values as Strings, Longs or their bytes in
     * hex), deleted keys left out; the publication marks
     * (pending-views, pending-corpus) too, which a settled projector has emptied.
     */
    static Map<String, Object> changelogs(String bootstrap) {
        Map<String, Object> out = new java.util.TreeMap<>();
        for (Projector.StoreSpec spec : Projector.STORES) {
            if (spec.name().equals(StoreNames.PENDING_VIEWS) || spec.name().equals(StoreNames.PENDING_CORPUS)) continue;
            String topic = BatchRebuild.changelog(spec.name());
            ProjectorRebuildTest.readAll(bootstrap, List.of(topic), Map.of(), r -> {
                String key = spec.name() + "|" + r.key();
                if (r.value() == null) {
                    out.remove(key);
                    return;
                }
                Object v = spec.serde().deserializer().deserialize(topic, r.value());
                if (v instanceof org.apache.avro.specific.SpecificRecord rec) {
                    var json = dev.ensemble.sessions.schema.EventJson.recordToJson(rec);
                    if (spec.name().equals(StoreNames.RETIREMENT_VIEWS)) json.remove("sequence");
                    v = json;
                } else {
                    v = v instanceof String || v instanceof Long ? v : java.util.HexFormat.of().formatHex(r.value()); // bytes as written
                }
                out.put(key, v);
            });
        }
        return out;
    }

    /** Resets the projector (when {@code reset}), replays the log with Kafka Streams, returns the views published. */
    private static Map<String, Object> replayWithStreams(Admin admin, String bootstrap, Path state, boolean reset) throws Exception {
        Map<TopicPartition, Long> mark = reset ? ends(bootstrap) : Map.of();
        if (reset) ProjectorRebuild.reset(admin, state, Duration.ofSeconds(30));
        try (Projector p = new Projector(bootstrap, state, 1, FAST)) {
            p.start();
            assertThat(ProjectorRebuild.awaitCaughtUp(admin, Duration.ofSeconds(120), n -> { })).isTrue();
            assertThat(ProjectorRebuild.awaitViewsSettled(admin, Duration.ofSeconds(3), Duration.ofSeconds(60))).isTrue();
        }
        return latest(bootstrap, mark);
    }
}
