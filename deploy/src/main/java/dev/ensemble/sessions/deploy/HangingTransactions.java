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
 * Finds and aborts the hanging transactions a crash of the embedded broker can leave behind, with Kafka's own Admin
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
 * {@code EMPTY}) or does not list that partition. Each is aborted (an abort marker for that producer on that
 * partition), so readers go on; an event whose post was answered in the last milliseconds before such a crash, while
 * its commit's markers were being written, can be lost with it (docs/reliability.md "Gateway start").
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

    private HangingTransactions() {
    }

    /**
     * An open transaction no coordinator will end: a partition, the producer's id and epoch, the coordinator epoch of its
     * last write there, where its open records start, and the transactional id and state the coordinator has for it.
     */
    record Hanging(TopicPartition partition, long producerId, int producerEpoch, int coordinatorEpoch, long startOffset,
                   String transactionalId, TransactionState coordinatorState) {
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
     * @param byProducer the coordinator's description of each transactional id's transaction, by producer id
     * @param idOf       the transactional id of each producer id
     */
    static List<Hanging> hanging(Map<TopicPartition, List<ProducerState>> open, Map<Long, TransactionDescription> byProducer,
                                 Map<Long, String> idOf) {
        List<Hanging> out = new ArrayList<>();
        for (Map.Entry<TopicPartition, List<ProducerState>> e : open.entrySet()) {
            for (ProducerState p : e.getValue()) {
                if (p.currentTransactionStartOffset().isEmpty()) {
                    continue;
                }
                TransactionDescription d = byProducer.get(p.producerId());
                if (d == null) {
                    continue;
                }
                if (LIVE.contains(d.state()) && d.topicPartitions().contains(e.getKey())) {
                    continue; // its coordinator ends it (or times it out) and writes the markers
                }
                out.add(new Hanging(e.getKey(), p.producerId(), p.producerEpoch(), p.coordinatorEpoch().orElse(0),
                        p.currentTransactionStartOffset().getAsLong(), idOf.get(p.producerId()), d.state()));
            }
        }
        return out;
    }

    /**
     * Waits until the coordinator has ended what it was ending and every partition has a leader (both up to
     * {@code settle}), then aborts each hanging transaction, logging each.
     *
     * @return what was aborted
     * @throws IllegalStateException when the broker does not answer
     */
    static List<Hanging> abortAll(Admin admin, Duration settle) throws InterruptedException {
        try {
            awaitSettled(admin, settle);
            Map<Long, TransactionDescription> before = describe(admin);
            Map<TopicPartition, List<ProducerState>> open = openTransactions(admin);
            if (open.isEmpty()) {
                return List.of();
            }
            Map<Long, TransactionDescription> after = describe(admin);
            Map<Long, TransactionDescription> unchanged = new HashMap<>();
            before.forEach((pid, d) -> {
                TransactionDescription now = after.get(pid);
                if (now != null && now.state() == d.state() && now.producerEpoch() == d.producerEpoch()) {
                    unchanged.put(pid, d); // a producer that moved on meanwhile is not judged on a stale description
                }
            });
            Map<Long, String> ids = new HashMap<>();
            for (TransactionListing l : admin.listTransactions().all().get(30, TimeUnit.SECONDS)) {
                ids.put(l.producerId(), l.transactionalId());
            }
            List<Hanging> hanging = hanging(open, unchanged, ids);
            for (Hanging h : hanging) {
                LOG.warn("aborting a transaction the broker's crash recovery left open, so that readers of {} go on: {}",
                        h.partition(), h);
                admin.abortTransaction(new AbortTransactionSpec(h.partition(), h.producerId(), (short) h.producerEpoch(),
                        h.coordinatorEpoch())).all().get(30, TimeUnit.SECONDS);
            }
            return hanging;
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not look for transactions left open by a crash: " + e.getMessage(), e);
        }
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
    private static Map<Long, TransactionDescription> describe(Admin admin) throws InterruptedException, ExecutionException, TimeoutException {
        Collection<TransactionListing> listings = admin.listTransactions().all().get(30, TimeUnit.SECONDS);
        if (listings.isEmpty()) {
            return Map.of();
        }
        Map<String, TransactionDescription> byId = admin.describeTransactions(listings.stream().map(TransactionListing::transactionalId).toList())
                .all().get(30, TimeUnit.SECONDS);
        Map<Long, TransactionDescription> byProducer = new HashMap<>();
        byId.values().forEach(d -> byProducer.put(d.producerId(), d));
        return byProducer;
    }
}
