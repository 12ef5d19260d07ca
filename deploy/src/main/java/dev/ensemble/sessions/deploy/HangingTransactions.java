package dev.ensemble.sessions.deploy;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Finds and ends the hanging transactions a crash of the embedded broker can leave behind, with Kafka's own Admin
 * API (what {@code kafka-transactions.sh find-hanging} and {@code abort} do).
 *
 * <p>When {@code up} is killed (a crash, {@code kill -9}, a lost machine) while a transaction commits, the restarted
 * single-node broker's transaction coordinator completes it while its partitions have no leader yet (the node is
 * being registered again) and skips their end markers ("partitions likely deleted"). The transaction's records then
 * stay open in those partitions for good: every {@code read_committed} reader (the projector, the gateway, the
 * cleanup, the choice service) stops at them; a transactional offset commit stays pending, so a Streams application
 * cannot fetch its offsets and stays in {@code REBALANCING}; and the next transaction of the same producer commits the
 * open records with its own, so an event posted again after the crash is in the log twice. A transaction is hanging
 * when a partition holds an open transaction of a producer whose coordinator says it is over ({@code COMPLETE_*},
 * {@code EMPTY}) or does not list that partition. Each is ended as its coordinator decided ({@link #plan}), since the
 * same transaction's other partitions may already carry its markers:
 * <ul>
 *   <li>one the coordinator committed is committed: a producer with its transactional id appends one system record
 *       ({@code "*"}, no value, header {@value #RECOVERY_HEADER}, as the generations' handover markers) to each open
 *       partition of an ordinary topic and commits, and that commit's marker ends the open records with it. So an
 *       intake transaction's events, whose answers "accepted" may already be out (its commit returns before the
 *       markers are written), are in the log once; and a Streams application's outputs and store changes stand with
 *       the consumed offsets that were committed with them (aborting them lost processed events from the views for good:
 *       the application went on after those offsets). The record is a tombstone of a key no store or view has: a
 *       store's restore deletes nothing, a view's reader skips it. Only open records of the committed transaction
 *       are committed so (their producer epoch is the one before the commit's); those of a later one, which the
 *       coordinator never saw, are aborted. A commit whose markers the coordinator still owes after the wait ends the
 *       start with an error and aborts nothing, as does one the coordinator never saw; a commit the coordinator
 *       aborted, or one under a producer id it replaced, cannot end the records, which are aborted with an error
 *       ({@link #end}). An open offset commit ({@code __consumer_offsets}) cannot take a record (the Admin
 *       API can only abort one): it is aborted, and the application processes that transaction's input again, at
 *       least once for that one transaction (the projector applies an event once, {@code AppliedEvents}; the choice
 *       service appends a choice's outcome again under the same event id, which readers apply once);</li>
 *   <li>one the coordinator aborted, or whose end it no longer knows, is aborted on each of its open partitions.</li>
 * </ul>
 * (docs/reliability.md "Gateway start").
 *
 * <p>Run on the embedded broker after it is ready and before any service starts, so that no producer of this system
 * runs meanwhile. A cluster of one's own is its operator's: there {@code kafka-transactions.sh find-hanging} does it.
 */
final class HangingTransactions {
    private static final Logger LOG = LoggerFactory.getLogger(HangingTransactions.class);
    /** States in which the coordinator still ends the transaction itself (markers on their way). */
    private static final Set<TransactionState> LIVE = Set.of(TransactionState.ONGOING, TransactionState.PREPARE_COMMIT,
            TransactionState.PREPARE_ABORT, TransactionState.PREPARE_EPOCH_FENCE);
    private static final Set<TransactionState> ENDING = Set.of(TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT,
            TransactionState.PREPARE_EPOCH_FENCE);

    /** The header of the system record that commits an intake transaction left open by a crash. */
    static final String RECOVERY_HEADER = "ensemble-recovery";

    private HangingTransactions() {
    }

    /** A transaction as its coordinator describes it, with its transactional id. */
    record Described(String transactionalId, TransactionDescription description) {
    }

    /** How a hanging transaction is ended. */
    enum End { COMMIT, ABORT }

    /**
     * How each transactional id's hanging transaction is ended: {@link End#COMMIT} when its coordinator committed it
     * ({@code COMPLETE_COMMIT}), its open records are of the transaction committed (their producer epoch is the
     * coordinator's less {@code commitEpochBump}: a commit under transactions v2 bumps the epoch by one, under v1 not at
     * all; open records of the epoch the commit left are of a later transaction the coordinator never saw, as after a
     * power cut that cost the end of its log) and one of its open partitions can take the commit's system record (a
     * topic that is not internal, see {@link #takesRecord}); else {@link End#ABORT}. Ids in the order found.
     *
     * @param commitEpochBump by how much a commit raises the producer epoch: 1 under {@code transaction.version} 2, else 0
     */
    static Map<String, End> plan(List<Hanging> hanging, int commitEpochBump) {
        Map<String, End> out = new java.util.LinkedHashMap<>();
        Map<String, Boolean> committed = new java.util.LinkedHashMap<>();
        Map<String, Boolean> appendable = new HashMap<>();
        for (Hanging h : hanging) {
            boolean ofTheCommit = h.coordinatorState() == TransactionState.COMPLETE_COMMIT
                    && h.producerEpoch() == h.transactionEpoch() - commitEpochBump;
            committed.merge(h.transactionalId(), ofTheCommit, Boolean::logicalAnd);
            appendable.merge(h.transactionalId(), takesRecord(h.partition()), Boolean::logicalOr);
        }
        committed.forEach((id, c) -> out.put(id, c && appendable.get(id) ? End.COMMIT : End.ABORT));
        return out;
    }

    /** Whether a commit can append its system record to {@code p}: any topic but Kafka's own ({@code __consumer_offsets} ...). */
    static boolean takesRecord(TopicPartition p) {
        return !p.topic().startsWith("__");
    }

    /**
     * An open transaction no coordinator will end: a partition, the producer's id and epoch of its open records there,
     * the coordinator epoch of its last write there, where its open records start, and the transactional id, state and
     * producer epoch ({@code transactionEpoch}) the coordinator has for it.
     */
    record Hanging(TopicPartition partition, long producerId, int producerEpoch, int coordinatorEpoch, long startOffset,
                   String transactionalId, TransactionState coordinatorState, int transactionEpoch) {
        @Override
        public String toString() {
            return partition + " from offset " + startOffset + " (producer " + producerId + ", epoch " + producerEpoch + ", "
                    + transactionalId + ", which its coordinator has as " + coordinatorState + ")";
        }
    }

    /**
     * The hanging transactions among the open ones: an open transaction of a producer whose transaction the
     * coordinator describes as over, or as not holding that partition. A producer the coordinator does not know (its
     * transactional id expired, or not transactional) is left alone.
     *
     * @param open       per partition, its producers with an open transaction ({@link ProducerState#currentTransactionStartOffset()})
     * @param byProducer the coordinator's transactions, by producer id
     */
    static List<Hanging> hanging(Map<TopicPartition, List<ProducerState>> open, Map<Long, Described> byProducer) {
        List<Hanging> out = new ArrayList<>();
        for (Map.Entry<TopicPartition, List<ProducerState>> e : open.entrySet()) {
            for (ProducerState p : e.getValue()) {
                if (p.currentTransactionStartOffset().isEmpty()) {
                    continue;
                }
                Described t = byProducer.get(p.producerId());
                if (t == null) {
                    continue;
                }
                if (LIVE.contains(t.description().state()) && t.description().topicPartitions().contains(e.getKey())) {
                    continue; // its coordinator ends it (or times it out) and writes the markers
                }
                out.add(new Hanging(e.getKey(), p.producerId(), p.producerEpoch(), p.coordinatorEpoch().orElse(0),
                        p.currentTransactionStartOffset().getAsLong(), t.transactionalId(), t.description().state(),
                        t.description().producerEpoch()));
            }
        }
        return out;
    }

    /**
     * Waits until the coordinator has ended what it was ending and every partition has a leader (both up to
     * {@code settle}), then ends each hanging transaction as {@link #plan} says, logging each.
     *
     * @param clientConfig the cluster's client settings (bootstrap servers, security), for a committing producer
     * @return what was found hanging (and then ended)
     * @throws IllegalStateException when the broker does not answer
     */
    static List<Hanging> endAll(Admin admin, Map<String, Object> clientConfig, Duration settle) throws InterruptedException {
        try {
            long until = System.nanoTime() + settle.toNanos();
            awaitSettled(admin, settle);
            Map<Long, Described> before;
            Map<TopicPartition, List<ProducerState>> open;
            while (true) {
                // right after a start the coordinator may not have loaded its transactions yet: an open transaction whose
                // producer it does not know is looked at again (after a crash every one has a transactional id it knows)
                before = describe(admin);
                open = openTransactions(admin);
                if (open.isEmpty()) {
                    return List.of();
                }
                Map<Long, Described> known = before;
                List<Long> unknown = open.values().stream().flatMap(List::stream).map(ProducerState::producerId)
                        .filter(pid -> !known.containsKey(pid)).distinct().toList();
                if (unknown.isEmpty()) {
                    break;
                }
                if (System.nanoTime() > until) {
                    LOG.warn("open transactions of producers {} have no transaction their coordinator knows; left as they are", unknown);
                    break;
                }
                Thread.sleep(500);
            }
            Map<Long, Described> after = describe(admin);
            Map<Long, Described> unchanged = new HashMap<>();
            before.forEach((pid, d) -> {
                Described now = after.get(pid);
                if (now != null && now.description().state() == d.description().state()
                        && now.description().producerEpoch() == d.description().producerEpoch()) {
                    unchanged.put(pid, d); // a producer that moved on meanwhile is not judged on a stale description
                }
            });
            List<Hanging> hanging = hanging(open, unchanged);
            int bump = commitEpochBump(admin);
            for (Map.Entry<String, End> p : plan(hanging, bump).entrySet()) {
                end(admin, clientConfig, p.getKey(), p.getValue(), hanging.stream().filter(h -> h.transactionalId().equals(p.getKey())).toList());
            }
            return hanging;
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not look for transactions left open by a crash: " + e.getMessage(), e);
        }
    }

    /**
     * Ends the hanging transaction of {@code transactionalId}, open on the partitions {@code of}, as {@code how} says,
     * each logged. A commit ({@link #commit}) ends what took its record once its markers are written, waited for up to
     * {@link #MARKERS_WAIT}; then an open offset commit of it, which cannot take a record, is aborted. After the
     * repair's commit the coordinator is asked what it made of it, whatever its producer said (a commit that timed out
     * completes when its producer closes):
     * <ul>
     *   <li>a commit at a later epoch: its markers are waited for; when they do not come the start stops, aborting
     *       nothing (the next start leaves the transaction to its coordinator, or repairs it again);</li>
     *   <li>an abort at a later epoch, or the transactional id under a new producer id (a producer's epochs ran out: the
     *       new id's marker cannot end the old id's records, and Kafka has no way to commit them for it): the records are
     *       aborted, each with an error saying they are lost;</li>
     *   <li>anything else (the coordinator never saw the repair's transaction): the start stops, aborting nothing.</li>
     * </ul>
     *
     * @return what was aborted, with the producer's epochs the aborts used
     * @throws IllegalStateException when the coordinator still owes the commit's markers after the wait, or never saw
     *                               the repair's transaction
     */
    static List<Hanging> end(Admin admin, Map<String, Object> clientConfig, String transactionalId, End how, List<Hanging> of)
            throws InterruptedException, ExecutionException, TimeoutException {
        return end(admin, clientConfig, transactionalId, how, of, MARKERS_WAIT);
    }

    /** {@link #end(Admin, Map, String, End, List)} waiting up to {@code markersWait} for a commit's markers. */
    static List<Hanging> end(Admin admin, Map<String, Object> clientConfig, String transactionalId, End how, List<Hanging> of,
                             Duration markersWait) throws InterruptedException, ExecutionException, TimeoutException {
        List<Hanging> toAbort = of;
        if (how == End.COMMIT) {
            List<Hanging> committing = of.stream().filter(h -> takesRecord(h.partition())).toList();
            commit(clientConfig, transactionalId, of);
            // what the coordinator made of the repair's commit, whatever its producer said (a commit that timed out
            // completes when its producer closes)
            TransactionDescription now = describeOne(admin, transactionalId);
            long producerId = committing.get(0).producerId(); // one transactional id: one producer id
            int foundEpoch = committing.get(0).transactionEpoch();
            List<Hanging> lost = List.of();
            String why;
            if (now != null && now.producerId() != producerId) {
                lost = stillOpen(admin, committing);
                why = "its coordinator gave the transactional id a new producer id, whose commit cannot end them";
            } else if (now != null && now.producerEpoch() > foundEpoch && (now.state() == TransactionState.PREPARE_COMMIT
                    || now.state() == TransactionState.COMPLETE_COMMIT)) {
                List<Hanging> notEnded = awaitEnded(admin, committing, markersWait);
                if (!notEnded.isEmpty()) {
                    throw new IllegalStateException("the transaction " + transactionalId + " that its coordinator committed and"
                            + " a crash left open was committed again, but its markers did not reach " + notEnded + " within "
                            + markersWait.toSeconds() + " s; nothing was aborted: start again");
                }
                why = null;
            } else if (now != null && now.producerEpoch() > foundEpoch && (now.state() == TransactionState.PREPARE_ABORT
                    || now.state() == TransactionState.COMPLETE_ABORT)) {
                lost = stillOpen(admin, committing);
                why = "the repair's commit failed and its coordinator aborted it";
            } else {
                throw new IllegalStateException("could not commit the transaction " + transactionalId + " that its coordinator"
                        + " committed and a crash left open on " + committing.stream().map(Hanging::partition).toList()
                        + " (its coordinator has it as " + (now == null ? "unknown" : now.state()) + "); nothing was aborted: start again");
            }
            for (Hanging h : lost) {
                LOG.error("aborting records their coordinator committed ({}): they are lost from {}: {}", why, h.partition(), h);
            }
            // with the producer's epoch as the partition has it (the commit bumped it where it wrote)
            toAbort = new ArrayList<>(lost);
            toAbort.addAll(stillOpen(admin, of.stream().filter(h -> !takesRecord(h.partition())).toList()));
        }
        for (Hanging h : toAbort) {
            LOG.warn("aborting a transaction the broker's crash recovery left open, so that readers of {} go on: {}", h.partition(), h);
            admin.abortTransaction(new AbortTransactionSpec(h.partition(), h.producerId(), (short) h.producerEpoch(),
                    h.coordinatorEpoch())).all().get(30, TimeUnit.SECONDS);
        }
        return toAbort;
    }

    /**
     * Commits a transaction its coordinator committed but whose markers were skipped: a producer with its transactional
     * id appends one system record to each open partition that {@link #takesRecord takes one} and commits (a commit that
     * times out is tried again, {@link #COMMIT_TRIES} times in all); the commit's marker on a partition ends every open
     * record of that producer there (the others stay open, for an abort). Returns once the coordinator has decided the
     * commit, before the markers are written ({@link #awaitEnded}).
     *
     * A failure its producer reports is logged: the commit may still have gone through (one that timed out completes when
     * its producer closes) or been aborted; {@link #end} asks the coordinator which.
     */
    static void commit(Map<String, Object> clientConfig, String transactionalId, List<Hanging> of) {
        Map<String, Object> config = new HashMap<>(clientConfig);
        config.put(org.apache.kafka.clients.producer.ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        config.put(org.apache.kafka.clients.producer.ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, byte[]>(config,
                new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            for (Hanging h : of) {
                if (!takesRecord(h.partition())) {
                    continue;
                }
                LOG.warn("committing a transaction its coordinator committed but the broker's crash recovery left open, so that"
                        + " readers of {} go on and what it wrote stands: {}", h.partition(), h);
                var record = new org.apache.kafka.clients.producer.ProducerRecord<String, byte[]>(h.partition().topic(),
                        h.partition().partition(), "*", null);
                record.headers().add(RECOVERY_HEADER, "commit of a transaction left open by a crash".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                producer.send(record);
            }
            for (int attempt = 1; ; attempt++) {
                try {
                    producer.commitTransaction();
                    return;
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    if (attempt == COMMIT_TRIES) {
                        throw e;
                    }
                    LOG.warn("committing the transaction {} left open by a crash timed out ({}); trying again", transactionalId, e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            LOG.error("could not commit the transaction {} that its coordinator committed and a crash left open on {} ({})",
                    transactionalId, of.stream().map(Hanging::partition).toList(), e.getMessage(), e);
        }
    }

    /** The coordinator's description of {@code transactionalId}'s transaction now; null when it knows none. */
    private static TransactionDescription describeOne(Admin admin, String transactionalId)
            throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return admin.describeTransactions(List.of(transactionalId)).all().get(30, TimeUnit.SECONDS).get(transactionalId);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.TransactionalIdNotFoundException) {
                return null;
            }
            throw e;
        }
    }

    /** How many times {@link #commit} commits when a commit times out. */
    static final int COMMIT_TRIES = 3;

    /**
     * By how much a commit raises the producer epoch on this cluster: 1 where the finalized {@code transaction.version}
     * is 2 or more (each transaction ends with a new epoch), else 0.
     */
    static int commitEpochBump(Admin admin) throws InterruptedException, ExecutionException, TimeoutException {
        var version = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS).finalizedFeatures().get("transaction.version");
        return version != null && version.maxVersionLevel() >= 2 ? 1 : 0;
    }

    /** How long {@link #end} waits for a commit's markers (written by the coordinator after the commit returned). */
    static final Duration MARKERS_WAIT = Duration.ofSeconds(60);

    /**
     * Waits until the open records of {@code of} are ended (a commit returns once its coordinator has decided, before
     * the markers are on the partitions), polling every 100 ms up to {@code wait}; returns those still open then, each
     * with its producer's epoch and coordinator epoch as the partition has them now (a commit under the transactional id
     * bumped the epoch: an abort with the old one is refused).
     */
    static List<Hanging> awaitEnded(Admin admin, List<Hanging> of, Duration wait) throws InterruptedException, ExecutionException, TimeoutException {
        long until = System.nanoTime() + wait.toNanos();
        List<Hanging> open = stillOpen(admin, of);
        while (!open.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(100);
            open = stillOpen(admin, open);
        }
        return open;
    }

    /** Those of {@code of} whose producer still has an open transaction from the same offset on their partition, as they are now. */
    private static List<Hanging> stillOpen(Admin admin, List<Hanging> of) throws InterruptedException, ExecutionException, TimeoutException {
        if (of.isEmpty()) {
            return List.of();
        }
        var now = admin.describeProducers(of.stream().map(Hanging::partition).distinct().toList()).all().get(30, TimeUnit.SECONDS);
        List<Hanging> open = new ArrayList<>();
        for (Hanging h : of) {
            if (!now.containsKey(h.partition())) {
                continue;
            }
            now.get(h.partition()).activeProducers().stream().filter(p -> p.producerId() == h.producerId()
                            && p.currentTransactionStartOffset().isPresent() && p.currentTransactionStartOffset().getAsLong() == h.startOffset())
                    .findFirst()
                    .ifPresent(p -> open.add(new Hanging(h.partition(), h.producerId(), p.producerEpoch(), p.coordinatorEpoch().orElse(0),
                            h.startOffset(), h.transactionalId(), h.coordinatorState(), h.transactionEpoch())));
        }
        return open;
    }

    private static void awaitSettled(Admin admin, Duration settle) throws InterruptedException, ExecutionException, TimeoutException {
        long until = System.nanoTime() + settle.toNanos();
        while (System.nanoTime() < until) {
            boolean ending = admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream().anyMatch(l -> ENDING.contains(l.state()));
            boolean leaderless = descriptions(admin).values().stream()
                    .anyMatch(t -> t.partitions().stream().anyMatch(p -> p.leader() == null || p.leader().isEmpty()));
            if (!ending && !leaderless) {
                return;
            }
            Thread.sleep(200);
        }
        LOG.warn("the broker still ends transactions or has partitions without a leader after {} s; looking for hanging ones anyway",
                settle.toSeconds());
    }

    private static Map<String, TopicDescription> descriptions(Admin admin) throws InterruptedException, ExecutionException, TimeoutException {
        Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
        return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS);
    }

    /** Per partition of every topic (internal ones too), its producers with an open transaction. */
    private static Map<TopicPartition, List<ProducerState>> openTransactions(Admin admin)
            throws InterruptedException, ExecutionException, TimeoutException {
        List<TopicPartition> partitions = new ArrayList<>();
        descriptions(admin).forEach((name, t) -> t.partitions().forEach(p -> partitions.add(new TopicPartition(name, p.partition()))));
        Map<TopicPartition, List<ProducerState>> open = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        admin.describeProducers(partitions).all().get(30, TimeUnit.SECONDS).forEach((tp, state) -> {
            List<ProducerState> inTransaction = state.activeProducers().stream()
                    .filter(p -> p.currentTransactionStartOffset().isPresent()).toList();
            if (!inTransaction.isEmpty()) {
                open.put(tp, inTransaction);
            }
        });
        return open;
    }

    /** The coordinator's description of every known transactional id's transaction, by producer id. */
    private static Map<Long, Described> describe(Admin admin) throws InterruptedException, ExecutionException, TimeoutException {
        Collection<TransactionListing> listings = admin.listTransactions().all().get(30, TimeUnit.SECONDS);
        if (listings.isEmpty()) {
            return Map.of();
        }
        Map<String, TransactionDescription> byId = admin.describeTransactions(listings.stream().map(TransactionListing::transactionalId).toList())
                .all().get(30, TimeUnit.SECONDS);
        Map<Long, Described> byProducer = new HashMap<>();
        byId.forEach((id, d) -> byProducer.put(d.producerId(), new Described(id, d)));
        return byProducer;
    }
}
