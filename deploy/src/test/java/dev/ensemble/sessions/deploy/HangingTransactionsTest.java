package dev.ensemble.sessions.deploy;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code up} ends after a crash ({@link HangingTransactions}): only open transactions whose coordinator is done
 * with them. A crash that leaves one behind is a race inside the restarted broker (no public API makes one); the
 * soak's {@code kill -9} is where it happens for real ({@link SoakTest}).
 */
class HangingTransactionsTest {
    private static final TopicPartition EVENTS_0 = new TopicPartition("sessions.events", 0);
    private static final TopicPartition EVENTS_1 = new TopicPartition("sessions.events", 1);

    private static ProducerState open(long producerId, int epoch, long startOffset) {
        return new ProducerState(producerId, epoch, 1, 1_000L, OptionalInt.of(3), OptionalLong.of(startOffset));
    }

    private static HangingTransactions.Described coordinator(String id, long producerId, int epoch, TransactionState state,
                                                             Set<TopicPartition> partitions) {
        return new HangingTransactions.Described(id, new TransactionDescription(1, state, producerId, epoch, 30_000, OptionalLong.of(1_000L), partitions));
    }

    @Test
    void anOpenTransactionWhoseCoordinatorCommittedItWithoutItsMarkersIsHanging() {
        // as found after a kill -9: records of epoch 34 open from offset 466, the coordinator at COMPLETE_COMMIT (epoch 35)
        List<HangingTransactions.Hanging> found = HangingTransactions.hanging(Map.of(EVENTS_0, List.of(open(7, 34, 466))),
                Map.of(7L, coordinator("ensemble-gateway-intake-0", 7, 35, TransactionState.COMPLETE_COMMIT, Set.of())));
        assertThat(found).containsExactly(new HangingTransactions.Hanging(EVENTS_0, 7, 34, 3, 466, "ensemble-gateway-intake-0",
                TransactionState.COMPLETE_COMMIT, 35));
        assertThat(found.get(0).toString()).isEqualTo("sessions.events-0 from offset 466 (producer 7, epoch 34,"
                + " ensemble-gateway-intake-0, which its coordinator has as CompleteCommit)");
    }

    @Test
    void aTransactionItsCoordinatorStillEndsIsLeftAloneAndOneThatDoesNotHoldThePartitionIsNot() {
        Map<TopicPartition, List<ProducerState>> open = Map.of(EVENTS_0, List.of(open(7, 4, 10), open(8, 2, 12), open(9, 1, 13)),
                EVENTS_1, List.of(open(7, 4, 20), open(10, 0, 5)));
        Map<Long, HangingTransactions.Described> coordinators = Map.of(
                7L, coordinator("a", 7, 4, TransactionState.ONGOING, Set.of(EVENTS_0)), // holds partition 0, not partition 1
                8L, coordinator("b", 8, 3, TransactionState.PREPARE_COMMIT, Set.of(EVENTS_0)), // its markers are on their way
                9L, coordinator("c", 9, 2, TransactionState.EMPTY, Set.of())); // over: nothing of it may stay open
        List<HangingTransactions.Hanging> found = HangingTransactions.hanging(open, coordinators);
        assertThat(found).extracting(h -> h.partition() + "/" + h.producerId()).containsExactlyInAnyOrder("sessions.events-1/7",
                "sessions.events-0/9");
        // producer 10 is not known to any coordinator (not transactional, or its id expired): not this repair's to judge
    }

    /** A hanging transaction as {@link HangingTransactions#plan} sees it: its records of {@code epoch}, the coordinator's one more (v2). */
    private static HangingTransactions.Hanging hanging(TopicPartition p, long producerId, int epoch, String id, TransactionState state) {
        return new HangingTransactions.Hanging(p, producerId, epoch, 3, 10, id, state, epoch + 1);
    }

    @Test
    void aCommittedTransactionIsCommittedWhereverItWroteAndAnAbortedOneAborted() {
        TopicPartition changelog = new TopicPartition("ensemble-projector-runs-changelog", 0);
        TopicPartition view = new TopicPartition("sessions.view.sessions", 0);
        TopicPartition offsets = new TopicPartition("__consumer_offsets", 2);
        List<HangingTransactions.Hanging> hanging = List.of(
                hanging(EVENTS_0, 7, 34, "ensemble-gateway-intake-0", TransactionState.COMPLETE_COMMIT),
                hanging(EVENTS_1, 8, 2, "ensemble-gateway-intake-1", TransactionState.COMPLETE_ABORT),
                // a Streams application's, committed: its store change and view stand with the consumed offsets that
                // may already carry their marker (as after a kill -9 of up: the projector's changelogs and views open,
                // its offsets committed; aborting them lost those events from the views)
                hanging(changelog, 9, 5, "ensemble-projector-a-1", TransactionState.COMPLETE_COMMIT),
                hanging(view, 9, 5, "ensemble-projector-a-1", TransactionState.COMPLETE_COMMIT),
                hanging(offsets, 9, 5, "ensemble-projector-a-1", TransactionState.COMPLETE_COMMIT),
                // committed, but open only where no record can go: aborted (the application processes the records again)
                hanging(offsets, 10, 1, "ensemble-cleanup-a-1", TransactionState.COMPLETE_COMMIT),
                hanging(changelog, 11, 1, "ensemble-choice-a-1", TransactionState.EMPTY),
                // records of the epoch the commit left: a later transaction the coordinator never saw (its log lost its
                // end in a power cut), not the one it committed
                new HangingTransactions.Hanging(EVENTS_1, 12, 35, 3, 500, "ensemble-gateway-intake-2", TransactionState.COMPLETE_COMMIT, 35),
                // one partition of the committed epoch and one of a later one: nothing of it is committed
                new HangingTransactions.Hanging(changelog, 13, 6, 3, 20, "ensemble-projector-a-2", TransactionState.COMPLETE_COMMIT, 7),
                new HangingTransactions.Hanging(view, 13, 7, 3, 21, "ensemble-projector-a-2", TransactionState.COMPLETE_COMMIT, 7));
        assertThat(HangingTransactions.plan(hanging, 1)).containsExactly(
                Map.entry("ensemble-gateway-intake-0", HangingTransactions.End.COMMIT),
                Map.entry("ensemble-gateway-intake-1", HangingTransactions.End.ABORT),
                Map.entry("ensemble-projector-a-1", HangingTransactions.End.COMMIT),
                Map.entry("ensemble-cleanup-a-1", HangingTransactions.End.ABORT),
                Map.entry("ensemble-choice-a-1", HangingTransactions.End.ABORT),
                Map.entry("ensemble-gateway-intake-2", HangingTransactions.End.ABORT),
                Map.entry("ensemble-projector-a-2", HangingTransactions.End.ABORT));
        // under transactions v1 a commit keeps the epoch: records of the coordinator's epoch are the committed ones
        assertThat(HangingTransactions.plan(List.of(
                new HangingTransactions.Hanging(EVENTS_1, 12, 35, 3, 500, "intake", TransactionState.COMPLETE_COMMIT, 35)), 0))
                .containsExactly(Map.entry("intake", HangingTransactions.End.COMMIT));
    }

    @Test
    void onARealBrokerACommitTheCoordinatorNeverSawAbortsNothingAndRecordsItCannotEndAreAborted(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = brokerWithEvents(dir); RecordingAdmin admin = new RecordingAdmin(client(kafka))) {
            Map<String, Object> client = client(kafka);
            assertThat(HangingTransactions.commitEpochBump(admin)).as("this broker's transactions are v2").isEqualTo(1);
            // a repair commit whose record cannot be sent (over the producer's max.request.size): its coordinator never
            // sees a transaction, so the start stops and nothing is aborted
            TopicPartition events1 = new TopicPartition("events", 1);
            try (KafkaProducer<String, String> before = producer(kafka, "app-1")) {
                before.initTransactions();
                before.beginTransaction();
                before.send(new ProducerRecord<>("events", 1, "acct", "committed")).get();
                before.commitTransaction();
            }
            var described = admin.describeTransactions(List.of("app-1")).all().get().get("app-1");
            var found = new HangingTransactions.Hanging(events1, described.producerId(), described.producerEpoch() - 1, 0, 0, "app-1",
                    TransactionState.COMPLETE_COMMIT, described.producerEpoch());
            Map<String, Object> tiny = new java.util.HashMap<>(client);
            tiny.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> HangingTransactions.end(admin, tiny, "app-1",
                            HangingTransactions.End.COMMIT, List.of(found)))
                    .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("could not commit the transaction app-1")
                    .hasMessageContaining("nothing was aborted");
            assertThat(admin.aborts).isEmpty();
            // a commit made whose marker cannot end the open records: they belong to a producer id that is not the
            // transactional id's now (as when its coordinator gave it a new one): after the wait they are aborted, with
            // an error, so that readers go on (the coordinator owes them nothing, no start would end them)
            try (KafkaProducer<String, String> live = producer(kafka, "live")) {
                live.initTransactions();
                live.beginTransaction();
                live.send(new ProducerRecord<>("events", 0, "acct", "open")).get();
                TopicPartition events0 = new TopicPartition("events", 0);
                ProducerState p = admin.describeProducers(List.of(events0)).all().get().get(events0).activeProducers().get(0);
                var otherId = new HangingTransactions.Hanging(events0, p.producerId(), p.producerEpoch(), p.coordinatorEpoch().orElse(0),
                        p.currentTransactionStartOffset().getAsLong(), "app-2", TransactionState.COMPLETE_COMMIT, p.producerEpoch() + 1);
                List<HangingTransactions.Hanging> aborted = HangingTransactions.end(admin, client, "app-2",
                        HangingTransactions.End.COMMIT, List.of(otherId), Duration.ofSeconds(2));
                assertThat(aborted).extracting(HangingTransactions.Hanging::producerId).containsExactly(p.producerId());
                assertThat(admin.aborts).extracting(a -> a.topicPartition() + "/" + a.producerId()).containsExactly(events0 + "/" + p.producerId());
            }
            assertThat(readCommitted(kafka)).doesNotContain("open");
        }
    }

    @Test
    void onARealBrokerACommitEndsWhatTookItsRecordAndThenAbortsTheOpenOffsetCommit(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = brokerWithEvents(dir); RecordingAdmin admin = new RecordingAdmin(client(kafka))) {
            Map<String, Object> client = client(kafka);
            try (KafkaProducer<String, String> app = producer(kafka, "app-3")) {
                // an offset commit left open in __consumer_offsets (a transaction of another producer than the repair's)
                app.initTransactions();
                app.beginTransaction();
                app.sendOffsetsToTransaction(Map.of(new TopicPartition("events", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(1)),
                        new org.apache.kafka.clients.consumer.ConsumerGroupMetadata("group-3"));
                TopicPartition offsets = null;
                ProducerState open = null;
                long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (open == null && System.nanoTime() < until) {
                    for (var e : HangingTransactionsTest.openOffsets(admin).entrySet()) {
                        offsets = e.getKey();
                        open = e.getValue();
                    }
                }
                assertThat(open).as("the offset commit's open transaction").isNotNull();
                var changelog = new HangingTransactions.Hanging(new TopicPartition("events", 1), 77, 0, 0, 0, "app-4", TransactionState.COMPLETE_COMMIT, 1);
                var offsetCommit = new HangingTransactions.Hanging(offsets, open.producerId(), open.producerEpoch(),
                        open.coordinatorEpoch().orElse(0), open.currentTransactionStartOffset().getAsLong(), "app-4",
                        TransactionState.COMPLETE_COMMIT, open.producerEpoch() + 1);

                List<HangingTransactions.Hanging> aborted = HangingTransactions.end(admin, client, "app-4", HangingTransactions.End.COMMIT,
                        List.of(changelog, offsetCommit));

                assertThat(aborted).extracting(HangingTransactions.Hanging::partition).containsExactly(offsets);
                assertThat(admin.aborts).extracting(a -> a.topicPartition()).containsExactly(offsets);
                assertThat(HangingTransactionsTest.openOffsets(admin)).as("nothing open in __consumer_offsets any more").isEmpty();
            }
        }
    }

    /** The open transactions in {@code __consumer_offsets}, one per partition. */
    private static Map<TopicPartition, ProducerState> openOffsets(Admin admin) throws Exception {
        List<TopicPartition> parts = new ArrayList<>();
        admin.describeTopics(List.of("__consumer_offsets")).allTopicNames().get().get("__consumer_offsets").partitions()
                .forEach(p -> parts.add(new TopicPartition("__consumer_offsets", p.partition())));
        Map<TopicPartition, ProducerState> out = new java.util.HashMap<>();
        admin.describeProducers(parts).all().get().forEach((tp, d) -> d.activeProducers().stream()
                .filter(p -> p.currentTransactionStartOffset().isPresent()).findFirst().ifPresent(p -> out.put(tp, p)));
        return out;
    }

    /** An Admin client that also records the aborts it was asked for. */
    private static final class RecordingAdmin extends org.apache.kafka.clients.admin.ForwardingAdmin {
        final List<org.apache.kafka.clients.admin.AbortTransactionSpec> aborts = new java.util.concurrent.CopyOnWriteArrayList<>();

        RecordingAdmin(Map<String, Object> config) {
            super(config);
        }

        @Override
        public org.apache.kafka.clients.admin.AbortTransactionResult abortTransaction(org.apache.kafka.clients.admin.AbortTransactionSpec spec,
                                                                                      org.apache.kafka.clients.admin.AbortTransactionOptions options) {
            aborts.add(spec);
            return super.abortTransaction(spec, options);
        }
    }

    @Test
    void onARealBrokerTheCommitPutsItsRecordInACompactedChangelogAndLeavesKafkasOwnTopicsAlone(@TempDir Path dir) throws Exception {
        // the state a crash leaves (the coordinator committed, the markers skipped) has no public API to make it; this
        // checks what the commit does with a Streams transaction's partitions: a compacted changelog takes the system
        // record, an offset commit's partition is left for the abort (a record sent there would fail the whole commit)
        try (LocalKafka kafka = brokerWithEvents(dir)) {
            Map<String, Object> client = client(kafka);
            TopicPartition changelog = new TopicPartition("app-store-changelog", 0);
            TopicPartition offsets = new TopicPartition("__consumer_offsets", 0);
            try (Admin a = Admin.create(client)) {
                a.createTopics(List.of(new NewTopic(changelog.topic(), 1, (short) 1).configs(Map.of("cleanup.policy", "compact")))).all().get();
            }
            List<HangingTransactions.Hanging> of = List.of(
                    new HangingTransactions.Hanging(changelog, 1, 0, 0, 0, "app-1", TransactionState.COMPLETE_COMMIT, 1),
                    new HangingTransactions.Hanging(offsets, 1, 0, 0, 0, "app-1", TransactionState.COMPLETE_COMMIT, 1));

            HangingTransactions.commit(client, "app-1", of);

            List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> read = readCommitted(kafka, changelog, 1);
            assertThat(read).extracting(r -> r.key() + "=" + r.value()).containsExactly("*=null");
            assertThat(read.get(0).headers().lastHeader(HangingTransactions.RECOVERY_HEADER)).isNotNull();
        }
    }

    /** A started embedded broker with a topic {@code events} of two partitions. */
    private static LocalKafka brokerWithEvents(Path dir) throws Exception {
        LocalKafka kafka = LocalKafka.start(dir, 0);
        try (Admin a = Admin.create(client(kafka))) {
            kafka.waitUntilReady(Duration.ofSeconds(60));
            a.createTopics(List.of(new NewTopic("events", 2, (short) 1))).all().get();
        } catch (Exception | AssertionError e) {
            kafka.close();
            throw e;
        }
        return kafka;
    }

    /** The broker's client settings with its address. */
    private static Map<String, Object> client(LocalKafka kafka) {
        Map<String, Object> c = kafka.clientProperties();
        c.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return c;
    }

    @Test
    void onARealBrokerALiveTransactionAndCommittedOnesAreNotTouched(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = brokerWithEvents(dir)) {
            Map<String, Object> admin = client(kafka);
            try (Admin a = Admin.create(admin)) {
                try (KafkaProducer<String, String> done = producer(kafka, "done"); KafkaProducer<String, String> live = producer(kafka, "live")) {
                    done.initTransactions();
                    done.beginTransaction();
                    done.send(new ProducerRecord<>("events", 0, "k", "committed"));
                    done.commitTransaction();
                    live.initTransactions();
                    live.beginTransaction();
                    live.send(new ProducerRecord<>("events", 1, "k", "still open")).get(); // on the partition, not committed

                    assertThat(HangingTransactions.endAll(a, admin, Duration.ofSeconds(30))).isEmpty();

                    live.commitTransaction(); // the repair did not abort it: its commit stands
                }
            }
            assertThat(readCommitted(kafka)).containsExactlyInAnyOrder("committed", "still open");
        }
    }

    @Test
    void aCommitOfAnOpenTransactionAppendsOneSystemRecordUnderItsTransactionalIdAndFencesItsOldProducer(@TempDir Path dir) throws Exception {
        try (LocalKafka kafka = brokerWithEvents(dir)) {
            Map<String, Object> client = client(kafka);
            try (KafkaProducer<String, String> old = producer(kafka, "intake-1")) {
                old.initTransactions();
                old.beginTransaction();
                old.send(new ProducerRecord<>("events", 1, "acct", "posted")).get();
                TopicPartition events1 = new TopicPartition("events", 1);
                HangingTransactions.Hanging opened;
                try (Admin a = Admin.create(client)) {
                    ProducerState p = a.describeProducers(List.of(events1)).all().get().get(events1).activeProducers().get(0);
                    opened = new HangingTransactions.Hanging(events1, p.producerId(), p.producerEpoch(), p.coordinatorEpoch().orElse(0),
                            p.currentTransactionStartOffset().getAsLong(), "intake-1", TransactionState.COMPLETE_COMMIT, p.producerEpoch() + 1);
                    HangingTransactions.commit(client, "intake-1", List.of(opened));
                    // the commit returns before its markers are on the partition: the repair waits for them before it
                    // looks for what is still open (an abort with the epoch the commit bumped was refused: up did not start)
                    assertThat(HangingTransactions.awaitEnded(a, List.of(opened), HangingTransactions.MARKERS_WAIT)).isEmpty();
                }
                // the commit took the transactional id over: the old producer's transaction cannot commit any more
                org.assertj.core.api.Assertions.assertThatThrownBy(old::commitTransaction)
                        .isInstanceOf(org.apache.kafka.common.KafkaException.class);
            }
            // a transaction that stays open is returned after the wait, with its producer's epochs as they are now
            try (KafkaProducer<String, String> live = producer(kafka, "live"); Admin a = Admin.create(client)) {
                live.initTransactions();
                live.beginTransaction();
                live.send(new ProducerRecord<>("events", 0, "acct", "open")).get();
                TopicPartition events0 = new TopicPartition("events", 0);
                ProducerState p = a.describeProducers(List.of(events0)).all().get().get(events0).activeProducers().get(0);
                var stale = new HangingTransactions.Hanging(events0, p.producerId(), p.producerEpoch() + 7, 99,
                        p.currentTransactionStartOffset().getAsLong(), "live", TransactionState.COMPLETE_COMMIT, p.producerEpoch() + 8);
                assertThat(HangingTransactions.awaitEnded(a, List.of(stale), Duration.ofMillis(300))).singleElement()
                        .satisfies(h -> {
                            assertThat(h.producerEpoch()).isEqualTo(p.producerEpoch());
                            assertThat(h.coordinatorEpoch()).isEqualTo(p.coordinatorEpoch().orElse(0));
                            assertThat(h.startOffset()).isEqualTo(stale.startOffset());
                        });
                live.abortTransaction();
            }
            Map<String, Object> config = kafka.clientProperties();
            config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> read = new ArrayList<>();
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
                TopicPartition p = new TopicPartition("events", 1);
                c.assign(List.of(p));
                c.seekToBeginning(List.of(p));
                long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (read.isEmpty() && System.nanoTime() < until) {
                    c.poll(Duration.ofMillis(200)).forEach(read::add);
                }
            }
            // the system record, as the generations' handover markers: key "*", no value, the recovery header
            assertThat(read).hasSize(1);
            assertThat(read.get(0).key()).isEqualTo("*");
            assertThat(read.get(0).value()).isNull();
            assertThat(read.get(0).headers().lastHeader(HangingTransactions.RECOVERY_HEADER)).isNotNull();
        }
    }

    private static KafkaProducer<String, String> producer(LocalKafka kafka, String transactionalId) {
        Map<String, Object> config = kafka.clientProperties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    private static List<String> readCommitted(LocalKafka kafka) {
        Map<String, Object> config = kafka.clientProperties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> parts = List.of(new TopicPartition("events", 0), new TopicPartition("events", 1));
            c.assign(parts);
            c.seekToBeginning(parts);
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (values.size() < 2 && System.nanoTime() < until) {
                c.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
            }
        }
        return values;
    }

    /** Up to {@code n} records of {@code p} a {@code read_committed} reader sees (waits up to 30 s for them). */
    private static List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> readCommitted(LocalKafka kafka, TopicPartition p, int n) {
        Map<String, Object> config = kafka.clientProperties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> read = new ArrayList<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            c.assign(List.of(p));
            c.seekToBeginning(List.of(p));
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (read.size() < n && System.nanoTime() < until) {
                c.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        return read;
    }
}
