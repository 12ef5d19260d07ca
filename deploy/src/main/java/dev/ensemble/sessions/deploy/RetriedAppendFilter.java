package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;
import org.apache.logging.log4j.core.filter.AbstractFilter;

/**
 * Drops the console lines of one known, harmless exchange between a transactional producer and the embedded broker
 * (transactions v2, Kafka 4.x, KAFKA-18202): right after a transaction commits, the producer's first batches of the
 * next one can reach a partition before the broker has finished the last one there. The broker refuses them
 * ({@code CONCURRENT_TRANSACTIONS}, or {@code OutOfOrderSequenceException} "Expected sequence 0 for transactions v2
 * idempotent producer with no existing state", logged by ReplicaManager at ERROR) and the producer sends them again
 * ({@code Sender} at WARN: "retrying"); nothing is lost. Only those events are dropped: the broker's refusal with
 * exactly that exception, and the producer's warnings that it is retrying those two errors. Any other error, and a
 * producer that gives up, still reach the console. Used in {@code log4j2.xml} as {@code <RetriedAppend/>}.
 */
@Plugin(name = "RetriedAppend", category = Node.CATEGORY, elementType = Filter.ELEMENT_TYPE, printObject = true)
public final class RetriedAppendFilter extends AbstractFilter {
    private RetriedAppendFilter() {
        super(Result.DENY, Result.NEUTRAL);
    }

    /** The filter (no settings). */
    @PluginFactory
    public static RetriedAppendFilter create() {
        return new RetriedAppendFilter();
    }

    @Override
    public Result filter(LogEvent event) {
        return isRetriedAppend(event) ? onMatch : onMismatch;
    }

    static boolean isRetriedAppend(LogEvent event) {
        String logger = event.getLoggerName();
        String message = event.getMessage() == null ? "" : event.getMessage().getFormattedMessage();
        if ("kafka.server.ReplicaManager".equals(logger)) {
            Throwable t = event.getThrown();
            return message.startsWith("[ReplicaManager broker=") && message.contains("Error processing append operation on partition")
                    && t instanceof org.apache.kafka.common.errors.OutOfOrderSequenceException
                    && String.valueOf(t.getMessage()).contains("for transactions v2 idempotent producer with no existing state");
        }
        if ("org.apache.kafka.clients.producer.internals.Sender".equals(logger)) {
            return message.contains("Got error produce response") && message.contains(", retrying (")
                    && (message.endsWith("Error: CONCURRENT_TRANSACTIONS") || message.endsWith("Error: OUT_OF_ORDER_SEQUENCE_NUMBER"));
        }
        return false;
    }
}
