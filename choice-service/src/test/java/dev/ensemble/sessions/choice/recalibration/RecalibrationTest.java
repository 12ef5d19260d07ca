package dev.ensemble.sessions.choice.recalibration;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.choice.ChoiceEvaluation;
import dev.ensemble.sessions.choice.ChoiceRecords;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recalibration on the decisions that the evaluate-choice replay of the real Kafka history makes (first 400 tasks;
 * skipped when the shared data is absent). Outcomes are made up from the ground truth: a continue is resumed when it
 * went into the right session.
 */
class RecalibrationTest {
    static final List<Recalibration.Recorded> RECORDS = new ArrayList<>();
    static final Map<String, SessionChoiceOutcome> OUTCOMES = new HashMap<>();

    @BeforeAll
    static void replay() {
        Path history = SharedData.require("data/kafka-history/tasks.jsonl");
        List<ChoiceEvaluation.HistoryTask> tasks = ChoiceEvaluation.read(history, 400);
        ChoiceEvaluation.replay(tasks, SessionChoiceConfig.defaults(), false, (task, d) -> {
            RECORDS.add(new Recalibration.Recorded(task.at(), ChoiceRecords.toEvent(d)));
            boolean cont = d.decision() == Decision.Choice.CONTINUE;
            OUTCOMES.put(d.runId(), SessionChoiceOutcome.newBuilder().setRunId(d.runId()).setSessionId(d.sessionId())
                    .setStatus(task.title().length() % 7 == 0 ? RunStatus.FAILED : RunStatus.DONE)
                    .setTokens(1000L + task.title().length()).setResumed(cont ? Boolean.TRUE : null).build());
        });
    }

    @Test
    void theRecordedConfigChangesNothing() {
        Recalibration.Comparison c = Recalibration.compare(RECORDS, OUTCOMES, SessionChoiceConfig.defaults());
        assertThat(c.changes()).hasSize(400);
        assertThat(c.changed()).isEmpty();
        assertThat(c.bandsAfter()).isEqualTo(c.bandsBefore());
        assertThat(c.bandsBefore().get(Decision.Band.CONFIDENT)).isPositive();
        assertThat(c.outcomesBefore().get(Decision.Band.CONFIDENT).resumedRate()).isEqualTo(1.0);
    }

    @Test
    void aLowerConfidentThresholdTurnsUnsureDecisionsIntoContinues() throws Exception {
        SessionChoiceConfig lower = ConfigLoader.merge(SessionChoiceConfig.defaults(), "{\"version\": \"t-1\", \"bands\": {\"confident\": 4}}");
        Recalibration.Comparison base = Recalibration.compare(RECORDS, OUTCOMES, SessionChoiceConfig.defaults());
        Recalibration.Comparison c = Recalibration.compare(RECORDS, OUTCOMES, lower);
        int unsureBefore = c.bandsBefore().get(Decision.Band.UNSURE);
        assertThat(unsureBefore).isPositive();
        // every new → continue was unsure or below before, and none goes the other way
        assertThat(c.changed()).isNotEmpty().allSatisfy(x -> {
            assertThat(x.before()).isEqualTo(Decision.Choice.NEW);
            assertThat(x.after()).isEqualTo(Decision.Choice.CONTINUE);
            assertThat(x.bestAfter()).isGreaterThanOrEqualTo(4.0).isLessThan(6.0);
        });
        assertThat(c.decisions()[1][0]).isEqualTo(c.changed().size());
        assertThat(c.bandsAfter().get(Decision.Band.CONFIDENT))
                .isEqualTo(base.bandsBefore().get(Decision.Band.CONFIDENT) + countBetween(4, 6));
        int total = c.bandsAfter().values().stream().mapToInt(Integer::intValue).sum();
        assertThat(total).isEqualTo(400);
        assertThat(c.nearThresholds()).allSatisfy(x -> assertThat(
                Math.min(Math.abs(x.bestAfter() - 4), Math.abs(x.bestAfter() - 3))).isLessThanOrEqualTo(1.0));

        String md = RecalibrationReport.markdown(c);
        assertThat(md).contains("new → continue").contains("| confident |").contains("Outcomes by band");
        String html = RecalibrationReport.html(c);
        assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg").contains("Decision: before (rows)")
                .doesNotContain("<script").doesNotContain("src=\"http");
    }

    /** Recorded decisions whose best stored score is in [lo, hi) and whose best candidate is not too full. */
    private static long countBetween(double lo, double hi) {
        return RECORDS.stream().map(Recalibration.Recorded::record)
                .filter(r -> !r.getCandidates().isEmpty())
                .filter(r -> r.getCandidates().stream().anyMatch(k -> k.getScore() >= lo && k.getScore() < hi && !k.getTooFull())
                        && r.getCandidates().get(0).getScore() < hi)
                .count();
    }
}
