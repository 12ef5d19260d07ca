package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.assistant.DropRules;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.ConversationView;
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
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The minute tick over one partition's assistant conversations (guide §5, §6). Input: the conversation views (key
 * {@code <account>/<conversationKey>}, the newest by {@code sequence} kept; a deleted one is forgotten once no
 * computer's drop is left to ask again) and the event
 * log, of which only {@code ComputerStatus} is read (whether each computer is online, for the drops asked again; a
 * computer coming online has its account's conversations being deleted looked at on the next tick). A changed view is
 * looked at on the next tick; each look ({@link ConversationSweepPlanner}) forwards the events it
 * plans and says when to look again. An event id appended for a conversation is remembered while the conversation is
 * held, so a later look (before the projector's answer shows in the view) appends nothing twice; the ids are
 * name-based, so a look after a lost state asks with the same id (the guard then skips it). The events and the
 * stores are committed together (exactly-once).
 */
final class ConversationSweepProcessor implements Processor<String, Object, String, Event> {
    private static final Logger LOG = LoggerFactory.getLogger(ConversationSweepProcessor.class);
    /** The counter of the conversation deletions the tick asks for, by {@code reason}. */
    static final String REQUESTS = "ensemble.cleanup.conversations.requested";
    /** The counter of the asks the tick cleared (no report within 2 hours). */
    static final String CLEARED = "ensemble.cleanup.asks.cleared";
    /** How many appended ids are remembered per conversation. */
    private static final int REMEMBERED = 16;

    private final CleanupConfig config;
    private final IdleRules.Config idle;
    private ProcessorContext<String, Event> context;
    private KeyValueStore<String, ConversationView> views;
    private KeyValueStore<String, Long> schedule;
    private KeyValueStore<String, String> due;
    private KeyValueStore<String, String> computers;
    private KeyValueStore<String, String> asked;
    private io.micrometer.core.instrument.MeterRegistry meters = dev.ensemble.sessions.streams.ServiceMeters.NONE;

    ConversationSweepProcessor(CleanupConfig config, IdleRules.Config idle) {
        this.config = config;
        this.idle = idle;
    }

    @Override
    public void init(ProcessorContext<String, Event> context) {
        this.context = context;
        this.views = context.getStateStore(CleanupTopology.CONVERSATIONS);
        this.schedule = context.getStateStore(CleanupTopology.CONVERSATION_SCHEDULE);
        this.due = context.getStateStore(CleanupTopology.CONVERSATION_DUE);
        this.computers = context.getStateStore(CleanupTopology.COMPUTERS);
        this.asked = context.getStateStore(CleanupTopology.CONVERSATION_ASKED);
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.of(context.appConfigs());
        context.schedule(config.conversationTick(), PunctuationType.WALL_CLOCK_TIME, t -> tick(Instant.ofEpochMilli(t)));
    }

    @Override
    public void process(Record<String, Object> record) {
        dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, CleanupTopology.CONVERSATION_SWEEPS);
        Object v = record.value();
        if (v instanceof ConversationView view) {
            held(record.key(), view);
        } else if (v instanceof Event e && e.getPayload() instanceof ComputerStatus s) {
            String key = Keys.of(e.getAccount(), s.getComputerId());
            String was = computers.get(key);
            computers.put(key, s.getOnline() ? "online" : "offline");
            if (s.getOnline() && !"online".equals(was)) {
                cameOnline(e.getAccount());
            }
        }
        // other events, and tombstones, mean nothing here
    }

    /** Keeps a newer view and looks at it on the next tick (a deleted one is forgotten). */
    private void held(String key, ConversationView view) {
        ConversationView old = views.get(key);
        if (old != null && old.getSequence() >= view.getSequence()) {
            return;
        }
        if (view.getDeleted() && (view.getDeletion() == null
                || view.getDeletion().getComputers().stream().noneMatch(ConversationSweepPlanner::pending))) {
            forget(key); // deleted, and no computer's drop left to ask again
            return;
        }
        views.put(key, view);
        lookAt(key, Instant.ofEpochMilli(context.currentSystemTimeMs()));
    }

    /** A computer of {@code account} came online: its conversations being deleted are looked at on the next tick. */
    private void cameOnline(String account) {
        Instant now = Instant.ofEpochMilli(context.currentSystemTimeMs());
        List<String> deleting = new ArrayList<>();
        try (KeyValueIterator<String, ConversationView> it = views.prefixScan(Keys.prefix(account), new StringSerializer())) {
            it.forEachRemaining(kv -> {
                if (kv.value.getDeletion() != null) {
                    deleting.add(kv.key);
                }
            });
        }
        deleting.forEach(key -> lookAt(key, now));
    }

    /** Looks at every conversation due at {@code now}, earliest first. */
    void tick(Instant now) {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, String> it = due.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                if (Long.parseLong(kv.key.substring(0, 15)) > now.toEpochMilli()) {
                    break;
                }
                keys.add(kv.value);
            }
        }
        int requests = 0;
        for (String key : keys) {
            ConversationView v = views.get(key);
            if (v == null) {
                lookAt(key, null);
                continue;
            }
            Map<String, DropRules.Computer> known = v.getDeletion() == null ? Map.of() : computersOf(v.getAccount());
            ConversationSweepPlanner.Plan plan = ConversationSweepPlanner.plan(v, known, now, idle);
            Set<String> done = new LinkedHashSet<>(remembered(key));
            for (Event e : ConversationSweepPlanner.events(v, plan, now)) {
                if (!done.add(e.getEventId())) {
                    continue; // appended before: the projector's answer has not shown in the view yet
                }
                context.forward(new Record<>(v.getAccount(), e, now.toEpochMilli()));
                if (e.getPayload() instanceof ConversationDeletionRequested r) {
                    requests++;
                    io.micrometer.core.instrument.Counter.builder(REQUESTS).description("conversation deletions the cleanup asked for")
                            .tag("reason", r.getReason()).register(meters).increment();
                } else {
                    io.micrometer.core.instrument.Counter.builder(CLEARED).description("asks cleared with no report within 2 hours")
                            .register(meters).increment();
                }
            }
            remember(key, done);
            if (v.getDeleted() && plan.nextAt() == null) {
                forget(key); // deleted, its drops expired: nothing will be asked again
                continue;
            }
            Instant next = plan.nextAt();
            if (next != null && next.isBefore(now.plus(config.conversationTick()))) {
                next = now.plus(config.conversationTick()); // not before the next tick
            }
            lookAt(key, next);
        }
        if (requests > 0) {
            LOG.info("conversation tick: looked at {}, asked to delete {}", keys.size(), requests);
        }
    }

    private void forget(String key) {
        views.delete(key);
        asked.delete(key);
        lookAt(key, null);
    }

    private Map<String, DropRules.Computer> computersOf(String account) {
        Map<String, DropRules.Computer> out = new HashMap<>();
        String prefix = Keys.prefix(account);
        try (KeyValueIterator<String, String> it = computers.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(kv -> {
                String id = kv.key.substring(prefix.length());
                out.put(id, new DropRules.Computer(id, true, "online".equals(kv.value), true, null));
            });
        }
        return out;
    }

    private List<String> remembered(String key) {
        String s = asked.get(key);
        return s == null || s.isEmpty() ? List.of() : Arrays.asList(s.split(" "));
    }

    private void remember(String key, Set<String> ids) {
        List<String> all = new ArrayList<>(ids);
        if (all.isEmpty()) {
            return;
        }
        asked.put(key, String.join(" ", all.subList(Math.max(0, all.size() - REMEMBERED), all.size())));
    }

    /** Schedules the conversation at {@code at} (null: not until its view changes), replacing its earlier time. */
    private void lookAt(String key, Instant at) {
        DueIndex.lookAt(schedule, due, key, at, millis -> dueKey(millis, key), key);
    }

    /** {@code <due millis, 15 digits>/<account>/<conversationKey>}: the partition's conversations in due order. */
    static String dueKey(long millis, String key) {
        return String.format("%015d", millis) + "/" + key;
    }
}
