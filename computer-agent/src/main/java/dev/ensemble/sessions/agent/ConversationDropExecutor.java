package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.assistant.AssistantDrops;
import dev.ensemble.sessions.agent.assistant.AssistantSessions;
import dev.ensemble.sessions.agent.assistant.AssistantStore;
import dev.ensemble.sessions.agent.assistant.ChatLocks;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.Event;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Carries out the conversation deletions accepted for this computer (guide §6 "Deleting a chat deletes its session":
 * each of the person's computers that runs assistant turns drops that chat's session, "after any turn of that chat
 * still running there has ended"). Like {@link DeletionExecutor}, it reads the event log's partition of this
 * computer's account (read-committed, from its own committed position, else from the start, so a computer that was
 * away when the request was accepted drops the chat when it starts) and, for each {@code ConversationDeletionAccepted}
 * written by the projector's guard ({@code source service:projector}) that lists this computer:
 * <ol>
 *   <li>waits for the chat's running turn to end (the chat's lock, {@link ChatLocks}, shared with the
 *       {@code assistant-turn} command's process through its lock file), at most {@link #DEFAULT_TURN_WAIT};</li>
 *   <li>drops the chat ({@link AssistantDrops#drop}: the agent's session and retired ones, the chat's own folder, the
 *       store entry);</li>
 *   <li>answers {@code ConversationDroppedOnComputer}: ok (nothing left counts as dropped) with the removed paths and
 *       the sessions {@code keptInAgent} (an agent it never deletes from), or not ok with the error (a turn still
 *       running after the wait, an I/O error: the projector asks again every 5 minutes while the computer is online).</li>
 * </ol>
 * The answer's eventId is named by the computer and the accepted event it answers
 * ({@code dropped-on-computer/<computer>/<eventId of the ConversationDeletionAccepted>}), and the position is committed
 * only after the answers are written, so a second delivery of the same event (a restart in between) drops nothing more
 * and answers with the same id; the request asked again (appended anew when the computer comes back, with an id of its
 * own) gets an answer of its own, so a drop that failed the first time is not lost as a duplicate when it succeeds. When the
 * answers cannot be written, it goes back to the committed position and tries again every 5 seconds.
 */
public final class ConversationDropExecutor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConversationDropExecutor.class);
    /** How long a drop waits for a running turn of the chat before it answers not ok (asked again later). */
    public static final Duration DEFAULT_TURN_WAIT = Duration.ofMinutes(10);

    private final ImportConfig config;
    private final AssistantStore store;
    private final AgentStoreDeleter deleter;
    private final ChatLocks locks;
    private final Duration turnWait;
    private final EventFactory events;
    private final AccountLogAnswers answers;

    /**
     * @param clientProperties the cluster's client properties (security settings) for its consumer
     * @param config           this computer's account and id, and its clock
     * @param store            this computer's assistant sessions
     * @param deleter          the agents' stores to delete from
     * @param locks            the chats' locks, shared with the turns
     * @param turnWait         how long to wait for a running turn of the chat
     * @param sink             where the answers go (the agent's producer)
     */
    public ConversationDropExecutor(String bootstrapServers, Map<String, ?> clientProperties, ImportConfig config, AssistantStore store,
                                    AgentStoreDeleter deleter, ChatLocks locks, Duration turnWait, EventSink sink) {
        this.config = Objects.requireNonNull(config, "config");
        this.store = Objects.requireNonNull(store, "store");
        this.deleter = Objects.requireNonNull(deleter, "deleter");
        this.locks = Objects.requireNonNull(locks, "locks");
        this.turnWait = Objects.requireNonNull(turnWait, "turnWait");
        this.events = new EventFactory(config);
        // a drop waiting for a running turn is interrupted when it still waits 5 s after stop()
        this.answers = new AccountLogAnswers(bootstrapServers, clientProperties, config, "conversation-drops", "dropping conversations",
                this::handle, sink, Duration.ofSeconds(5));
    }

    /** Starts reading on a thread of its own. */
    public void start() {
        answers.start();
        log.info("computer {} drops the assistant conversations deleted for it", config.computerId());
    }

    /**
     * Drops what an accepted conversation deletion asks of this computer and returns the answer, or null when the event
     * asks nothing of it (another type, account or computer, or not the projector's decision).
     */
    Event handle(Event e) {
        if (e == null) {
            return null; // a projector generation's handover marker
        }
        if (!(e.getPayload() instanceof ConversationDeletionAccepted a) || !config.account().equals(e.getAccount())
                || !DeletionExecutor.DECIDER.equals(e.getSource()) || !a.getComputerIds().contains(config.computerId())) {
            return null;
        }
        String key = a.getConversationKey();
        AssistantDrops.Dropped d = drop(key);
        if (d.confirmed()) {
            log.info("dropped conversation {} for request {}: {} ({} paths){}", key, a.getRequestId(), d.outcome(), d.removedCount(),
                    d.keptInAgent().isEmpty() ? "" : ", kept in the agent: " + d.keptInAgent());
        } else {
            log.warn("could not drop conversation {} for request {}: {}", key, a.getRequestId(), d.error());
        }
        List<String> kept = new ArrayList<>();
        d.keptInAgent().forEach(r -> kept.add(r.sessionId()));
        return events.event("dropped-on-computer/" + config.computerId() + "/" + e.getEventId(),
                config.clock().instant().truncatedTo(ChronoUnit.MILLIS),
                ConversationDroppedOnComputer.newBuilder().setConversationKey(key).setRequestId(a.getRequestId())
                        .setComputerId(config.computerId()).setOk(d.confirmed()).setError(d.confirmed() ? null : d.error())
                        .setKeptInAgent(kept).setRemovedPaths(new ArrayList<>(d.removedPaths())).build());
    }

    /** The chat's lock first (waiting for its running turn), then the store: a turn ending needs the store too. */
    private AssistantDrops.Dropped drop(String key) {
        ChatLocks.Held held;
        try {
            held = locks.tryHold(key, turnWait);
        } catch (InterruptedException ie) {
            throw new AccountLogAnswers.Stopping();
        } catch (RuntimeException lockFile) {
            return failed(key, AssistantDrops.Outcome.FAILED, "the chat's lock: " + lockFile.getMessage());
        }
        if (held == null) {
            return failed(key, AssistantDrops.Outcome.TURN_RUNNING, "a turn of the chat is still running after " + turnWait);
        }
        try (held) {
            return store.with((AssistantSessions s) -> new AssistantDrops(s, deleter, locks, config.computerId()).drop(key, Duration.ZERO));
        } catch (RuntimeException storeBusy) {
            return failed(key, AssistantDrops.Outcome.FAILED, "the assistant sessions store: " + storeBusy.getMessage());
        }
    }

    private AssistantDrops.Dropped failed(String key, AssistantDrops.Outcome outcome, String why) {
        return new AssistantDrops.Dropped(key, config.computerId(), outcome, null, null, List.of(), List.of(), List.of(), false, false, why);
    }

    /**
     * Stops reading and closes the consumer: a drop under way finishes first; one still waiting for a running turn after
     * 5 seconds is cut short, neither answered nor committed (the next start reads it again).
     */
    public void stop() {
        answers.stop();
    }

    @Override
    public void close() {
        stop();
    }
}
