package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * Every topic of the system (DESIGN.md section 3). Source topics are keyed by account so that all of one
 * account's events are totally ordered in one partition; view topics are keyed {@code <account>/<id>} and
 * partitioned by the account part (see {@link Keys#accountPartition}), so consumers can co-partition them
 * with the event log.
 */
public final class Topics {
    private Topics() {
    }

    /** Partitions of every topic the system creates; one account always lands in one partition. */
    public static final int DEFAULT_PARTITIONS = 6;

    /** The event log: every run, engine event, task change, choice and deletion. Key: account. */
    public static final Topic<String, Event> EVENTS =
            new Topic<>("sessions.events", Serdes.String(), AvroSerde.of(Event.class), false);

    /**
     * Events that could not be decoded or are invalid, with the reason in the record headers
     * ({@code __streams.errors.*} written by Kafka Streams, {@code ensemble.error.*} by the gateway). The
     * value is the original bytes.
     */
    public static final Topic<byte[], byte[]> DEAD_LETTER =
            new Topic<>("sessions.events.dlq", Serdes.ByteArray(), Serdes.ByteArray(), false);

    /** Session chains (guide section 1). Key: {@code <account>/<sessionId>}; a tombstone never occurs (deleted sessions stay, marked). */
    public static final Topic<String, SessionView> SESSIONS_VIEW =
            new Topic<>("sessions.view.sessions", Serdes.String(), AvroSerde.of(SessionView.class), true);

    /** Serde of the event log's values, shared so every module decodes with the same schema history. */
    public static Serde<Event> eventSerde() {
        return EVENTS.valueSerde();
    }
}
