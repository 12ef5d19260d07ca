package dev.ensemble.sessions.choice;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.FilteringTokenFilter;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.TypeAttribute;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text analysis of the guide's §4 "topic" and "anchors" with Lucene: StandardTokenizer → LowerCaseFilter → StopFilter
 * (EnglishAnalyzer's stop words plus {@code text.extraStopwords}) → a filter dropping pure numbers and one-letter
 * tokens (numbers are the anchors' business) → PorterStemFilter. Each two neighbouring terms left after stop-word
 * removal also count as a phrase ({@code text.phraseWeight}, 1.5×). Fields count {@code text.fieldWeights}: title 3×,
 * labels 2×, page, description, run reports and instructions 1×.
 * <p>
 * One instance per {@link SessionChoiceConfig.Text} ({@link #forConfig}); thread-safe. It memoises the analysis of a
 * session's tasks (an LRU of {@value #CACHE_TASKS} tasks, keyed by the task's value), which changes no result, only
 * the time a decision takes: a task's text is analysed once, as it would be when it was claimed.
 */
public final class TextAnalysis {
    static final int CACHE_TASKS = 50_000;
    private static final Pattern LINK = Pattern.compile("ensemble://task/([A-Za-z0-9_.:-]+)|(?<![\\w/.-])(?:https?://[^\\s/]+)?/tasks/([A-Za-z0-9_.:-]+)");
    private static final Map<SessionChoiceConfig.Text, TextAnalysis> INSTANCES = Collections.synchronizedMap(new LinkedHashMap<>(8, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<SessionChoiceConfig.Text, TextAnalysis> eldest) {
            return size() > 8;
        }
    });

    private final SessionChoiceConfig.Text text;
    private final Analyzer analyzer;
    private final Anchors anchors;
    private final List<Pattern> followUp;
    private final List<Pattern> newWork;
    private final List<Pattern> automated;
    private final Set<String> followUpLabels;
    private final Map<SessionTask, TaskText> cache = Collections.synchronizedMap(new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<SessionTask, TaskText> eldest) {
            return size() > CACHE_TASKS;
        }
    });

    /** A task's analysed text: its term counts, its anchors (with the files its runs changed) and its title. */
    public record TaskText(String taskId, String title, TermCounts terms, Set<String> anchors) {
    }

    /**
     * The new task's analysed text, the task ids it links to (guide §4 "link"), and for each stem the first word of the
     * task it came from (title first), to show topic terms as the task wrote them.
     */
    public record NewTaskText(TermCounts terms, Set<String> anchors, Set<String> links, Map<String, String> surface) {
    }

    /** What a task adds to the rarity table (guide §4 "Cost"): its distinct terms and phrases, and its anchors. */
    public record CorpusDoc(String taskId, Set<String> terms, Set<String> anchors) {
        public CorpusDoc {
            terms = Set.copyOf(terms);
            anchors = Set.copyOf(anchors);
        }
    }

    /** A new instance; prefer {@link #forConfig}, which shares one per word-list config. */
    public TextAnalysis(SessionChoiceConfig.Text text) {
        this.text = text;
        CharArraySet stop = new CharArraySet(EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, false);
        for (String w : text.extraStopwords()) stop.add(w.toLowerCase(Locale.ROOT));
        CharArraySet stopSet = CharArraySet.unmodifiableSet(stop);
        this.analyzer = new Analyzer() {
            @Override
            protected TokenStreamComponents createComponents(String fieldName) {
                StandardTokenizer src = new StandardTokenizer();
                TokenStream ts = new LowerCaseFilter(src);
                ts = new StopFilter(ts, stopSet);
                ts = new NoNumbersFilter(ts);
                ts = new RecordFilter(ts);
                ts = new PorterStemFilter(ts);
                return new TokenStreamComponents(src, ts);
            }
        };
        this.anchors = new Anchors(text);
        this.followUp = text.followUp().stream().map(p -> Pattern.compile(p, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)).toList();
        this.newWork = text.newWork().stream().map(p -> Pattern.compile(p, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)).toList();
        this.automated = text.automated().stream().map(p -> Pattern.compile(p, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)).toList();
        Set<String> l = new HashSet<>();
        for (String s : text.followUpLabels()) l.add(s.toLowerCase(Locale.ROOT).strip());
        this.followUpLabels = Set.copyOf(l);
    }

    /** The shared instance for these word lists. */
    public static TextAnalysis forConfig(SessionChoiceConfig.Text text) {
        synchronized (INSTANCES) {
            return INSTANCES.computeIfAbsent(text, TextAnalysis::new);
        }
    }

    /** The anchor extractor of these word lists. */
    public Anchors anchors() {
        return anchors;
    }

    /** The stems of {@code s} in order, stop words and numbers dropped (e.g. "Ranking the ranked ranks" → [rank, rank, rank]). */
    public List<String> stems(String s) {
        return tokens(analyzer, s);
    }

    private static List<String> tokens(Analyzer a, String s) {
        List<String> out = new ArrayList<>();
        if (s == null || s.isEmpty()) return out;
        try (TokenStream ts = a.tokenStream("t", s)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) out.add(term.toString());
            ts.end();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private void addField(Map<String, double[]> counts, String s, double weight) {
        addField(counts, s, weight, null);
    }

    private void addField(Map<String, double[]> counts, String s, double weight, Map<String, String> surface) {
        if (s == null || s.isEmpty() || weight <= 0) return;
        List<String> words = surface == null ? null : new ArrayList<>();
        RECORDED.set(words);
        List<String> st;
        try {
            st = stems(s);
        } finally {
            RECORDED.remove();
        }
        if (surface != null) {
            for (int i = 0; i < Math.min(st.size(), words.size()); i++) surface.putIfAbsent(st.get(i), words.get(i));
        }
        double pw = weight * text.phraseWeight();
        for (int i = 0; i < st.size(); i++) {
            counts.computeIfAbsent(st.get(i), k -> new double[1])[0] += weight;
            if (i > 0 && pw > 0) counts.computeIfAbsent(st.get(i - 1) + " " + st.get(i), k -> new double[1])[0] += pw;
        }
    }

    /** The weighted term counts of a task's facts and its runs' report (null allowed). */
    public TermCounts counts(TaskFacts f, String report) {
        return counts(f, report, null);
    }

    /** As {@link #counts(TaskFacts, String)}, also filling {@code surface} (stem → first word it came from) when given. */
    private TermCounts counts(TaskFacts f, String report, Map<String, String> surface) {
        SessionChoiceConfig.FieldWeights w = text.fieldWeights();
        Map<String, double[]> m = new HashMap<>();
        addField(m, f.title(), w.title(), surface);
        for (String label : f.labels()) addField(m, label, w.labels(), surface);
        addField(m, f.page(), w.page(), surface);
        addField(m, f.description(), w.description(), surface);
        addField(m, report, w.reports(), surface);
        addField(m, f.instructions(), w.instructions(), surface);
        return TermCounts.of(m);
    }

    /** Anchors named by a task's texts (not its labels), plus the files changed. */
    public Set<String> anchorsOf(TaskFacts f, String report, List<String> files) {
        Set<String> a = new HashSet<>();
        anchors.ofText(f.title(), a);
        anchors.ofText(f.description(), a);
        anchors.ofText(f.page(), a);
        anchors.ofText(f.instructions(), a);
        anchors.ofText(report, a);
        anchors.ofFiles(files, a);
        return a;
    }

    /** The analysis of one task of a session (memoised). */
    public TaskText ofSessionTask(SessionTask t) {
        TaskText cached = cache.get(t);
        if (cached != null) return cached;
        TaskFacts f = t.facts() == null ? TaskFacts.of("", null, List.of()) : t.facts();
        TaskText tt = new TaskText(t.taskId(), f.title(), counts(f, t.report()), Set.copyOf(anchorsOf(f, t.report(), t.filesChanged())));
        cache.put(t, tt);
        return tt;
    }

    /** A session's tasks analysed together: summed term counts, the union of anchors, and the tasks' ids and titles. */
    public record SessionText(TermCounts terms, Set<String> anchors, Map<String, String> titles) {
    }

    private final Map<List<SessionTask>, SessionText> sessionCache = Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<SessionTask>, SessionText> eldest) {
            return size() > 4096;
        }
    });

    /** The analysis of a session's tasks (memoised by the task list's value). */
    public SessionText ofSession(List<SessionTask> tasks) {
        SessionText cached = sessionCache.get(tasks);
        if (cached != null) return cached;
        List<TermCounts> parts = new ArrayList<>(tasks.size());
        Set<String> anchorsUnion = new HashSet<>();
        Map<String, String> titles = new LinkedHashMap<>();
        for (SessionTask t : tasks) {
            TaskText tt = ofSessionTask(t);
            parts.add(tt.terms());
            anchorsUnion.addAll(tt.anchors());
            if (t.taskId() != null) titles.put(t.taskId(), tt.title());
        }
        SessionText st = new SessionText(parts.isEmpty() ? TermCounts.EMPTY : TermCounts.sum(parts), Set.copyOf(anchorsUnion),
                Collections.unmodifiableMap(titles));
        sessionCache.put(List.copyOf(tasks), st);
        return st;
    }

    /** The analysis of the new task: counts, anchors and the task ids it links to (linkedTaskIds and links in its text). */
    public NewTaskText ofNewTask(TaskFacts f) {
        Set<String> links = new LinkedHashSet<>(f.linkedTaskIds());
        for (String s : new String[]{f.title(), f.description(), f.page(), f.instructions()}) {
            if (s == null) continue;
            Matcher m = LINK.matcher(s);
            while (m.find()) links.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        Map<String, String> surface = new HashMap<>();
        TermCounts c = counts(f, null, surface);
        return new NewTaskText(c, Set.copyOf(anchorsOf(f, null, List.of())), Set.copyOf(links), surface);
    }

    /**
     * What the task adds to {@link CorpusStats}: the distinct terms and phrases of its title, labels and the first
     * {@code corpusFieldChars} of its description and page; the anchors of its texts and changed files.
     */
    public CorpusDoc corpusDoc(String taskId, TaskFacts f, List<String> filesChanged, int corpusFieldChars) {
        Map<String, double[]> m = new HashMap<>();
        addField(m, f.title(), 1);
        for (String label : f.labels()) addField(m, label, 1);
        addField(m, head(f.description(), corpusFieldChars), 1);
        addField(m, head(f.page(), corpusFieldChars), 1);
        return new CorpusDoc(taskId, m.keySet(), anchorsOf(f, null, filesChanged == null ? List.of() : filesChanged));
    }

    /**
     * {@code doc} with the anchors of {@code filesChanged} added: equal to {@link #corpusDoc} of the same task with
     * those files, without analysing its texts again (the files add anchors only, never terms).
     */
    public CorpusDoc withFiles(CorpusDoc doc, List<String> filesChanged) {
        if (filesChanged == null || filesChanged.isEmpty()) return doc;
        Set<String> a = new HashSet<>(doc.anchors());
        anchors.ofFiles(filesChanged, a);
        return new CorpusDoc(doc.taskId(), doc.terms(), a);
    }

    /** True when the title matches a {@code text.followUp} pattern or a label is in {@code text.followUpLabels}. */
    public boolean isFollowUp(TaskFacts f) {
        for (String l : f.labels()) if (followUpLabels.contains(l.toLowerCase(Locale.ROOT).strip())) return true;
        for (Pattern p : followUp) if (p.matcher(f.title()).find()) return true;
        return false;
    }

    /** True when the title matches a {@code text.newWork} pattern. */
    public boolean isNewWork(TaskFacts f) {
        for (Pattern p : newWork) if (p.matcher(f.title()).find()) return true;
        return false;
    }

    /** True when the title matches a {@code text.automated} pattern (a dependency bump, a release commit). */
    public boolean isAutomated(TaskFacts f) {
        for (Pattern p : automated) if (p.matcher(f.title()).find()) return true;
        return false;
    }

    private static String head(String s, int n) {
        return s == null || s.length() <= n ? s : s.substring(0, n);
    }

    private static final ThreadLocal<List<String>> RECORDED = new ThreadLocal<>();

    /** Records each token before stemming into the calling thread's list, when one is set (same pass, no re-analysis). */
    static final class RecordFilter extends org.apache.lucene.analysis.TokenFilter {
        private final CharTermAttribute term = addAttribute(CharTermAttribute.class);

        RecordFilter(TokenStream in) {
            super(in);
        }

        @Override
        public boolean incrementToken() throws IOException {
            if (!input.incrementToken()) return false;
            List<String> r = RECORDED.get();
            if (r != null) r.add(term.toString());
            return true;
        }
    }

    /** Drops tokens that are numbers (digits, dots, commas) or a single character. */
    static final class NoNumbersFilter extends FilteringTokenFilter {
        private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
        private final TypeAttribute type = addAttribute(TypeAttribute.class);

        NoNumbersFilter(TokenStream in) {
            super(in);
        }

        @Override
        protected boolean accept() {
            if (term.length() < 2) return false;
            if ("<NUM>".equals(type.type())) return false;
            for (int i = 0; i < term.length(); i++) {
                char c = term.charAt(i);
                if (!(Character.isDigit(c) || c == '.' || c == ',' || c == '_')) return true;
            }
            return false;
        }
    }
}
