package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.RunFacts;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The stores the event intake, the deletion workflow and the retirement view share, and how they become the plain
 * {@link RetirementRules.Facts} of a session. Every read is of the account's own keys.
 */
final class DeletionStores {
    final SessionStore sessions;
    final KeyValueStore<String, RunRecord> runs;
    final KeyValueStore<String, Event> taskStates;
    final KeyValueStore<String, Event> computerStates;
    final KeyValueStore<String, String> computerSessions;
    final KeyValueStore<String, DeletionState> deletions;

    DeletionStores(ProcessingContext context) {
        this.sessions = new SessionStore(context);
        this.runs = context.getStateStore(StoreNames.RUNS);
        this.taskStates = context.getStateStore(StoreNames.TASK_STATES);
        this.computerStates = context.getStateStore(StoreNames.COMPUTER_STATES);
        this.computerSessions = context.getStateStore(StoreNames.COMPUTER_SESSIONS);
        this.deletions = context.getStateStore(StoreNames.DELETION_STATES);
    }

    SessionView session(String account, String sessionId) {
        return sessions.get(account, sessionId);
    }

    DeletionState deletion(String account, String sessionId) {
        return deletions.get(Keys.of(account, sessionId));
    }

    static String computerSessionKey(String account, String computerId, String sessionId) {
        return Keys.of(account, computerId) + "\n" + sessionId;
    }

    /** Notes that the session ran on each of its computers (idempotent). */
    void indexComputers(SessionView s) {
        for (String c : s.getComputerIds()) {
            String key = computerSessionKey(s.getAccount(), c, s.getSessionId());
            if (computerSessions.get(key) == null) {
                computerSessions.put(key, "");
            }
        }
    }

    /** The ids of the sessions that ran on the computer. */
    List<String> sessionsOn(String account, String computerId) {
        List<String> out = new ArrayList<>();
        String prefix = Keys.of(account, computerId) + "\n";
        try (KeyValueIterator<String, String> it = computerSessions.prefixScan(prefix, new StringSerializer())) {
            while (it.hasNext()) {
                out.add(it.next().key.substring(prefix.length()));
            }
        }
        return out;
    }

    /**
     * Every agent session id the session's runs reported, oldest first, and the view's newest, from the session's run
     * facts ({@link #runFacts}).
     */
    static List<String> agentSessionIds(SessionView s, Map<String, RunFacts> runFacts) {
        Set<String> ids = new LinkedHashSet<>();
        for (RunView r : s.getRuns()) {
            RunFacts f = runFacts.get(r.getRunId());
            if (f != null) {
                ids.addAll(f.getAgentSessionIds());
            }
        }
        if (s.getAgentSessionId() != null) {
            ids.add(s.getAgentSessionId());
        }
        return new ArrayList<>(ids);
    }

    /** The facts of each run of the session (its {@link RunRecord}) by run id, each read once; runs without any left out. */
    Map<String, RunFacts> runFacts(SessionView s) {
        Map<String, RunFacts> out = new HashMap<>();
        for (RunView r : s.getRuns()) {
            RunRecord run = runs.get(Keys.of(s.getAccount(), r.getRunId()));
            if (run != null && run.facts() != null) {
                out.put(r.getRunId(), run.facts());
            }
        }
        return out;
    }

    /**
     * The plain facts of a session for {@link RetirementRules}, from what was read of it already: its run facts
     * ({@link #runFacts}) and its deletion state ({@link #deletion}, null when none).
     */
    RetirementRules.Facts facts(SessionView s, Map<String, RunFacts> runFacts, DeletionState d) {
        String account = s.getAccount();
        List<RetirementRules.Run> runs = new ArrayList<>();
        Integer keepDays = null;
        Instant nextRunAt = null;
        for (RunView r : s.getRuns()) {
            runs.add(new RetirementRules.Run(r.getRunId(), r.getStatus(), r.getClaimedAt(), r.getStartedAt(), r.getEndedAt()));
            RunFacts f = runFacts.get(r.getRunId());
            if (f != null) {
                if (f.getKeepDays() != null) {
                    keepDays = f.getKeepDays();
                }
                if (f.getNextRunAt() != null) {
                    nextRunAt = f.getNextRunAt();
                }
            }
        }
        List<RetirementRules.Task> tasks = new ArrayList<>();
        for (SessionTaskView t : s.getTasks()) {
            tasks.add(task(account, t, runFacts));
        }
        List<RetirementRules.Computer> computers = new ArrayList<>();
        for (String c : s.getComputerIds()) {
            computers.add(computer(account, c));
        }
        RetirementRules.Pending pending = null;
        if (s.getDeleting() && d != null && d.getFirstRequestId() != null) {
            pending = new RetirementRules.Pending(new HashSet<>(d.getOwedComputerIds()), d.getLastAttemptAt(), d.getFailedAt());
        }
        return new RetirementRules.Facts(s.getSessionId(), s.getKind(), s.getSourceRef(), s.getDeleted(), s.getDeleting(), runs,
                tasks, computers, keepDays, nextRunAt, s.getLastActiveAt(), pending);
    }

    private RetirementRules.Task task(String account, SessionTaskView t, Map<String, RunFacts> runFacts) {
        String sourceRef = null;
        Event latest = t.getTaskId() == null ? null : taskStates.get(Keys.of(account, t.getTaskId()));
        if (latest != null) {
            TaskChanged tc = (TaskChanged) latest.getPayload();
            sourceRef = tc.getSourceRef();
        }
        if (sourceRef == null) {
            boolean allNode = !t.getRunIds().isEmpty();
            for (String runId : t.getRunIds()) {
                RunFacts f = runFacts.get(runId);
                allNode &= f != null && f.getSourceRef() != null && f.getSourceRef().startsWith("node:");
            }
            sourceRef = allNode ? "node:" : null;
        }
        boolean person = sourceRef == null || !sourceRef.startsWith("node:");
        if (latest != null) {
            TaskChanged tc = (TaskChanged) latest.getPayload();
            return new RetirementRules.Task(t.getTaskId(), tc.getStatus().name(), tc.getPinned(), person, tc.getCompletedAt(),
                    tc.getDeletedAt(), latest.getOccurredAt());
        }
        return new RetirementRules.Task(t.getTaskId(), t.getStatus(), t.getPinned(), person, t.getCompletedAt(), t.getDeletedAt(), null);
    }

    RetirementRules.Computer computer(String account, String computerId) {
        Event e = computerStates.get(Keys.of(account, computerId));
        if (e == null) {
            return new RetirementRules.Computer(computerId, false, false, 0, null);
        }
        ComputerStatus cs = (ComputerStatus) e.getPayload();
        Integer del = cs.getCapabilities().get("sessionDelete");
        return new RetirementRules.Computer(computerId, true, cs.getOnline(), del == null ? 0 : del, e.getOccurredAt());
    }

    /**
     * The time of the newest fact of the session: its last activity, its tasks' and computers' newest
     * changes, and its deletion's times. The retirement view is evaluated as of then, so it is a function of
     * the facts alone. {@code d}: the session's deletion state ({@link #deletion}), null when none.
     */
    static Instant asOf(SessionView s, RetirementRules.Facts f, DeletionState d) {
        Instant t = s.getLastActiveAt();
        for (RetirementRules.Task task : f.tasks()) {
            t = RetirementRules.latest(t, task.changedAt());
        }
        for (RetirementRules.Computer c : f.computers()) {
            t = RetirementRules.latest(t, c.reportedAt());
        }
        t = RetirementRules.latest(t, s.getDeletedAt());
        if (d != null) {
            for (Instant x : new Instant[]{d.getAcceptedAt(), d.getLastAttemptAt(), d.getFailedAt(), d.getDeletedAt(), d.getLastSkipAt()}) {
                t = RetirementRules.latest(t, x);
            }
        }
        return t;
    }
}
