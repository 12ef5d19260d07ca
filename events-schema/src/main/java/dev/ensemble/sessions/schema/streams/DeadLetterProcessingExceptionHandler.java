package dev.ensemble.sessions.schema.streams;

import dev.ensemble.sessions.schema.InvalidEventException;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The processing exception handler of every Streams application here ({@link StreamsDefaults}): bad input goes to the
 * dead-letter topic with its reason and processing goes on; a bug is undone before its record is dead-lettered.
 * <ul>
 *   <li>An {@link InvalidEventException} (raised before a processor changes anything) or a
 *       {@link RepeatedFailureException}: logged, written to the dead-letter topic with the reason in its headers
 *       (Kafka Streams' {@code __streams.errors.*}), processing continues.</li>
 *   <li>Any other exception from a record's processing: processors change live objects
 *       ({@link WriteBackStore}), so a record that failed half-way may have left part of its change in them. The
 *       first time, the record is remembered (application, topic, partition, offset) and the task fails: with
 *       exactly-once the transaction is aborted, the stream thread is replaced ({@link StreamsDefaults#start}), its
 *       stores are restored from their changelogs and the records since the last commit are processed again.
 *       When the remembered record comes again, the first processor refuses it before any change
 *       ({@link #refuseIfFailedBefore}), or, in an application whose processors do not ask, this handler answers
 *       its second failure: either way it goes to the dead-letter topic as a {@link RepeatedFailureException}
 *       naming the first failure, and the partition goes on.</li>
 *   <li>An exception in a punctuation (no source record): logged, processing continues.</li>
 * </ul>
 * The remembered records live in this JVM: after a restart a record that fails again costs one more task restart.
 */
public class DeadLetterProcessingExceptionHandler extends LogAndContinueProcessingExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterProcessingExceptionHandler.class);
    /** {@code <application>/<topic>/<partition>/<offset>} → the first failure's exception, as text. */
    private static final Map<String, String> FAILED = new ConcurrentHashMap<>();

    private String applicationId = "";

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object id = configs.get(StreamsConfig.APPLICATION_ID_CONFIG);
        applicationId = id == null ? "" : id.toString();
    }

    @Override
    public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
        if (refused(exception) || context.offset() < 0 || context.topic() == null) {
            return super.handleError(context, record, exception);
        }
        String key = key(applicationId, context.topic(), context.partition(), context.offset());
        String first = FAILED.putIfAbsent(key, exception.toString());
        if (first == null) {
            LOG.error("processor {} failed on {}-{}@{} (task {}); the task restarts from its last commit with its stores "
                            + "restored, and the record goes to the dead-letter topic if it fails again",
                    context.processorNodeId(), context.topic(), context.partition(), context.offset(), context.taskId(), exception);
            return Response.fail();
        }
        return super.handleError(context, record, new RepeatedFailureException(context.topic(), context.partition(),
                context.offset(), first, exception));
    }

    private static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvalidEventException || t instanceof RepeatedFailureException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Called by an application's first processor before it changes anything: throws a {@link RepeatedFailureException}
     * when the current record failed before in this application (the handler then dead-letters it). Costs one map
     * look-up per record, none while nothing ever failed.
     */
    public static void refuseIfFailedBefore(ProcessorContext<?, ?> context) {
        if (FAILED.isEmpty()) {
            return;
        }
        context.recordMetadata().ifPresent(m -> {
            String first = FAILED.get(key(context.applicationId(), m.topic(), m.partition(), m.offset()));
            if (first != null) {
                throw new RepeatedFailureException(m.topic(), m.partition(), m.offset(), first, null);
            }
        });
    }

    private static String key(String applicationId, String topic, int partition, long offset) {
        return applicationId + '/' + topic + '/' + partition + '/' + offset;
    }

    /** A record whose processing failed before (a bug, not bad input); the message names the first failure. */
    public static final class RepeatedFailureException extends RuntimeException {
        RepeatedFailureException(String topic, int partition, long offset, String first, Throwable cause) {
            super(topic + "-" + partition + "@" + offset + ": processing failed before (" + first
                    + "); dead-lettered after the task restarted from its last commit", cause);
        }
    }
}
