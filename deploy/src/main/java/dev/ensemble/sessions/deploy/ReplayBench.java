package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.projector.RetirementRules;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.choice.ChoiceRecords;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.Scorer;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.Signals;
import dev.ensemble.sessions.choice.recalibration.Recalibration;
import dev.ensemble.sessions.choice.recalibration.RecalibrationReport;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The replay half of {@code bench}: rebuild of the projector's views from the log the projector bench left
 * ({@link RebuildCommand#rebuild}, events/s from the start of the replay until the projector's committed offsets
 * reach the end of the log), and recalibration of synthetic recorded decisions under another config (re-score,
 * summary and HTML report, in memory; the log is not read).
 */
final class ReplayBench {
    private ReplayBench() {
    }

    /**
     * Rebuild (the projector's own topology under Kafka Streams, from the reset log) and recalibration measured; prints
     * a Markdown table.
     */
    static RebuildCommand.Result run(String bootstrap, Path stateDir, Map<String, ?> overrides, int decisions, PrintStream out)
            throws Exception {
        out.println();
        out.println("rebuilding the views from the log …");
        RebuildCommand.Result s = RebuildCommand.rebuild(bootstrap, stateDir, 1, overrides, RetirementRules.Config.defaults(), false);
        Recal c = recalibrate(decisions, new Random(7));
        out.println();
        out.println("| replay | items | seconds | items/s |");
        out.println("|---|---:|---:|---:|");
        out.printf(Locale.ROOT, "| rebuild: replayed by the projector (reset excluded; to the last view visible) | %,d events | %.1f | %,.0f |%n",
                s.events(), s.elapsed().toNanos() / 1e9, s.eventsPerSecond());
        out.printf(Locale.ROOT, "| recalibrate (re-score, summary, HTML) | %,d decisions | %.2f | %,.0f |%n", c.decisions(), c.seconds(),
                c.decisions() / c.seconds());
        out.printf(Locale.ROOT, "recalibration: %,d decisions change; summary and HTML report %,d characters%n", c.changed(), c.htmlBytes());
        return s;
    }

    record Recal(int decisions, double seconds, int changed, int htmlBytes) {
    }

    /** Synthetic recorded decisions (1..8 candidates with random signals, scored under the defaults), re-scored under bands.confident 5. */
    static Recal recalibrate(int n, Random rnd) throws Exception {
        SessionChoiceConfig defaults = SessionChoiceConfig.defaults();
        List<Recalibration.Recorded> records = new ArrayList<>(n);
        Map<String, SessionChoiceOutcome> outcomes = new HashMap<>();
        Instant t0 = Instant.parse("2026-11-01T00:00:00Z");
        for (int i = 0; i < n; i++) {
            int k = 1 + rnd.nextInt(8);
            List<Scorer.StoredCandidate> cands = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                int anchors = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(2) : 0;
                cands.add(new Scorer.StoredCandidate("s-" + i + "-" + j, t0.plusSeconds(i * 60L - j), new Signals(rnd.nextInt(20) == 0,
                        rnd.nextInt(30) == 0, false, rnd.nextInt(30) == 0, anchors, anchors == 0 ? List.of() : List.of("src/A.java", "KAFKA-1").subList(0, anchors), anchors == 2 ? 1 : 0,
                        rnd.nextDouble() < 0.5 ? rnd.nextDouble() : 0, List.of(), rnd.nextBoolean(), rnd.nextInt(5) == 0, rnd.nextBoolean(),
                        rnd.nextBoolean() ? rnd.nextDouble() : null, 1 + rnd.nextInt(20), null)));
            }
            Scorer.Ranking r = Scorer.rescore(cands, defaults);
            String run = "run-" + i;
            records.add(new Recalibration.Recorded(t0.plusSeconds(i * 60L), ChoiceRecords.toEvent(new Decision(run, "task-" + i, "claude-code",
                    "laptop", null, r.decision(), r.band(), r.chosen() != null ? r.chosen().sessionId() : r.best().sessionId(), r.best().score(),
                    "bench", null, null, null, defaults.version(), defaults.hash(), r.candidates(), false))));
            outcomes.put(run, SessionChoiceOutcome.newBuilder().setRunId(run).setStatus(rnd.nextInt(10) == 0 ? RunStatus.FAILED : RunStatus.DONE)
                    .setTokens(1000L + rnd.nextInt(100_000)).setResumed(r.decision() == Decision.Choice.CONTINUE ? rnd.nextInt(10) > 0 : null).build());
        }
        SessionChoiceConfig candidate = ConfigLoader.merge(defaults, "{\"version\": \"bench-1\", \"bands\": {\"confident\": 5}, \"weights\": {\"topic\": 8}}");
        long start = System.nanoTime();
        Recalibration.Comparison c = Recalibration.compare(records, outcomes, candidate);
        String md = RecalibrationReport.markdown(c);
        String html = RecalibrationReport.html(c);
        double s = (System.nanoTime() - start) / 1e9;
        return new Recal(n, s, c.changed().size(), html.length() + md.length());
    }
}
