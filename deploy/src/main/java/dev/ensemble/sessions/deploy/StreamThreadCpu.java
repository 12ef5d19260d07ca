package dev.ensemble.sessions.deploy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/**
 * The CPU time of one Kafka Streams application's stream threads in this JVM (threads named
 * {@code <application.id>-<process id>-StreamThread-<n>}, Streams' names when no client id is set), for the benchmarks:
 * a figure of the work per event that the other threads of the JVM (the embedded broker, the compilers) and other
 * programs on the machine change far less than they change the wall-clock rate.
 */
final class StreamThreadCpu {
    private StreamThreadCpu() {
    }

    /**
     * The CPU nanoseconds the live stream threads of {@code applicationId} have used so far, or -1 where the JVM does not
     * measure threads' CPU time. A thread that ended is no longer counted: take both readings while the application runs.
     */
    static long nanos(String applicationId) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            return -1;
        }
        if (!threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
        long sum = 0;
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && isStreamThreadOf(t.getThreadName(), applicationId)) {
                long cpu = threads.getThreadCpuTime(t.getThreadId());
                if (cpu > 0) {
                    sum += cpu;
                }
            }
        }
        return sum;
    }

    /** Whether {@code threadName} is one of {@code applicationId}'s stream threads (not those of an id that starts with it). */
    static boolean isStreamThreadOf(String threadName, String applicationId) {
        return threadName.startsWith(applicationId + "-")
                && STREAM_THREAD.matcher(threadName.substring(applicationId.length() + 1)).matches();
    }

    /** What follows {@code <application.id>-} in a stream thread's name: the process id (a UUID), then the thread. */
    private static final java.util.regex.Pattern STREAM_THREAD =
            java.util.regex.Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-StreamThread-\\d+");

    /** Microseconds of CPU per event between two readings, or NaN when either reading is missing. */
    static double microsPerEvent(long before, long after, long events) {
        return before < 0 || after < 0 || events <= 0 ? Double.NaN : (after - before) / 1e3 / events;
    }
}
