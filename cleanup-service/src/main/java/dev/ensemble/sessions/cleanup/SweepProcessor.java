package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.RetirementView;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The sweeps of one partition's accounts. Input: the retirement views (key {@code <account>/<sessionId>}),
 * kept with the time each session is next due; and cleanup commands (key: an account, or {@code *} for every
 * account of the partition). A wall-clock punctuator sweeps every account of the partition every sweep
 * interval; a command sweeps at once. Each sweep ({@link SweepPlanner}) reads the account's due sessions,
 * earliest due first, and forwards a SessionDeletionRequested (requestedBy system, requesterId cleanup,
 * source service:cleanup, the reason and the runs of the view) for each session it finds deletable. The
 * requests and the new due times are committed together (exactly-once).
 */
final class SweepProcessor implements Processor<String, Object, String, Event> {
    private static final Logger LOG = LoggerFactory.getLogger(SweepProcessor.class);
    /** The source of every request the sweeps make. */
    static final String SOURCE = "service:cleanup";

    private final CleanupConfig config;
    private ProcessorContext<String, Event> context;
    private KeyValueStore<String, RetirementView> views;
    private KeyValueStore<String, Long> schedule;
    private KeyValueStore<String, String> due;
    private KeyValueStore<String, Long> accounts;

    /**
     * The counter of the deletions its sweeps ask for, by {@code reason} ({@code retired}, {@code idle}, {@code node-idle},
     * {@code retry}); what the projector's guard then decides is counted there ({@code ensemble.deletions}).
     */
    static final String REQUESTS = "ensemble.cleanup.deletions.requested";
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;

    SweepProcessor(CleanupConfig config) {
        this.config = config;
    }

    @Override
    public void init(ProcessorContext<String, Event> context) {
        this.context = context;
        this.views = context.getStateStore(CleanupTopology.VIEWS);
        this.schedule = context.getStateStore(CleanupTopology.SCHEDULE);
        this.due = context.getStateStore(CleanupTopology.DUE);
        this.accounts = context.getStateStore(CleanupTopology.ACCOUNTS);
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.of(context.appConfigs());
        if (config.cleanSessions()) {
            context.schedule(config.sweepInterval(), PunctuationType.WALL_CLOCK_TIME, t -> sweepAll(Instant.ofEpochMilli(t)));
        }
    }

    @Override
    public void process(Record<String, Object> record) {
        dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, CleanupTopology.SWEEPS);
        Object v = record.value();
        if (v instanceof RetirementView view) {
            held(record.key(), view);
        } else if (v instanceof CleanupCommand command) {
            Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
            if (!config.cleanSessions()) {
                LOG.info("sweep {} asked by {} not run: {} is off", command.getCommandId(), command.getRequestedBy(),
                        CleanupConfig.CLEAN_SESSIONS);
            } else if (command.getAccount() == null) {
                sweepAll(now);
            } else {
                sweep(command.getAccount(), now);
            }
        }
        // a tombstone (null) on either topic means nothing here
    }

    /** Keeps a newer view and schedules the session at its nextDueAt (a deleted one is forgotten). */
    private void held(String key, RetirementView view) {
        RetirementView old = views.get(key);
        if (old != null && old.getSequence() >= view.getSequence()) {
            return;
        }
        String account = Keys.accountOf(key);
        if (accounts.get(account) == null) {
            accounts.put(account, 0L);
        }
        if (view.getDeleted()) {
            views.delete(key);
            lookAt(account, view.getSessionId(), null);
            return;
        }
        views.put(key, view);
        lookAt(account, view.getSessionId(), view.getNextDueAt());
    }

    private void sweepAll(Instant now) {
        List<String> all = new ArrayList<>();
        try (KeyValueIterator<String, Long> it = accounts.all()) {
            it.forEachRemaining(kv -> all.add(kv.key));
        }
        for (String account : all) {
            sweep(account, now);
        }
    }

    /** One sweep of one account at {@code now}. */
    void sweep(String account, Instant now) {
        List<RetirementView> dueViews = new ArrayList<>();
        List<String> stale = new ArrayList<>();
        String prefix = Keys.prefix(account);
        try (KeyValueIterator<String, String> it = due.prefixScan(prefix, new StringSerializer())) {
            while (it.hasNext() && dueViews.size() < config.maxLookedAt()) {
                var kv = it.next();
                if (dueMillis(kv.key, prefix) > now.toEpochMilli()) {
                    break;
                }
                RetirementView v = views.get(Keys.of(account, kv.value));
                if (v == null) {
                    stale.add(kv.value);
                } else {
                    dueViews.add(v);
                }
            }
        }
        for (String sessionId : stale) {
            lookAt(account, sessionId, null);
        }
        SweepPlanner.Plan plan = SweepPlanner.plan(dueViews, now, config);
        for (SweepPlanner.Request r : plan.requests()) {
            Event e = Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(account).setSpace(r.space())
                    .setOccurredAt(now).setRecordedAt(now).setSource(SOURCE)
                    .setPayload(SessionDeletionRequested.newBuilder().setSessionId(r.sessionId()).setRequestedBy(Requester.system)
                            .setRequesterId("cleanup").setReason(r.reason()).setRunIds(new ArrayList<>(r.runIds())).build())
                    .build();
            context.forward(new Record<>(account, e, now.toEpochMilli()));
            io.micrometer.core.instrument.Counter.builder(REQUESTS).description("session deletions the cleanup's sweeps asked for")
                    .tag("reason", r.reason()).register(meters).increment();
        }
        for (Map.Entry<String, Instant> next : plan.lookAt().entrySet()) {
            lookAt(account, next.getKey(), next.getValue());
        }
        accounts.put(account, now.toEpochMilli());
        if (plan.lookedAt() > 0) {
            LOG.info("sweep of {}: looked at {} sessions, asked to delete {}", account, plan.lookedAt(), plan.requests().size());
        }
    }

    /** Schedules the session at {@code at} (null: not at all), replacing its earlier time. */
    private void lookAt(String account, String sessionId, Instant at) {
        DueIndex.lookAt(schedule, due, Keys.of(account, sessionId), at, millis -> dueKey(account, millis, sessionId), sessionId);
    }

    /** {@code <account>/<due millis, 15 digits>/<sessionId>}: one account's due sessions in due order. */
    static String dueKey(String account, long millis, String sessionId) {
        return Keys.prefix(account) + String.format("%015d", millis) + "/" + sessionId;
    }

    private static long dueMillis(String key, String prefix) {
        return Long.parseLong(key.substring(prefix.length(), prefix.length() + 15));
    }
}
