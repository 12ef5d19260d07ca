package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.projector.ProjectorRebuild;
import dev.ensemble.sessions.schema.KafkaClients;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The yardstick for the projector's figure: what Kafka Streams itself reaches on this machine, with the same
 * broker, the same event log and the same settings ({@link StreamsDefaults}: exactly-once v2), for topologies
 * that do far less than the projector:
 * <ol>
 *   <li>read: decode every event of the log and do nothing with it;</li>
 *   <li>forward: decode every event and write it to a topic;</li>
 *   <li>store: decode every event and put one entry per event (keyed by its eventId) into a RocksDB store with its
 *       changelog, behind Streams' record cache; the projector's de-duplication does that much per event.</li>
 * </ol>
 * Each reads the whole log from its start in its own consumer group; events/s is measured from the moment a tenth
 * of the log is committed until all of it is (the start-up and the first compilation are left out), or over the
 * whole log from the start when it is so short that both were seen at once.
 */
final class CeilingBench {
    /** One reference topology's result. */
    record Result(String topology, long events, double seconds, double eventsPerSecond, double streamThreadMicrosPerEvent) {
    }

    private CeilingBench() {
    }

    /** Runs the three topologies one after the other over the log as it is now; prints and returns their rows. */
    static List<Result> run(String bootstrap, Path stateDir, Map<String, ?> overrides, PrintStream out) throws Exception {
        long events;
        try (Admin admin = Admin.create(KafkaClients.config(bootstrap, KafkaClients.connection(overrides)))) {
            events = ProjectorRebuild.eventCount(admin);
            int partitions = admin.describeTopics(List.of(Topics.EVENTS.name())).allTopicNames().get().get(Topics.EVENTS.name())
                    .partitions().size();
            admin.createTopics(List.of(new NewTopic("bench-ceiling-forward", partitions, (short) 1))).all().get();
        }
        List<Result> rows = List.of(
                measure("read: decode every event", read(), "read", bootstrap, stateDir, overrides, events),
                measure("forward: decode, write every event to a topic", forward(), "forward", bootstrap, stateDir, overrides, events),
                measure("store: decode, one store entry per event (RocksDB, changelog, record cache)", store(), "store", bootstrap,
                        stateDir, overrides, events));
        out.println();
        out.println("| reference topology (exactly-once v2, same broker, log and settings) | events | seconds | events/s | stream thread CPU µs per event |");
        out.println("|---|---:|---:|---:|---:|");
        for (Result r : rows) {
            double cpu = r.streamThreadMicrosPerEvent();
            out.printf(Locale.ROOT, "| %s | %,d | %.1f | %,.0f | %s |%n", r.topology(), r.events(), r.seconds(), r.eventsPerSecond(),
                    Double.isNaN(cpu) ? "–" : String.format(Locale.ROOT, "%.1f", cpu));
        }
        return rows;
    }

    private static Topology read() {
        Topology t = source();
        t.addProcessor("read", () -> new Processor<String, Event, Void, Void>() {
            @Override
            public void process(Record<String, Event> record) {
                if (record.value() != null && record.value().getEventId() == null) {
                    throw new IllegalStateException("an event without an id");
                }
            }
        }, "events");
        return t;
    }

    private static Topology forward() {
        Topology t = source();
        t.addProcessor("forward", () -> new Processor<String, Event, String, Event>() {
            private ProcessorContext<String, Event> context;

            @Override
            public void init(ProcessorContext<String, Event> context) {
                this.context = context;
            }

            @Override
            public void process(Record<String, Event> record) {
                context.forward(record);
            }
        }, "events");
        t.addSink("out", "bench-ceiling-forward", Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer(), "forward");
        return t;
    }

    private static Topology store() {
        Topology t = source();
        t.addProcessor("store", () -> new Processor<String, Event, Void, Void>() {
            private KeyValueStore<String, Long> ids;

            @Override
            public void init(ProcessorContext<Void, Void> context) {
                ids = context.getStateStore("ceiling-event-ids");
            }

            @Override
            public void process(Record<String, Event> record) {
                if (record.value() != null) {
                    ids.put(record.value().getEventId(), record.value().getOccurredAt().toEpochMilli());
                }
            }
        }, "events");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("ceiling-event-ids"), Serdes.String(), Serdes.Long())
                .withCachingEnabled(), "store");
        return t;
    }

    private static Topology source() {
        Topology t = new Topology();
        t.addSource("events", Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(), Topics.EVENTS.name());
        return t;
    }

    private static Result measure(String name, Topology topology, String id, String bootstrap, Path stateDir, Map<String, ?> overrides,
                                  long events) throws Exception {
        String app = "bench-ceiling-" + id;
        KafkaStreams streams = new KafkaStreams(topology, StreamsDefaults.properties(app, bootstrap, stateDir, 1, overrides));
        long started = System.nanoTime();
        StreamsDefaults.start(streams, app);
        long tenth = events / 10;
        long[] tenthAt = {0};
        StreamThreadCpu.Reading[] cpuAt = {StreamThreadCpu.read(streams), null}; // from the start, and from the first tenth
        try (Admin admin = Admin.create(KafkaClients.config(bootstrap, KafkaClients.connection(overrides)))) {
            boolean done = ProjectorRebuild.awaitCaughtUp(admin, app, Duration.ofMillis(20), Duration.ofMinutes(30), processed -> {
                if (tenthAt[0] == 0 && processed >= tenth) {
                    tenthAt[0] = System.nanoTime();
                    cpuAt[1] = StreamThreadCpu.read(streams);
                }
            });
            long now = System.nanoTime();
            StreamThreadCpu.Reading cpuNow = StreamThreadCpu.read(streams);
            if (!done || streams.state() == KafkaStreams.State.ERROR) {
                throw new IllegalStateException(name + ": did not read the " + events + " events of the log, state " + streams.state());
            }
            if (now - tenthAt[0] < Duration.ofMillis(100).toNanos()) {
                // a log so short that its first tenth and its end were seen (nearly) at once: the whole time from the start
                double seconds = (now - started) / 1e9;
                return new Result(name, events, seconds, events / seconds, StreamThreadCpu.microsPerEvent(cpuAt[0], cpuNow, events));
            }
            double seconds = (now - tenthAt[0]) / 1e9;
            return new Result(name, events - tenth, seconds, (events - tenth) / seconds,
                    StreamThreadCpu.microsPerEvent(cpuAt[1], cpuNow, events - tenth));
        } finally {
            StreamsDefaults.close(streams, Duration.ofSeconds(30));
        }
    }
}
