package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.LogProducers;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import java.util.function.IntSupplier;

/**
 * Appends posted events to {@code sessions.events} so that each eventId of an account is in the log once, however
 * many gateway threads and gateway instances post it at the same time (api-gateway/README.md, "Duplicates").
 *
 * <p>Every account's events go to the account's partition, through that partition's transactional producer
 * ({@code transactional.id} {@code ensemble-gateway-intake-<partition>}: one per partition across all instances).
 * <ol>
 *   <li><b>Fencing.</b> An instance that starts appending to a partition first initialises the partition's
 *       transactions: this aborts what another instance had open there and fences it (its later commits fail, and
 *       its callers are told to post again: nothing of theirs is in the log).</li>
 *   <li><b>Knowing the log.</b> It then waits until its reading of the log (the session-events feed,
 *       read_committed: {@code inLog}) has reached the log's end as it is after the fence. From then on every eventId
 *       of the partition is one the feed has read or one this instance committed since.</li>
 *   <li><b>Check and append as one step.</b> One thread at a time per partition takes every batch waiting for it,
 *       answers each event whose eventId is known {@link Outcome#DUPLICATE} (also a second copy in the same or
 *       another waiting batch) when it says what the known one says, and {@link Outcome#conflict} when an item
 *       carrying its content fingerprint says something else, appends the rest in one transaction and commits it before the next batches are
 *       taken (group commit). Two batches carrying one eventId are thus decided one after the other, the second
 *       seeing the first's commit.</li>
 * </ol>
 * An append that fails is answered {@link Outcome#failed} for each of its events (a transaction is all or nothing);
 * one whose commit was not confirmed in time may be in the log: posted again, it is answered duplicate then.
 * The gateway forwards an account's posts to the instance that holds the account's partition (as it forwards
 * reads), so one instance appends to a partition and fencing happens only when the partitions move.
 */
final class OnceAppender implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OnceAppender.class);
    /** The prefix of the intake's transactional ids; the partition number follows. */
    static final String TRANSACTIONAL_ID_PREFIX = "ensemble-gateway-intake-";
    /** How long a follower waits for the thread appending for its partition before trying to take over. */
    private static final long FOLLOWER_WAIT_MS = 5;

    /**
     * One event to append: its eventId, its encoded value, and the fingerprint of its content
     * ({@link dev.ensemble.sessions.schema.EventContent#fingerprint}), or null when a copy under a known eventId is a
     * duplicate whatever it says (an event the gateway itself builds again, e.g. a turn's decision at a later time).
     */
    record Item(String eventId, byte[] value, Long content) {
        /** An item whose known eventId makes it a duplicate, whatever it says. */
        Item(String eventId, byte[] value) {
            this(eventId, value, null);
        }
    }

    /**
     * What became of one event.
     *
     * @param appended in the log now, by this append
     * @param duplicate in the log already (or earlier in the same or a concurrent batch): not appended again
     * @param reason    why it was not appended (neither flag set), for the person: post it again, or (with
     *                  {@code conflict}) give the event an eventId of its own
     * @param conflict  its eventId is in the log (or earlier in the same or a concurrent batch) for an event that says
     *                  something else: not appended, and posting it again changes nothing
     */
    record Outcome(boolean appended, boolean duplicate, String reason, boolean conflict) {
        static final Outcome APPENDED = new Outcome(true, false, null, false);
        static final Outcome DUPLICATE = new Outcome(false, true, null, false);

        static Outcome failed(String reason) {
            return new Outcome(false, false, reason, false);
        }

        static Outcome conflict(String eventId) {
            return new Outcome(false, false, "eventId " + eventId + " is in the log already for an event with other content"
                    + " (account, space, occurredAt, source or payload differ); an eventId names one event: give this one its own",
                    true);
        }
    }

    /** What the log holds under an account's eventId (as far as the feed has read it), and waiting for the feed. */
    interface LogReading {
        /** The content fingerprint of the eventId's first copy in the log, or null when the feed has not read one. */
        Long content(String account, String eventId);

        /** Waits until the feed has read the log up to its end as it is now; false on timeout. */
        boolean awaitLogEnd(Duration timeout) throws InterruptedException;
    }

    private static final class Batch {
        final String account;
        final List<Item> items;
        final CompletableFuture<List<Outcome>> done = new CompletableFuture<>();

        Batch(String account, List<Item> items) {
            this.account = account;
            this.items = items;
        }
    }

    private final class Slot {
        final int partition;
        final ConcurrentLinkedQueue<Batch> waiting = new ConcurrentLinkedQueue<>();
        final ReentrantLock appending = new ReentrantLock();
        /** Guarded by {@link #appending}: the partition's producer, null until first used or after it was fenced. */
        Producer<String, byte[]> producer;
        /** Guarded by {@link #appending}: the binding of the producer's metrics, closed with it. */
        AutoCloseable metrics;
        /** Guarded by {@link #appending}: keys this producer committed that the feed has not read yet, with their content. */
        final Map<String, Long> committed = new java.util.LinkedHashMap<>();

        Slot(int partition) {
            this.partition = partition;
        }
    }

    private final String bootstrapServers;
    private final Map<String, Object> overrides;
    private final IntSupplier partitions;
    private final LogReading log;
    private final Duration catchUpTimeout;
    private final Map<Integer, Slot> slots = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;

    /** The registry each partition's producer binds its metrics to ({@code service="gateway"}); before the first append. */
    OnceAppender withMeters(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(registry);
        return this;
    }

    /**
     * @param partitions     how many partitions {@code sessions.events} has
     * @param log            the gateway's reading of the log
     * @param catchUpTimeout how long a first append to a partition waits for the feed to reach the log's end
     */
    OnceAppender(String bootstrapServers, Map<String, Object> overrides, IntSupplier partitions, LogReading log,
                 Duration catchUpTimeout) {
        this.bootstrapServers = bootstrapServers;
        this.overrides = Map.copyOf(overrides);
        this.partitions = partitions;
        this.log = log;
        this.catchUpTimeout = catchUpTimeout;
    }

    /**
     * Appends the account's events, each whose eventId the log does not hold yet, and says for each what became of it
     * (in order).
     *
     * @throws ApiError 503 when the partition's producer cannot start or the log cannot be read to its end in time
     */
    List<Outcome> append(String account, List<Item> items) {
        if (items.isEmpty()) {
            return List.of();
        }
        Slot slot = slots.computeIfAbsent(Keys.accountPartition(account, partitions.getAsInt()), Slot::new);
        Batch batch = new Batch(account, items);
        slot.waiting.add(batch);
        try {
            while (true) {
                if (slot.appending.tryLock()) {
                    try {
                        drain(slot, batch);
                    } finally {
                        slot.appending.unlock();
                    }
                }
                try {
                    return batch.done.get(FOLLOWER_WAIT_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // another thread is appending for this partition; when it is done, take over what is left
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "unavailable", "interrupted while appending to the event log; post the batch again (it is idempotent)");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ApiError a) {
                throw a;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * Takes and appends every waiting batch, group after group, until {@code own} is done (the batches that come in
     * meanwhile are taken by their own threads, which try the lock every {@value #FOLLOWER_WAIT_MS} ms). Holds
     * {@code slot.appending}.
     */
    private void drain(Slot slot, Batch own) {
        while (!own.done.isDone()) {
            List<Batch> group = new ArrayList<>();
            for (Batch b = slot.waiting.poll(); b != null; b = slot.waiting.poll()) {
                group.add(b);
            }
            if (group.isEmpty()) {
                return;
            }
            try {
                appendGroup(slot, group);
            } catch (RuntimeException e) {
                group.forEach(b -> b.done.completeExceptionally(e));
            }
        }
    }

    private void appendGroup(Slot slot, List<Batch> group) {
        Producer<String, byte[]> producer = producer(slot);
        slot.committed.keySet().removeIf(k -> log.content(Keys.accountOf(k), Keys.idOf(k)) != null); // the feed holds them now
        List<Outcome[]> outcomes = new ArrayList<>();
        List<int[]> sent = new ArrayList<>(); // {batch index, item index}
        List<int[]> besideSent = new ArrayList<>(); // copies answered by what an item sent in this group says
        Map<String, Long> taken = new java.util.HashMap<>(); // key → content (null: not known)
        for (int bi = 0; bi < group.size(); bi++) {
            Batch b = group.get(bi);
            Outcome[] o = new Outcome[b.items.size()];
            outcomes.add(o);
            for (int i = 0; i < o.length; i++) {
                Item item = b.items.get(i);
                String key = Keys.of(b.account, item.eventId());
                Long held;
                boolean known;
                if (taken.containsKey(key)) {
                    known = true;
                    held = taken.get(key);
                    besideSent.add(new int[]{bi, i});
                } else if (slot.committed.containsKey(key)) {
                    known = true;
                    held = slot.committed.get(key);
                } else {
                    held = log.content(b.account, item.eventId());
                    known = held != null;
                }
                if (!known) {
                    taken.put(key, item.content());
                    sent.add(new int[]{bi, i});
                } else if (item.content() != null && held != null && !item.content().equals(held)) {
                    o[i] = Outcome.conflict(item.eventId());
                } else {
                    o[i] = Outcome.DUPLICATE;
                }
            }
        }
        Outcome result = Outcome.APPENDED;
        if (!sent.isEmpty()) {
            try {
                producer.beginTransaction();
                for (int[] at : sent) {
                    Batch b = group.get(at[0]);
                    producer.send(new ProducerRecord<>(Topics.EVENTS.name(), slot.partition, b.account, b.items.get(at[1]).value()));
                }
                producer.commitTransaction();
                slot.committed.putAll(taken);
            } catch (ProducerFencedException | InvalidProducerEpochException | OutOfOrderSequenceException | AuthorizationException e) {
                LOG.info("appends to partition {} of {} moved to another gateway instance ({})", slot.partition, Topics.EVENTS.name(), e.toString());
                closeProducer(slot);
                result = Outcome.failed("another gateway instance appends this account's events now (" + e.getMessage()
                        + "); nothing of this append is in the log: post it again");
            } catch (KafkaException e) {
                // not confirmed (a send refused, or no answer in time): the next append starts a new producer, whose
                // start ends this transaction; what it committed, if anything, the feed reads before the next check
                LOG.warn("an append to partition {} of {} was not confirmed", slot.partition, Topics.EVENTS.name(), e);
                closeProducer(slot);
                result = Outcome.failed("the event log did not confirm it (" + e.getMessage()
                        + "); post it again (if it was appended after all, that post is answered duplicate)");
            }
        }
        for (int[] at : sent) {
            outcomes.get(at[0])[at[1]] = result;
        }
        if (result != Outcome.APPENDED) { // the copy they were told of is not in the log either: post them again too
            for (int[] at : besideSent) {
                outcomes.get(at[0])[at[1]] = result;
            }
        }
        for (int bi = 0; bi < group.size(); bi++) {
            group.get(bi).done.complete(List.of(outcomes.get(bi)));
        }
    }

    /** The partition's producer; a new one fences any other instance's and waits for the feed to reach the log's end. */
    private Producer<String, byte[]> producer(Slot slot) {
        if (slot.producer != null) {
            return slot.producer;
        }
        if (closed) {
            throw new ApiError(503, "unavailable", "the gateway is stopping; post again");
        }
        Map<String, Object> p = LogProducers.config(bootstrapServers,
                TRANSACTIONAL_ID_PREFIX + slot.partition + "-" + UUID.randomUUID(), overrides);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID_PREFIX + slot.partition);
        p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
        p.putIfAbsent(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 30_000);
        Producer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        try {
            producer.initTransactions();
            if (!log.awaitLogEnd(catchUpTimeout)) {
                throw ApiError.starting("the gateway is still reading the event log (to tell posted events from new ones);"
                        + " post again in a few seconds");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            producer.close(Duration.ZERO);
            throw new ApiError(503, "unavailable", "interrupted while reading the event log; post again");
        } catch (KafkaException e) {
            producer.close(Duration.ZERO);
            throw new ApiError(503, "unavailable", "the event log did not answer (" + e.getMessage() + "); post again");
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw e;
        }
        slot.committed.clear();
        slot.producer = producer;
        slot.metrics = dev.ensemble.sessions.streams.ServiceMeters.bind(meters, producer, "gateway");
        return producer;
    }

    private static void closeProducer(Slot slot) {
        dev.ensemble.sessions.streams.ServiceMeters.closeQuietly(slot.metrics);
        slot.metrics = null;
        if (slot.producer != null) {
            try {
                slot.producer.close(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                LOG.debug("closing a producer that failed", e);
            }
            slot.producer = null;
        }
    }

    /** Closes every partition's producer (waiting for an append in progress). */
    @Override
    public void close() {
        closed = true;
        for (Slot slot : slots.values()) {
            slot.appending.lock();
            try {
                closeProducer(slot);
            } finally {
                slot.appending.unlock();
            }
        }
    }
}
