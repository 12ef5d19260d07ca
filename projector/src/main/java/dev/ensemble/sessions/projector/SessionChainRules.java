package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.events.TaskFacts;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.TaskFactsView;
import dev.ensemble.sessions.views.SessionView;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The session-chain rules of the guide's §1, as DESIGN.md §4 states them, folded one event at a time for one
 * account (whose events arrive totally ordered):
 * <ul>
 *   <li>A run with no {@code continueFromJobId} starts a session whose id is the run's id.</li>
 *   <li>A run that continues a run joins that run's session, unless that session is deleted (or being
 *       deleted): then it starts a session of its own that records which session it continues
 *       ({@code continuesSessionId}).</li>
 *   <li>The agent session id is the one in the newest engine event (by occurredAt; ties go to the later
 *       event).</li>
 *   <li>One turn at a time: a run claimed while another run of the session is going (working, waiting or
 *       queued) is queued.</li>
 *   <li>Status: working if a run is working, else waiting, else queued, else idle. Resumable unless the
 *       session is deleted or being deleted, its agent's transcript is gone, or no agent session id is known
 *       yet.</li>
 *   <li>Gone: an engine event with {@code transcriptGone} (the computer found the agent's transcript deleted
 *       outside the system) marks the session gone and not resumable; nothing else changes (its runs, fill and
 *       agent session id stay). {@code goneAt} is the last time it was found gone; a session of the agent's own
 *       transcript ({@code TERMINAL_CHAT}) with a run claimed after that (a prompt of the transcript restored from a
 *       backup or a sync, and used again) is there again: not gone ({@link #gone}). A task session stays gone.</li>
 *   <li>Folders: the session's folder is its first run's; {@code folders} gathers every folder its runs name.</li>
 *   <li>"First" and "latest" follow the events' own times and the chain's order, never arrival order: the first
 *       and latest task are those of the first and last run in the chain's order ({@link #chainOrder}); the latest
 *       report (the session's and each task's) is that of the run whose end occurred last; last active is the
 *       newest occurredAt of its runs' events; a run started at its earliest WORKING report.</li>
 * </ul>
 * <b>A run whose parent is not known yet</b> (its {@code continueFromJobId} names a run not claimed so far),
 * and any status or engine event about a run not claimed so far, is <i>parked</i>: kept aside, invisible in
 * every view, until the awaited run is claimed; then the parked events are applied in their arrival order.
 * A parked run never makes a session of its own, so a parent that arrives late cannot leave one chain split
 * in two, and no view ever shows a guess.
 *
 * <p>Every change raises the session's {@code sequence} by one and is passed to {@code emit}; an engine event's and a
 * status report's change is its fill's ({@link ChainState#putFill}, which counts it and marks the session changed).
 * The state is shaped by what each event changes: a status report changes its run's progress ({@link RunProgress})
 * and its session's fill (the counts of going runs, the last active time), never the stored {@link SessionView}; what
 * follows from the runs (their status and times in the view, the session's status, files changed, latest reports) is
 * derived when the whole view is assembled ({@link SessionAssembly}), by the rules above.
 */
public final class SessionChainRules {
    private SessionChainRules() {
    }

    /** Applies one (already de-duplicated) event. */
    public static void apply(Event e, ChainState state, Consumer<SessionView> emit) {
        Object p = e.getPayload();
        if (p instanceof RunClaimed rc) {
            claim(e, rc, state, emit);
        } else if (p instanceof RunStatusChanged rs) {
            status(e, rs, state, emit);
        } else if (p instanceof EngineEvent ee) {
            engine(e, ee, state, emit);
        } else if (p instanceof SessionDeletionAccepted a) {
            SessionView s = state.session(e.getAccount(), a.getSessionId());
            if (s != null && !s.getDeleted()) {
                s.setDeleting(true);
                s.setResumable(false);
                SessionFill fill = state.fill(e.getAccount(), s.getSessionId());
                boolean cancelled = false;
                for (RunView r : s.getRuns()) {
                    RunProgress run = state.progress(e.getAccount(), r.getRunId());
                    if (run.status().equals(RunStatus.QUEUED.name())) {
                        state.putProgress(e.getAccount(), r.getRunId(), run.cancelled(RunStatus.CANCELLED.name(), e.getOccurredAt()));
                        fill = fill.runStatus(RunStatus.QUEUED.name(), RunStatus.CANCELLED.name());
                        cancelled = true;
                    }
                }
                save(s, state, emit);
                if (cancelled) {
                    state.putFill(e.getAccount(), s.getSessionId(), fill);
                }
            }
        } else if (p instanceof TaskChanged tc) {
            for (String id : state.sessionsOfTask(e.getAccount(), tc.getTaskId())) {
                SessionView s = state.session(e.getAccount(), id);
                for (SessionTaskView t : s.getTasks()) {
                    if (tc.getTaskId().equals(t.getTaskId())) {
                        t.setStatus(tc.getStatus().name());
                        t.setPinned(tc.getPinned());
                        t.setCompletedAt(tc.getCompletedAt());
                        t.setDeletedAt(tc.getDeletedAt());
                    }
                }
                save(s, state, emit);
            }
        } else if (p instanceof SessionDeletionSkipped sk) {
            // the guard left the session alone: nothing changes in the chain
            return;
        } else if (p instanceof SessionDeleted d) {
            SessionView s = state.session(e.getAccount(), d.getSessionId());
            if (s != null && !s.getDeleted()) {
                s.setDeleted(true);
                s.setDeleting(false);
                s.setResumable(false);
                s.setDeletedAt(e.getOccurredAt());
                save(s, state, emit);
            }
        }
    }

    private static void claim(Event e, RunClaimed rc, ChainState state, Consumer<SessionView> emit) {
        String account = e.getAccount();
        if (state.run(account, rc.getRunId()) != null) {
            return; // a run is claimed once; a second claim of the same run id changes nothing
        }
        SessionView session;
        SessionFill fill = SessionFill.started(e.getOccurredAt());
        String parent = rc.getContinueFromJobId();
        if (parent == null) {
            session = newSession(e, rc, rc.getContinuesSessionOf());
        } else {
            RunRef parentRef = state.run(account, parent);
            if (parentRef == null) {
                state.park(account, parent, e);
                return;
            }
            SessionView parentSession = state.session(account, parentRef.getSessionId());
            if (parentSession.getDeleted() || parentSession.getDeleting()) {
                session = newSession(e, rc, parentSession.getSessionId());
            } else {
                session = parentSession;
                fill = state.fill(account, session.getSessionId());
            }
        }
        String status = fill.going() ? RunStatus.QUEUED.name() : RunStatus.WORKING.name();
        RunView run = RunView.newBuilder()
                .setRunId(rc.getRunId())
                .setTaskId(rc.getTaskId())
                .setTitle(rc.getTask() == null ? null : rc.getTask().getTitle())
                .setComputerId(rc.getComputerId())
                .setStatus(status) // as claimed: its progress is the run's own record's (RunProgress)
                .setClaimedAt(e.getOccurredAt())
                .setContinueFromJobId(parent)
                .build();
        session.getRuns().add(run);
        if (session.getGoneAt() != null) {
            session.setGone(gone(session)); // a prompt of its transcript after it went: there again
        }
        if (rc.getModel() != null) {
            session.setModel(rc.getModel());
        }
        if (!session.getComputerIds().contains(rc.getComputerId())) {
            session.getComputerIds().add(rc.getComputerId());
        }
        if (session.getFolder() == null) {
            session.setFolder(rc.getFolder());
        }
        addFolders(session, rc);
        if (session.getAgentSessionId() == null && rc.getAgentSessionId() != null) {
            session.setAgentSessionId(rc.getAgentSessionId());
        }
        addTask(session, e, rc);
        if (rc.getTaskId() != null) {
            state.addSessionOfTask(account, rc.getTaskId(), session.getSessionId());
        }
        firstAndLatest(session);
        touch(session, e.getOccurredAt());
        if (rc.getModel() != null && fill.model() != null) {
            fill = fill.withoutModel(); // the claim's model is the newest: the stored view's holds until an engine event names one
        }
        state.putRun(account, new RunRef(rc.getRunId(), session.getSessionId()), RunProgress.claimed(status));
        save(session, state, emit);
        state.putFill(account, session.getSessionId(), fill.runStatus(null, status).touched(e.getOccurredAt(), 0));
        for (Event parked : state.unpark(account, rc.getRunId())) {
            apply(parked, state, emit);
        }
    }

    /** The run's task joins the session's tasks (a run without a task id is a task of its own); newer facts replace older. */
    private static void addTask(SessionView session, Event e, RunClaimed rc) {
        SessionTaskView task = null;
        if (rc.getTaskId() != null) {
            for (SessionTaskView t : session.getTasks()) {
                if (rc.getTaskId().equals(t.getTaskId())) {
                    task = t;
                }
            }
        }
        if (task == null) {
            task = SessionTaskView.newBuilder().setTaskId(rc.getTaskId()).setRunIds(new ArrayList<>()).setSpace(e.getSpace())
                    .setProjectId(rc.getProject() == null ? null : rc.getProject().getId()).setFilesChanged(new ArrayList<>()).build();
            session.getTasks().add(task);
        }
        task.getRunIds().add(rc.getRunId());
        TaskFacts f = rc.getTask();
        if (f != null) {
            task.setFacts(TaskFactsView.newBuilder().setTitle(f.getTitle()).setDescription(f.getDescription())
                    .setLabels(new ArrayList<>(f.getLabels())).setPage(f.getPage()).setInstructions(f.getInstructions())
                    .setDeliverable(f.getDeliverable()).setMeeting(f.getMeeting()).setParentPage(f.getParentPage())
                    .setLinkedTaskIds(new ArrayList<>(f.getLinkedTaskIds())).build());
        }
    }

    private static SessionView newSession(Event e, RunClaimed rc, String continuesSessionId) {
        return SessionView.newBuilder()
                .setSessionId(rc.getRunId())
                .setAccount(e.getAccount())
                .setSpace(e.getSpace())
                .setSequence(0L)
                .setAgent(rc.getAgent())
                .setModel(rc.getModel())
                .setComputerId(rc.getComputerId())
                .setComputerIds(new ArrayList<>())
                .setFolder(rc.getFolder())
                .setFolderKind(rc.getFolderKind() == null ? null : rc.getFolderKind().name())
                .setProjectId(rc.getProject() == null ? null : rc.getProject().getId())
                .setProjectName(rc.getProject() == null ? null : rc.getProject().getName())
                .setKind(rc.getKind().name())
                .setSourceRef(rc.getSourceRef())
                .setStatus(SessionStatus.IDLE)
                .setResumable(false)
                .setContinuesSessionId(continuesSessionId)
                .setFilesChanged(new ArrayList<>())
                .setCreatedAt(e.getOccurredAt())
                .setLastActiveAt(e.getOccurredAt())
                .setRuns(new ArrayList<>())
                .setTasks(new ArrayList<>())
                .build();
    }

    /**
     * A status report changes its run's progress ({@link RunProgress}, in the run's record) and its session's fill (the
     * counts of going runs, the last active time, the changes counted in the sequence), never the stored
     * {@link SessionView}: the session's status, files changed and latest reports follow from its runs when the view is
     * assembled ({@link SessionAssembly}).
     */
    private static void status(Event e, RunStatusChanged rs, ChainState state, Consumer<SessionView> emit) {
        String account = e.getAccount();
        RunRef ref = state.run(account, rs.getRunId());
        if (ref == null) {
            state.park(account, rs.getRunId(), e);
            return;
        }
        RunProgress run = state.progress(account, rs.getRunId());
        SessionFill fill = state.fill(account, ref.getSessionId());
        boolean ended = isEnded(run.status());
        String to = rs.getStatus().name();
        boolean ending = isEnded(to);
        Instant at = e.getOccurredAt();
        boolean started = rs.getStatus() == RunStatus.WORKING && (run.startedAt() == null || at.isBefore(run.startedAt()));
        if (ended && (!ending || (run.endedAt() != null && at.isBefore(run.endedAt())))) {
            // a run that ended does not go back to work, and an older end report than the one applied changes no
            // outcome (out-of-order reports); what they say of when the run started and was active still counts,
            // so that the view is the same whichever of the reports came first
            boolean active = fill.lastActiveAt() == null || at.isAfter(fill.lastActiveAt());
            if (started) {
                state.putProgress(account, rs.getRunId(), run.withStartedAt(at));
            }
            if (started || active) {
                state.putFill(account, ref.getSessionId(), fill.touched(at, 1));
            }
            return;
        }
        RunProgress next = run.withStatus(to);
        if (started) {
            next = next.withStartedAt(at); // the earliest WORKING report
        }
        if (ending) {
            next = next.ended(to, at, rs.getReportSummary(), rs.getTokens(), rs.getDurationMs(), rs.getFilesChanged());
        }
        state.putProgress(account, rs.getRunId(), next);
        state.putFill(account, ref.getSessionId(), fill.runStatus(run.status(), to).touched(at, 1));
    }

    /**
     * The runs in the chain's order: a run comes after the run it continues (and so after every run before that
     * one), and runs the chain does not order (two runs continuing the same run, or a session's first run) go by
     * their claim's occurredAt, then by run id. A function of the runs alone, not of the order their events arrived
     * in.
     */
    static List<RunView> chainOrder(List<RunView> runs) {
        Map<String, RunView> byId = new HashMap<>();
        for (RunView r : runs) {
            byId.put(r.getRunId(), r);
        }
        Map<String, List<RunView>> continuations = new HashMap<>();
        Comparator<RunView> byClaim = Comparator.comparing(RunView::getClaimedAt).thenComparing(RunView::getRunId);
        PriorityQueue<RunView> ready = new PriorityQueue<>(byClaim);
        for (RunView r : runs) {
            String parent = r.getContinueFromJobId();
            if (parent != null && byId.containsKey(parent) && !parent.equals(r.getRunId())) {
                continuations.computeIfAbsent(parent, k -> new ArrayList<>()).add(r);
            } else {
                ready.add(r); // the chain's first run, or one continuing a run of another (deleted) session
            }
        }
        List<RunView> out = new ArrayList<>(runs.size());
        while (!ready.isEmpty()) {
            RunView r = ready.poll();
            out.add(r);
            ready.addAll(continuations.getOrDefault(r.getRunId(), List.of()));
        }
        return out;
    }

    /**
     * The first and the latest task (its id and title, or an imported run's prompt as its title): of the first and
     * the last run in the chain's order ({@link #chainOrder}) that names a task or has a title.
     */
    private static void firstAndLatest(SessionView s) {
        RunView first = null;
        RunView latest = null;
        for (RunView r : chainOrder(s.getRuns())) {
            if (r.getTaskId() != null || r.getTitle() != null) {
                first = first == null ? r : first;
                latest = r;
            }
        }
        s.setFirstTaskId(first == null ? null : first.getTaskId());
        s.setFirstTaskTitle(first == null ? null : first.getTitle());
        s.setLatestTaskId(latest == null ? null : latest.getTaskId());
        s.setLatestTaskTitle(latest == null ? null : latest.getTitle());
    }

    /**
     * The session's latest report summary, and each task's report: the summary of the run that ended last (by the
     * occurredAt of its end report; equal times: the later in the chain's order) among those that reported one.
     */
    static void latestReports(SessionView s, List<RunView> order) {
        Map<String, Integer> position = new HashMap<>();
        for (int i = 0; i < order.size(); i++) {
            position.put(order.get(i).getRunId(), i);
        }
        Comparator<RunView> byEnd = Comparator.comparing(RunView::getEndedAt).thenComparing(r -> position.get(r.getRunId()));
        RunView latest = null;
        for (RunView r : s.getRuns()) {
            if (r.getReportSummary() != null && r.getEndedAt() != null && (latest == null || byEnd.compare(r, latest) > 0)) {
                latest = r;
            }
        }
        if (latest != null) {
            s.setLatestReportSummary(latest.getReportSummary());
        }
        Map<String, RunView> byId = new HashMap<>();
        for (RunView r : s.getRuns()) {
            byId.put(r.getRunId(), r);
        }
        for (SessionTaskView t : s.getTasks()) {
            RunView newest = null;
            for (String runId : t.getRunIds()) {
                RunView r = byId.get(runId);
                if (r != null && r.getReportSummary() != null && r.getEndedAt() != null
                        && (newest == null || byEnd.compare(r, newest) > 0)) {
                    newest = r;
                }
            }
            if (newest != null) {
                t.setReport(newest.getReportSummary());
            }
        }
    }

    /** The claim's folder and folders join the session's folders (first seen first, each once). */
    private static void addFolders(SessionView session, RunClaimed rc) {
        Set<String> folders = new LinkedHashSet<>(session.getFolders());
        if (session.getFolder() != null) {
            folders.add(session.getFolder());
        }
        folders.addAll(rc.getFolders());
        if (rc.getFolder() != null) {
            folders.add(rc.getFolder());
        }
        session.setFolders(new ArrayList<>(folders));
    }

    /**
     * An engine event changes only the session's fill ({@link SessionFill}: agent session id, context, model, time),
     * stored apart from its runs and tasks: the whole view is assembled when it is read or published.
     */
    private static void engine(Event e, EngineEvent ee, ChainState state, Consumer<SessionView> emit) {
        RunRef ref = state.run(e.getAccount(), ee.getRunId());
        if (ref == null) {
            state.park(e.getAccount(), ee.getRunId(), e);
            return;
        }
        if (ee.getTranscriptGone()) {
            SessionView s = state.session(e.getAccount(), ref.getSessionId());
            if (s.getGoneAt() == null || e.getOccurredAt().isAfter(s.getGoneAt())) { // the last time it was found gone
                s.setGoneAt(e.getOccurredAt());
                s.setGone(gone(s));
                save(s, state, emit);
            }
            return; // not a report of the context: the fill, model and agent session id stay
        }
        SessionFill held = state.fill(e.getAccount(), ref.getSessionId());
        Instant at = e.getOccurredAt();
        if (held.agentSessionAt() != null && at.isBefore(held.agentSessionAt())) {
            return; // not the newest engine event
        }
        Instant lastActive = held.lastActiveAt() != null && held.lastActiveAt().isAfter(at) ? held.lastActiveAt() : at;
        state.putFill(e.getAccount(), ref.getSessionId(), new SessionFill(ee.getAgentSessionId(), at, ee.getContextUsed(),
                ee.getContextSize(), ee.getModel() != null ? ee.getModel() : held.model(), lastActive, held.changes() + 1,
                held.working(), held.waiting(), held.queued()));
    }

    /**
     * Whether the session's transcript is gone: it was found gone ({@code goneAt}, the last time) and, for a session of
     * the agent's own transcript ({@code TERMINAL_CHAT}), no run of it was claimed after that (a prompt of the
     * transcript restored). Both are maximums of the events' own times, so any arrival order gives the same answer.
     */
    static boolean gone(SessionView s) {
        if (s.getGoneAt() == null) {
            return false;
        }
        if (!dev.ensemble.sessions.events.RunKind.TERMINAL_CHAT.name().equals(s.getKind())) {
            return true;
        }
        for (RunView r : s.getRuns()) {
            if (r.getClaimedAt().isAfter(s.getGoneAt())) {
                return false;
            }
        }
        return true;
    }

    private static void touch(SessionView s, Instant at) {
        if (at.isAfter(s.getLastActiveAt())) {
            s.setLastActiveAt(at);
        }
    }

    /**
     * Stores the session's view as the chains keep it (its status follows from its runs' progress when it is
     * assembled), one change more in its sequence, and marks it changed.
     */
    private static void save(SessionView s, ChainState state, Consumer<SessionView> emit) {
        s.setResumable(!s.getDeleted() && !s.getDeleting() && !s.getGone() && s.getAgentSessionId() != null);
        s.setSequence(s.getSequence() + 1);
        state.putSession(s);
        emit.accept(s);
    }

    /** Working if a run is working, else waiting, else queued, else idle. */
    static SessionStatus statusOf(List<RunView> runs) {
        boolean waiting = false;
        boolean queued = false;
        for (RunView r : runs) {
            String st = r.getStatus();
            if (st.equals(RunStatus.WORKING.name())) {
                return SessionStatus.WORKING;
            }
            waiting |= st.equals(RunStatus.WAITING.name());
            queued |= st.equals(RunStatus.QUEUED.name());
        }
        return waiting ? SessionStatus.WAITING : queued ? SessionStatus.QUEUED : SessionStatus.IDLE;
    }

    static boolean isGoing(String status) {
        return status.equals(RunStatus.WORKING.name()) || status.equals(RunStatus.WAITING.name())
                || status.equals(RunStatus.QUEUED.name());
    }

    static boolean isEnded(String status) {
        return status.equals(RunStatus.DONE.name()) || status.equals(RunStatus.FAILED.name())
                || status.equals(RunStatus.CANCELLED.name());
    }
}
