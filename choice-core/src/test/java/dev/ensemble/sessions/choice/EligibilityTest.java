package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.UnaryOperator;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 first paragraph: who may choose at all; and the two switches (newSession, linkedSessions). */
class EligibilityTest {
    static NewRun with(UnaryOperator<NewRun> f) {
        return f.apply(run(facts("Build the ranking API")));
    }

    static NewRun copy(NewRun r, NewRun.RunKind kind, String session, String cont, String folder, String repo, String pr,
                       String chat, boolean node, boolean retry, boolean newSession) {
        return new NewRun(r.runId(), r.taskId(), r.facts(), r.space(), r.account(), r.projectId(), r.computerId(), r.agent(),
                kind, session, cont, folder, repo, pr, chat, node, retry, newSession);
    }

    @Test
    void onlyANewRunThatWouldStartANewSessionInANewFolderChooses() {
        record Case(String rule, NewRun run) {
        }
        NewRun r = run(facts("Build the ranking API"));
        List<Case> notEligible = List.of(
                new Case("a session is named (Assign.session)", copy(r, NewRun.RunKind.TASK_RUN, "s1", null, null, null, null, null, false, false, false)),
                new Case("continueFromJobId", copy(r, NewRun.RunKind.TASK_RUN, null, "job-1", null, null, null, null, false, false, false)),
                new Case("folder", copy(r, NewRun.RunKind.TASK_RUN, null, null, "/shared", null, null, null, false, false, false)),
                new Case("repository", copy(r, NewRun.RunKind.TASK_RUN, null, null, null, "org/repo", null, null, false, false, false)),
                new Case("pull request", copy(r, NewRun.RunKind.TASK_RUN, null, null, null, null, "org/repo#4", null, false, false, false)),
                new Case("chat", copy(r, NewRun.RunKind.TASK_RUN, null, null, null, null, null, "chat-1", false, false, false)),
                new Case("terminal chat run", copy(r, NewRun.RunKind.TERMINAL_CHAT, null, null, null, null, null, null, false, false, false)),
                new Case("Ensemble Node plan", copy(r, NewRun.RunKind.TASK_RUN, null, null, null, null, null, null, true, false, false)),
                new Case("retry", copy(r, NewRun.RunKind.TASK_RUN, null, null, null, null, null, null, false, true, false)));
        S fitting = session("s-fit", 10, task("t1", facts("Build the ranking API")));
        for (Case c : notEligible) {
            assertThat(Eligibility.whyNot(c.run())).as(c.rule()).isPresent();
            Decision d = decide(c.run(), fitting);
            assertThat(d.decision()).as(c.rule()).isEqualTo(Decision.Choice.NEW);
            assertThat(d.note()).as(c.rule()).isEqualTo(Decision.NOT_ELIGIBLE);
            assertThat(d.band()).as(c.rule()).isEqualTo(Decision.Band.NONE);
            assertThat(d.candidates()).as(c.rule()).isEmpty();
        }
        assertThat(Eligibility.whyNot(r)).isEmpty();
    }

    @Test
    void newSessionAskedForStartsANewOneWithNoteNewSession() {
        NewRun r = run(facts("x"));
        NewRun asked = copy(r, NewRun.RunKind.TASK_RUN, null, null, null, null, null, null, false, false, true);
        Decision d = decide(asked, session("s1", 5, task("t1", facts("x"))));
        assertThat(d.decision()).isEqualTo(Decision.Choice.NEW);
        assertThat(d.note()).isEqualTo(Decision.NEW_SESSION);
    }

    @Test
    void linkedSessionsOffStartsANewOneWithNoteDisabled() {
        NewRun r = run(new TaskFacts("x", null, List.of(), null, null, null, null, null, List.of("t1")));
        Decision d = decide(r, corpus(100), CFG.withEnabled(false), session("s1", 5, task("t1", facts("x"))));
        assertThat(d.decision()).isEqualTo(Decision.Choice.NEW);
        assertThat(d.note()).isEqualTo(Decision.DISABLED);
        assertThat(d.configVersion()).isEqualTo(CFG.version());
    }
}
