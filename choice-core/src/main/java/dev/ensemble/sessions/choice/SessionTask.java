package dev.ensemble.sessions.choice;

import java.util.List;

/**
 * One task of a candidate session, as the session view keeps it.
 *
 * @param facts        the task's facts kept on its run, or null for a run claimed by an older runtime (then the
 *                     session is never a candidate: guide §4 "Where")
 * @param filesChanged paths its runs changed (they count as anchors on the session's side)
 * @param report       its runs' reports (a summary), or null
 */
public record SessionTask(String taskId, String space, String account, String projectId, TaskFacts facts,
                          List<String> filesChanged, String report) {
    public SessionTask {
        filesChanged = filesChanged == null ? List.of() : List.copyOf(filesChanged);
    }
}
