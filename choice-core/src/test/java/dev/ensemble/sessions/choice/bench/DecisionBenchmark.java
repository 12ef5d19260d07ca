package dev.ensemble.sessions.choice.bench;

import dev.ensemble.sessions.schema.testing.SharedData;
import dev.ensemble.sessions.choice.CandidateSession;
import dev.ensemble.sessions.choice.ChoiceEvaluation;
import dev.ensemble.sessions.choice.CorpusStats;
import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.NewRun;
import dev.ensemble.sessions.choice.Scorer;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.SessionTask;
import dev.ensemble.sessions.choice.TaskFacts;
import dev.ensemble.sessions.choice.TextAnalysis;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One session-choice decision with 20 candidates over a 2,000-task rarity table of real texts (the Kafka history):
 * the corpus is the 2,000 tasks before the last 150, the candidates 25 sessions of 3 consecutive real tasks each
 * (with their changed files; 20 pass the filters), and each call decides for the next of 50 real later tasks.
 * The analysis of the sessions' tasks is memoised (as in a service, where a task is analysed when claimed); the new
 * task is analysed in every call.
 * <p>
 * Run: {@code mvn -q -B -pl choice-core -am -Pbench verify} (see docs/benchmarks.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DecisionBenchmark {
    private final SessionChoiceConfig cfg = SessionChoiceConfig.defaults();
    private CorpusStats corpus;
    private List<CandidateSession> sessions;
    private List<NewRun> runs;
    private Instant now;
    private int next;

    @Setup
    public void setUp() {
        Path history = SharedData.path("data/kafka-history/tasks.jsonl");
        if (!Files.exists(history)) throw new IllegalStateException("the benchmark needs " + history + " (../shared/data)");
        List<ChoiceEvaluation.HistoryTask> all = ChoiceEvaluation.read(history, 0);
        int end = all.size() - 50, sessionsFrom = end - 75, corpusFrom = sessionsFrom - 2000;
        TextAnalysis ta = TextAnalysis.forConfig(cfg.text());
        corpus = new CorpusStats("bench", "computer-1", cfg.limits().corpusTasks());
        for (ChoiceEvaluation.HistoryTask h : all.subList(corpusFrom, sessionsFrom)) {
            corpus.add(ta.corpusDoc(h.id(), facts(h), h.files(), cfg.limits().corpusFieldChars()));
        }
        sessions = new ArrayList<>();
        for (int s = 0; s < 25; s++) {
            List<SessionTask> tasks = new ArrayList<>();
            for (ChoiceEvaluation.HistoryTask h : all.subList(sessionsFrom + 3 * s, sessionsFrom + 3 * s + 3)) {
                tasks.add(new SessionTask(h.id(), "local", "bench", null, facts(h), h.files(), null));
            }
            ChoiceEvaluation.HistoryTask last = all.get(sessionsFrom + 3 * s + 2);
            sessions.add(new CandidateSession("s-" + last.id(), last.at(), CandidateSession.Status.IDLE, true,
                    NewRun.RunKind.TASK_RUN, false, "computer-1", "claude-code", null, 3, null, tasks));
        }
        runs = new ArrayList<>();
        for (ChoiceEvaluation.HistoryTask h : all.subList(end, all.size())) {
            runs.add(NewRun.taskRun("run-" + h.id(), h.id(), facts(h), "local", "bench", null, "computer-1", "claude-code"));
        }
        now = all.get(all.size() - 1).at();
        Decision d = decide();
        if (d.candidates().size() != 20) throw new IllegalStateException("expected 20 candidates, got " + d.candidates().size());
    }

    private static TaskFacts facts(ChoiceEvaluation.HistoryTask h) {
        return TaskFacts.of(h.title(), h.description(), h.labels());
    }

    @Benchmark
    public Decision decide() {
        NewRun run = runs.get(next++ % runs.size());
        return Scorer.decide(run, sessions, corpus, cfg, now, System::nanoTime);
    }
}
