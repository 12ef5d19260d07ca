package dev.ensemble.sessions.choice.recalibration;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.choice.ChoiceRecords;
import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.Scorer;
import dev.ensemble.sessions.choice.SessionChoiceConfig;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Recalibration (DESIGN.md §5, guide §4 "Records": "score their stored signals again under other weights with
 * scoreCandidate: no text is needed"). Pure: recorded decisions and outcomes in, a {@link Comparison} out.
 * <p>
 * "Before" is the decision as recorded (its decision, band and best score under the config it was made with);
 * "after" is {@link Scorer#rescore} of its stored candidates under the candidate config. A record with no
 * candidates (not eligible, disabled, a new session asked for, no candidate left) keeps band NONE and decision NEW.
 * A recorded CONTINUE that the service later turned into a new session (note unavailable or not-linked) is taken as
 * recorded.
 */
public final class Recalibration {
    /** Distance to a band threshold, in score points, within which a decision counts as near it. */
    public static final double NEAR = 1.0;

    private Recalibration() {
    }

    /** One SessionChoiceRecorded as read from the log, with the event's occurredAt. */
    public record Recorded(Instant occurredAt, SessionChoiceRecorded record) {
    }

    /**
     * One decision before and after.
     *
     * @param bestBefore the recorded best score, or null when no candidate was scored
     * @param bestAfter  the best score under the candidate config, or null
     * @param sessionBefore the session continued (or best candidate) as recorded
     * @param sessionAfter  the session continued (or best candidate) under the candidate config
     */
    public record Change(String runId, String taskId, Instant occurredAt, Decision.Choice before, Decision.Choice after,
                         Decision.Band bandBefore, Decision.Band bandAfter, Double bestBefore, Double bestAfter,
                         String sessionBefore, String sessionAfter) {
        /** The decision changed (continue ↔ new), or both continue but into different sessions. */
        public boolean decisionChanged() {
            return before != after || before == Decision.Choice.CONTINUE && !java.util.Objects.equals(sessionBefore, sessionAfter);
        }
    }

    /**
     * Outcomes of the decisions in one band.
     *
     * @param decisions   decisions in the band
     * @param withOutcome of those, with a SessionChoiceOutcome
     * @param resumedOf   outcomes that say whether the agent resumed (resumed not null)
     * @param resumed     of those, resumed = true
     * @param failed      outcomes with status FAILED
     * @param tokensOf    outcomes with tokens
     * @param tokensSum   their tokens
     */
    public record Outcomes(int decisions, int withOutcome, int resumedOf, int resumed, int failed, int tokensOf, long tokensSum) {
        /** resumed / resumedOf, NaN when none. */
        public double resumedRate() {
            return resumedOf == 0 ? Double.NaN : (double) resumed / resumedOf;
        }

        /** failed / withOutcome, NaN when none. */
        public double failureRate() {
            return withOutcome == 0 ? Double.NaN : (double) failed / withOutcome;
        }

        /** Mean tokens per outcome with tokens, NaN when none. */
        public double meanTokens() {
            return tokensOf == 0 ? Double.NaN : (double) tokensSum / tokensOf;
        }

        Outcomes plus(SessionChoiceOutcome o) {
            if (o == null) return new Outcomes(decisions + 1, withOutcome, resumedOf, resumed, failed, tokensOf, tokensSum);
            return new Outcomes(decisions + 1, withOutcome + 1,
                    resumedOf + (o.getResumed() != null ? 1 : 0), resumed + (Boolean.TRUE.equals(o.getResumed()) ? 1 : 0),
                    failed + (o.getStatus() == RunStatus.FAILED ? 1 : 0),
                    tokensOf + (o.getTokens() != null ? 1 : 0), tokensSum + (o.getTokens() != null ? o.getTokens() : 0));
        }
    }

    /**
     * The comparison of every decision under its recorded config and the candidate config.
     *
     * @param changes        every decision, in log order
     * @param bandsBefore    decisions per recorded band (every band present, 0 when none)
     * @param bandsAfter     decisions per band under the candidate config
     * @param decisions      confusion matrix: [before][after] over {@link Decision.Choice#ordinal()}
     * @param bandMatrix     confusion matrix of bands: [before][after] over {@link Decision.Band#ordinal()}
     * @param outcomesBefore outcomes per recorded band
     * @param outcomesAfter  outcomes per band under the candidate config
     */
    public record Comparison(String configVersion, SessionChoiceConfig.Bands bands, List<Change> changes,
                             Map<Decision.Band, Integer> bandsBefore, Map<Decision.Band, Integer> bandsAfter,
                             int[][] decisions, int[][] bandMatrix,
                             Map<Decision.Band, Outcomes> outcomesBefore, Map<Decision.Band, Outcomes> outcomesAfter) {
        /** Decisions whose choice or continued session changed. */
        public List<Change> changed() {
            return changes.stream().filter(Change::decisionChanged).toList();
        }

        /** Decisions whose best score after is within {@link #NEAR} of bands.confident or bands.unsure. */
        public List<Change> nearThresholds() {
            return changes.stream().filter(c -> c.bestAfter() != null
                    && (Math.abs(c.bestAfter() - bands.confident()) <= NEAR || Math.abs(c.bestAfter() - bands.unsure()) <= NEAR)).toList();
        }
    }

    /**
     * Re-scores every recorded decision under {@code cfg}.
     *
     * @param records  SessionChoiceRecorded in log order (a second record for the same run replaces the first)
     * @param outcomes SessionChoiceOutcome by runId (the last one of a run)
     * @param cfg      the candidate config, already merged over the defaults
     */
    public static Comparison compare(List<Recorded> records, Map<String, SessionChoiceOutcome> outcomes, SessionChoiceConfig cfg) {
        Map<String, Integer> index = new HashMap<>();
        List<Change> changes = new ArrayList<>(records.size());
        for (Recorded r : records) {
            Change c = rescore(r, cfg);
            Integer at = index.putIfAbsent(c.runId(), changes.size());
            if (at == null) changes.add(c);
            else changes.set(at, c);
        }
        Map<Decision.Band, Integer> before = bandCounts(), after = bandCounts();
        Map<Decision.Band, Outcomes> ob = emptyOutcomes(), oa = emptyOutcomes();
        int[][] m = new int[2][2];
        int[][] bm = new int[4][4];
        for (Change c : changes) {
            before.merge(c.bandBefore(), 1, Integer::sum);
            after.merge(c.bandAfter(), 1, Integer::sum);
            m[c.before().ordinal()][c.after().ordinal()]++;
            bm[c.bandBefore().ordinal()][c.bandAfter().ordinal()]++;
            SessionChoiceOutcome o = outcomes.get(c.runId());
            ob.put(c.bandBefore(), ob.get(c.bandBefore()).plus(o));
            oa.put(c.bandAfter(), oa.get(c.bandAfter()).plus(o));
        }
        return new Comparison(cfg.version(), cfg.bands(), List.copyOf(changes), before, after, m, bm, ob, oa);
    }

    /** One decision before and after; the candidates' stored signals scored again under {@code cfg}. */
    public static Change rescore(Recorded r, SessionChoiceConfig cfg) {
        SessionChoiceRecorded rec = r.record();
        Decision.Choice before = Decision.Choice.valueOf(rec.getDecision().name());
        Decision.Band bandBefore = Decision.Band.valueOf(rec.getBand().name());
        Double bestBefore = rec.getCandidates().isEmpty() ? null : rec.getCandidates().get(0).getScore();
        if (rec.getCandidates().isEmpty()) {
            return new Change(rec.getRunId(), rec.getTaskId(), r.occurredAt(), before, before, bandBefore, bandBefore,
                    null, null, rec.getSessionId(), rec.getSessionId());
        }
        Scorer.Ranking after = Scorer.rescore(ChoiceRecords.storedCandidates(rec, cfg.text()), cfg);
        String sessionAfter = after.chosen() != null ? after.chosen().sessionId() : after.best().sessionId();
        return new Change(rec.getRunId(), rec.getTaskId(), r.occurredAt(), before, after.decision(), bandBefore, after.band(),
                bestBefore, after.best().score(), rec.getSessionId(), sessionAfter);
    }

    private static Map<Decision.Band, Integer> bandCounts() {
        Map<Decision.Band, Integer> m = new EnumMap<>(Decision.Band.class);
        for (Decision.Band b : Decision.Band.values()) m.put(b, 0);
        return m;
    }

    private static Map<Decision.Band, Outcomes> emptyOutcomes() {
        Map<Decision.Band, Outcomes> m = new EnumMap<>(Decision.Band.class);
        for (Decision.Band b : Decision.Band.values()) m.put(b, new Outcomes(0, 0, 0, 0, 0, 0, 0));
        return m;
    }
}
