package dev.ensemble.sessions.deploy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The CPU time of one Kafka Streams application's stream threads in this JVM, for the benchmarks: a figure of the work
 * per event that the other threads of the JVM (the embedded broker, the compilers) and other programs on the machine
 * change far less than they change the wall-clock rate. The threads are found by Streams' names:
 * {@code <client.id>-StreamThread-<n>}, where the client id is {@code <application.id>-<process id>} unless
 * {@code client.id} is set.
 */
final class StreamThreadCpu {
    private StreamThreadCpu() {
    }

    /** The CPU nanoseconds of each stream thread (by thread id) at one moment; null where it could not be read. */
    record Reading(Map<Long, Long> nanosByThread) {
    }

    /**
     * The CPU time so far of each live stream thread of the application with these Streams settings, or null where the
     * JVM does not measure threads' CPU time or no thread has such a name.
     */
    static Reading read(String applicationId, Map<String, ?> settings) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            return null;
        }
        if (!threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        Object clientId = settings == null ? null : settings.get("client.id");
        Map<Long, Long> byThread = new HashMap<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && isStreamThreadOf(t.getThreadName(), applicationId, clientId == null ? null : clientId.toString())) {
                long cpu = threads.getThreadCpuTime(t.getThreadId());
                if (cpu >= 0) {
                    byThread.put(t.getThreadId(), cpu);
                }
            }
        }
        return byThread.isEmpty() ? null : new Reading(Map.copyOf(byThread));
    }

    /**
     * Whether {@code threadName} is one of the application's stream threads: {@code <clientId>-StreamThread-<n>} when a
     * client id is set, else {@code <applicationId>-<process id, a UUID>-StreamThread-<n>} (not the threads of an
     * application whose id starts with this one).
     */
    static boolean isStreamThreadOf(String threadName, String applicationId, String clientId) {
        if (clientId != null) {
            return threadName.startsWith(clientId + "-") && NUMBERED.matcher(threadName.substring(clientId.length() + 1)).matches();
        }
        return threadName.startsWith(applicationId + "-")
                && STREAM_THREAD.matcher(threadName.substring(applicationId.length() + 1)).matches();
    }

    private static final Pattern NUMBERED = Pattern.compile("StreamThread-\\d+");
    /** What follows {@code <application.id>-} in a stream thread's name: the process id (a UUID), then the thread. */
    private static final Pattern STREAM_THREAD =
            Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-StreamThread-\\d+");

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
