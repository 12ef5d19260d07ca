package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

import dev.ensemble.sessions.streams.StreamsDefaults;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.tools.StreamsResetter;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.LongConsumer;

/**
 * Rebuilds the projector's views by replaying the log (DESIGN.md §1: "every view can be rebuilt by replay") with Kafka's
 * own tools: with the projector stopped, {@link #reset} runs Kafka's application reset tool ({@link StreamsResetter}:
 * the projector's consumer group's offsets on {@code sessions.events} to the earliest, its internal topics
 * {@code ensemble-projector-*-changelog} deleted; Streams creates them again, empty) and {@link KafkaStreams#cleanUp()}
 * (its local state folder, {@code <stateDir>/ensemble-projector}). Starting the projector then replays every event and
 * writes every view record again; the compacted view topics end with the rebuilt values. {@link #awaitCaughtUp} waits
 * until its committed offsets reach the log's last stable offsets, then {@link #awaitViewsSettled} until the last
 * views are published.
 * <p>
 * A replay killed half-way needs no reset again: exactly-once aborts what was not committed, and the projector goes on
 * from its last committed offsets when it starts again.
 */
public final class ProjectorRebuild {
    private ProjectorRebuild() {
    }

    /**
     * Resets the projector to the beginning of the log.
     *
     * @param stateDir the projector's state.dir
     * @return the events to replay (end minus beginning offsets of {@code sessions.events})
     * @throws IllegalStateException when the projector is still running (its group has members), or the reset tool failed
     */
    public static long reset(String bootstrapServers, Path stateDir) throws InterruptedException {
        return reset(bootstrapServers, stateDir, Duration.ZERO, notice -> { });
    }

    /**
     * As {@link #reset(String, Path)}, first waiting up to {@code membersLeave} for the projector's consumer group to
     * empty: a projector that stopped without leaving it (killed) stays a member until the broker's session timeout
     * (45 s by default) has passed since the broker last heard of it, also across a restart of the broker. (The reset
     * tool's {@code --force} would remove such members at once, and a running projector's too: not used.)
     *
     * @param notice gets one line when it waits
     * @throws IllegalStateException when the group still has members after {@code membersLeave}, or the reset tool failed
     */
    public static long reset(String bootstrapServers, Path stateDir, Duration membersLeave, java.util.function.Consumer<String> notice)
            throws InterruptedException {
        return reset(bootstrapServers, Map.of(), stateDir, membersLeave, notice);
    }

    /**
     * As {@link #reset(String, Path, Duration, java.util.function.Consumer)} on a cluster whose clients need
     * {@code clientProperties} (its security settings, {@link dev.ensemble.sessions.schema.KafkaClients}); the reset tool
     * gets them in a temporary file readable by its owner only ({@code --command-config}), deleted afterwards.
     */
    public static long reset(String bootstrapServers, Map<String, ?> clientProperties, Path stateDir, Duration membersLeave,
                             java.util.function.Consumer<String> notice) throws InterruptedException {
        return reset(bootstrapServers, clientProperties, stateDir, membersLeave, notice, dev.ensemble.sessions.schema.Generation.FIRST);
    }

    /** As {@link #reset(String, Map, Path, Duration, java.util.function.Consumer)}, of the projector of {@code generation}. */
    public static long reset(String bootstrapServers, Map<String, ?> clientProperties, Path stateDir, Duration membersLeave,
                             java.util.function.Consumer<String> notice, dev.ensemble.sessions.schema.Generation generation)
            throws InterruptedException {
        String group = generation.applicationId(Projector.APPLICATION_ID);
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties))) {
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
            java.util.List<String> args = new java.util.ArrayList<>(List.of("--bootstrap-server", bootstrapServers,
                    "--application-id", group, "--input-topics", Topics.EVENTS.name(), "--to-earliest"));
            args.addAll(ownChangelogs(admin, group));
            Path configFile = clientProperties.isEmpty() ? null : ownerOnlyPropertiesFile(clientProperties);
            int code;
            try {
                if (configFile != null) args.addAll(List.of("--command-config", configFile.toString()));
                code = new StreamsResetter().execute(args.toArray(String[]::new));
            } finally {
                if (configFile != null) java.nio.file.Files.deleteIfExists(configFile);
            }
            if (code != 0) {
                throw new IllegalStateException("Kafka's application reset tool could not reset the projector (exit code " + code
                        + "; its reason is printed above)");
            }
            try (KafkaStreams streams = new KafkaStreams(Projector.buildTopology(RetirementRules.Config.defaults(), false, generation),
                    StreamsDefaults.properties(group, bootstrapServers, stateDir, 1, clientProperties))) {
                streams.cleanUp();
            }
            return eventCount(admin, IsolationLevel.READ_UNCOMMITTED);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not reset the projector: " + e.getCause().getMessage(), e.getCause());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("could not write the reset tool's client settings", e);
        }
    }

    /** {@code properties} in a new temporary file only its owner can read (where the file system has POSIX permissions). */
    private static Path ownerOnlyPropertiesFile(Map<String, ?> properties) throws java.io.IOException {
        Path file;
        try {
            file = java.nio.file.Files.createTempFile("ensemble-reset", ".properties", java.nio.file.attribute.PosixFilePermissions
                    .asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException notPosix) {
            file = java.nio.file.Files.createTempFile("ensemble-reset", ".properties");
        }
        java.util.Properties p = new java.util.Properties();
        properties.forEach((k, v) -> p.setProperty(k, String.valueOf(v)));
        try (java.io.Writer out = java.nio.file.Files.newBufferedWriter(file)) {
            p.store(out, null);
        }
        return file;
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
        return awaitViewsSettled(admin, quiet, timeout, lastChange, dev.ensemble.sessions.schema.Generation.FIRST);
    }

    /** As {@link #awaitViewsSettled(Admin, Duration, Duration, LongConsumer)}, on the view topics of {@code generation}. */
    public static boolean awaitViewsSettled(Admin admin, Duration quiet, Duration timeout, LongConsumer lastChange,
                                            dev.ensemble.sessions.schema.Generation generation) throws InterruptedException {
        try {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : generation.views().stream().map(dev.ensemble.sessions.schema.Topic::name).toList()) {
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
        return eventCount(admin, IsolationLevel.READ_COMMITTED);
    }

    /** The log's end offsets ({@code end}: last stable or high watermark) minus its beginnings, over its partitions. */
    private static long eventCount(Admin admin, IsolationLevel end) throws InterruptedException {
        try {
            List<TopicPartition> parts = partitions(admin);
            Map<TopicPartition, Long> begin = offsets(admin, parts, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, Long> ends = offsets(admin, parts, OffsetSpec.latest(), end);
            long total = 0;
            for (TopicPartition tp : parts) total += ends.get(tp) - begin.get(tp);
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

    /**
     * The reset tool's {@code --internal-topics}: the changelogs of {@code group}'s own stores that exist. Left to
     * itself, the tool deletes every topic named {@code <group>-...-changelog}, and generation 1's application id is a
     * prefix of the others' ({@code ensemble-projector-g2-...}): another generation's changelogs would go too.
     *
     * @throws IllegalStateException when none of its own exists but another generation's would be deleted
     */
    static List<String> ownChangelogs(Admin admin, String group) throws InterruptedException, ExecutionException {
        java.util.Set<String> existing = admin.listTopics().names().get();
        List<String> own = Projector.STORES.stream().map(spec -> group + "-" + spec.name() + "-changelog").filter(existing::contains).toList();
        if (!own.isEmpty()) {
            return List.of("--internal-topics", String.join(",", own));
        }
        List<String> others = existing.stream().filter(t -> t.startsWith(group + "-") && (t.endsWith("-changelog") || t.endsWith("-repartition"))).sorted().toList();
        if (!others.isEmpty()) {
            throw new IllegalStateException("the projector " + group + " has no changelog to reset, and Kafka's reset tool would delete "
                    + others + " of another generation: not reset");
        }
        return List.of();
    }
}
