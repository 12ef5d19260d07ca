package dev.ensemble.sessions.choice;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Small builders for the tables of cases. */
final class Fx {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    static final String SPACE = "space-1", ACCOUNT = "acct-1", COMPUTER = "comp-1", AGENT = "claude-code";
    static final SessionChoiceConfig CFG = SessionChoiceConfig.defaults();

    private Fx() {
    }

    static TaskFacts facts(String title) {
        return TaskFacts.of(title, null, List.of());
    }

    static TaskFacts facts(String title, String description) {
        return TaskFacts.of(title, description, List.of());
    }

    static NewRun run(TaskFacts f) {
        return NewRun.taskRun("run-new", "task-new", f, SPACE, ACCOUNT, null, COMPUTER, AGENT);
    }

    static SessionTask task(String id, TaskFacts f) {
        return new SessionTask(id, SPACE, ACCOUNT, null, f, List.of(), null);
    }

    static SessionTask task(String id, TaskFacts f, List<String> files) {
        return new SessionTask(id, SPACE, ACCOUNT, null, f, files, null);
    }

    /** An idle, resumable task session on this computer and agent, active {@code agoMinutes} before NOW. */
    static S session(String id, long agoMinutes, SessionTask... tasks) {
        return new S(id, NOW.minus(Duration.ofMinutes(agoMinutes)), List.of(tasks));
    }

    /** A mutable session builder. */
    static final class S {
        String id;
        Instant last;
        CandidateSession.Status status = CandidateSession.Status.IDLE;
        boolean resumable = true, deleting = false;
        NewRun.RunKind kind = NewRun.RunKind.TASK_RUN;
        String computer = COMPUTER, agent = AGENT, report;
        Double fill;
        Integer taskCount;
        List<SessionTask> tasks;

        S(String id, Instant last, List<SessionTask> tasks) {
            this.id = id;
            this.last = last;
            this.tasks = new ArrayList<>(tasks);
            this.report = "last report of " + id;
        }

        S fill(Double f) { fill = f; return this; }
        S tasks(int n) { taskCount = n; return this; }
        S status(CandidateSession.Status s) { status = s; return this; }
        S resumable(boolean r) { resumable = r; return this; }
        S deleting(boolean d) { deleting = d; return this; }
        S kind(NewRun.RunKind k) { kind = k; return this; }
        S computer(String c) { computer = c; return this; }
        S agent(String a) { agent = a; return this; }
        S last(Instant i) { last = i; return this; }

        CandidateSession build() {
            return new CandidateSession(id, last, status, resumable, kind, deleting, computer, agent, fill,
                    taskCount != null ? taskCount : tasks.size(), report, tasks);
        }
    }

    /** A corpus of {@code n} filler tasks whose words and anchors share nothing with the tests' texts. */
    static CorpusStats corpus(int n) {
        CorpusStats c = new CorpusStats(ACCOUNT, COMPUTER, 2000);
        for (int i = 0; i < n; i++) c.add(new TextAnalysis.CorpusDoc("filler-" + i, Set.of("zzfiller" + i), Set.of()));
        return c;
    }

    static Decision decide(NewRun run, CorpusStats corpus, SessionChoiceConfig cfg, S... sessions) {
        List<CandidateSession> list = new ArrayList<>();
        for (S s : sessions) list.add(s.build());
        return Scorer.decide(run, list, corpus, cfg, NOW, () -> 0L);
    }

    static Decision decide(NewRun run, S... sessions) {
        return decide(run, corpus(100), CFG, sessions);
    }

    static ScoredCandidate only(Decision d) {
        return d.candidates().get(0);
    }

    static ScoredCandidate of(Decision d, String sessionId) {
        return d.candidates().stream().filter(c -> c.sessionId().equals(sessionId)).findFirst().orElseThrow();
    }

    /** Signals with everything off, for band and score tables. */
    static Signals signals() {
        return new Signals(false, false, false, false, 0, List.of(), 0, 0, List.of(), false, false, false, null, 1, null);
    }
}
