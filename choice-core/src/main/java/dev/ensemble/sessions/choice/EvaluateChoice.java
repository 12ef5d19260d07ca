package dev.ensemble.sessions.choice;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The evaluate-choice command: {@code --history FILE [--config FILE] [--limit N] [--calibrate] [--out FILE]}.
 * Replays the history ({@link ChoiceEvaluation}) under the guide's defaults (or the config file merged over them),
 * prints a Markdown table of precision and recall of confident continues, the two baselines and the band counts,
 * over all tasks and each half. With {@code --calibrate} it also grid-searches a few weights and thresholds on the
 * first half (by F1 of confident continues) and reports the chosen config on both halves.
 */
public final class EvaluateChoice {
    private EvaluateChoice() {
    }

    /** Runs the command; exit code 2 on bad arguments. */
    public static void main(String[] args) throws Exception {
        Path history = null, configFile = null, out = null;
        int limit = 0;
        boolean calibrate = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--history" -> history = Path.of(args[++i]);
                case "--config" -> configFile = Path.of(args[++i]);
                case "--limit" -> limit = Integer.parseInt(args[++i]);
                case "--calibrate" -> calibrate = true;
                case "--out" -> out = Path.of(args[++i]);
                default -> {
                    System.err.println("usage: evaluate-choice --history FILE [--config FILE] [--limit N] [--calibrate] [--out FILE]");
                    System.exit(2);
                }
            }
        }
        if (history == null) {
            System.err.println("--history FILE is required");
            System.exit(2);
        }
        SessionChoiceConfig cfg = configFile == null ? SessionChoiceConfig.defaults() : ConfigLoader.readFile(configFile);
        String report = run(ChoiceEvaluation.read(history, limit), cfg, calibrate);
        System.out.println(report);
        if (out != null) Files.writeString(out, report, StandardCharsets.UTF_8);
    }

    /** The whole report as Markdown. */
    public static String run(List<ChoiceEvaluation.HistoryTask> tasks, SessionChoiceConfig cfg, boolean calibrate) throws Exception {
        int half = tasks.size() / 2;
        long t0 = System.nanoTime();
        ChoiceEvaluation.Replay base = ChoiceEvaluation.replay(tasks, cfg, true);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        StringBuilder sb = new StringBuilder();
        ChoiceEvaluation.Summary all = base.summary(0, tasks.size());
        sb.append(String.format(Locale.ROOT, "Tasks: %d (first half 1–%d, second half %d–%d). Follow-ups (share an issue key with an earlier task): %d, of which %d only via a #n key. Follow-ups whose earlier session was still a candidate: %d. Replay with baselines: %d ms.%n%n",
                tasks.size(), half, half + 1, tasks.size(), all.followUps(), all.followUpsOnlyViaPr(), all.scorer().recallOf(), ms));
        sb.append("| config | tasks | policy | continues | precision | recall | F1 |\n|---|---|---|---|---|---|---|\n");
        rows(sb, "defaults (" + cfg.version() + ")", "all", all, true);
        rows(sb, "defaults", "first half", base.summary(0, half), true);
        rows(sb, "defaults", "second half", base.summary(half, tasks.size()), true);
        sb.append("\nBands (defaults): | tasks | confident | unsure | below | none | too-full |\n|---|---|---|---|---|---|\n");
        bandRow(sb, "all", all);
        bandRow(sb, "first half", base.summary(0, half));
        bandRow(sb, "second half", base.summary(half, tasks.size()));
        if (calibrate) {
            List<SessionChoiceConfig> grid = grid(cfg);
            ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors()));
            List<Future<ChoiceEvaluation.Summary>> fs = new ArrayList<>();
            List<ChoiceEvaluation.HistoryTask> first = tasks.subList(0, half);
            for (SessionChoiceConfig g : grid) fs.add(pool.submit(() -> ChoiceEvaluation.replay(first, g, false).summary(0, half)));
            sb.append("\nGrid search on the first half (F1 of confident continues):\n\n| topic | anchor (max) | confident | unsure | longChain/hardChain tasks | precision | recall | F1 |\n|---|---|---|---|---|---|---|---|\n");
            SessionChoiceConfig bestCfg = null;
            double bestF1 = -1;
            for (int i = 0; i < grid.size(); i++) {
                ChoiceEvaluation.Summary s = fs.get(i).get();
                SessionChoiceConfig g = grid.get(i);
                sb.append(String.format(Locale.ROOT, "| %s | %s (%s) | %s | %s | %d/%d | %s | %s | %s |%n", n(g.weights().topic()),
                        n(g.weights().anchor()), n(g.weights().anchorMax()), n(g.bands().confident()), n(g.bands().unsure()),
                        g.size().longChainTasks(), g.size().hardChainTasks(), pct(s.scorer().precision()), pct(s.scorer().recall()), f(s.scorer().f1())));
                if (s.scorer().f1() > bestF1) {
                    bestF1 = s.scorer().f1();
                    bestCfg = g;
                }
            }
            pool.shutdown();
            ChoiceEvaluation.Replay cal = ChoiceEvaluation.replay(tasks, bestCfg, false);
            sb.append("\nCalibrated config (best F1 on the first half): ").append(ConfigLoader.toJson(bestCfg)
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

    /** The grid: topic weight, anchor weight (cap 2×), confident threshold, chain limits; everything else as {@code base}. */
    static List<SessionChoiceConfig> grid(SessionChoiceConfig base) {
        List<SessionChoiceConfig> out = new ArrayList<>();
        SessionChoiceConfig.Weights w = base.weights();
        for (double topic : new double[]{6, 10})
            for (double anchor : new double[]{3, 6})
                for (double confident : new double[]{3, 4, 5, 6})
                    for (int[] chain : new int[][]{{8, 15}, {30, 60}}) {
                        out.add(base.withVersion("grid").withWeights(new SessionChoiceConfig.Weights(w.link(), w.deliverable(), w.meeting(),
                                        w.parentPage(), anchor, 2 * anchor, topic, w.followUp(), w.newWork(), w.warm(), w.fillSoft(), w.longChain()))
                                .withBands(new SessionChoiceConfig.Bands(confident, Math.min(base.bands().unsure(), confident)))
                                .withSize(new SessionChoiceConfig.Size(base.size().soft(), base.size().hard(), chain[0], chain[1])));
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
