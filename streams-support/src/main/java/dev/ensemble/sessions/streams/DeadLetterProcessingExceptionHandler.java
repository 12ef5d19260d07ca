package dev.ensemble.sessions.streams;

import dev.ensemble.sessions.schema.InvalidEventException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The processing exception handler of every Streams application here ({@link StreamsDefaults}): bad input goes to the
 * dead-letter topic with its reason and processing goes on; a bug is undone before its record is dead-lettered.
 * <ul>
 *   <li>An {@link InvalidEventException} (raised before a processor changes anything) or a
 *       {@link RepeatedFailureException}: logged, written to the dead-letter topic with the reason in its headers
 *       (Kafka Streams' {@code __streams.errors.*}), processing continues.</li>
 *   <li>A failure of the environment (a {@link KafkaException}, which includes Streams' state-store and
 *       serialization errors, or an I/O error): the task fails and the record is tried again after the restart, as
 *       often as it takes; a good event is never dead-lettered for a full disk or a broker away.</li>
 *   <li>Any other exception from a record's processing (a bug): a record that failed half-way may have left part of
 *       its change in the stores (the puts before the failure, its own processor's or an earlier one's). The
 *       first time, the record and the failing processor are remembered (application, processor, topic, partition,
 *       offset) and the task fails: with exactly-once the transaction is aborted, the stream thread is replaced
 *       ({@link StreamsDefaults#start}), its stores are restored from their changelogs and the records since the
 *       last commit are processed again. When the remembered record comes again, the processor that failed refuses
 *       it before any change ({@link #refuseIfFailedBefore}), or, in an application whose processors do not ask,
 *       this handler answers its second failure: either way it goes to the dead-letter topic as a
 *       {@link RepeatedFailureException} naming the first failure, and the other processors and the partition go
 *       on. A task restart waits for the failed thread's consumer session to time out (45 s by default).</li>
 *   <li>An exception in a punctuation (no source record): logged, processing continues.</li>
 * </ul>
 * Not covered: a {@code ClassCastException} in the first processor after a source, and {@code Error}s, which Kafka
 * Streams does not hand to this handler (the thread is replaced and the record tried again). The remembered records
 * live in this JVM: after a restart a record that fails again costs one more task restart.
 */
public class DeadLetterProcessingExceptionHandler extends LogAndContinueProcessingExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterProcessingExceptionHandler.class);
    /** {@code <application>/<processor>/<topic>/<partition>/<offset>} → the first failure's exception, as text. */
    private static final Map<String, String> FAILED = new ConcurrentHashMap<>();

    private String applicationId = "";
    private io.micrometer.core.instrument.MeterRegistry meters = ServiceMeters.NONE;

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object id = configs.get(StreamsConfig.APPLICATION_ID_CONFIG);
        applicationId = id == null ? "" : id.toString();
        meters = ServiceMeters.of(configs);
    }

    @Override
    public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
        if (is(exception, InvalidEventException.class) || is(exception, RepeatedFailureException.class)
                || context.offset() < 0 || context.topic() == null) {
            return counted(super.handleError(context, record, exception), record);
        }
        if (is(exception, KafkaException.class) || is(exception, IOException.class) || is(exception, UncheckedIOException.class)) {
            LOG.error("processor {} failed on {}-{}@{} (task {}) for a reason outside the record; the task restarts from its "
                            + "last commit and tries it again", context.processorNodeId(), context.topic(), context.partition(),
                    context.offset(), context.taskId(), exception);
            return Response.fail();
        }
        String key = key(applicationId, context.processorNodeId(), context.topic(), context.partition(), context.offset());
        String first = FAILED.putIfAbsent(key, exception.toString());
        if (first == null) {
            LOG.error("processor {} failed on {}-{}@{} (task {}); the task restarts from its last commit with its stores "
                            + "restored, and the record goes to the dead-letter topic if it fails again",
                    context.processorNodeId(), context.topic(), context.partition(), context.offset(), context.taskId(), exception);
            return Response.fail();
        }
        return counted(super.handleError(context, record, new RepeatedFailureException(context.processorNodeId(), context.topic(),
                context.partition(), context.offset(), first, exception)), record);
    }

    /** Counts the dead letters of a response ({@link ServiceMeters#DEAD_LETTERED}, by the record's event type); returns it. */
    private Response counted(Response response, Record<?, ?> record) {
        if (response.deadLetterQueueRecords() != null && !response.deadLetterQueueRecords().isEmpty()) {
            ServiceMeters.deadLettered(meters, ServiceMeters.eventType(record == null ? null : record.value()), applicationId);
        }
        return response;
    }

    private static boolean is(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Called by a processor that changes state, before it changes anything: throws a {@link RepeatedFailureException}
     * when the current record failed before in this processor of this application (the handler then dead-letters it
     * for this processor alone; the others still get the record). Costs one map look-up per record, none while
     * nothing ever failed.
     *
     * @param processor the processor's node name in the topology
     */
    public static void refuseIfFailedBefore(ProcessorContext<?, ?> context, String processor) {
        if (FAILED.isEmpty()) {
            return;
        }
        context.recordMetadata().ifPresent(m -> {
            String first = FAILED.get(key(context.applicationId(), processor, m.topic(), m.partition(), m.offset()));
            if (first != null) {
                throw new RepeatedFailureException(processor, m.topic(), m.partition(), m.offset(), first, null);
            }
        });
    }

    /** Forgets every remembered failure (tests that provoke failures, so that they do not reach another test). */
    public static void forgetFailures() {
        FAILED.clear();
    }

    private static String key(String applicationId, String processor, String topic, int partition, long offset) {
        return applicationId + '/' + processor + '/' + topic + '/' + partition + '/' + offset;
    }

    /** A record whose processing failed before (a bug, not bad input); the message names the processor and the first failure. */
    public static final class RepeatedFailureException extends RuntimeException {
        RepeatedFailureException(String processor, String topic, int partition, long offset, String first, Throwable cause) {
            super(topic + "-" + partition + "@" + offset + ": processing failed before in " + processor + " (" + first
                    + "); dead-lettered after the task restarted from its last commit", cause);
        }
    }
}
