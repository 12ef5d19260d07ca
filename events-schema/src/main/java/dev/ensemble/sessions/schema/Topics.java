package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementView;
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

    /**
     * Partitions of every topic the system creates on one computer; one account always lands in one partition.
     * Two: every partition is a Streams task with its own RocksDB instance per store, and on one machine with one
     * or two stream threads more tasks only add flushes and compactions (the projector benchmark, docs/benchmarks.md:
     * 923 events/s with 6 partitions, 2,758 with 2, 3,000 with 1). A cluster that runs several instances creates
     * its topics with more.
     */
    public static final int DEFAULT_PARTITIONS = 2;

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
     * Retirement of each session (guide §5 and §6): its tasks' retirement, runs queued or going, its computers,
     * idle deadlines, the deletion in progress, and when the cleanup looks at it next. Written by the projector.
     * Key: {@code <account>/<sessionId>}, partitioned by account; deleted sessions stay, marked.
     */
    public static final Topic<String, RetirementView> RETIREMENT_VIEW =
            new Topic<>("sessions.view.retirement", Serdes.String(), AvroSerde.of(RetirementView.class), true);

    /**
     * The deletion audit (guide §6): one record per deletion request, folded from the deletion events by the
     * projector. Key: {@code <account>/<requestId>}, partitioned by account; never deleted.
     */
    public static final Topic<String, DeletionAudit> DELETION_AUDIT =
            new Topic<>("sessions.view.deletion-audit", Serdes.String(), AvroSerde.of(DeletionAudit.class), true);

    /**
     * Assistant conversations (guide section 5): chats, routines, node conversations, ask lines and one-offs, their
     * agent sessions per computer, the ask line, and the conversation's deletion with each computer's drop. Written by
     * the projector; read by the gateway and the cleanup (its minute tick). Key: {@code <account>/<conversationKey>},
     * partitioned by account; deleted conversations stay, marked.
     */
    public static final Topic<String, ConversationView> ASSISTANT_VIEW =
            new Topic<>("sessions.view.assistant", Serdes.String(), AvroSerde.of(ConversationView.class), true);

    /**
     * Commands to the cleanup service ({@code POST /api/cleanup/sweep}). Key: the account to sweep, or
     * {@code *} (one record per partition) for every account. Kept one day.
     */
    public static final Topic<String, CleanupCommand> CLEANUP_COMMANDS =
            new Topic<>("sessions.cleanup.commands", Serdes.String(), AvroSerde.of(CleanupCommand.class), false);

    /**
     * Rarity tables (guide §4): per account and computer, the document frequencies of the last 2,000 tasks'
     * terms and anchors. Key: {@code <account>/<computerId>}. Records can be several MiB (max.message.bytes
     * {@value #LARGE_RECORD_BYTES}).
     */
    public static final Topic<String, CorpusView> CORPUS_VIEW =
            new Topic<>("sessions.view.corpus", Serdes.String(), AvroSerde.of(CorpusView.class), true);

    /**
     * The session-choice config the choice service last appended to {@link #EVENTS} (as {@code ChoiceConfigChanged},
     * one copy per partition, in the same transaction as this record), so that at a start it appends again only when
     * the file's config differs or the log has more partitions than it covered. Key {@code current}; the value is the
     * appended event, with the number of partitions covered in header {@code partitions}. Compacted; one writer.
     */
    public static final Topic<String, Event> CHOICE_CONFIG =
            new Topic<>("sessions.choice-config", Serdes.String(), AvroSerde.of(Event.class), true);

    /**
     * Which projector generation serves ({@link Generations}): key {@code serving} → its number ("2"); key
     * {@code building} → the number of a generation being built, or a tombstone. Compacted; written with the
     * handover markers of {@link #EVENTS} in one transaction.
     */
    public static final Topic<String, String> GENERATIONS =
            new Topic<>("sessions.generations", Serdes.String(), Serdes.String(), true);

    /** The largest record of a topic that carries whole rarity tables. */
    public static final int LARGE_RECORD_BYTES = 16 * 1024 * 1024;

    /** Serde of the event log's values, shared so every module decodes with the same schema history. */
    public static Serde<Event> eventSerde() {
        return EVENTS.valueSerde();
    }
}
