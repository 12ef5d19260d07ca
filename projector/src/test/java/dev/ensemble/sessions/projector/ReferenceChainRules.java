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
 * The session-chain rules as they were when a session was one record, every run's status and end report in it
 * (before {@link RunProgress} and {@link SessionAssembly}): the reference the reshaped rules are compared with
 * ({@code SessionAssemblyPropertyTest}). Engine events change the view directly (what the fill did, applied at once).
 * A test's copy, not used by the projector.
 */
final class ReferenceChainRules {
    /** The state in maps: sessions by id, runs' sessions, tasks' sessions, parked events. One account. */
    static final class State {
        final Map<String, SessionView> sessions = new HashMap<>();
        final Map<String, RunRef> runs = new HashMap<>();
        final Map<String, Set<String>> tasks = new HashMap<>();
        final Map<String, List<Event>> parked = new HashMap<>();

        SessionView session(String account, String id) {
            SessionView s = sessions.get(id);
            return s == null ? null : MapChainState.copy(s);
        }

        void putSession(SessionView s) {
            sessions.put(s.getSessionId(), MapChainState.copy(ViewBounds.stored(s)));
        }

        RunRef run(String account, String runId) {
            return runs.get(runId);
        }

        void putRun(String account, RunRef ref) {
            runs.put(ref.getRunId(), ref);
        }

        Set<String> sessionsOfTask(String account, String taskId) {
            return tasks.getOrDefault(taskId, Set.of());
        }

        void addSessionOfTask(String account, String taskId, String sessionId) {
            tasks.computeIfAbsent(taskId, k -> new java.util.LinkedHashSet<>()).add(sessionId);
        }

        void park(String account, String awaited, Event e) {
            parked.computeIfAbsent(awaited, k -> new ArrayList<>()).add(e);
        }

        List<Event> unpark(String account, String awaited) {
            List<Event> l = parked.remove(awaited);
            return l == null ? List.of() : l;
        }
    }


    private ReferenceChainRules() {
    }

    /** Applies one (already de-duplicated) event. */
    static void apply(Event e, State state, Consumer<SessionView> emit) {
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
                for (RunView r : s.getRuns()) {
                    if (r.getStatus().equals(RunStatus.QUEUED.name())) {
                        r.setStatus(RunStatus.CANCELLED.name());
                        r.setEndedAt(e.getOccurredAt());
                    }
                }
                save(s, state, emit);
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

    private static void claim(Event e, RunClaimed rc, State state, Consumer<SessionView> emit) {
        String account = e.getAccount();
        if (state.run(account, rc.getRunId()) != null) {
            return; // a run is claimed once; a second claim of the same run id changes nothing
        }
        SessionView session;
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
            }
        }
        boolean going = session.getRuns().stream().anyMatch(r -> isGoing(r.getStatus()));
        RunView run = RunView.newBuilder()
                .setRunId(rc.getRunId())
                .setTaskId(rc.getTaskId())
                .setTitle(rc.getTask() == null ? null : rc.getTask().getTitle())
                .setComputerId(rc.getComputerId())
                .setStatus(going ? RunStatus.QUEUED.name() : RunStatus.WORKING.name())
                .setClaimedAt(e.getOccurredAt())
                .setContinueFromJobId(parent)
                .build();
        session.getRuns().add(run);
        if (session.getGoneAt() != null) {
            session.setGone(goneByTimes(session));
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
        state.putRun(account, new RunRef(rc.getRunId(), session.getSessionId()));
        save(session, state, emit);
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

    private static SessionTaskView taskOfRun(SessionView s, String runId) {
        for (SessionTaskView t : s.getTasks()) {
            if (t.getRunIds().contains(runId)) {
                return t;
            }
        }
        return null;
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

    private static void status(Event e, RunStatusChanged rs, State state, Consumer<SessionView> emit) {
        RunRef ref = state.run(e.getAccount(), rs.getRunId());
        if (ref == null) {
            state.park(e.getAccount(), rs.getRunId(), e);
            return;
        }
        SessionView s = state.session(e.getAccount(), ref.getSessionId());
        RunView run = runOf(s, rs.getRunId());
        boolean ended = isEnded(run.getStatus());
        boolean ending = isEnded(rs.getStatus().name());
        Instant at = e.getOccurredAt();
        boolean started = rs.getStatus() == RunStatus.WORKING && (run.getStartedAt() == null || at.isBefore(run.getStartedAt()));
        if (ended && (!ending || (run.getEndedAt() != null && at.isBefore(run.getEndedAt())))) {
            // a run that ended does not go back to work, and an older end report than the one applied changes no
            // outcome (out-of-order reports); what they say of when the run started and was active still counts,
            // so that the view is the same whichever of the reports came first
            boolean active = at.isAfter(s.getLastActiveAt());
            if (started) {
                run.setStartedAt(at);
            }
            if (started || active) {
                touch(s, at);
                save(s, state, emit);
            }
            return;
        }
        run.setStatus(rs.getStatus().name());
        if (started) {
            run.setStartedAt(at); // the earliest WORKING report
        }
        if (ending) {
            run.setEndedAt(at);
            run.setReportSummary(rs.getReportSummary());
            run.setTokens(rs.getTokens());
            run.setDurationMs(rs.getDurationMs());
            Set<String> files = new LinkedHashSet<>(s.getFilesChanged());
            files.addAll(rs.getFilesChanged());
            s.setFilesChanged(new ArrayList<>(files));
            SessionTaskView task = taskOfRun(s, rs.getRunId());
            if (task != null) {
                Set<String> taskFiles = new LinkedHashSet<>(task.getFilesChanged());
                taskFiles.addAll(rs.getFilesChanged());
                task.setFilesChanged(new ArrayList<>(taskFiles));
            }
            latestReports(s);
        }
        touch(s, at);
        save(s, state, emit);
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
    private static void latestReports(SessionView s) {
        List<RunView> order = chainOrder(s.getRuns());
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

    /**
     * An engine event changes only the session's fill ({@link SessionFill}: agent session id, context, model, time),
     * stored apart from its runs and tasks: the whole view is assembled when it is read or published.
     */
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

    /** Gone: found gone, and (a transcript's own session) no run claimed after the latest time it was. */
    private static boolean goneByTimes(SessionView s) {
        return s.getGoneAt() != null && !("TERMINAL_CHAT".equals(s.getKind())
                && s.getRuns().stream().map(RunView::getClaimedAt).anyMatch(t -> t.isAfter(s.getGoneAt())));
    }

    private static void engine(Event e, EngineEvent ee, State state, Consumer<SessionView> emit) {
        RunRef ref = state.run(e.getAccount(), ee.getRunId());
        if (ref == null) {
            state.park(e.getAccount(), ee.getRunId(), e);
            return;
        }
        if (ee.getTranscriptGone()) {
            SessionView s = state.session(e.getAccount(), ref.getSessionId());
            if (s.getGoneAt() == null || s.getGoneAt().isBefore(e.getOccurredAt())) {
                s.setGoneAt(e.getOccurredAt()); // the latest report wins, whatever the arrival order
                s.setGone(goneByTimes(s));
                save(s, state, emit);
            }
            return; // not a report of the context: the fill, model and agent session id stay
        }
        SessionView s = state.session(e.getAccount(), ref.getSessionId());
        Instant at = e.getOccurredAt();
        if (s.getAgentSessionAt() != null && at.isBefore(s.getAgentSessionAt())) {
            return; // not the newest engine event
        }
        s.setAgentSessionId(ee.getAgentSessionId());
        s.setAgentSessionAt(at);
        s.setContextUsed(ee.getContextUsed());
        s.setContextSize(ee.getContextSize());
        Long used = ee.getContextUsed();
        Long size = ee.getContextSize();
        s.setFill(used != null && size != null && size > 0 ? (double) used / size : null);
        if (ee.getModel() != null) {
            s.setModel(ee.getModel());
        }
        touch(s, at);
        save(s, state, emit);
    }

    private static void touch(SessionView s, Instant at) {
        if (at.isAfter(s.getLastActiveAt())) {
            s.setLastActiveAt(at);
        }
    }

    private static void save(SessionView s, State state, Consumer<SessionView> emit) {
        s.setStatus(statusOf(s.getRuns()));
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

    private static RunView runOf(SessionView s, String runId) {
        for (RunView r : s.getRuns()) {
            if (r.getRunId().equals(runId)) {
                return r;
            }
        }
        throw new IllegalStateException("run " + runId + " is indexed to session " + s.getSessionId() + " but not in it");
    }
}
