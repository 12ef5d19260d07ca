package dev.ensemble.sessions.streams;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The production exception handler of every Streams application here ({@link StreamsDefaults}): a record that cannot be
 * serialized or that the cluster refuses goes to the dead-letter topic ({@code errors.dead.letter.queue.topic.name},
 * KIP-1034) with the reason in its headers, and processing goes on; the stream thread is never lost for one record.
 * <ul>
 *   <li>A serialization error (a view the serializer cannot encode): a dead letter with the record's key, no value
 *       (there are no bytes), origin {@code KEY} or {@code VALUE}.</li>
 *   <li>A record refused for good, above all a {@code RecordTooLargeException} from {@link SizeCheckingClientSupplier}
 *       (larger than its topic's {@code max.message.bytes}): a dead letter with the record's key, and its value when
 *       that is at most {@link #VALUE_BYTES} (else no value and {@code ensemble.error.value-omitted}).</li>
 *   <li>The same for the application's own internal topics ({@code <application.id>-…-changelog} and
 *       {@code -repartition}): {@code FAIL}. A store whose changelog lost a record would differ from what a restore
 *       or a standby rebuilds, and a repartition topic that lost one would starve the sub-topology that reads it,
 *       silently; so the task fails, its transaction is aborted and the record is tried again after the restart,
 *       loudly, until the topic takes it. The changelogs are made for records as large as any view
 *       ({@code max.message.bytes} {@code Topics.LARGE_RECORD_BYTES}, {@link StreamsDefaults}).</li>
 *   <li>A retriable error (a broker away, a timeout): {@code RETRY}; the task is restarted from its last commit and
 *       the record produced again, so nothing is lost to an outage.</li>
 *   <li>A record meant for the dead-letter topic itself that fails: logged and dropped (no dead letter of a dead
 *       letter).</li>
 * </ul>
 * Headers: Kafka Streams' own {@code __streams.errors.exception}, {@code .message}, {@code .topic}, {@code .partition},
 * {@code .offset} (the source record being processed, when there is one; a view published by a punctuation has none),
 * and {@code ensemble.error.output-topic} (where the record was going), {@code ensemble.error.output-bytes} (its size),
 * {@code ensemble.error.origin} (serialization errors).
 */
public class DeadLetterProductionExceptionHandler implements ProductionExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterProductionExceptionHandler.class);

    /** The largest value copied into a dead letter, in bytes (the dead-letter topic keeps the broker's default limit). */
    public static final int VALUE_BYTES = 64 * 1024;

    private String deadLetterTopic;
    private String applicationId;
    private io.micrometer.core.instrument.MeterRegistry meters = ServiceMeters.NONE;

    @Override
    public void configure(Map<String, ?> configs) {
        meters = ServiceMeters.of(configs);
        Object topic = configs.get(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG);
        deadLetterTopic = topic == null ? null : topic.toString();
        Object id = configs.get(StreamsConfig.APPLICATION_ID_CONFIG);
        applicationId = id == null ? null : id.toString();
    }

    /** Whether {@code topic} is one of application {@code applicationId}'s changelog or repartition topics. */
    static boolean internal(String applicationId, String topic) {
        return applicationId != null && topic.startsWith(applicationId + "-")
                && (topic.endsWith("-changelog") || topic.endsWith("-repartition"));
    }

    @Override
    public Response handleError(ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
        if (exception instanceof RetriableException) {
            LOG.warn("producing to {} failed for a passing reason ({}); the task restarts from its last commit and produces again",
                    record.topic(), exception.toString());
            return Response.retry();
        }
        if (record.topic().equals(deadLetterTopic) || deadLetterTopic == null) {
            LOG.error("a record for {} was refused ({}) and is dropped", record.topic(), exception.toString());
            return Response.resume();
        }
        int bytes = (record.key() == null ? 0 : record.key().length) + (record.value() == null ? 0 : record.value().length);
        if (internal(applicationId, record.topic())) {
            LOG.error("a record for the internal topic {} (key {}, {} bytes) was refused ({}); the task fails and tries it again, "
                    + "since an internal topic must not lose a record (a store and its changelog would differ)", record.topic(), keyText(record.key()), bytes, exception.toString());
            return Response.fail();
        }
        boolean withValue = record.value() != null && record.value().length <= VALUE_BYTES;
        LOG.error("a record for {} (key {}, {} bytes) was refused and goes to {} instead: {}", record.topic(), keyText(record.key()),
                bytes, deadLetterTopic, exception.toString());
        ProducerRecord<byte[], byte[]> dead = deadLetter(context, record.key(), withValue ? record.value() : null, exception);
        dead.headers().add("ensemble.error.output-topic", utf8(record.topic()));
        dead.headers().add("ensemble.error.output-bytes", utf8(String.valueOf(bytes)));
        if (!withValue && record.value() != null) {
            dead.headers().add("ensemble.error.value-omitted", utf8("larger than " + VALUE_BYTES + " bytes"));
        }
        ServiceMeters.deadLettered(meters, "unknown", applicationId); // the value is bytes here: its type is not read
        return Response.resume(List.of(dead));
    }

    @Override
    public Response handleSerializationError(ErrorHandlerContext context, ProducerRecord record, Exception exception,
                                             SerializationExceptionOrigin origin) {
        if (deadLetterTopic == null || deadLetterTopic.equals(record.topic())) {
            LOG.error("a record for {} could not be serialized ({}) and is dropped", record.topic(), exception.toString());
            return Response.resume();
        }
        byte[] key = record.key() instanceof byte[] b ? b : record.key() == null ? null : utf8(record.key().toString());
        LOG.error("a record for {} (key {}) could not be serialized ({}) and goes to {} instead", record.topic(), keyText(key),
                exception.toString(), deadLetterTopic);
        ProducerRecord<byte[], byte[]> dead = deadLetter(context, key, null, exception);
        dead.headers().add("ensemble.error.output-topic", utf8(record.topic()));
        dead.headers().add("ensemble.error.origin", utf8(origin.name()));
        ServiceMeters.deadLettered(meters, ServiceMeters.eventType(record.value()), applicationId);
        return Response.resume(List.of(dead));
    }

    /** A dead letter with Kafka Streams' reason headers and the source record's headers. */
    private ProducerRecord<byte[], byte[]> deadLetter(ErrorHandlerContext context, byte[] key, byte[] value, Exception exception) {
        ProducerRecord<byte[], byte[]> dead = new ProducerRecord<>(deadLetterTopic, null,
                context.timestamp() < 0 ? null : context.timestamp(), key, value);
        Headers h = dead.headers();
        if (context.headers() != null) {
            context.headers().forEach(h::add);
        }
        h.add("__streams.errors.exception", utf8(exception.getClass().getName()));
        h.add("__streams.errors.message", utf8(String.valueOf(exception.getMessage())));
        h.add("__streams.errors.topic", context.topic() == null ? null : utf8(context.topic()));
        h.add("__streams.errors.partition", utf8(String.valueOf(context.partition())));
        h.add("__streams.errors.offset", utf8(String.valueOf(context.offset())));
        return dead;
    }

    private static String keyText(byte[] key) {
        if (key == null) {
            return "null";
        }
        String s = new String(key, StandardCharsets.UTF_8);
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
