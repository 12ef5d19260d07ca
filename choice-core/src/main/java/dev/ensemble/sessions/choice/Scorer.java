package dev.ensemble.sessions.choice;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The session choice of the guide's §4 (workspace/session-choice/): eligibility, candidates, signals, score, bands
 * and reason. Pure and deterministic: the same inputs always give the same {@link Decision}; time ({@code now}) and
 * the time budget's ticker are passed in, never read inside a rule. No Kafka, no files.
 */
public final class Scorer {
    /** Part names of {@link ScoredCandidate#parts}. */
    public static final String LINK = "link", DELIVERABLE = "deliverable", MEETING = "meeting", PARENT_PAGE = "parentPage",
            ANCHORS = "anchors", TOPIC = "topic", FOLLOW_UP = "followUp", NEW_WORK = "newWork", WARM = "warm",
            FILL = "fill", CHAIN = "chain";

    /** Best first: score descending, then most recently active, then session id (guide §4 "Bands"). */
    public static final Comparator<ScoredCandidate> BEST_FIRST = Comparator.comparingDouble(ScoredCandidate::score).reversed()
            .thenComparing(ScoredCandidate::lastActiveAt, Comparator.reverseOrder())
            .thenComparing(ScoredCandidate::sessionId);

    private Scorer() {
    }

    /** A stored candidate to score again: its id, when it was last active, and its signals. */
    public record StoredCandidate(String sessionId, Instant lastActiveAt, Signals signals) {
    }

    /**
     * Candidates scored and ranked, and what the bands make of them.
     *
     * @param candidates best first
     * @param chosen     the session to continue (decision CONTINUE), or null
     * @param best       the best candidate, or null when there is none
     * @param briefFrom  too full: the best confident candidate whose last report goes to the new session, or null
     */
    public record Ranking(List<ScoredCandidate> candidates, Decision.Choice decision, Decision.Band band,
                         ScoredCandidate chosen, ScoredCandidate best, ScoredCandidate briefFrom) {
    }

    /**
     * Decides for {@code run} (guide §4).
     *
     * @param sessions the computer's sessions as the session view has them (filtered here by {@link Candidates})
     * @param corpus   the person's rarity table on this computer, without the new task
     * @param now      the decision's time (age, warm)
     * @param ticker   nanoseconds, for the word-matching budget {@code limits.timeBudgetMs} ({@code System::nanoTime}
     *                 in a service; a constant in a replay)
     */
    public static Decision decide(NewRun run, List<CandidateSession> sessions, CorpusStats corpus,
                                  SessionChoiceConfig cfg, Instant now, LongSupplier ticker) {
        Optional<String> notEligible = Eligibility.whyNot(run);
        if (notEligible.isPresent()) {
            return none(run, cfg, "Started a new session: this run does not choose, " + notEligible.get(), Decision.NOT_ELIGIBLE);
        }
        if (!cfg.enabled()) {
            return none(run, cfg, "Started a new session: Continue a fitting agent session is off", Decision.DISABLED);
        }
        if (run.newSession()) {
            return none(run, cfg, "Started a new session: a new agent session was asked for", Decision.NEW_SESSION);
        }
        if (!cfg.text().automated().isEmpty() && TextAnalysis.forConfig(cfg.text()).isAutomated(run.facts())) {
            return none(run, cfg, "Started a new session: the task reads as automated work (text.automated)", Decision.AUTOMATED);
        }
        Candidates.Filtered filtered = Candidates.filter(run, sessions, cfg.limits(), now);
        List<CandidateSession> kept = filtered.kept();
        if (kept.isEmpty()) {
            return none(run, cfg, "Started a new session: no session on this computer fits the candidate rules"
                    + Candidates.explain(filtered.excluded(), cfg.limits()), null);
        }
        Matched m = signals(run, kept, corpus, cfg, now, ticker);
        List<ScoredCandidate> scored = new ArrayList<>(kept.size());
        for (int i = 0; i < kept.size(); i++) {
            scored.add(score(kept.get(i).sessionId(), kept.get(i).lastActiveAt(), m.signals.get(i), cfg));
        }
        Ranking r = rank(scored, cfg);
        Map<String, CandidateSession> byId = new HashMap<>();
        for (CandidateSession c : kept) byId.put(c.sessionId(), c);
        return toDecision(run, cfg, r, byId, m.cut);
    }

    /**
     * Scores stored signals again under {@code cfg}, without any text (guide §4 "Records": "score their stored signals
     * again under other weights"). Anchors, topic and fill are taken as stored.
     */
    public static Ranking rescore(List<StoredCandidate> stored, SessionChoiceConfig cfg) {
        List<ScoredCandidate> scored = new ArrayList<>(stored.size());
        for (StoredCandidate s : stored) scored.add(score(s.sessionId(), s.lastActiveAt(), s.signals(), cfg));
        return rank(scored, cfg);
    }

    /**
     * One candidate's parts and score (guide §4 "Score", scoreCandidate): link 10, deliverable 3, meeting 3, parent page
     * 2, 3 per anchor up to 6, topic × 6, follow-up +1, new work −1 only when no link or anchor ties it, warm +1, fill
     * over size.soft −2, unknown fill and over size.longChainTasks tasks −2; too full over size.hard, or unknown fill
     * and over size.hardChainTasks tasks. The score is rounded to 1e-9 so that thresholds are met exactly.
     */
    public static ScoredCandidate score(String sessionId, Instant lastActiveAt, Signals s, SessionChoiceConfig cfg) {
        SessionChoiceConfig.Weights w = cfg.weights();
        SessionChoiceConfig.Size size = cfg.size();
        Map<String, Double> parts = new LinkedHashMap<>();
        if (s.link()) put(parts, LINK, w.link());
        if (s.deliverable()) put(parts, DELIVERABLE, w.deliverable());
        if (s.meeting()) put(parts, MEETING, w.meeting());
        if (s.parentPage()) put(parts, PARENT_PAGE, w.parentPage());
        if (s.anchors() > 0) {
            int keys = s.issueKeys();
            put(parts, ANCHORS, Math.min(w.anchor() * (s.anchors() - keys) + w.issueKey() * keys, w.anchorMax()));
        }
        if (s.topic() > 0) put(parts, TOPIC, w.topic() * s.topic());
        if (s.followUp()) put(parts, FOLLOW_UP, w.followUp());
        if (s.newWork() && !s.link() && s.anchors() == 0) put(parts, NEW_WORK, w.newWork());
        if (s.warm()) put(parts, WARM, w.warm());
        if (s.fill() != null && s.fill() > size.soft()) put(parts, FILL, w.fillSoft());
        if (s.fill() == null && s.tasks() > size.longChainTasks()) put(parts, CHAIN, w.longChain());
        double sum = 0;
        for (double v : parts.values()) sum += v;
        double score = Math.round(sum * 1e9) / 1e9;
        boolean tooFull = s.fill() != null ? s.fill() > size.hard() : s.tasks() > size.hardChainTasks();
        return new ScoredCandidate(sessionId, lastActiveAt, s, parts, score, tooFull);
    }

    private static void put(Map<String, Double> parts, String k, double v) {
        if (v != 0) parts.put(k, v);
    }

    /**
     * The bands (guide §4 "Bands", decide): the best score, then the most recently active, at or above
     * bands.confident is continued — the best confident candidate that is not too full; when every confident one is
     * too full, a new session gets the best one's last report (note too-full). At or above bands.unsure, a new
     * session in band unsure; below, band below.
     */
    public static Ranking rank(List<ScoredCandidate> scored, SessionChoiceConfig cfg) {
        List<ScoredCandidate> sorted = new ArrayList<>(scored);
        sorted.sort(BEST_FIRST);
        if (sorted.isEmpty()) return new Ranking(List.of(), Decision.Choice.NEW, Decision.Band.NONE, null, null, null);
        ScoredCandidate best = sorted.get(0);
        if (best.score() >= cfg.bands().confident()) {
            for (ScoredCandidate c : sorted) {
                if (c.score() < cfg.bands().confident()) break;
                if (!c.tooFull()) return new Ranking(List.copyOf(sorted), Decision.Choice.CONTINUE, Decision.Band.CONFIDENT, c, best, null);
            }
            return new Ranking(List.copyOf(sorted), Decision.Choice.NEW, Decision.Band.CONFIDENT, null, best, best);
        }
        Decision.Band band = best.score() >= cfg.bands().unsure() ? Decision.Band.UNSURE : Decision.Band.BELOW;
        return new Ranking(List.copyOf(sorted), Decision.Choice.NEW, band, null, best, null);
    }

    private static Decision none(NewRun run, SessionChoiceConfig cfg, String reason, String note) {
        return new Decision(run.runId(), run.taskId(), run.agent(), run.computerId(), run.projectId(), Decision.Choice.NEW,
                Decision.Band.NONE, null, null, reason, note, null, null, cfg.version(), cfg.hash(), List.of(), false);
    }

    private static Decision toDecision(NewRun run, SessionChoiceConfig cfg, Ranking r, Map<String, CandidateSession> byId, boolean cut) {
        ScoredCandidate target = r.chosen() != null ? r.chosen() : r.best();
        String reason;
        String note = null;
        String briefFrom = null, briefReport = null;
        if (r.decision() == Decision.Choice.CONTINUE) {
            reason = "Continued the agent's session: " + explain(r.chosen());
        } else if (r.briefFrom() != null) {
            note = Decision.TOO_FULL;
            briefFrom = r.briefFrom().sessionId();
            briefReport = byId.get(briefFrom).lastReport();
            Signals s = r.briefFrom().signals();
            String full = s.fill() != null ? String.format(Locale.ROOT, "%.0f%% of its context window", s.fill() * 100) : s.tasks() + " tasks";
            reason = "Started a new session with the fitting session's last report: that session is too full (" + full + "); "
                    + explain(r.briefFrom());
        } else if (r.band() == Decision.Band.UNSURE) {
            reason = String.format(Locale.ROOT, "Started a new session: the best session scored %s (unsure; continuing needs %s): %s",
                    num(r.best().score()), num(cfg.bands().confident()), explain(r.best()));
        } else {
            reason = String.format(Locale.ROOT, "Started a new session: no session fits (best score %s, below %s)",
                    num(r.best().score()), num(cfg.bands().unsure()));
        }
        return new Decision(run.runId(), run.taskId(), run.agent(), run.computerId(), run.projectId(), r.decision(), r.band(),
                target.sessionId(), target.score(), reason, note, briefFrom, briefReport, cfg.version(), cfg.hash(),
                r.candidates(), cut);
    }

    private static String num(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.format(Locale.ROOT, "%.2f", d);
    }

    /** Why a candidate fits, from its largest explanatory parts (at most two), e.g. it mentions “Build the ranking API”. */
    static String explain(ScoredCandidate c) {
        Signals s = c.signals();
        List<Map.Entry<String, Double>> parts = new ArrayList<>(c.parts().entrySet());
        parts.sort(Map.Entry.<String, Double>comparingByValue().reversed());
        List<String> why = new ArrayList<>();
        for (Map.Entry<String, Double> p : parts) {
            if (p.getValue() <= 0 || why.size() == 2) continue;
            switch (p.getKey()) {
                case LINK -> why.add(s.linkedTitle() != null ? "it mentions “" + s.linkedTitle() + "”" : "this task links to it");
                case DELIVERABLE -> why.add("it is for the same deliverable");
                case MEETING -> why.add("it is from the same meeting");
                case PARENT_PAGE -> why.add("it is under the same page");
                case ANCHORS -> why.add("both name " + String.join(", ", s.anchorsShared()));
                case TOPIC -> why.add("both are about " + quoteAll(s.topicTerms()));
                default -> {
                }
            }
        }
        if (why.isEmpty()) return "nothing ties it to this task beyond " + String.join(", ", c.parts().keySet());
        return String.join("; ", why);
    }

    private static String quoteAll(List<String> terms) {
        List<String> q = new ArrayList<>();
        for (String t : terms.subList(0, Math.min(3, terms.size()))) q.add("“" + t + "”");
        return String.join(", ", q);
    }

    private record Matched(List<Signals> signals, boolean cut) {
    }

    /** Every signal of every candidate (guide §4 "Signals"); anchors and topic within the time budget. */
    static Matched signals(NewRun run, List<CandidateSession> kept, CorpusStats corpus, SessionChoiceConfig cfg,
                           Instant now, LongSupplier ticker) {
        long start = ticker.getAsLong();
        SessionChoiceConfig.Limits lim = cfg.limits();
        TextAnalysis ta = TextAnalysis.forConfig(cfg.text());
        TaskFacts f = run.facts();
        boolean followUp = ta.isFollowUp(f);
        boolean newWork = ta.isNewWork(f);
        TextAnalysis.NewTaskText q = ta.ofNewTask(f);
        int n = corpus.n();
        double denom = Math.max(n, lim.minCorpus());
        double logN1 = Math.log(n + 1.0);

        // the new task's anchors that are not in more than anchorMaxDocShare of the person's tasks
        Set<String> qAnchors = new HashSet<>();
        for (String a : q.anchors()) if (corpus.anchorDf(a) <= lim.anchorMaxDocShare() * denom) qAnchors.add(a);
        // the new task's TF-IDF vector, in a per-thread scratch array indexed by term id (cleared in finally)
        TermCounts qt = q.terms();
        double[] qw = scratch(qt);
        try {
            double qNorm = 0;
            for (int i = 0; i < qt.terms.length; i++) {
                int df = corpus.termDfById(qt.ids[i]);
                if (df >= n) continue;
                double w = qt.tf[i] * (logN1 - logs(df + 1));
                if (w <= 0) continue;
                qw[qt.ids[i]] = w;
                qNorm += w * w;
            }
            qNorm = Math.sqrt(qNorm);
            return matchAll(f, q, qAnchors, qw, qNorm, kept, corpus, cfg, now, ticker, start, followUp, newWork);
        } finally {
            for (int id : qt.ids) qw[id] = 0;
        }
    }

    private static final ThreadLocal<double[]> SCRATCH = ThreadLocal.withInitial(() -> new double[1 << 16]);

    private static double[] scratch(TermCounts qt) {
        int max = 0;
        for (int id : qt.ids) max = Math.max(max, id);
        double[] a = SCRATCH.get();
        if (max >= a.length) {
            a = new double[Math.max(max + 1, a.length * 2)];
            SCRATCH.set(a);
        }
        return a;
    }

    private static Matched matchAll(TaskFacts f, TextAnalysis.NewTaskText q, Set<String> qAnchors, double[] qw, double qNorm,
                                    List<CandidateSession> kept, CorpusStats corpus, SessionChoiceConfig cfg, Instant now,
                                    LongSupplier ticker, long start, boolean followUp, boolean newWork) {
        SessionChoiceConfig.Limits lim = cfg.limits();
        TextAnalysis ta = TextAnalysis.forConfig(cfg.text());
        long budget = lim.timeBudgetMs() * 1_000_000L;
        int n = corpus.n();
        double denom = Math.max(n, lim.minCorpus());
        double damping = Math.min(1.0, (double) n / lim.minCorpus());
        double logN1 = Math.log(n + 1.0);

        int k = kept.size();
        boolean cut = false;
        List<Set<String>> shared = new ArrayList<>(k);
        double[] topic = new double[k];
        List<List<String>> topicTerms = new ArrayList<>(k);
        boolean[] link = new boolean[k], deliverable = new boolean[k], meeting = new boolean[k], parent = new boolean[k];
        String[] linkedTitle = new String[k];
        for (int i = 0; i < k; i++) {
            CandidateSession c = kept.get(i);
            for (SessionTask t : c.tasks()) {
                TaskFacts tf = t.facts();
                if (t.taskId() != null && q.links().contains(t.taskId())) {
                    link[i] = true;
                    linkedTitle[i] = tf.title(); // the most recent linked task of the session wins
                }
                deliverable[i] |= same(f.deliverable(), tf.deliverable());
                meeting[i] |= same(f.meeting(), tf.meeting());
                parent[i] |= same(f.parentPage(), tf.parentPage());
            }
            Set<String> sh = new TreeSet<>();
            topicTerms.add(List.of());
            if (!cut && ticker.getAsLong() - start > budget) cut = true;
            if (!cut) {
                TextAnalysis.SessionText st = ta.ofSession(c.tasks());
                for (String a : qAnchors) if (st.anchors().contains(a)) sh.add(a);
                if (qNorm > 0) {
                    double[] dotNorm = new double[2];
                    List<Map.Entry<String, Double>> contrib = new ArrayList<>();
                    TermCounts sc = st.terms();
                    for (int j = 0; j < sc.terms.length; j++) {
                        int df = corpus.termDfById(sc.ids[j]);
                        if (df >= n) continue; // idf = 0
                        double w = sc.tf[j] * (logN1 - logs(df + 1));
                        if (w <= 0) continue;
                        dotNorm[1] += w * w;
                        double qv = qw[sc.ids[j]];
                        if (qv > 0) {
                            String term = sc.terms[j];
                            dotNorm[0] += w * qv;
                            if (!TermCounts.isPhrase(term) && df <= lim.topicCommonShare() * denom) {
                                contrib.add(Map.entry(term, w * qv));
                            }
                        }
                    }
                    if (contrib.size() >= lim.topicMinShared() && dotNorm[0] > 0) {
                        double cos = Math.min(1.0, dotNorm[0] / (qNorm * Math.sqrt(dotNorm[1])));
                        topic[i] = cos * damping;
                        contrib.sort(Map.Entry.<String, Double>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
                        List<String> terms = new ArrayList<>();
                        for (int j = 0; j < Math.min(5, contrib.size()); j++) terms.add(contrib.get(j).getKey());
                        topicTerms.set(i, terms);
                    }
                }
            }
            shared.add(sh);
        }
        // an anchor shared with more than anchorMaxCandidateShare of the candidates does not count (with 2 or more)
        if (k >= 2) {
            Map<String, Integer> count = new HashMap<>();
            for (Set<String> sh : shared) for (String a : sh) count.merge(a, 1, Integer::sum);
            for (Set<String> sh : shared) sh.removeIf(a -> count.get(a) > lim.anchorMaxCandidateShare() * k);
        }
        // topic terms are shown as the new task wrote them (the stem "rank" as "ranking")
        Map<String, String> surface = null;
        for (int i = 0; i < k; i++) {
            if (topicTerms.get(i).isEmpty()) continue;
            if (surface == null) surface = q.surface();
            List<String> words = new ArrayList<>();
            for (String stem : topicTerms.get(i)) words.add(surface.getOrDefault(stem, stem));
            topicTerms.set(i, words);
        }
        Instant warmSince = now.minus(Duration.ofMinutes(cfg.warmMinutes()));
        List<Signals> out = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            CandidateSession c = kept.get(i);
            Set<String> sh = shared.get(i);
            Anchors.dedupeFiles(sh);
            int keys = 0;
            for (String a : sh) if (a.startsWith(Anchors.ISSUE)) keys++;
            List<String> shown = sh.stream().map(Anchors::display).sorted().toList();
            out.add(new Signals(link[i], deliverable[i], meeting[i], parent[i], shown.size(), shown, keys, topic[i],
                    topicTerms.get(i), followUp, newWork, !c.lastActiveAt().isBefore(warmSince), c.fill(),
                    c.taskCount(), linkedTitle[i]));
        }
        return new Matched(out, cut);
    }

    private static final double[] LOGS = new double[4097];

    static {
        for (int i = 1; i < LOGS.length; i++) LOGS[i] = Math.log(i);
    }

    private static double logs(int x) {
        return x < LOGS.length ? LOGS[x] : Math.log(x);
    }


    private static boolean same(String a, String b) {
        return a != null && !a.isBlank() && Objects.equals(a, b);
    }
}
