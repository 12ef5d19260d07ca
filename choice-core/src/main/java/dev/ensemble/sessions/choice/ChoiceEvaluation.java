package dev.ensemble.sessions.choice;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queries.mlt.MoreLikeThis;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * evaluate-choice (pure, no Kafka): replays a task history in the form of {@code data/kafka-history/tasks.jsonl} as
 * one person's work on one computer with one agent. Each task becomes a run whose decision is applied (continue: the
 * run joins that session; new: a new session), sessions age by the tasks' times ({@code at}), the files a session's
 * runs changed come from the history ({@code files}), and the rarity table slides.
 * <p>
 * Ground truth: a task sharing an issue key with an earlier task is a follow-up of it; a continue is right when the
 * session continued holds such an earlier task. Two baselines pick among the same candidates at every step (the
 * sessions themselves are formed by the scorer's decisions): the most recent candidate, and Lucene MoreLikeThis top-1
 * over the candidates' text in an in-memory index; both always continue when they have a pick.
 */
public final class ChoiceEvaluation {
    static final String ACCOUNT = "history", SPACE = "local:history", COMPUTER = "computer-1", AGENT = "claude-code";

    private ChoiceEvaluation() {
    }

    /** One task of the history (a commit): id, time, title, description, labels, issue keys, files changed (first 50). */
    public record HistoryTask(String id, Instant at, String title, String description, List<String> labels,
                              List<String> issueKeys, List<String> files) {
    }

    /**
     * Reads at most {@code limit} tasks (≤ 0: all) of a tasks.jsonl file, in file order.
     *
     * @throws IllegalArgumentException naming the file (and the line) when it is no file, cannot be read, or a line is
     *                                  not a task: not valid JSON, or without its {@code id} or ISO-8601 {@code at}
     */
    public static List<HistoryTask> read(Path file, int limit) {
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(file + " is a folder, not a file");
        }
        ObjectMapper json = new ObjectMapper();
        List<HistoryTask> out = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int number = 0;
            while ((line = r.readLine()) != null && (limit <= 0 || out.size() < limit)) {
                number++;
                if (line.isBlank()) continue;
                JsonNode n;
                try {
                    n = json.readTree(line);
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    var at = e.getLocation();
                    throw new IllegalArgumentException(file + ": not valid JSON at line " + number
                            + (at == null || at.getColumnNr() < 1 ? "" : ", column " + at.getColumnNr()) + ": " + dev.ensemble.sessions.schema.JsonErrors.problem(e), e);
                }
                JsonNode id = n.path("id");
                if (!n.isObject() || !id.isValueNode() || id.isNull() || id.asText().isEmpty()) {
                    throw new IllegalArgumentException(file + ": line " + number + " is no task: it has no \"id\"");
                }
                Instant when;
                try {
                    when = Instant.parse(n.path("at").asText());
                } catch (java.time.format.DateTimeParseException e) {
                    throw new IllegalArgumentException(file + ": line " + number + ": \"at\" must be an ISO-8601 time such as "
                            + "2026-11-01T09:30:00Z, not " + (n.has("at") ? n.get("at").toString() : "missing"), e);
                }
                out.add(new HistoryTask(n.get("id").asText(), when, n.path("title").asText(""),
                        n.path("description").asText(""), strings(n.get("labels")), strings(n.get("issueKeys")), strings(n.get("files"))));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(ConfigLoader.unreadable(file, e), e);
        }
        return out;
    }

    private static List<String> strings(JsonNode a) {
        List<String> out = new ArrayList<>();
        if (a != null) for (JsonNode x : a) out.add(x.asText());
        return out;
    }

    /** What happened at one task of the replay. */
    public record Step(boolean followUp, boolean followUpOnlyViaPr, boolean truthWasCandidate, int candidates,
                       Decision.Choice choice, Decision.Band band, String note, boolean continuedRight,
                       boolean recentRight, boolean mltPicked, boolean mltRight) {
    }

    /**
     * Precision and recall of one policy over a range of steps.
     *
     * @param continues  how many times it continued
     * @param right      continues into a session holding an earlier task with a shared key
     * @param recallOf   follow-ups whose earlier session was a candidate
     * @param recalled   of those, continued into such a session
     */
    public record Figures(int continues, int right, int recallOf, int recalled) {
        /** right / continues; NaN when it never continued. */
        public double precision() {
            return continues == 0 ? Double.NaN : (double) right / continues;
        }

        /** recalled / recallOf. */
        public double recall() {
            return recallOf == 0 ? Double.NaN : (double) recalled / recallOf;
        }

        /** Harmonic mean of precision and recall (0 when either is 0 or undefined). */
        public double f1() {
            double p = precision(), r = recall();
            return Double.isNaN(p) || Double.isNaN(r) || p + r == 0 ? 0 : 2 * p * r / (p + r);
        }
    }

    /** Aggregates of a range of steps. */
    public record Summary(int tasks, int followUps, int followUpsOnlyViaPr, int withCandidates, Figures scorer,
                          Figures recent, Figures mlt, Map<Decision.Band, Integer> bands, int tooFull) {
    }

    /** The steps of a replay. */
    public record Replay(List<Step> steps) {
        /** Aggregates steps [from, to). */
        public Summary summary(int from, int to) {
            int fu = 0, onlyPr = 0, withCand = 0, tooFull = 0;
            int sc = 0, sr = 0, rc = 0, rr = 0, mc = 0, mr = 0, recallOf = 0, sRec = 0, rRec = 0, mRec = 0;
            Map<Decision.Band, Integer> bands = new EnumMap<>(Decision.Band.class);
            for (Decision.Band b : Decision.Band.values()) bands.put(b, 0);
            for (Step s : steps.subList(from, Math.min(to, steps.size()))) {
                if (s.followUp()) fu++;
                if (s.followUpOnlyViaPr()) onlyPr++;
                if (s.candidates() > 0) {
                    withCand++;
                    rc++;
                    if (s.recentRight()) rr++;
                }
                bands.merge(s.band(), 1, Integer::sum);
                if (Decision.TOO_FULL.equals(s.note())) tooFull++;
                if (s.choice() == Decision.Choice.CONTINUE) {
                    sc++;
                    if (s.continuedRight()) sr++;
                }
                if (s.mltPicked()) {
                    mc++;
                    if (s.mltRight()) mr++;
                }
                if (s.truthWasCandidate()) {
                    recallOf++;
                    if (s.continuedRight()) sRec++;
                    if (s.recentRight()) rRec++;
                    if (s.mltRight()) mRec++;
                }
            }
            return new Summary(Math.min(to, steps.size()) - from, fu, onlyPr, withCand, new Figures(sc, sr, recallOf, sRec),
                    new Figures(rc, rr, recallOf, rRec), new Figures(mc, mr, recallOf, mRec), bands, tooFull);
        }
    }

    private static final class Session {
        final String id;
        final List<SessionTask> tasks = new ArrayList<>();
        Instant lastActive;

        Session(String id) {
            this.id = id;
        }

        CandidateSession view() {
            return new CandidateSession(id, lastActive, CandidateSession.Status.IDLE, true, NewRun.RunKind.TASK_RUN, false,
                    COMPUTER, AGENT, null, tasks.size(), null, tasks);
        }
    }

    /**
     * Replays {@code tasks} under {@code cfg}.
     *
     * @param baselines also run the two baselines (MoreLikeThis costs an in-memory index per step)
     */
    public static Replay replay(List<HistoryTask> tasks, SessionChoiceConfig cfg, boolean baselines) {
        return replay(tasks, cfg, baselines, (task, d) -> { });
    }

    /**
     * {@link #replay(List, SessionChoiceConfig, boolean)}, handing each task's {@link Decision} to {@code onDecision}
     * in history order (for example to turn it into a SessionChoiceRecorded record with {@link ChoiceRecords#toEvent}).
     */
    public static Replay replay(List<HistoryTask> tasks, SessionChoiceConfig cfg, boolean baselines,
                                java.util.function.BiConsumer<HistoryTask, Decision> onDecision) {
        return replay(tasks, cfg, baselines, (h, d, s) -> onDecision.accept(h, d));
    }

    /** What a replay hands on at each task: the task, its decision and the step as scored (for {@code --dump}). */
    @FunctionalInterface
    public interface Listener {
        void step(HistoryTask task, Decision decision, Step step);
    }

    /** {@link #replay(List, SessionChoiceConfig, boolean)}, handing each task, decision and step to {@code listener}. */
    public static Replay replay(List<HistoryTask> tasks, SessionChoiceConfig cfg, boolean baselines, Listener listener) {
        return replay(tasks, cfg, baselines ? 0 : Integer.MAX_VALUE, listener);
    }

    /**
     * {@link #replay(List, SessionChoiceConfig, boolean, Listener)} with the MoreLikeThis baseline run only from task
     * index {@code baselinesFrom} on (it costs an in-memory index per step; the most recent candidate is always kept).
     */
    public static Replay replay(List<HistoryTask> tasks, SessionChoiceConfig cfg, int baselinesFrom, Listener listener) {
        boolean baselines = baselinesFrom < tasks.size();
        TextAnalysis ta = TextAnalysis.forConfig(cfg.text());
        CorpusStats corpus = new CorpusStats(ACCOUNT, COMPUTER, cfg.limits().corpusTasks());
        List<Session> live = new ArrayList<>();
        Map<String, Session> sessionOfTask = new HashMap<>();
        Map<String, List<String>> tasksByKey = new HashMap<>();
        List<Step> steps = new ArrayList<>(tasks.size());
        long maxAgeMs = cfg.limits().maxAgeDays() * 86_400_000L;
        Analyzer mltAnalyzer = baselines ? new EnglishAnalyzer() : null;
        for (HistoryTask h : tasks) {
            Instant now = h.at();
            live.removeIf(s -> now.toEpochMilli() - s.lastActive.toEpochMilli() > maxAgeMs);
            TaskFacts facts = TaskFacts.of(h.title(), h.description(), h.labels());
            NewRun run = NewRun.taskRun(h.id(), h.id(), facts, SPACE, ACCOUNT, null, COMPUTER, AGENT);

            // ground truth: the sessions holding an earlier task that shares an issue key
            Set<String> rightSessions = new HashSet<>();
            boolean viaOther = false, viaPr = false;
            for (String k : h.issueKeys()) {
                List<String> earlier = tasksByKey.get(k);
                if (earlier == null) continue;
                if (k.startsWith("#")) viaPr = true;
                else viaOther = true;
                for (String e : earlier) rightSessions.add(sessionOfTask.get(e).id);
            }
            boolean followUp = !rightSessions.isEmpty();

            List<CandidateSession> views = new ArrayList<>(live.size());
            for (Session s : live) views.add(s.view());
            List<CandidateSession> kept = Candidates.filter(run, views, cfg.limits(), now).kept();
            boolean truthCandidate = false;
            for (CandidateSession c : kept) truthCandidate |= rightSessions.contains(c.sessionId());

            Decision d = Scorer.decide(run, views, corpus, cfg, now, () -> 0L);
            boolean continuedRight = d.decision() == Decision.Choice.CONTINUE && rightSessions.contains(d.sessionId());
            boolean recentRight = !kept.isEmpty() && rightSessions.contains(kept.get(0).sessionId());
            String mltPick = baselines && steps.size() >= baselinesFrom && !kept.isEmpty() ? mltTop1(mltAnalyzer, ta, kept, facts) : null;
            Step step = new Step(followUp, followUp && viaPr && !viaOther, truthCandidate, kept.size(), d.decision(), d.band(),
                    d.note(), continuedRight, recentRight, mltPick != null, mltPick != null && rightSessions.contains(mltPick));
            steps.add(step);
            listener.step(h, d, step);

            // apply the decision
            Session target = null;
            if (d.decision() == Decision.Choice.CONTINUE) {
                for (Session s : live) if (s.id.equals(d.sessionId())) target = s;
            }
            if (target == null) {
                target = new Session(h.id());
                live.add(target);
            }
            target.tasks.add(new SessionTask(h.id(), SPACE, ACCOUNT, null, facts, h.files(), null));
            target.lastActive = now;
            sessionOfTask.put(h.id(), target);
            for (String k : h.issueKeys()) tasksByKey.computeIfAbsent(k, x -> new ArrayList<>()).add(h.id());
            corpus.add(ta.corpusDoc(h.id(), facts, h.files(), cfg.limits().corpusFieldChars()));
        }
        return new Replay(steps);
    }

    /** MoreLikeThis top-1 over the candidates' titles and descriptions, in an in-memory index; the session id or null. */
    static String mltTop1(Analyzer analyzer, TextAnalysis ta, List<CandidateSession> kept, TaskFacts facts) {
        try (ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(analyzer))) {
                for (CandidateSession c : kept) {
                    StringBuilder text = new StringBuilder();
                    for (SessionTask t : c.tasks()) {
                        text.append(t.facts().title()).append('\n');
                        if (t.facts().description() != null) text.append(t.facts().description()).append('\n');
                    }
                    Document doc = new Document();
                    doc.add(new StoredField("id", c.sessionId()));
                    doc.add(new TextField("text", text.toString(), Field.Store.NO));
                    w.addDocument(doc);
                }
            }
            try (DirectoryReader r = DirectoryReader.open(dir)) {
                MoreLikeThis mlt = new MoreLikeThis(r);
                mlt.setAnalyzer(analyzer);
                mlt.setFieldNames(new String[]{"text"});
                mlt.setMinTermFreq(1);
                mlt.setMinDocFreq(1);
                String q = facts.title() + "\n" + (facts.description() == null ? "" : facts.description());
                Query query = mlt.like("text", new StringReader(q));
                TopDocs top = new IndexSearcher(r).search(query, 1);
                if (top.scoreDocs.length == 0) return null;
                return r.storedFields().document(top.scoreDocs[0].doc).get("id");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
