package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 "Score" (too full) and "Bands" (decide), at their exact edges, through stored signals. */
class BandsTest {
    static final Instant T = Instant.parse("2026-03-01T11:00:00Z");

    /** Signals worth {@code anchors × 3 + topic × 6}, with the given fill and tasks. */
    static Signals sig(int anchors, double topic, Double fill, int tasks) {
        List<String> shown = new ArrayList<>();
        for (int i = 0; i < anchors; i++) shown.add("A" + i);
        return new Signals(false, false, false, false, anchors, shown, 0, topic, List.of(), false, false, false, fill, tasks, null);
    }

    static Scorer.Ranking rank(Signals... s) {
        List<Scorer.StoredCandidate> in = new ArrayList<>();
        for (int i = 0; i < s.length; i++) in.add(new Scorer.StoredCandidate("s" + i, T.minusSeconds(i), s[i]));
        return Scorer.rescore(in, CFG);
    }

    @Test
    void bandEdges() {
        record Case(String rule, Signals s, Decision.Choice choice, Decision.Band band) {
        }
        List<Case> cases = List.of(
                new Case("exactly bands.confident (6) continues", sig(2, 0, null, 1), Decision.Choice.CONTINUE, Decision.Band.CONFIDENT),
                new Case("5.99 is unsure", sig(1, 2.99 / 6, null, 1), Decision.Choice.NEW, Decision.Band.UNSURE),
                new Case("exactly bands.unsure (3) is unsure", sig(1, 0, null, 1), Decision.Choice.NEW, Decision.Band.UNSURE),
                new Case("2.99 is below", sig(0, 2.99 / 6, null, 1), Decision.Choice.NEW, Decision.Band.BELOW),
                new Case("0 is below", sig(0, 0, null, 1), Decision.Choice.NEW, Decision.Band.BELOW));
        for (Case c : cases) {
            Scorer.Ranking r = rank(c.s());
            assertThat(r.decision()).as(c.rule()).isEqualTo(c.choice());
            assertThat(r.band()).as(c.rule()).isEqualTo(c.band());
        }
        assertThat(rank(sig(1, 2.99 / 6, null, 1)).best().score()).isEqualTo(5.99);
    }

    @Test
    void tooFullEdges() {
        record Case(String rule, Double fill, int tasks, boolean tooFull) {
        }
        List<Case> cases = List.of(
                new Case("fill 0.70 is not more than size.hard", 0.70, 1, false),
                new Case("fill 0.7001 is too full", 0.7001, 1, true),
                new Case("unknown fill, 15 tasks", null, 15, false),
                new Case("unknown fill, 16 tasks is too full", null, 16, true),
                new Case("known low fill, 40 tasks", 0.2, 40, false));
        for (Case c : cases) {
            ScoredCandidate s = Scorer.score("s", T, sig(3, 0, c.fill(), c.tasks()), CFG);
            assertThat(s.tooFull()).as(c.rule()).isEqualTo(c.tooFull());
        }
    }

    @Test
    void tiesGoToTheMostRecentlyActive() {
        Scorer.Ranking r = rank(sig(2, 0, null, 1), sig(2, 0, null, 1));
        assertThat(r.chosen().sessionId()).isEqualTo("s0");
        List<Scorer.StoredCandidate> in = List.of(
                new Scorer.StoredCandidate("old", T.minusSeconds(100), sig(2, 0, null, 1)),
                new Scorer.StoredCandidate("new", T, sig(2, 0, null, 1)));
        assertThat(Scorer.rescore(in, CFG).chosen().sessionId()).isEqualTo("new");
    }

    @Test
    void bestConfidentTooFull_continuesTheNextConfidentOne() {
        Scorer.Ranking r = rank(sig(2, 0.5, 0.9, 1), sig(2, 0, 0.1, 1));
        assertThat(r.decision()).isEqualTo(Decision.Choice.CONTINUE);
        assertThat(r.chosen().sessionId()).isEqualTo("s1");
    }

    @Test
    void everyConfidentOneTooFull_aNewSessionGetsTheBestOnesLastReport() {
        Decision d = decide(run(facts("Fix KAFKA-42 in SessionStore")),
                session("full", 600, task("t1", facts("KAFKA-42 SessionStore"))).fill(0.95),
                session("weak", 700, task("t2", facts("unrelated"))));
        assertThat(d.decision()).isEqualTo(Decision.Choice.NEW);
        assertThat(d.band()).isEqualTo(Decision.Band.CONFIDENT);
        assertThat(d.note()).isEqualTo(Decision.TOO_FULL);
        assertThat(d.briefFromSessionId()).isEqualTo("full");
        assertThat(d.briefReport()).isEqualTo("last report of full");
        assertThat(d.sessionId()).isEqualTo("full");
        assertThat(d.reason()).contains("too full (95% of its context window)").contains("both name KAFKA-42, SessionStore");
    }

    @Test
    void decisionsCarryBandNoteReasonAndEveryCandidateBestFirst() {
        Decision unsure = decide(run(facts("Fix KAFKA-42")), session("s1", 600, task("t1", facts("KAFKA-42"))));
        assertThat(unsure.band()).isEqualTo(Decision.Band.UNSURE);
        assertThat(unsure.note()).isNull();
        assertThat(unsure.sessionId()).isEqualTo("s1");
        assertThat(unsure.reason()).startsWith("Started a new session: the best session scored 3 (unsure; continuing needs 6)");
        Decision below = decide(run(facts("Something else entirely")), session("s1", 600, task("t1", facts("KAFKA-42"))));
        assertThat(below.band()).isEqualTo(Decision.Band.BELOW);
        Decision none = decide(run(facts("x")));
        assertThat(none.band()).isEqualTo(Decision.Band.NONE);
        assertThat(none.candidates()).isEmpty();
        Decision cont = decide(run(facts("Fix KAFKA-42 in SessionStore")),
                session("a", 600, task("t1", facts("unrelated"))), session("b", 700, task("t2", facts("KAFKA-42 SessionStore"))));
        assertThat(cont.decision()).isEqualTo(Decision.Choice.CONTINUE);
        assertThat(cont.sessionId()).isEqualTo("b");
        assertThat(cont.reason()).startsWith("Continued the agent's session: both name KAFKA-42, SessionStore");
        assertThat(cont.candidates()).extracting(ScoredCandidate::sessionId).containsExactly("b", "a");
        assertThat(cont.configHash()).hasSize(64);
    }
}
