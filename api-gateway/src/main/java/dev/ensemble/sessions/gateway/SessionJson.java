package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The API's JSON form of sessions ({@code GET /api/agent/sessions}, guide §1): id, agent, model, computer,
 * folder, first and latest task, latest report summary, status (working, waiting, queued, idle), resumable,
 * fill (0–1, null when unknown), number of runs, and, when the view left items of a capped list out, how many per
 * list ({@code omitted}); the detail adds the runs.
 */
public final class SessionJson {
    private static final JsonNodeFactory N = JsonNodeFactory.instance;

    private SessionJson() {
    }

    /** The list entry of a session. */
    public static ObjectNode summary(SessionView s) {
        ObjectNode o = N.objectNode();
        o.put("id", s.getSessionId());
        o.put("agent", s.getAgent());
        o.put("model", s.getModel());
        o.put("computer", s.getComputerId());
        o.put("folder", s.getFolder());
        ArrayNode folders = o.putArray("folders");
        s.getFolders().forEach(folders::add);
        o.put("project", s.getProjectName());
        ObjectNode first = o.putObject("firstTask");
        first.put("id", s.getFirstTaskId());
        first.put("title", s.getFirstTaskTitle());
        ObjectNode latest = o.putObject("latestTask");
        latest.put("id", s.getLatestTaskId());
        latest.put("title", s.getLatestTaskTitle());
        o.put("latestReportSummary", oneLine(s.getLatestReportSummary()));
        // a session whose agent transcript is gone from the computer's disk shows as gone (it cannot be resumed)
        o.put("status", s.getGone() ? "gone" : s.getStatus().name().toLowerCase(Locale.ROOT));
        o.put("resumable", s.getResumable());
        if (s.getFill() == null) {
            o.putNull("fill");
        } else {
            o.put("fill", s.getFill());
        }
        o.put("runs", s.getRuns().size());
        o.put("agentSessionId", s.getAgentSessionId());
        o.put("continuesSessionId", s.getContinuesSessionId());
        o.put("deleted", s.getDeleted());
        o.put("deleting", s.getDeleting());
        o.put("createdAt", s.getCreatedAt().toString());
        o.put("lastActiveAt", s.getLastActiveAt().toString());
        if (s.getOmitted() != null && !s.getOmitted().isEmpty()) {
            // lists the view was capped in (the projector's bounds): how many items each left out, by the list's path
            ObjectNode omitted = o.putObject("omitted");
            new java.util.TreeMap<>(s.getOmitted()).forEach((list, n) -> omitted.put(list.toString(), n));
        }
        return o;
    }

    /**
     * The detail of a session: the summary plus its runs, oldest first (each with the files its task changed), the files
     * its runs changed, and {@code resume}: its agent, agent session id, folder and the command that resumes it in its
     * agent ({@code command} null for an agent without a known command), null without an agent session id.
     */
    public static ObjectNode detail(SessionView s) {
        ObjectNode o = summary(s);
        o.put("space", s.getSpace());
        o.put("kind", s.getKind());
        o.put("sourceRef", s.getSourceRef());
        o.put("contextUsed", s.getContextUsed());
        o.put("contextSize", s.getContextSize());
        ArrayNode files = o.putArray("filesChanged");
        s.getFilesChanged().forEach(files::add);
        ArrayNode computers = o.putArray("computers");
        s.getComputerIds().forEach(computers::add);
        java.util.Map<String, List<String>> runFiles = new java.util.HashMap<>();
        for (dev.ensemble.sessions.views.SessionTaskView t : s.getTasks()) {
            for (String runId : t.getRunIds()) {
                runFiles.put(runId, t.getFilesChanged());
            }
        }
        if (s.getAgentSessionId() == null) {
            o.putNull("resume");
        } else {
            o.putObject("resume").put("agent", s.getAgent()).put("agentSessionId", s.getAgentSessionId()).put("folder", s.getFolder())
                    .put("command", dev.ensemble.sessions.choice.ImportedSessions.resumeCommand(s.getAgent(), s.getAgentSessionId(), s.getFolder()));
        }
        ArrayNode runs = o.putArray("runList");
        for (RunView r : s.getRuns()) {
            ObjectNode j = runs.addObject();
            j.put("id", r.getRunId());
            j.put("taskId", r.getTaskId());
            j.put("title", r.getTitle());
            j.put("computer", r.getComputerId());
            j.put("status", r.getStatus().toLowerCase(Locale.ROOT));
            j.put("continueFromJobId", r.getContinueFromJobId());
            j.put("claimedAt", r.getClaimedAt().toString());
            j.put("startedAt", str(r.getStartedAt()));
            j.put("endedAt", str(r.getEndedAt()));
            j.put("reportSummary", r.getReportSummary());
            j.put("tokens", r.getTokens());
            j.put("durationMs", r.getDurationMs());
            ArrayNode changed = j.putArray("filesChanged"); // those of the run's task (an imported prompt is a task of its own)
            runFiles.getOrDefault(r.getRunId(), List.of()).forEach(changed::add);
        }
        return o;
    }

    static String oneLine(String s) {
        if (s == null) {
            return null;
        }
        String line = s.strip().replaceAll("\\s+", " ");
        return line.length() <= 200 ? line : line.substring(0, 199) + "…";
    }

    private static String str(Instant i) {
        return i == null ? null : i.toString();
    }
}
