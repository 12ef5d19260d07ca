package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.LongConsumer;
import java.util.stream.Stream;

/**
 * Rebuilds the projector's views by replaying the log (DESIGN.md §1: "every view can be rebuilt by replay"), the way
 * Kafka Streams' application reset tool does, with the Admin API: with the projector stopped, {@link #reset} deletes
 * its local state folder ({@code <stateDir>/ensemble-projector}), sets its consumer group's offsets on
 * {@code sessions.events} to the beginning, and deletes its internal topics ({@code ensemble-projector-*-changelog},
 * {@code -repartition}; Streams creates them again, empty). Starting the projector then replays every event and writes
 * every view record again; the compacted view topics end with the rebuilt values. {@link #awaitCaughtUp} waits until
 * its committed offsets reach the log's last stable offsets, then {@link #awaitViewsSettled} until the last rarity
 * tables are published.
 * <p>
 * A replay killed half-way needs no reset again: exactly-once aborts what was not committed, and the projector goes on
 * from its last committed offsets when it starts again. {@link BatchRebuild} replays the same log after the same reset
 * several times faster, outside Kafka Streams.
 */
public final class ProjectorRebuild {
    private ProjectorRebuild() {
    }

    /**
     * Resets the projector to the beginning of the log.
     *
     * @param stateDir the projector's state.dir
     * @return the events to replay (end minus beginning offsets of {@code sessions.events})
     * @throws IllegalStateException when the projector is still running (its group has members)
     */
    public static long reset(Admin admin, Path stateDir, Duration timeout) throws InterruptedException {
        return reset(admin, stateDir, timeout, Duration.ZERO, notice -> { });
    }

    /**
     * As {@link #reset(Admin, Path, Duration)}, first waiting up to {@code membersLeave} for the projector's consumer
     * group to empty: a projector that stopped without leaving it (killed) stays a member until the broker's session
     * timeout (45 s by default) has passed since the broker last heard of it, also across a restart of the broker.
     *
     * @param notice gets one line when it waits
     * @throws IllegalStateException when the group still has members after {@code membersLeave}
     */
    public static long reset(Admin admin, Path stateDir, Duration timeout, Duration membersLeave, java.util.function.Consumer<String> notice)
            throws InterruptedException {
        String group = Projector.APPLICATION_ID;
        try {
            long leaveBy = System.nanoTime() + membersLeave.toNanos();
            boolean told = false;
            while (true) {
                int members;
                try {
                    members = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get().members().size();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) throw e;
                    members = 0;
                }
                if (members == 0) break;
                if (System.nanoTime() >= leaveBy) {
                    throw new IllegalStateException("the projector is still running (" + members
                            + " members in consumer group " + group + "): stop the system first");
                }
                if (!told) {
                    notice.accept("The projector's consumer group still has " + members + " member(s): waiting up to "
                            + membersLeave.toSeconds() + " s for them to leave (a projector that was killed stays a member "
                            + "until the broker's session timeout has passed)");
                    told = true;
                }
                Thread.sleep(1000);
            }
            deleteTree(stateDir.resolve(group));
            List<TopicPartition> parts = partitions(admin);
            Map<TopicPartition, Long> begin = offsets(admin, parts, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, Long> end = offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, OffsetAndMetadata> to = new HashMap<>();
            for (TopicPartition tp : parts) to.put(tp, new OffsetAndMetadata(begin.get(tp)));
            admin.alterConsumerGroupOffsets(group, to).all().get();
            List<String> internal = new ArrayList<>();
            for (String t : admin.listTopics().names().get()) {
                if (t.startsWith(group + "-") && (t.endsWith("-changelog") || t.endsWith("-repartition"))) internal.add(t);
            }
            if (!internal.isEmpty()) {
                admin.deleteTopics(internal).all().get();
                long until = System.nanoTime() + timeout.toNanos();
                while (admin.listTopics().names().get().stream().anyMatch(internal::contains)) {
                    if (System.nanoTime() > until) throw new IllegalStateException("internal topics still being deleted after " + timeout + ": " + internal);
                    Thread.sleep(100);
                }
            }
            long total = 0;
            for (TopicPartition tp : parts) total += end.get(tp) - begin.get(tp);
            return total;
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not reset the projector: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /**
     * Waits until the projector's committed offsets reach the last stable offsets of {@code sessions.events} taken now.
     *
     * @param progress gets the events processed so far (committed minus beginning), about every 200 ms
     * @return true when caught up, false on timeout
     */
    public static boolean awaitCaughtUp(Admin admin, Duration timeout, LongConsumer progress) throws InterruptedException {
        return awaitCaughtUp(admin, Projector.APPLICATION_ID, Duration.ofMillis(200), timeout, progress);
    }

    /**
     * Waits until consumer group {@code group}'s committed offsets on {@code sessions.events} reach the log's last
     * stable offsets taken now (any application that reads the log: the projector, a benchmark's).
     *
     * @param poll     how often the offsets are read
     * @param progress gets the events processed so far (committed minus beginning), once per poll
     * @return true when caught up, false on timeout
     */
    public static boolean awaitCaughtUp(Admin admin, String group, Duration poll, Duration timeout, LongConsumer progress)
            throws InterruptedException {
        try {
            List<TopicPartition> parts = partitions(admin);
            Map<TopicPartition, Long> begin = offsets(admin, parts, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, Long> end = offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            long until = System.nanoTime() + timeout.toNanos();
            while (true) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                boolean done = true;
                long processed = 0;
                for (TopicPartition tp : parts) {
                    OffsetAndMetadata o = committed.get(tp);
                    long at = o == null ? begin.get(tp) : o.offset();
                    processed += Math.max(0, Math.min(at, end.get(tp)) - begin.get(tp));
                    done &= at >= end.get(tp);
                }
                progress.accept(processed);
                if (done) return true;
                if (System.nanoTime() > until) return false;
                Thread.sleep(poll.toMillis());
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not read the projector's offsets: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /**
     * Waits until the view topics' end offsets stayed the same for {@code quiet}: the rarity tables are published by a
     * wall-clock punctuator ({@link CorpusProcessor#PUBLISH_EVERY}), after the input is caught up; stop the projector
     * only then. 3 s is enough with the default settings.
     *
     * @return false on timeout
     */
    public static boolean awaitViewsSettled(Admin admin, Duration quiet, Duration timeout) throws InterruptedException {
        return awaitViewsSettled(admin, quiet, timeout, t -> { });
    }

    /**
     * As {@link #awaitViewsSettled(Admin, Duration, Duration)}, also giving {@code lastChange} the {@link System#nanoTime()}
     * at which the view topics' end offsets were last seen to move (the call's start when they never moved): when the
     * last view was published, give or take one poll (250 ms).
     */
    public static boolean awaitViewsSettled(Admin admin, Duration quiet, Duration timeout, LongConsumer lastChange)
            throws InterruptedException {
        try {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : List.of(Topics.SESSIONS_VIEW.name(), Topics.CORPUS_VIEW.name(), Topics.RETIREMENT_VIEW.name(), Topics.DELETION_AUDIT.name())) {
                admin.describeTopics(List.of(t)).allTopicNames().get().get(t).partitions()
                        .forEach(p -> parts.add(new TopicPartition(t, p.partition())));
            }
            long until = System.nanoTime() + timeout.toNanos();
            Map<TopicPartition, Long> last = offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            long stableSince = System.nanoTime();
            while (System.nanoTime() - stableSince < quiet.toNanos()) {
                if (System.nanoTime() > until) return false;
                Thread.sleep(250);
                Map<TopicPartition, Long> now = offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
                if (!now.equals(last)) {
                    last = now;
                    stableSince = System.nanoTime();
                }
            }
            lastChange.accept(stableSince);
            return true;
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not read the view topics' offsets: " + e.getCause().getMessage(), e.getCause());
        }
    }

    /** How many events {@code sessions.events} holds now (last stable offsets minus the beginnings, over its partitions). */
    public static long eventCount(Admin admin) throws InterruptedException {
        try {
            List<TopicPartition> parts = partitions(admin);
            Map<TopicPartition, Long> begin = offsets(admin, parts, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, Long> end = offsets(admin, parts, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            long total = 0;
            for (TopicPartition tp : parts) total += end.get(tp) - begin.get(tp);
            return total;
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not read the event log's offsets: " + e.getCause().getMessage(), e.getCause());
        }
    }

    private static List<TopicPartition> partitions(Admin admin) throws ExecutionException, InterruptedException {
        return TopicAdmin.partitions(admin, Topics.EVENTS.name());
    }

    private static Map<TopicPartition, Long> offsets(Admin admin, List<TopicPartition> parts, OffsetSpec spec, IsolationLevel iso)
            throws ExecutionException, InterruptedException {
        return TopicAdmin.offsets(admin, parts, spec, iso);
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) return;
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the projector's state in " + dir, e);
        }
    }
}
