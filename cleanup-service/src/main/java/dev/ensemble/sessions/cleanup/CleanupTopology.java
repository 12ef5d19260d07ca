package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.Generation;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.RetirementView;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The cleanup service's topology, built here for both {@link CleanupService} and the tests:
 * <pre>
 * sessions.view.retirement ──┐
 *                            ├→ sweeps ──→ sessions.events (SessionDeletionRequested, key account)
 * sessions.cleanup.commands ─┘
 * sessions.view.assistant ───┐
 *                            ├→ conversation-sweeps ──→ sessions.events (ConversationDeletionRequested, TurnEnded)
 * sessions.events ───────────┘   (ComputerStatus only)
 * </pre>
 * Every source is keyed (and partitioned) by account, so one task holds an account's views, commands and computers.
 */
public final class CleanupTopology {
    /** The node name of the sweep processor. */
    static final String SWEEPS = "sweeps";
    private CleanupTopology() {
    }

    /** {@code <account>/<sessionId>} → the newest RetirementView of a session not deleted. */
    public static final String VIEWS = "cleanup-views";
    /** {@code <account>/<sessionId>} → when it is next looked at (epoch millis). */
    public static final String SCHEDULE = "cleanup-schedule";
    /** {@code <account>/<due millis>/<sessionId>} → sessionId: the due index, in due order per account. */
    public static final String DUE = "cleanup-due";
    /** account → when it was last swept (epoch millis; 0: not yet). */
    public static final String ACCOUNTS = "cleanup-accounts";

    /** The node name of the conversation sweep processor. */
    static final String CONVERSATION_SWEEPS = "conversation-sweeps";
    /** {@code <account>/<conversationKey>} → the newest ConversationView of a conversation not deleted. */
    public static final String CONVERSATIONS = "cleanup-conversations";
    /** {@code <account>/<conversationKey>} → when it is next looked at (epoch millis). */
    public static final String CONVERSATION_SCHEDULE = "cleanup-conversation-schedule";
    /** {@code <due millis>/<account>/<conversationKey>} → its key: the partition's due conversations in due order. */
    public static final String CONVERSATION_DUE = "cleanup-conversation-due";
    /** {@code <account>/<conversationKey>} → the ids of the events appended for it, space-separated (newest 16). */
    public static final String CONVERSATION_ASKED = "cleanup-conversation-asked";
    /** {@code <account>/<computerId>} → {@code online} or {@code offline}, from its newest ComputerStatus. */
    public static final String COMPUTERS = "cleanup-computers";

    /** The topology with {@code config} and RocksDB stores, as {@link CleanupService} runs it. */
    public static Topology build(CleanupConfig config) {
        return build(config, false);
    }

    /**
     * The topology with {@code config}; {@code inMemoryStores}: the same with in-memory stores, for long
     * simulations where writing every store to disk on every commit dominates.
     */
    public static Topology build(CleanupConfig config, boolean inMemoryStores) {
        return build(config, inMemoryStores, Generation.FIRST);
    }

    /** The topology on the retirement and assistant views of projector generation {@code g}. */
    public static Topology build(CleanupConfig config, boolean inMemoryStores, Generation g) {
        java.util.function.Function<String, org.apache.kafka.streams.state.KeyValueBytesStoreSupplier> store =
                name -> inMemoryStores ? Stores.inMemoryKeyValueStore(name) : Stores.persistentKeyValueStore(name);
        Topology t = new Topology();
        t.addSource("retirement-source", Topics.RETIREMENT_VIEW.keySerde().deserializer(),
                Topics.RETIREMENT_VIEW.valueSerde().deserializer(), g.view(Topics.RETIREMENT_VIEW).name());
        t.addSource("commands-source", Topics.CLEANUP_COMMANDS.keySerde().deserializer(),
                Topics.CLEANUP_COMMANDS.valueSerde().deserializer(), Topics.CLEANUP_COMMANDS.name());
        t.addProcessor(SWEEPS, () -> new SweepProcessor(config), "retirement-source", "commands-source");
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(VIEWS), Serdes.String(),
                AvroSerde.of(RetirementView.class)), SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(SCHEDULE), Serdes.String(), Serdes.Long()), SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(DUE), Serdes.String(), Serdes.String()), SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(ACCOUNTS), Serdes.String(), Serdes.Long()), SWEEPS);
        t.addSink("requests-sink", Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(), Topics.EVENTS.valueSerde().serializer(),
                SWEEPS);

        t.addSource("assistant-source", Topics.ASSISTANT_VIEW.keySerde().deserializer(),
                Topics.ASSISTANT_VIEW.valueSerde().deserializer(), g.view(Topics.ASSISTANT_VIEW).name());
        t.addSource("computers-source", Topics.EVENTS.keySerde().deserializer(), Topics.EVENTS.valueSerde().deserializer(),
                Topics.EVENTS.name());
        t.addProcessor(CONVERSATION_SWEEPS, () -> new ConversationSweepProcessor(config, IdleRules.Config.defaults()),
                "assistant-source", "computers-source");
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(CONVERSATIONS), Serdes.String(),
                AvroSerde.of(ConversationView.class)), CONVERSATION_SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(CONVERSATION_SCHEDULE), Serdes.String(), Serdes.Long()), CONVERSATION_SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(CONVERSATION_DUE), Serdes.String(), Serdes.String()), CONVERSATION_SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(CONVERSATION_ASKED), Serdes.String(), Serdes.String()), CONVERSATION_SWEEPS);
        t.addStateStore(Stores.keyValueStoreBuilder(store.apply(COMPUTERS), Serdes.String(), Serdes.String()), CONVERSATION_SWEEPS);
        t.addSink("conversation-requests-sink", Topics.EVENTS.name(), Topics.EVENTS.keySerde().serializer(),
                Topics.EVENTS.valueSerde().serializer(), CONVERSATION_SWEEPS);
        return t;
    }
}
