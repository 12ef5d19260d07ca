package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 "Candidates": each filter, the age limit at its edge, the count limit, newest first. */
class CandidatesTest {
    final NewRun run = run(facts("Build the ranking API"));

    Candidates.Filtered filter(CandidateSession... s) {
        return Candidates.filter(run, List.of(s), CFG.limits(), NOW);
    }

    @Test
    void eachFilterExcludesWithItsRule() {
        record Case(String rule, UnaryOperator<S> change, String excludedAs) {
        }
        SessionTask otherSpace = new SessionTask("t9", "space-2", ACCOUNT, null, facts("x"), List.of(), null);
        SessionTask otherAccount = new SessionTask("t9", SPACE, "acct-2", null, facts("x"), List.of(), null);
        SessionTask inProject = new SessionTask("t9", SPACE, ACCOUNT, "proj-1", facts("x"), List.of(), null);
        SessionTask noFacts = new SessionTask("t9", SPACE, ACCOUNT, null, null, List.of(), null);
        List<Case> cases = List.of(
                new Case("this computer's sessions", s -> s.computer("comp-2"), Candidates.OTHER_COMPUTER),
                new Case("of the same agent", s -> s.agent("codex"), Candidates.OTHER_AGENT),
                new Case("idle (not working)", s -> s.status(CandidateSession.Status.WORKING), Candidates.NOT_IDLE),
                new Case("idle (not queued)", s -> s.status(CandidateSession.Status.QUEUED), Candidates.NOT_IDLE),
                new Case("idle (not waiting)", s -> s.status(CandidateSession.Status.WAITING), Candidates.NOT_IDLE),
                new Case("resumable", s -> s.resumable(false), Candidates.NOT_RESUMABLE),
                new Case("not chats (terminal)", s -> s.kind(NewRun.RunKind.TERMINAL_CHAT), Candidates.CHAT),
                new Case("not chats (assistant)", s -> s.kind(NewRun.RunKind.ASSISTANT_CHAT), Candidates.CHAT),
                new Case("a coding session (not a node's run)", s -> s.kind(NewRun.RunKind.NODE_RUN), Candidates.NOT_TASK_SESSION),
                new Case("not being deleted", s -> s.deleting(true), Candidates.DELETING),
                new Case("active in the last maxAgeDays (30 days + 1 ms)", s -> s.last(NOW.minus(Duration.ofDays(30)).minusMillis(1)), Candidates.TOO_OLD),
                new Case("every task of the same space", s -> { s.tasks.add(otherSpace); return s; }, Candidates.OTHER_SPACE),
                new Case("every task of the same account", s -> { s.tasks.add(otherAccount); return s; }, Candidates.OTHER_SPACE),
                new Case("in its project, or all in none", s -> { s.tasks.add(inProject); return s; }, Candidates.OTHER_PROJECT),
                new Case("a run claimed by an older runtime has no facts", s -> { s.tasks.add(noFacts); return s; }, Candidates.NO_FACTS));
        for (Case c : cases) {
            CandidateSession s = c.change().apply(session("s1", 5, task("t1", facts("x")))).build();
            Candidates.Filtered f = filter(s);
            assertThat(f.kept()).as(c.rule()).isEmpty();
            assertThat(f.excluded()).as(c.rule()).containsEntry("s1", c.excludedAs());
        }
        assertThat(filter(session("s1", 5, task("t1", facts("x"))).build()).kept()).hasSize(1);
    }

    @Test
    void whenNoneIsLeftTheDecisionSaysWhatLeftEachOut() {
        CandidateSession old1 = session("s1", 0, task("t1", facts("x"))).last(NOW.minus(Duration.ofDays(31))).build();
        CandidateSession old2 = session("s2", 0, task("t2", facts("x"))).last(NOW.minus(Duration.ofDays(40))).build();
        CandidateSession working = session("s3", 5, task("t3", facts("x"))).status(CandidateSession.Status.WORKING).build();
        Candidates.Filtered f = filter(old1, working, old2);
        assertThat(Candidates.explain(f.excluded(), CFG.limits()))
                .isEqualTo(" (of 3 sessions: 1 not idle, 2 inactive for more than limits.maxAgeDays (30 days))");
        assertThat(Candidates.explain(filter().excluded(), CFG.limits())).isEqualTo(" (no session to consider)");

        Decision d = Scorer.decide(run, List.of(old1), new CorpusStats(ACCOUNT, COMPUTER, 100), CFG, NOW, () -> 0L);
        assertThat(d.reason()).isEqualTo("Started a new session: no session on this computer fits the candidate rules"
                + " (of 1 session: 1 inactive for more than limits.maxAgeDays (30 days))");
    }

    @Test
    void exactlyMaxAgeDaysOldIsStillACandidate() {
        assertThat(filter(session("s1", 0, task("t1", facts("x"))).last(NOW.minus(Duration.ofDays(30))).build()).kept()).hasSize(1);
    }

    @Test
    void sameProjectIsACandidate() {
        NewRun inProj = NewRun.taskRun("r", "t", facts("x"), SPACE, ACCOUNT, "proj-1", COMPUTER, AGENT);
        CandidateSession s = session("s1", 5, new SessionTask("t1", SPACE, ACCOUNT, "proj-1", facts("x"), List.of(), null)).build();
        CandidateSession none = session("s2", 5, task("t2", facts("x"))).build();
        Candidates.Filtered f = Candidates.filter(inProj, List.of(s, none), CFG.limits(), NOW);
        assertThat(f.kept()).extracting(CandidateSession::sessionId).containsExactly("s1");
        assertThat(f.excluded()).containsEntry("s2", Candidates.OTHER_PROJECT);
    }

    @Test
    void atMostLimitCandidatesNewestFirst() {
        List<CandidateSession> many = new ArrayList<>();
        for (int i = 0; i < 25; i++) many.add(session(String.format("s%02d", i), i, task("t" + i, facts("x"))).build());
        java.util.Collections.reverse(many);
        Candidates.Filtered f = Candidates.filter(run, many, CFG.limits(), NOW);
        assertThat(f.kept()).hasSize(20);
        assertThat(f.kept().get(0).sessionId()).isEqualTo("s00");
        assertThat(f.kept().get(19).sessionId()).isEqualTo("s19");
        assertThat(f.excluded()).hasSize(5).containsEntry("s24", Candidates.OVER_LIMIT);
    }
}
