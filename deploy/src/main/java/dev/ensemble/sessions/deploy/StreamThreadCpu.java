package dev.ensemble.sessions.deploy;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.ThreadMetadata;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The CPU time of one Kafka Streams application's stream threads in this JVM, for the benchmarks: a figure of the work
 * per event that the other threads of the JVM (the embedded broker, the compilers) and other programs on the machine
 * change far less than they change the wall-clock rate. The threads are those the application names as its own
 * ({@link KafkaStreams#metadataForLocalThreads()}).
 */
final class StreamThreadCpu {
    private StreamThreadCpu() {
    }

    /** The CPU nanoseconds of each stream thread (by thread id) at one moment. */
    record Reading(Map<Long, Long> nanosByThread) {
    }

    /**
     * The CPU time so far of each of {@code streams}' live stream threads, or null where the JVM does not measure
     * threads' CPU time or the application has no thread (yet).
     */
    static Reading read(KafkaStreams streams) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            return null;
        }
        if (!threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        Set<String> names = streams.metadataForLocalThreads().stream().map(ThreadMetadata::threadName).collect(Collectors.toSet());
        Map<Long, Long> byThread = new HashMap<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && names.contains(t.getThreadName())) {
                long cpu = threads.getThreadCpuTime(t.getThreadId());
                if (cpu >= 0) {
                    byThread.put(t.getThreadId(), cpu);
                }
            }
        }
        return byThread.isEmpty() ? null : new Reading(Map.copyOf(byThread));
    }

    /**
     * Microseconds of CPU per event between two readings, or NaN when either is missing, or when a thread of the first
     * is gone at the second (Streams replaced a failed thread: its CPU time left with it, so the sum would be too low).
     */
    static double microsPerEvent(Reading before, Reading after, long events) {
        if (before == null || after == null || events <= 0 || !after.nanosByThread().keySet().containsAll(before.nanosByThread().keySet())) {
            return Double.NaN;
        }
        long used = 0;
        for (var e : after.nanosByThread().entrySet()) {
            used += e.getValue() - before.nanosByThread().getOrDefault(e.getKey(), 0L);
        }
        return used / 1e3 / events;
    }
}
