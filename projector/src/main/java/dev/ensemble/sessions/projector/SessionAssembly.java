package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The whole view of a session from the three records it is kept in, shaped by how often each changes (DESIGN.md §4):
 * the {@link SessionView} as the session chains last wrote it (its runs and tasks as claimed, written by claims, task
 * changes, deletions), its {@link SessionFill} (written by engine events and status reports) and each run's
 * {@link RunProgress} (written by the run's status reports). What follows from the runs is derived here, by the rules
 * the chains applied when the view was one record (guide §1):
 * <ul>
 *   <li>each run's status, start and end, report summary, tokens and duration: its progress;</li>
 *   <li>the session's status: working if a run is working, else waiting, else queued, else idle
 *       ({@link SessionChainRules#statusOf});</li>
 *   <li>the files changed, of the session and of each task: the files of their runs' end reports, each once, the runs
 *       taken in the chain's order ({@link SessionChainRules#chainOrder}) and not in the order their reports arrived
 *       (never arrival order), each run's in the order it reported them; the newest {@link ViewBounds#FILES} kept, the
 *       rest counted in {@code omitted} ({@code filesChanged}, {@code tasks.filesChanged}), as {@link ViewBounds#stored};</li>
 *   <li>the latest report summary of the session and each task's report: the summary of the run whose end occurred
 *       last ({@link SessionChainRules#latestReports}).</li>
 * </ul>
 * A run without a progress of its own (claimed before runs had one) keeps what the stored view holds of it, and the
 * files the stored view lists (of the session, of a task) come before those of the runs. Pure: no Kafka, no state.
 */
final class SessionAssembly {
    private SessionAssembly() {
    }

    /**
     * The whole view: {@code stored} (changed in place and returned) with its runs' progress ({@code progressOf} by run
     * id; null: the stored run holds it) and {@code fill} over it.
     */
    static SessionView assemble(SessionView stored, SessionFill fill, Function<String, RunProgress> progressOf) {
        Map<String, RunProgress> progress = new HashMap<>();
        boolean files = false;
        for (RunView r : stored.getRuns()) {
            RunProgress p = progressOf.apply(r.getRunId());
            if (p == null) {
                continue;
            }
            progress.put(r.getRunId(), p);
            r.setStatus(p.status());
            r.setStartedAt(p.startedAt());
            r.setEndedAt(p.endedAt());
            r.setReportSummary(p.reportSummary());
            r.setTokens(p.tokens());
            r.setDurationMs(p.durationMs());
            files |= !p.filesChanged().isEmpty();
        }
        stored.setStatus(SessionChainRules.statusOf(stored.getRuns()));
        boolean reports = stored.getRuns().stream().anyMatch(r -> r.getReportSummary() != null && r.getEndedAt() != null);
        if (files || reports) {
            List<RunView> order = SessionChainRules.chainOrder(stored.getRuns());
            if (files) {
                filesChanged(stored, order, progress);
            }
            if (reports) {
                SessionChainRules.latestReports(stored, order);
            }
        }
        return fill.applyTo(stored);
    }

    private static void filesChanged(SessionView s, List<RunView> order, Map<String, RunProgress> progress) {
        Map<String, Integer> omitted = new HashMap<>(s.getOmitted());
        s.setFilesChanged(union(s.getFilesChanged(), order, null, progress, omitted, "filesChanged"));
        for (SessionTaskView t : s.getTasks()) {
            Set<String> ids = new HashSet<>(t.getRunIds());
            t.setFilesChanged(union(t.getFilesChanged(), order, ids, progress, omitted, "tasks.filesChanged"));
        }
        s.setOmitted(omitted);
    }

    /**
     * {@code held} and the files of the runs in {@code order} (those in {@code runIds}; null: all), each once, the newest
     * {@link ViewBounds#FILES} kept; what is left out, here or by a run's own bound, is counted under {@code list}.
     */
    private static List<String> union(List<String> held, List<RunView> order, Set<String> runIds, Map<String, RunProgress> progress,
                                      Map<String, Integer> omitted, String list) {
        Set<String> all = new LinkedHashSet<>(held);
        int left = 0;
        for (RunView r : order) {
            RunProgress p = progress.get(r.getRunId());
            if (p != null && (runIds == null || runIds.contains(r.getRunId()))) {
                all.addAll(p.filesChanged());
                left += p.filesOmitted();
            }
        }
        List<String> out = new ArrayList<>(all);
        if (out.size() > ViewBounds.FILES) {
            left += out.size() - ViewBounds.FILES;
            out = new ArrayList<>(out.subList(out.size() - ViewBounds.FILES, out.size()));
        }
        if (left > 0) {
            omitted.merge(list, left, Integer::sum);
        }
        return out;
    }
}
