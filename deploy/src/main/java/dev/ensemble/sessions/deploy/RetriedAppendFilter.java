package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;

/**
 * Drops the console lines of one known, harmless exchange between a transactional producer and the embedded broker
 * (transactions v2, Kafka 4.x, KAFKA-18202): right after a transaction commits, the producer's first batches of the
 * next one can reach a partition before the broker has finished the last one there. The broker refuses them
 * ({@code CONCURRENT_TRANSACTIONS}, or {@code OutOfOrderSequenceException} "Expected sequence 0 for transactions v2
 * idempotent producer with no existing state", logged by ReplicaManager at ERROR; and when the first of several batches
 * in flight was refused so, the next ones with "Out of order sequence number … N (incoming seq. number), M (current end
 * sequence number)", a gap, also at ERROR) and the producer sends them again, in order ({@code Sender} at WARN:
 * "retrying"); nothing is lost (a producer that cannot recover fails its transaction, which Kafka Streams logs at ERROR
 * itself). Only those events are dropped: the broker's refusal with exactly those exceptions (the gap only: an incoming
 * sequence number past the current end), and the producer's warnings that it is retrying those two errors. Any other error, and a
 * producer that gives up, still reach the console. Used in {@code log4j2.xml} as {@code <RetriedAppend/>}.
 */
@Plugin(name = "RetriedAppend", category = Node.CATEGORY, elementType = Filter.ELEMENT_TYPE, printObject = true)
public final class RetriedAppendFilter extends ConsoleNoiseFilter {
    private RetriedAppendFilter() {
    }

    /** The filter (no settings). */
    @PluginFactory
    public static RetriedAppendFilter create() {
        return new RetriedAppendFilter();
    }

    /** The broker's words for a batch whose predecessors of the same producer were not appended (yet). */
    private static final java.util.regex.Pattern GAP = java.util.regex.Pattern.compile("Out of order sequence number for producer \\d+ "
            + "at offset \\d+ in partition \\S+: (\\d+) \\(incoming seq\\. number\\), (\\d+) \\(current end sequence number\\)");

    @Override
    boolean isNoise(LogEvent event) {
        String logger = event.getLoggerName();
        String message = message(event);
        if ("kafka.server.ReplicaManager".equals(logger)) {
            Throwable t = event.getThrown();
            if (!(message.startsWith("[ReplicaManager broker=") && message.contains("Error processing append operation on partition")
                    && t instanceof org.apache.kafka.common.errors.OutOfOrderSequenceException)) {
                return false;
            }
            String why = String.valueOf(t.getMessage());
            if (why.contains("for transactions v2 idempotent producer with no existing state")) {
                return true;
            }
            java.util.regex.Matcher gap = GAP.matcher(why);
            return gap.matches() && Long.parseLong(gap.group(1)) > Long.parseLong(gap.group(2)) + 1;
        }
        if ("org.apache.kafka.clients.producer.internals.Sender".equals(logger)) {
            return message.contains("Got error produce response") && message.contains(", retrying (")
                    && (message.endsWith("Error: CONCURRENT_TRANSACTIONS") || message.endsWith("Error: OUT_OF_ORDER_SEQUENCE_NUMBER"));
        }
        return false;
    }
}
