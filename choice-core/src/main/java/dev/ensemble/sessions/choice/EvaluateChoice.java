package dev.ensemble.sessions.choice;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The evaluate-choice command:
 * {@code --history FILE [--config FILE | --recommended] [--limit N] [--calibrate] [--out FILE] [--dump FILE]}.
 * Replays the history ({@link ChoiceEvaluation}) under the guide's defaults (or the config file merged over them, or
 * the recommended config), prints a Markdown table of precision and recall of confident continues, the two baselines
 * and the band counts, over all tasks and each half. With {@code --calibrate} it also grid-searches weights and
 * thresholds fitted on the first half only (precision first: the most recall among configs with at least 90%
 * precision there, else the best F0.5) and reports the chosen config on the held-out second half. {@code --dump}
 * writes every decision of the main replay as one JSON line (see {@link #dumpLine}).
 */
public final class EvaluateChoice {
    private EvaluateChoice() {
    }

    /** Runs the command; exit code 2 on bad arguments. */
    public static void main(String[] args) throws Exception {
        Path history = null, configFile = null, out = null, dump = null;
        int limit = 0;
        boolean calibrate = false, recommended = false, mltAll = false, noBaselines = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--history" -> history = Path.of(args[++i]);
                case "--config" -> configFile = Path.of(args[++i]);
                case "--limit" -> limit = Integer.parseInt(args[++i]);
                case "--calibrate" -> calibrate = true;
                case "--out" -> out = Path.of(args[++i]);
                case "--dump" -> dump = Path.of(args[++i]);
                case "--recommended" -> recommended = true;
                case "--baselines-all" -> mltAll = true;
                case "--no-baselines" -> noBaselines = true;
                default -> {
                    System.err.println("usage: evaluate-choice --history FILE [--config FILE | --recommended] [--limit N] [--calibrate] [--out FILE] [--dump FILE] [--baselines-all | --no-baselines]");
                    System.exit(2);
                }
            }
        }
        if (history == null) {
            System.err.println("--history FILE is required");
            System.exit(2);
        }
        SessionChoiceConfig cfg = configFile != null ? ConfigLoader.readFile(configFile)
                : recommended ? ConfigLoader.recommended() : SessionChoiceConfig.defaults();
        List<ChoiceEvaluation.HistoryTask> tasks = ChoiceEvaluation.read(history, limit);
        String report;
        if (dump == null) {
            report = run(tasks, cfg, calibrate, mltAll, noBaselines, (h, d, st) -> { });
        } else {
            Map<String, String> titles = new HashMap<>();
            for (ChoiceEvaluation.HistoryTask h : tasks) titles.put(h.id(), h.title());
            try (BufferedWriter w = Files.newBufferedWriter(dump, StandardCharsets.UTF_8)) {
                report = run(tasks, cfg, calibrate, mltAll, noBaselines, (h, d, st) -> {
                    try {
                        w.write(dumpLine(h, d, st, titles));
                        w.newLine();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
        System.out.println(report);
        if (out != null) Files.writeString(out, report, StandardCharsets.UTF_8);
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One decision of the replay as a JSON line: {@code task}, {@code title}, {@code followUp} (shares an issue key
     * with an earlier task), {@code truthWasCandidate}, {@code decision}, {@code band}, {@code note}, {@code session}
     * (continued, or the best candidate) and {@code sessionTitle} (the title of the task that began it),
     * {@code right} (continued into a session holding an earlier task with a shared key), {@code score},
     * {@code reason}, and {@code candidates}: the best three with {@code session}, {@code score}, {@code parts} and
     * {@code signals} (anchors shared, topic and its terms, follow-up, new work, warm, tasks).
     */
    static String dumpLine(ChoiceEvaluation.HistoryTask h, Decision d, ChoiceEvaluation.Step st, Map<String, String> titles) {
        ObjectNode o = JSON.createObjectNode();
        o.put("task", h.id());
        o.put("title", h.title());
        o.put("followUp", st.followUp());
        o.put("truthWasCandidate", st.truthWasCandidate());
        o.put("decision", d.decision().name());
        o.put("band", d.band().name());
        if (d.note() != null) o.put("note", d.note());
        if (d.sessionId() != null) {
            o.put("session", d.sessionId());
            o.put("sessionTitle", titles.get(d.sessionId()));
        }
        o.put("right", st.continuedRight());
        if (d.score() != null) o.put("score", d.score());
        o.put("reason", d.reason());
        ArrayNode cs = o.putArray("candidates");
        for (ScoredCandidate c : d.candidates().subList(0, Math.min(3, d.candidates().size()))) {
            ObjectNode n = cs.addObject();
            n.put("session", c.sessionId());
            n.put("score", c.score());
            ObjectNode parts = n.putObject("parts");
            c.parts().forEach(parts::put);
            Signals s = c.signals();
            ObjectNode sig = n.putObject("signals");
            ArrayNode an = sig.putArray("anchorsShared");
            s.anchorsShared().forEach(an::add);
            sig.put("topic", Math.round(s.topic() * 1000) / 1000.0);
            ArrayNode tt = sig.putArray("topicTerms");
            s.topicTerms().forEach(tt::add);
            sig.put("followUp", s.followUp());
            sig.put("newWork", s.newWork());
            sig.put("warm", s.warm());
            sig.put("tasks", s.tasks());
        }
        try {
            return JSON.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The whole report as Markdown. */
    public static String run(List<ChoiceEvaluation.HistoryTask> tasks, SessionChoiceConfig cfg, boolean calibrate) throws Exception {
        return run(tasks, cfg, calibrate, true, false, (h, d, st) -> { });
    }

    /**
     * The whole report as Markdown; {@code listener} sees every decision of the main replay. The MoreLikeThis baseline
     * runs over all tasks with {@code mltAll}, else over the second half only (its rows for "all" and "first half"
     * are then left out). With {@code noBaselines} the main replay runs no baseline at all (--no-baselines: quick runs
     * of the grid search).
     */
    public static String run(List<ChoiceEvaluation.HistoryTask> tasks, SessionChoiceConfig cfg, boolean calibrate,
                             boolean mltAll, boolean noBaselines, ChoiceEvaluation.Listener listener) throws Exception {
        int half = tasks.size() / 2;
        long t0 = System.nanoTime();
        ChoiceEvaluation.Replay base = ChoiceEvaluation.replay(tasks, cfg, noBaselines ? Integer.MAX_VALUE : mltAll ? 0 : half, listener);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        StringBuilder sb = new StringBuilder();
        ChoiceEvaluation.Summary all = base.summary(0, tasks.size());
        sb.append(String.format(Locale.ROOT, "Tasks: %d (first half 1–%d, second half %d–%d). Follow-ups (share an issue key with an earlier task): %d, of which %d only via a #n key. Follow-ups whose earlier session was still a candidate: %d. Replay: %d ms.%n%n",
                tasks.size(), half, half + 1, tasks.size(), all.followUps(), all.followUpsOnlyViaPr(), all.scorer().recallOf(), ms));
        sb.append("| config | tasks | policy | continues | precision | recall | F1 |\n|---|---|---|---|---|---|---|\n");
        String name = cfg.version().equals(SessionChoiceConfig.DEFAULT_VERSION) ? "defaults" : "config";
        rows(sb, name + " (" + cfg.version() + ")", "all", all, mltAll);
        rows(sb, name, "first half", base.summary(0, half), mltAll);
        rows(sb, name, "second half", base.summary(half, tasks.size()), !noBaselines);
        sb.append("\nBands (" + name + "): | tasks | confident | unsure | below | none | too-full |\n|---|---|---|---|---|---|\n");
        bandRow(sb, "all", all);
        bandRow(sb, "first half", base.summary(0, half));
        bandRow(sb, "second half", base.summary(half, tasks.size()));
        if (calibrate) {
            List<SessionChoiceConfig> grid = grid(cfg);
            ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
            List<Future<ChoiceEvaluation.Summary>> fs = new ArrayList<>();
            List<ChoiceEvaluation.HistoryTask> first = tasks.subList(0, half);
            for (SessionChoiceConfig g : grid) fs.add(pool.submit(() -> ChoiceEvaluation.replay(first, g, false).summary(0, half)));
            sb.append("\nGrid search fitted on the first half only (precision first: the most recall among configs with ≥ 90% precision, else the best F0.5):\n\n| topic | anchor (max) | issueKey | anchorMaxDocShare | confident | precision | recall | F1 | F0.5 |\n|---|---|---|---|---|---|---|---|---|\n");
            SessionChoiceConfig bestCfg = null;
            ChoiceEvaluation.Figures best = null;
            for (int i = 0; i < grid.size(); i++) {
                ChoiceEvaluation.Summary s = fs.get(i).get();
                SessionChoiceConfig g = grid.get(i);
                sb.append(String.format(Locale.ROOT, "| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s |%n", n(g.weights().topic()),
                        n(g.weights().anchor()), n(g.weights().anchorMax()), n(g.weights().issueKey()), n(g.limits().anchorMaxDocShare()),
                        n(g.bands().confident()), pct(s.scorer().precision()), pct(s.scorer().recall()), f(s.scorer().f1()), f(fHalf(s.scorer()))));
                if (best == null || better(s.scorer(), best)) {
                    best = s.scorer();
                    bestCfg = g;
                }
            }
            pool.shutdown();
            ChoiceEvaluation.Replay cal = ChoiceEvaluation.replay(tasks, bestCfg, false);
            sb.append("\nCalibrated config (chosen on the first half): ").append(ConfigLoader.toJson(bestCfg)
                    .replaceAll(",\"text\":\\{.*\\}}$", ", \"text\": …}")).append("\n\n");
            sb.append("| config | tasks | policy | continues | precision | recall | F1 |\n|---|---|---|---|---|---|---|\n");
            rows(sb, "calibrated", "first half (fitted)", cal.summary(0, half), false);
            rows(sb, "calibrated", "second half (held out)", cal.summary(half, tasks.size()), false);
            rows(sb, "calibrated", "all", cal.summary(0, tasks.size()), false);
            sb.append("\nBands (calibrated): | tasks | confident | unsure | below | none | too-full |\n|---|---|---|---|---|---|\n");
            bandRow(sb, "first half", cal.summary(0, half));
            bandRow(sb, "second half", cal.summary(half, tasks.size()));
        }
        return sb.toString();
    }

    /** Precision first: a config with ≥ 90% precision beats one without; among those, more recall; else F0.5. */
    static boolean better(ChoiceEvaluation.Figures a, ChoiceEvaluation.Figures b) {
        boolean pa = a.precision() >= 0.9, pb = b.precision() >= 0.9; // NaN (never continued) is neither
        if (pa != pb) return pa;
        if (pa) return a.recall() > b.recall() || (a.recall() == b.recall() && a.precision() > b.precision());
        return fHalf(a) > fHalf(b);
    }

    /** F0.5: precision weighs twice recall (a wrong continue pollutes an agent's context; a missed one costs a cold start). */
    static double fHalf(ChoiceEvaluation.Figures x) {
        double p = x.precision(), r = x.recall();
        return Double.isNaN(p) || Double.isNaN(r) || p + r == 0 ? 0 : 1.25 * p * r / (0.25 * p + r);
    }

    /**
     * The grid (8 configs, small enough for a loaded 2-core machine): issue-key weight (1× or 2× the anchor weight),
     * the anchors' rarity share (the guide's 20% or 2%), the confident threshold (6 or 7); everything else (other
     * weights, chain limits, word lists, text.automated) as {@code base}.
     */
    static List<SessionChoiceConfig> grid(SessionChoiceConfig base) {
        List<SessionChoiceConfig> out = new ArrayList<>();
        SessionChoiceConfig.Weights w = base.weights();
        SessionChoiceConfig.Limits l = base.limits();
        for (double keyFactor : new double[]{1, 2})
            for (double docShare : new double[]{0.2, 0.02})
                for (double confident : new double[]{6, 7}) {
                    out.add(base.withVersion("grid").withWeights(w.withIssueKey(w.anchor() * keyFactor))
                            .withLimits(new SessionChoiceConfig.Limits(l.maxAgeDays(), l.candidates(), l.corpusTasks(),
                                    l.corpusTtlMinutes(), l.corpusFieldChars(), docShare, l.anchorMaxCandidateShare(),
                                    l.topicMinShared(), l.topicCommonShare(), l.minCorpus(), l.timeBudgetMs()))
                            .withBands(new SessionChoiceConfig.Bands(confident, Math.min(base.bands().unsure(), confident))));
                }
        return out;
    }

    private static void rows(StringBuilder sb, String cfg, String range, ChoiceEvaluation.Summary s, boolean baselines) {
        row(sb, cfg, range, "scorer: confident continues", s.scorer());
        if (baselines) {
            row(sb, cfg, range, "baseline: most recent candidate", s.recent());
            row(sb, cfg, range, "baseline: MoreLikeThis top-1", s.mlt());
        }
    }

    private static void row(StringBuilder sb, String cfg, String range, String policy, ChoiceEvaluation.Figures f) {
        sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %s (%d/%d) | %s (%d/%d) | %s |%n", cfg, range, policy, f.continues(),
                pct(f.precision()), f.right(), f.continues(), pct(f.recall()), f.recalled(), f.recallOf(), f(f.f1())));
    }

    private static void bandRow(StringBuilder sb, String range, ChoiceEvaluation.Summary s) {
        sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d |%n", range, s.bands().get(Decision.Band.CONFIDENT),
                s.bands().get(Decision.Band.UNSURE), s.bands().get(Decision.Band.BELOW), s.bands().get(Decision.Band.NONE), s.tooFull()));
    }

    private static String pct(double d) {
        return Double.isNaN(d) ? "–" : String.format(Locale.ROOT, "%.1f%%", d * 100);
    }

    private static String f(double d) {
        return String.format(Locale.ROOT, "%.3f", d);
    }

    private static String n(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }
}
