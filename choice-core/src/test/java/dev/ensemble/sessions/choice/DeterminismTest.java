package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.events.SessionChoiceRecorded;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4: "the same records always give the same decision"; records and re-scoring without text; the time budget. */
class DeterminismTest {
    static List<CandidateSession> sessions() {
        List<CandidateSession> l = new ArrayList<>();
        l.add(session("a", 30, task("t1", facts("Ranking latency dashboard", "KAFKA-42 SessionStore"))).build());
        l.add(session("b", 30, task("t2", facts("Ranking latency", "other words here"))).build());
        l.add(session("c", 3000, task("t3", facts("Billing page", "invoices"))).fill(0.5).build());
        l.add(session("d", 90, task("t4", facts("KAFKA-42 retries", null), List.of("src/SessionStore.java"))).build());
        return l;
    }

    @Test
    void theSameInputsGiveTheSameDecisionWhateverTheOrderOfSessions() {
        NewRun r = run(facts("Ranking latency for KAFKA-42", "touch SessionStore"));
        Decision first = Scorer.decide(r, sessions(), corpus(100), CFG, NOW, () -> 0L);
        for (int seed = 0; seed < 5; seed++) {
            List<CandidateSession> shuffled = sessions();
            Collections.shuffle(shuffled, new Random(seed));
            assertThat(Scorer.decide(r, shuffled, corpus(100), CFG, NOW, () -> 0L)).isEqualTo(first);
        }
    }

    @Test
    void rescoringStoredSignalsGivesTheSameScoresAndAnotherConfigCanChangeTheDecision() {
        NewRun r = run(facts("Ranking latency for KAFKA-42", "touch SessionStore"));
        Decision d = Scorer.decide(r, sessions(), corpus(100), CFG, NOW, () -> 0L);
        SessionChoiceRecorded rec = ChoiceRecords.toEvent(d);
        assertThat(rec.getCandidates()).hasSize(d.candidates().size());
        assertThat(rec.getConfigHash()).isEqualTo(CFG.hash());
        assertThat(rec.getDecision().name()).isEqualTo(d.decision().name());
        assertThat(rec.getBand().name()).isEqualTo(d.band().name());
        assertThat(rec.getCandidates().get(0).getParts()).isEqualTo(d.candidates().get(0).parts());
        Scorer.Ranking again = Scorer.rescore(ChoiceRecords.storedCandidates(rec, CFG.text()), CFG);
        assertThat(again.candidates()).isEqualTo(d.candidates());
        assertThat(again.decision()).isEqualTo(d.decision());
        SessionChoiceConfig strict = CFG.withBands(new SessionChoiceConfig.Bands(100, 3));
        assertThat(Scorer.rescore(ChoiceRecords.storedCandidates(rec, strict.text()), strict).decision()).isEqualTo(Decision.Choice.NEW);
    }

    @Test
    void afterTheTimeBudgetLinksAndStructureDecideAlone() {
        // the ticker jumps 4 s at every reading: word matching stops before the first candidate
        AtomicLong t = new AtomicLong();
        TaskFacts mine = new TaskFacts("Fix KAFKA-42 in SessionStore", null, List.of(), null, null, null, null, null, List.of("t9"));
        List<CandidateSession> l = List.of(
                session("anchors", 10, task("t1", facts("KAFKA-42 SessionStore"))).build(),
                session("linked", 500, task("t9", facts("Build the ranking API"))).build());
        Decision d = Scorer.decide(run(mine), l, corpus(100), CFG, NOW, () -> t.getAndAdd(4_000_000_000L));
        assertThat(d.wordMatchingCut()).isTrue();
        assertThat(of(d, "anchors").signals().anchors()).isZero();
        assertThat(d.sessionId()).isEqualTo("linked");
        assertThat(d.decision()).isEqualTo(Decision.Choice.CONTINUE);
        Decision inTime = Scorer.decide(run(mine), l, corpus(100), CFG, NOW, () -> 0L);
        assertThat(inTime.wordMatchingCut()).isFalse();
        assertThat(of(inTime, "anchors").signals().anchors()).isEqualTo(2);
    }

    @Test
    void unavailableAndNotLinkedTurnAContinueIntoANewSession() {
        Decision d = decide(run(new TaskFacts("x", null, List.of(), null, null, null, null, null, List.of("t1"))),
                session("s1", 5, task("t1", facts("y"))));
        assertThat(d.decision()).isEqualTo(Decision.Choice.CONTINUE);
        assertThat(d.unavailable("SessionGoneError").note()).isEqualTo(Decision.UNAVAILABLE);
        assertThat(d.unavailable("x").decision()).isEqualTo(Decision.Choice.NEW);
        assertThat(d.notLinked("other account").note()).isEqualTo(Decision.NOT_LINKED);
    }
}
