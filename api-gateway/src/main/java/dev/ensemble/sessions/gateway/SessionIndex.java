package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.en.EnglishPossessiveFilter;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.miscellaneous.PerFieldAnalyzerWrapper;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.util.CharTokenizer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.simple.SimpleQueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherLifetimeManager;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopFieldDocs;
import org.apache.lucene.search.uhighlight.CustomSeparatorBreakIterator;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageFormatter;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.IOUtils;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The session list and search index of one partition of the gateway's read side (issue 19 item 3): one Lucene document
 * per session view of the partition's store ({@value SessionReads#STORE}), updated by the read side's processor with
 * every view it keeps and rebuilt from the store when the partition's task starts (a start, a rebalance, a generation
 * switch), so the log is never read again for a query. A query is filtered on the caller's account (a term every
 * document has), so a request sees only its own account's sessions.
 *
 * <p>Each document holds: the filter terms ({@code account}, {@code agent}, {@code computer} for each computer,
 * {@code taskId} for each run's and task's task, {@code status} as the list shows it, {@code deleted}); the order
 * ({@code lastActive}, points and doc values, descending; then {@code id}); the searchable texts ({@code prompt}: every
 * run's prompt or task title and the tasks' titles; {@code report}: the runs' and tasks' report summaries;
 * {@code folder}; {@code file}: the files changed; {@code agent}, {@code project}, {@code model}; {@code ids}: session
 * id and agent session id, whole); and the list entry ({@link SessionJson#summary}) as it was when indexed, in doc values
 * (a page reads its entries from that column, not the documents with their long texts).
 *
 * <p>Analysis: the texts as Lucene's English analysis does it (standard tokenizer, possessives, lower case, English
 * stop words, Porter stemmer: "running" finds "runs"); folders and files split at every character that is not a
 * letter or a digit, lower-cased and stemmed; ids kept whole. Each value of a field is its own passage for the
 * snippet, and a phrase never spans two values.
 *
 * <p>Order and paging: the plain list by last activity, newest first, then by id; a search by relevance
 * (BM25), then the same. A page's {@code next} is a cursor naming this index, the Lucene searcher the first page
 * was answered from (kept up to {@link #SNAPSHOT_SECONDS} s, the newest {@link #SNAPSHOTS} of them), and where the page
 * ended: following {@code next} pages through that one snapshot, so every session that matched then comes exactly
 * once whatever changes meanwhile (a session that changed is listed as it was then). When the snapshot is gone (too
 * old, the gateway restarted, the partition moved) the next page continues after the same place in the current index.
 *
 * <p>Cost: a page is one Lucene query (the account's and filters' postings, the sort on doc values) plus reading the
 * page's own stored entries; no session view is decoded to answer it. Thread-safe: one writer (the stream thread),
 * any number of readers.
 */
final class SessionIndex implements Closeable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionIndex.class);
    /** How long a first page's snapshot stays usable for the pages after it, seconds. */
    static final double SNAPSHOT_SECONDS = 600;
    /** How many snapshots are kept at most (the newest). */
    static final int SNAPSHOTS = 32;
    /** The searchable text fields, in the order a snippet is taken from (the first that has a match). */
    static final List<String> TEXT_FIELDS = List.of("prompt", "report", "file", "folder", "project", "agent", "model");
    /** The marks around each match in a snippet. */
    static final String MARK_START = "[[";
    static final String MARK_END = "]]";
    /** Characters of a snippet before its first match and after it at most. */
    static final int SNIPPET_BEFORE = 60;
    static final int SNIPPET_AFTER = 160;

    private static final FieldType TEXT = new FieldType();
    static {
        TEXT.setTokenized(true);
        TEXT.setStored(true);
        TEXT.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS); // the highlighter reads offsets, not re-analysis
        TEXT.freeze();
    }

    private static final Analyzer ANALYZER = analyzer();
    private static final Map<String, Float> WEIGHTS = Map.of("prompt", 2f, "report", 1f, "file", 1f, "folder", 1f,
            "project", 1f, "agent", 1f, "model", 1f, "ids", 4f);
    private static final Sort BY_ACTIVITY = new Sort(new SortField("lastActive", SortField.Type.LONG, true),
            new SortField("id", SortField.Type.STRING));
    private static final Sort BY_RELEVANCE = new Sort(SortField.FIELD_SCORE, new SortField("lastActive", SortField.Type.LONG, true),
            new SortField("id", SortField.Type.STRING));

    private final Path dir;
    private final Directory directory;
    private final IndexWriter writer;
    private final SearcherManager searchers;
    private final SearcherLifetimeManager snapshots = new SearcherLifetimeManager();
    /** Names this index in cursors: a cursor of another (an earlier start, another partition's) has no snapshot here. */
    private final String incarnation = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);

    /** A new, empty index in {@code dir} (whatever was there is removed). */
    SessionIndex(Path dir) {
        this.dir = dir;
        try {
            IOUtils.rm(dir);
            Files.createDirectories(dir);
            directory = FSDirectory.open(dir);
            IndexWriterConfig config = new IndexWriterConfig(ANALYZER).setOpenMode(IndexWriterConfig.OpenMode.CREATE)
                    .setCommitOnClose(false); // rebuilt from the store at every start: never committed
            writer = new IndexWriter(directory, config);
            searchers = new SearcherManager(writer, null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the session index in " + dir, e);
        }
    }

    /** Standard tokenizer → possessives → lower case → English stop words → Porter; a phrase never spans two values. */
    private static Analyzer analyzer() {
        Analyzer english = new Analyzer() {
            @Override
            protected TokenStreamComponents createComponents(String field) {
                StandardTokenizer source = new StandardTokenizer();
                TokenStream ts = new EnglishPossessiveFilter(source);
                ts = new LowerCaseFilter(ts);
                ts = new StopFilter(ts, EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
                return new TokenStreamComponents(source, new PorterStemFilter(ts));
            }

            @Override
            public int getPositionIncrementGap(String field) {
                return 100;
            }
        };
        Analyzer paths = new Analyzer() {
            @Override
            protected TokenStreamComponents createComponents(String field) {
                Tokenizer source = CharTokenizer.fromTokenCharPredicate(Character::isLetterOrDigit);
                // the same stop words as the text fields: else a required word such as "the" would be looked for
                // only in folders and files, and a search worded like a prompt would find nothing
                TokenStream ts = new StopFilter(new LowerCaseFilter(source), EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
                return new TokenStreamComponents(source, new PorterStemFilter(ts));
            }

            @Override
            public int getPositionIncrementGap(String field) {
                return 100;
            }
        };
        Analyzer ids = new Analyzer() { // a whole id is one term; a stop word (any case) is none, as in the other fields
            @Override
            protected TokenStreamComponents createComponents(String field) {
                Tokenizer source = new org.apache.lucene.analysis.core.KeywordTokenizer();
                return new TokenStreamComponents(source, new StopFilter(source,
                        new org.apache.lucene.analysis.CharArraySet(EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, true)));
            }
        };
        return new PerFieldAnalyzerWrapper(english, Map.of("folder", paths, "file", paths, "ids", ids));
    }

    /** Indexes (or re-indexes) the view kept under {@code key} ({@code <account>/<sessionId>}). */
    void put(String key, SessionView v) {
        try {
            writer.updateDocument(new Term("key", key), document(key, v));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot index session " + key, e);
        }
    }

    /** Removes the session kept under {@code key}; a no-op when unknown. */
    void delete(String key) {
        try {
            writer.deleteDocuments(new Term("key", key));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove session " + key + " from the index", e);
        }
    }

    static Document document(String key, SessionView v) {
        Document d = new Document();
        d.add(new StringField("key", key, Field.Store.NO));
        d.add(new StringField("account", v.getAccount(), Field.Store.NO));
        d.add(new SortedDocValuesField("id", new BytesRef(v.getSessionId())));
        long lastActive = v.getLastActiveAt().toEpochMilli();
        d.add(new LongPoint("lastActive", lastActive));
        d.add(new NumericDocValuesField("lastActive", lastActive));
        d.add(new StringField("is.agent", v.getAgent().toLowerCase(Locale.ROOT), Field.Store.NO));
        Set<String> computers = new LinkedHashSet<>(v.getComputerIds());
        computers.add(v.getComputerId());
        computers.forEach(c -> d.add(new StringField("is.computer", c, Field.Store.NO)));
        Set<String> tasks = new LinkedHashSet<>();
        Set<String> prompts = new LinkedHashSet<>();
        Set<String> reports = new LinkedHashSet<>();
        Set<String> files = new LinkedHashSet<>(v.getFilesChanged());
        addText(prompts, v.getFirstTaskTitle());
        for (RunView r : v.getRuns()) {
            if (r.getTaskId() != null) {
                tasks.add(r.getTaskId());
            }
            addText(prompts, r.getTitle());
            addText(reports, r.getReportSummary());
        }
        for (SessionTaskView t : v.getTasks()) {
            if (t.getTaskId() != null) {
                tasks.add(t.getTaskId());
            }
            if (t.getFacts() != null) {
                addText(prompts, t.getFacts().getTitle());
            }
            addText(reports, t.getReport());
            files.addAll(t.getFilesChanged());
        }
        addText(prompts, v.getLatestTaskTitle());
        addText(reports, v.getLatestReportSummary());
        tasks.forEach(t -> d.add(new StringField("is.taskId", t, Field.Store.NO)));
        ObjectNode summary = SessionJson.summary(v);
        // the status the list entry shows, so that a status filter keeps exactly the entries showing it
        d.add(new StringField("is.status", summary.get("status").asText(), Field.Store.NO));
        d.add(new StringField("is.deleted", String.valueOf(v.getDeleted()), Field.Store.NO));

        Set<String> folders = new LinkedHashSet<>();
        addText(folders, v.getFolder());
        v.getFolders().forEach(f -> addText(folders, f));
        prompts.forEach(p -> d.add(new Field("prompt", p, TEXT)));
        reports.forEach(p -> d.add(new Field("report", p, TEXT)));
        folders.forEach(p -> d.add(new Field("folder", p, TEXT)));
        files.forEach(p -> d.add(new Field("file", p, TEXT)));
        d.add(new Field("agent", v.getAgent(), TEXT));
        if (v.getProjectName() != null) {
            d.add(new Field("project", v.getProjectName(), TEXT));
        }
        if (v.getModel() != null) {
            d.add(new Field("model", v.getModel(), TEXT));
        }
        d.add(new StringField("ids", v.getSessionId(), Field.Store.NO));
        if (v.getAgentSessionId() != null) {
            d.add(new StringField("ids", v.getAgentSessionId(), Field.Store.NO));
        }
        // doc values, not a stored field: a page reads 50 small entries from a column, not 50 whole documents with their texts
        d.add(new BinaryDocValuesField("summary", new BytesRef(summary.toString().getBytes(StandardCharsets.UTF_8))));
        return d;
    }

    private static void addText(Set<String> to, String text) {
        if (text != null && !text.isBlank()) {
            to.add(text.strip().replace('\u0000', ' ')); // U+0000 separates a field's values for the highlighter
        }
    }

    /** One entry of a page: the list entry (as indexed) and, for a search, the matched passage and its field. */
    record Hit(ObjectNode summary, String snippet, String snippetField) {
    }

    /** A page of sessions and the cursor of the page after it (null on the last page). */
    record Page(List<Hit> hits, String next) {
    }

    /**
     * One page of the account's sessions matching {@code query}. A 400 {@link ApiError} naming {@code cursor} when the
     * cursor is not one this API gave for the same search and filters, naming {@code q} when the search text expands
     * to more clauses than a query takes.
     */
    Page page(String account, SessionQuery query) throws IOException {
        Cursor after = query.cursor() == null ? null : Cursor.parse(query.cursor(), query.fingerprint());
        IndexSearcher searcher = null;
        boolean fromSnapshot = false;
        if (after != null && after.incarnation.equals(incarnation)) {
            searcher = snapshots.acquire(after.snapshot);
            fromSnapshot = searcher != null;
        }
        if (searcher == null) {
            searchers.maybeRefreshBlocking(); // every update the store shows before this request is in the index
            searcher = searchers.acquire();
        }
        try {
            long snapshot = after != null && fromSnapshot ? after.snapshot : snapshots.record(searcher);
            if (after == null) {
                snapshots.prune(new NewestAndYoung());
            }
            Query text;
            try {
                text = query.q() == null ? null : textQuery(query.q());
            } catch (IndexSearcher.TooManyClauses e) {
                throw tooManyClauses();
            } catch (IllegalArgumentException e) {
                throw wordTooLong(e);
            }
            BooleanQuery.Builder b = new BooleanQuery.Builder();
            b.add(text == null ? new MatchAllDocsQuery() : text, BooleanClause.Occur.MUST);
            b.add(new TermQuery(new Term("account", account)), BooleanClause.Occur.FILTER);
            filter(b, "is.agent", query.agent());
            filter(b, "is.computer", query.computer());
            filter(b, "is.taskId", query.taskId());
            filter(b, "is.status", query.status());
            filter(b, "is.deleted", query.deleted() == null ? null : query.deleted().toString());
            Sort sort = text == null ? BY_ACTIVITY : BY_RELEVANCE;
            TopFieldDocs top;
            try {
                int maxDoc = searcher.getIndexReader().maxDoc();
                top = searcher.searchAfter(after == null || maxDoc == 0 ? null : after.fieldDoc(text != null, maxDoc - 1), b.build(),
                        query.limit() + 1, sort, text != null);
            } catch (IndexSearcher.TooManyClauses e) {
                throw tooManyClauses();
            }
            int n = Math.min(top.scoreDocs.length, query.limit());
            ScoreDoc[] page = java.util.Arrays.copyOf(top.scoreDocs, n);
            String[] snippet = new String[n];
            String[] snippetField = new String[n];
            if (text != null && n > 0) {
                snippets(searcher, text, page, snippet, snippetField);
            }
            List<Hit> hits = new ArrayList<>(n);
            List<org.apache.lucene.index.LeafReaderContext> leaves = searcher.getIndexReader().leaves();
            for (int i = 0; i < n; i++) {
                org.apache.lucene.index.LeafReaderContext leaf = leaves.get(org.apache.lucene.index.ReaderUtil.subIndex(page[i].doc, leaves));
                org.apache.lucene.index.BinaryDocValues values = leaf.reader().getBinaryDocValues("summary");
                if (values == null || !values.advanceExact(page[i].doc - leaf.docBase)) {
                    throw new IllegalStateException("session index: a document without its list entry");
                }
                BytesRef json = values.binaryValue();
                ObjectNode summary = (ObjectNode) dev.ensemble.sessions.schema.EventJson.mapper().readTree(json.bytes, json.offset, json.length);
                hits.add(new Hit(summary, snippet[i], snippetField[i]));
            }
            String next = top.scoreDocs.length > n
                    ? new Cursor(incarnation, snapshot, query.fingerprint(), (FieldDoc) page[n - 1]).encode() : null;
            return new Page(hits, next);
        } finally {
            if (fromSnapshot) {
                snapshots.release(searcher);
            } else {
                searchers.release(searcher);
            }
        }
    }

    /**
     * The snippet of each hit: from the first of {@link #TEXT_FIELDS} that has a match, highlighting one field at a time
     * for the hits still without one (most match in a prompt, so the long report texts are seldom read).
     */
    private static void snippets(IndexSearcher searcher, Query text, ScoreDoc[] page, String[] snippet, String[] field)
            throws IOException {
        UnifiedHighlighter highlighter = highlighter(searcher);
        List<Integer> left = new ArrayList<>();
        for (int i = 0; i < page.length; i++) {
            left.add(i);
        }
        for (String f : TEXT_FIELDS) {
            if (left.isEmpty()) {
                return;
            }
            int[] docs = left.stream().mapToInt(i -> page[i].doc).toArray();
            String[] found = highlighter.highlightFields(new String[]{f}, text, docs, new int[]{1}).get(f);
            List<Integer> still = new ArrayList<>();
            for (int k = 0; k < docs.length; k++) {
                int i = left.get(k);
                if (found != null && found[k] != null) {
                    snippet[i] = found[k];
                    field[i] = f;
                } else {
                    still.add(i);
                }
            }
            left = still;
        }
    }

    /**
     * A word searched by its start (one that ends in {@code *}) too long for Lucene's prefix automaton (about 1,000
     * bytes of UTF-8; the query refuses it when it is made): a 400 naming {@code q}; any other failure is the gateway's own and goes on as it is.
     */
    private static RuntimeException wordTooLong(IllegalArgumentException e) {
        if (e.getMessage() == null || !e.getMessage().contains("automaton")) {
            return e;
        }
        return ApiError.badRequest("q has a word too long to search by its start (about 1,000 bytes of UTF-8 at most); "
                + "shorten the word or drop its '*'").with("field", "q");
    }

    private static ApiError tooManyClauses() {
        return ApiError.badRequest("q has too many words or alternatives for one search (at most "
                + IndexSearcher.getMaxClauseCount() + " clauses over its fields); shorten it").with("field", "q");
    }

    private static void filter(BooleanQuery.Builder b, String field, String value) {
        if (value != null) {
            b.add(new TermQuery(new Term(field, value)), BooleanClause.Occur.FILTER);
        }
    }

    /**
     * The search text as Lucene's simple query syntax over the text fields, every word required (in some field); a
     * single word without operators also finds the sessions whose id or agent session id starts with it.
     */
    static Query textQuery(String q) {
        // no fuzzy terms (word~N): each expands over the index's terms by edit distance, and a few hundred of them cost
        // tens of CPU-seconds; '~' is then an ordinary character the analysis drops
        SimpleQueryParser parser = new SimpleQueryParser(ANALYZER, WEIGHTS, -1 & ~SimpleQueryParser.FUZZY_OPERATOR & ~SimpleQueryParser.NEAR_OPERATOR);
        parser.setDefaultOperator(BooleanClause.Occur.MUST);
        Query parsed = parser.parse(q);
        // one word, a '-' only inside it, no longer than an id can be: also an id by its start
        if (q.length() <= dev.ensemble.sessions.schema.Limits.MAX_ID_CHARS && q.matches("[^\\s\"*|+\\-~()\\\\][^\\s\"*|+~()\\\\]*")) {
            return new BooleanQuery.Builder().add(parsed, BooleanClause.Occur.SHOULD)
                    .add(new PrefixQuery(new Term("ids", q)), BooleanClause.Occur.SHOULD).build();
        }
        return parsed;
    }

    private static UnifiedHighlighter highlighter(IndexSearcher searcher) {
        return UnifiedHighlighter.builder(searcher, ANALYZER)
                .withBreakIterator(() -> new CustomSeparatorBreakIterator('\u0000')) // each value of a field is a passage
                .withFormatter(new MarkedSnippet())
                .withMaxLength(1_000_000)
                .withMaxNoHighlightPassages(0) // a field without a match gives no snippet
                .build();
    }

    /**
     * A passage as one line of plain text: at most {@value #SNIPPET_BEFORE} characters before its first match and
     * {@value #SNIPPET_AFTER} after it (an ellipsis where it was cut), each match between {@code [[} and {@code ]]};
     * the text's own {@code [[} and {@code ]]} are written {@code [ [} and {@code ] ]}, so the marks are only the matches'.
     */
    static final class MarkedSnippet extends PassageFormatter {
        @Override
        public Object format(Passage[] passages, String content) {
            for (Passage p : passages) {
                if (p.getNumMatches() > 0) {
                    return format(p, content);
                }
            }
            return null;
        }

        static String format(Passage p, String content) {
            int first = p.getMatchStarts()[0];
            int from = Math.max(p.getStartOffset(), first - SNIPPET_BEFORE);
            int to = Math.min(p.getEndOffset(), Math.max(first + SNIPPET_AFTER, p.getMatchEnds()[0]));
            while (to < p.getEndOffset() && to > from && Character.isLowSurrogate(content.charAt(to))) {
                to++;
            }
            while (from > p.getStartOffset() && Character.isLowSurrogate(content.charAt(from))) {
                from--;
            }
            StringBuilder b = new StringBuilder();
            if (from > p.getStartOffset()) {
                b.append('…');
            }
            int at = from;
            for (int i = 0; i < p.getNumMatches(); i++) {
                int s = p.getMatchStarts()[i];
                int e = Math.min(p.getMatchEnds()[i], to);
                if (s < at) {
                    continue; // overlaps the match before
                }
                if (s >= to) {
                    break;
                }
                b.append(plain(content, at, s)).append(MARK_START).append(plain(content, s, e)).append(MARK_END);
                at = e;
            }
            b.append(plain(content, at, to));
            if (to < p.getEndOffset() && !content.substring(to, p.getEndOffset()).isBlank()) {
                b.append('…');
            }
            return b.toString().strip();
        }

        private static String plain(String content, int from, int to) {
            return content.substring(from, to).replace('\u0000', ' ').replaceAll("\\s+", " ")
                    .replace(MARK_START, "[ [").replace(MARK_END, "] ]");
        }
    }

    /** Keeps the newest {@link #SNAPSHOTS} snapshots younger than {@link #SNAPSHOT_SECONDS}. */
    private static final class NewestAndYoung implements SearcherLifetimeManager.Pruner {
        private int seen;

        @Override
        public boolean doPrune(double ageSec, IndexSearcher searcher) {
            return ++seen > SNAPSHOTS || ageSec > SNAPSHOT_SECONDS;
        }
    }

    /**
     * Where a page ended, opaque to clients: {@code base64url("1~incarnation~snapshot~fingerprint~score~lastActive~id")}.
     */
    record Cursor(String incarnation, long snapshot, String fingerprint, float score, long lastActive, String id) {
        Cursor(String incarnation, long snapshot, String fingerprint, FieldDoc last) {
            this(incarnation, snapshot, fingerprint, last.fields.length == 3 ? (Float) last.fields[0] : 0f,
                    (Long) last.fields[last.fields.length - 2], ((BytesRef) last.fields[last.fields.length - 1]).utf8ToString());
        }

        String encode() {
            String s = String.join("~", "1", incarnation, Long.toString(snapshot), fingerprint,
                    Integer.toHexString(Float.floatToIntBits(score)), Long.toString(lastActive), id);
            return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
        }

        /** The cursor in {@code text}; a 400 naming {@code cursor} when it is none, or one of another search or filters. */
        static Cursor parse(String text, String fingerprint) {
            String[] p;
            Cursor c;
            try {
                p = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8).split("~", 7);
                if (p.length != 7 || !p[0].equals("1")) {
                    throw new IllegalArgumentException("not a cursor");
                }
                c = new Cursor(p[1], Long.parseLong(p[2]), p[3], Float.intBitsToFloat(Integer.parseUnsignedInt(p[4], 16)),
                        Long.parseLong(p[5]), p[6]);
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("cursor is not one this API gave: pass the 'next' of the page before as it is")
                        .with("field", "cursor");
            }
            if (!c.fingerprint.equals(fingerprint)) {
                throw ApiError.badRequest("cursor belongs to another search or other filters: ask the pages after a page with"
                        + " the same q, agent, computer, taskId, status and deleted as that page").with("field", "cursor");
            }
            return c;
        }

        /** Where to search after, in a reader whose last document is {@code lastDoc}. */
        FieldDoc fieldDoc(boolean byRelevance, int lastDoc) {
            Object[] fields = byRelevance ? new Object[]{score, lastActive, new BytesRef(id)} : new Object[]{lastActive, new BytesRef(id)};
            // a document equal on every sort value (only the page's last one: ids are unique) counts as before it
            return new FieldDoc(lastDoc, byRelevance ? score : Float.NaN, fields);
        }
    }

    /** How many sessions of the account the index holds (tests). */
    int count(String account) throws IOException {
        searchers.maybeRefreshBlocking();
        IndexSearcher s = searchers.acquire();
        try {
            return s.count(new TermQuery(new Term("account", account)));
        } finally {
            searchers.release(s);
        }
    }

    @Override
    public void close() {
        try {
            IOUtils.close(snapshots, searchers, writer, directory);
            IOUtils.rm(dir);
        } catch (IOException e) {
            LOG.warn("closing the session index in {}: {}", dir, e.toString());
        }
    }

    /** The key of a session: {@code <account>/<sessionId>}. */
    static String key(SessionView v) {
        return Keys.of(v.getAccount(), v.getSessionId());
    }
}
