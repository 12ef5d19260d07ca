package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.views.TaskFactsView;

import java.util.ArrayList;
import java.util.List;

/**
 * From the event log's and the views' Avro records to the scoring core's plain records: task facts, the new
 * run of a claim, and a session view as a candidate (guide §4 "Where", "Candidates").
 */
public final class ViewMapping {
    private ViewMapping() {
    }

    /** The facts a claim carries (null when it carries none). */
    public static TaskFacts facts(dev.ensemble.sessions.events.TaskFacts f) {
        if (f == null) {
            return null;
        }
        return new TaskFacts(f.getTitle(), f.getDescription(), f.getLabels(), f.getPage(), f.getInstructions(),
                f.getDeliverable(), f.getMeeting(), f.getParentPage(), f.getLinkedTaskIds());
    }

    /** The facts a session view keeps for a task (null when it keeps none). */
    public static TaskFacts facts(TaskFactsView f) {
        if (f == null) {
            return null;
        }
        return new TaskFacts(f.getTitle(), f.getDescription(), f.getLabels(), f.getPage(), f.getInstructions(),
                f.getDeliverable(), f.getMeeting(), f.getParentPage(), f.getLinkedTaskIds());
    }

    /** The key a task has in the rarity table: its task id, or the run id for a run without a task. */
    public static String taskKey(RunClaimed rc) {
        return rc.getTaskId() != null ? rc.getTaskId() : "run:" + rc.getRunId();
    }

    /**
     * The new run of a claim that is about to choose.
     *
     * @param account whom it runs for
     * @param space   the space the claim came from
     */
    public static NewRun newRun(RunClaimed rc, String account, String space) {
        TaskFacts f = facts(rc.getTask());
        return new NewRun(rc.getRunId(), rc.getTaskId(), f == null ? TaskFacts.of("", null, List.of()) : f, space, account,
                rc.getProject() == null ? null : rc.getProject().getId(), rc.getComputerId(), rc.getAgent(),
                NewRun.RunKind.valueOf(rc.getKind().name()), null, rc.getContinueFromJobId(),
                rc.getFolderKind() == dev.ensemble.sessions.events.FolderKind.SHARED ? rc.getFolder() : null,
                rc.getFolderKind() == dev.ensemble.sessions.events.FolderKind.REPOSITORY ? rc.getFolder() : null,
                null, rc.getFolderKind() == dev.ensemble.sessions.events.FolderKind.CHAT ? rc.getFolder() : null,
                rc.getSourceRef() != null && rc.getSourceRef().startsWith("node:"), rc.getRetry(), rc.getNewSession());
    }

    /**
     * A session view as the candidate filters and signals see it under {@code cfg}: a person's own imported session as
     * {@link ImportedSessions#candidate} when {@code importedSessions.candidates} is on (and it has a prompt with text),
     * else {@link #candidate(SessionView)}.
     */
    public static CandidateSession candidate(SessionView s, SessionChoiceConfig cfg) {
        if (cfg.importedSessions().candidates() && ImportedSessions.isImported(s)) {
            CandidateSession imported = ImportedSessions.candidate(s);
            if (imported != null) return imported;
        }
        return candidate(s);
    }

    /** A session view as the candidate filters and signals see it (the guide's: a chat is a chat). */
    public static CandidateSession candidate(SessionView s) {
        List<SessionTask> tasks = new ArrayList<>(s.getTasks().size());
        for (SessionTaskView t : s.getTasks()) {
            tasks.add(new SessionTask(t.getTaskId(), t.getSpace(), s.getAccount(), t.getProjectId(), facts(t.getFacts()),
                    t.getFilesChanged(), t.getReport()));
        }
        NewRun.RunKind kind;
        try {
            kind = NewRun.RunKind.valueOf(s.getKind());
        } catch (IllegalArgumentException e) {
            kind = NewRun.RunKind.UNKNOWN;
        }
        return new CandidateSession(s.getSessionId(), s.getLastActiveAt(),
                CandidateSession.Status.valueOf(s.getStatus().name()), s.getResumable(), kind,
                s.getDeleting() || s.getDeleted(), s.getComputerId(), s.getAgent(), s.getFill(), s.getTasks().size(),
                s.getLatestReportSummary(), tasks);
    }
}
