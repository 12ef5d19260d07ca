package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.CorpusView;
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

    /**
     * Rarity tables (guide §4): per account and computer, the document frequencies of the last 2,000 tasks'
     * terms and anchors. Key: {@code <account>/<computerId>}. Records can be several MiB (max.message.bytes
     * {@value #LARGE_RECORD_BYTES}).
     */
    public static final Topic<String, CorpusView> CORPUS_VIEW =
            new Topic<>("sessions.view.corpus", Serdes.String(), AvroSerde.of(CorpusView.class), true);

    /** The largest record of a topic that carries whole rarity tables. */
    public static final int LARGE_RECORD_BYTES = 16 * 1024 * 1024;

    /** Serde of the event log's values, shared so every module decodes with the same schema history. */
    public static Serde<Event> eventSerde() {
        return EVENTS.valueSerde();
    }
}
