package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Carries out accepted deletions on this computer (guide §6: "each computer deletes the agent's own saved
 * history"): it reads the event log's partition of this computer's account (read-committed, from its own
 * committed position, else from the start) and, for each {@code SessionDeletionAccepted} written by the
 * projector's guard ({@code source service:projector}) that lists this computer, deletes the named agent
 * sessions from the stores ({@link AgentStoreDeleter}) and answers with a {@code SessionDeletedOnComputer}:
 * ok with the removed paths (a session already gone counts as deleted), or not ok with the error. Nothing is
 * deleted for any other event, account or computer.
 *
 * <p>The answer's eventId is named by the computer and the request ({@code deleted-on-computer/<computer>/<request>}),
 * and the position is committed only after the answers are written, so a restart in between deletes again
 * (finding nothing) and answers with the same id. When the answers cannot be written, it goes back to the
 * committed position and tries again every 5 seconds (the reading loop is {@link AccountLogAnswers}, shared with
 * {@link ConversationDropExecutor}).
 */
public final class DeletionExecutor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeletionExecutor.class);
    /** The source of the only deletion decisions a computer acts on. */
    static final String DECIDER = "service:projector";

    private final ImportConfig config;
    private final AgentStoreDeleter deleter;
    private final EventFactory events;
    private final AccountLogAnswers answers;

    /**
     * @param bootstrapServers the Kafka cluster
     * @param config           this computer's account and id, and its clock
     * @param deleter          the stores to delete from
     * @param sink             where the answers go (the agent's producer)
     */
    public DeletionExecutor(String bootstrapServers, ImportConfig config, AgentStoreDeleter deleter, EventSink sink) {
        this(bootstrapServers, Map.of(), config, deleter, sink);
    }

    /**
     * @param clientProperties the cluster's client properties (security settings) for its consumer
     */
    public DeletionExecutor(String bootstrapServers, Map<String, ?> clientProperties, ImportConfig config, AgentStoreDeleter deleter,
                            EventSink sink) {
        this.config = Objects.requireNonNull(config, "config");
        this.deleter = Objects.requireNonNull(deleter, "deleter");
        this.events = new EventFactory(config);
        this.answers = new AccountLogAnswers(bootstrapServers, clientProperties, config, "deletions", "carrying out deletions",
                this::handle, sink, null);
    }

    /** Starts reading on a thread of its own. */
    public void start() {
        answers.start();
        log.info("computer {} carries out the deletions accepted for it", config.computerId());
    }

    /**
     * Deletes what an accepted deletion asks of this computer and returns the answer, or null when the event
     * asks nothing of it (another type, account or computer, or not the projector's decision).
     */
    Event handle(Event e) {
        if (e == null) {
            return null; // a record with no value: a projector generation's handover marker, not an event
        }
        if (!(e.getPayload() instanceof SessionDeletionAccepted a) || !config.account().equals(e.getAccount())
                || !DECIDER.equals(e.getSource()) || !a.getComputerIds().contains(config.computerId())) {
            return null;
        }
        Set<String> ids = new LinkedHashSet<>(a.getAgentSessionIds());
        String agent = a.getAgent();
        String own = agent == null ? null : AgentStoreDeleter.agentSessionIdOf(agent, a.getSessionId());
        if (own != null) {
            ids.add(own);
        }
        AgentStoreDeleter.Result result = agent == null
                ? new AgentStoreDeleter.Result(false, "the accepted deletion does not name the agent", List.of())
                : deleter.delete(agent, ids);
        if (result.ok()) {
            log.info("deleted session {} ({} {}) for request {}: {}", a.getSessionId(), agent, ids, a.getRequestId(),
                    result.removedPaths().isEmpty() ? "nothing was left" : result.removedPaths());
        } else {
            log.warn("could not delete session {} ({} {}) for request {}: {}", a.getSessionId(), agent, ids, a.getRequestId(),
                    result.error());
        }
        return events.event("deleted-on-computer/" + config.computerId() + "/" + a.getRequestId(),
                config.clock().instant().truncatedTo(ChronoUnit.MILLIS),
                SessionDeletedOnComputer.newBuilder().setSessionId(a.getSessionId()).setRequestId(a.getRequestId())
                        .setComputerId(config.computerId()).setOk(result.ok()).setError(result.error())
                        .setRemovedPaths(new ArrayList<>(result.removedPaths())).build());
    }

    /** Stops reading (a deletion under way finishes first) and closes the consumer. */
    public void stop() {
        answers.stop();
    }

    @Override
    public void close() {
        stop();
    }
}
