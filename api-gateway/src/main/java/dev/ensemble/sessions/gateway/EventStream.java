package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import io.javalin.http.sse.SseClient;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code GET /api/events/stream?after=CURSOR}: a live server-sent-events stream of the caller's account's events
 * (DESIGN.md §7); the request must accept {@code text/event-stream} (an EventSource does). A cursor is {@code <partition>-<offset>} of the event in {@code sessions.events}; each event is sent
 * with {@code id:} its cursor, {@code event:} its type and {@code data:} its JSON form. The stream starts after
 * {@code after} (or the {@code Last-Event-ID} header, which wins, as a browser's EventSource sends it on reconnect), or
 * at the beginning of the log without either; {@code after=end} starts after the log's end as it is now (only new events); so a client that reconnects with its last cursor misses nothing and sees
 * nothing twice. A malformed cursor, one of another partition, or one beyond the end of the log is answered 400 in
 * JSON before the stream opens ({@link #check}). Each subscriber gets its own consumer (no group) that assigns only
 * the account's partition, seeks, and keeps the account's records; a comment line every idle second keeps the
 * connection open and notices a client that left. Each subscriber holds one HTTP server thread while connected. Records that do not decode are skipped, and
 * so is a later copy of an eventId the gateway has read earlier in the log (a client that posted an event again).
 */
final class EventStream implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);
    private final String bootstrapServers;
    private final Map<String, ?> clientProperties;
    private final SessionEventsFeed feed;
    private volatile boolean closed;

    /** @param feed the gateway's reading of the whole log: where it has read to, where each eventId's first copy is */
    EventStream(String bootstrapServers, Map<String, ?> clientProperties, SessionEventsFeed feed) {
        this.bootstrapServers = bootstrapServers;
        this.clientProperties = clientProperties;
        this.feed = feed;
    }

    /** The cursor {@code after=end}: the stream starts with the events that come after the log's end as it is now. */
    static final String END = "end";

    /** A parsed cursor. */
    record Cursor(int partition, long offset) {
        static Cursor parse(String s) {
            int dash = s.indexOf('-');
            try {
                if (dash > 0) {
                    Cursor c = new Cursor(Integer.parseInt(s.substring(0, dash)), Long.parseLong(s.substring(dash + 1)));
                    if (c.offset() >= 0) return c;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw ApiError.badRequest("a stream cursor looks like '<partition>-<offset>' (an event's id), not '" + s + "'");
        }

        @Override
        public String toString() {
            return partition + "-" + offset;
        }
    }

    /**
     * Checks a subscriber's cursor before its stream opens: null when there is none (start at the beginning), else the
     * cursor. Throws a 400 {@link ApiError} when it is malformed or of another partition than the account's, and a 400
     * {@code cursor_ahead} when it is at or beyond the end of the log (a cursor the log never gave out, e.g. one kept
     * from before the log was reset), with {@code latest}, the cursor of the log's end to resume after.
     */
    Cursor check(String account, String cursor) {
        if (cursor == null || cursor.isBlank()) return null;
        Map<TopicPartition, Long> read = feed.positions(); // every partition, once the feed has polled
        int partitions = read.isEmpty() ? feed.logEnd().size() : read.size();
        int partition = Keys.accountPartition(account, partitions);
        if (cursor.trim().equalsIgnoreCase(END)) {
            // only what comes from now on (a web page that has just read the sessions): after the log's last event
            long end = feed.logEnd().get(new TopicPartition(Topics.EVENTS.name(), partition));
            return end == 0 ? null : new Cursor(partition, end - 1);
        }
        Cursor from = Cursor.parse(cursor.trim());
        if (from.partition() != partition) {
            throw ApiError.badRequest("cursor " + from + " is not of your account's partition " + partition + "; start again without a cursor");
        }
        TopicPartition tp = new TopicPartition(Topics.EVENTS.name(), partition);
        Long readTo = read.get(tp);
        if (readTo != null && from.offset() < readTo) {
            return from; // the gateway has read the log past it (a reconnect's usual case): no need to ask the broker
        }
        long end = feed.logEnd().get(tp);
        if (from.offset() >= end) {
            if (end == 0) {
                throw new ApiError(400, "cursor_ahead", "cursor " + from + " is ahead of the log, which holds nothing in your"
                        + " account's partition yet (a cursor from a log since reset?); start again without a cursor");
            }
            Cursor latest = new Cursor(partition, end - 1);
            throw new ApiError(400, "cursor_ahead", "cursor " + from + " is ahead of the log, which ends at " + latest
                    + " in your account's partition (a cursor from a log since reset?); resume after " + latest
                    + " for what comes next, or start again without a cursor for everything").with("latest", latest.toString());
        }
        return from;
    }

    /** Serves one subscriber until it disconnects, on the request's own thread (one server thread per subscriber). */
    void serve(SseClient client, String account, Cursor from) {
        Deserializer<Event> events = Topics.eventSerde().deserializer();
        try (KafkaConsumer<String, byte[]> c = consumer("stream")) {
            int n = c.partitionsFor(Topics.EVENTS.name(), Duration.ofSeconds(30)).size();
            int partition = Keys.accountPartition(account, n);
            if (from != null && from.partition() != partition) {
                // checked before the stream opened; only a change of the topic's partitions since then gets here
                client.sendEvent("error", Gateway.error("bad_request", "cursor " + from + " is not of your account's partition "
                        + partition + "; start again without a cursor").toString(), null);
                client.close();
                return;
            }
            TopicPartition tp = new TopicPartition(Topics.EVENTS.name(), partition);
            c.assign(List.of(tp));
            if (from == null) c.seekToBeginning(List.of(tp));
            else c.seek(tp, from.offset() + 1);
            while (!client.terminated() && !closed) {
                boolean sent = false;
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofSeconds(1))) {
                    if (client.terminated()) break; // the client left: nothing more is sent (each send would log a warning)
                    if (!account.equals(r.key())) continue;
                    Event e;
                    try {
                        e = events.deserialize(r.topic(), r.value());
                    } catch (RuntimeException ex) {
                        continue;
                    }
                    if (e == null || !account.equals(e.getAccount())) continue;
                    Long first = feed.buffers().firstPosition(account, e.getEventId());
                    if (first != null && first != SessionEventBuffers.position(partition, r.offset())) continue; // a copy posted again
                    client.sendEvent(EventTypes.typeOf(e), EventJson.toJson(e).toString(), new Cursor(partition, r.offset()).toString());
                    sent = true;
                }
                if (!sent && !client.terminated()) client.sendComment("keep-alive");
            }
        } catch (WakeupException e) {
            // the client left
        } catch (RuntimeException e) {
            LOG.warn("event stream for {} ended", account, e);
        } finally {
            client.close();
        }
    }

    /** A consumer of its own (no group, nothing committed) that reads only committed records. */
    private KafkaConsumer<String, byte[]> consumer(String purpose) {
        Map<String, Object> p = dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "ensemble-gateway-" + purpose + "-" + UUID.randomUUID());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false); // reading a missing topic never creates it
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public void close() {
        closed = true;
    }
}
