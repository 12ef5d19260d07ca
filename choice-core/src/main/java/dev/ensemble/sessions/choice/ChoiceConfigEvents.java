package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.Event;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

/**
 * The session-choice config as events of the log (DESIGN.md §4 "views a pure function of the log"): a change of
 * the config is a {@code ChoiceConfigChanged} (version, hash, the whole effective config as canonical JSON), and every
 * fold that depends on the config (the projector's corpus statistics, the choice service's decisions) takes it from
 * the log, never from a file. Before the first one of a partition, the built-in defaults apply.
 *
 * <p>The config is global and the log is partitioned by account: the config publisher appends one copy to every
 * partition of {@code sessions.events}, all in one transaction, with account {@value #ACCOUNT} and source
 * {@value #SOURCE}; so each partition's fold meets the change at one point of that partition's order, the same point
 * in the live run and in every replay. Pure: no Kafka, no files.
 */
public final class ChoiceConfigEvents {
    /** The envelope's account (and record key) of a config change: it concerns every account. */
    public static final String ACCOUNT = "*";
    /** The envelope's space of a config change. */
    public static final String SPACE = "*";
    /** The only source whose config changes are folded ({@link #config}); the config publisher's. */
    public static final String SOURCE = "service:choice-config";

    private ChoiceConfigEvents() {
    }

    /**
     * The event that makes {@code config} the one in force, at {@code at} (truncated to milliseconds); a fresh
     * eventId per call (a config changed back to an earlier one is a new change).
     */
    public static Event changed(SessionChoiceConfig config, Instant at) {
        Instant ms = at.truncatedTo(ChronoUnit.MILLIS);
        ChoiceConfigChanged payload = ChoiceConfigChanged.newBuilder().setVersion(config.version())
                .setHash(ConfigLoader.hash(config)).setJson(ConfigLoader.toJson(config)).build();
        return Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(ACCOUNT).setSpace(SPACE)
                .setOccurredAt(ms).setRecordedAt(ms).setSource(SOURCE).setPayload(payload).build();
    }

    /**
     * The config an event of the log puts in force: its JSON merged over the defaults and checked. The JSON is the
     * whole config, so the defaults matter only for a field added by a later release (which then gets its default).
     *
     * @throws ConfigLoader.InvalidConfigException when the event is not the publisher's or its JSON is not a
     *                                             valid config; the fold then applies the defaults
     */
    public static SessionChoiceConfig config(Event e) throws ConfigLoader.InvalidConfigException {
        if (!(e.getPayload() instanceof ChoiceConfigChanged c)) {
            throw new IllegalArgumentException("not a ChoiceConfigChanged: " + e.getPayload().getClass().getSimpleName());
        }
        if (!SOURCE.equals(e.getSource())) {
            throw new ConfigLoader.InvalidConfigException("a config change comes only from " + SOURCE + ", not " + e.getSource(), null);
        }
        return ConfigLoader.merge(SessionChoiceConfig.defaults(), c.getJson());
    }

    private static final java.util.Map<String, SessionChoiceConfig> PARSED = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The config of a JSON a fold stored ({@link ConfigLoader#toJson} of a config it applied), or the defaults for
     * null; memoised, since a fold asks on every event it analyses.
     *
     * @throws IllegalStateException when the JSON is not a valid config (a fold stores only checked ones)
     */
    public static SessionChoiceConfig ofStored(String json) {
        if (json == null) {
            return SessionChoiceConfig.defaults();
        }
        SessionChoiceConfig c = PARSED.get(json);
        if (c != null) {
            return c;
        }
        try {
            c = ConfigLoader.merge(SessionChoiceConfig.defaults(), json);
        } catch (ConfigLoader.InvalidConfigException e) {
            throw new IllegalStateException("a stored session-choice config is invalid: " + e.getMessage(), e);
        }
        if (PARSED.size() > 64) {
            PARSED.clear();
        }
        PARSED.put(json, c);
        return c;
    }
}
