package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.CorpusStats;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.TextAnalysis;
import dev.ensemble.sessions.choice.ViewMapping;
import dev.ensemble.sessions.views.CorpusView;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The corpus statistics of the session choice (guide §4, topic signal; issue "projector: corpus statistics"):
 * per account and computer, the last {@code limits.corpusTasks} tasks' analysed terms, phrases and anchors.
 * A task is analysed once, when it is claimed with facts (title, labels, the first part of description and
 * page, as the guide's "Cost" says); when a run of it reports the files it changed, their anchors are added to the
 * document of that run's claim (kept in {@link StoreNames#CORPUS_CLAIMS}), which replaces the task's document.
 * A task that leaves the window is subtracted.
 *
 * <p>The window ({@code limits.corpusTasks}), the analysed part of each field ({@code limits.corpusFieldChars}) and the
 * text analysis come from the session-choice config in force at that point of the partition's log: the newest
 * {@code ChoiceConfigChanged} before the event ({@link ChoiceConfigEvents}), kept in {@link StoreNames#CHOICE_CONFIG};
 * the defaults before the first, and in place of an invalid one (logged). So a replay folds every event under the
 * config the live run folded it under. A change of the window applies to each table at its next change.
 *
 * <p>The stores hold each task's analysed document under a growing sequence (so the window is exact after a
 * restart or a rebuild); the table itself, with the sequence of each task's document, is kept in memory, rebuilt from
 * the store on first use (and after a config change or a task's re-initialisation), and published
 * as a {@link CorpusView} at most once a second per account and computer that changed (less often while the projector
 * works through a backlog, {@link CatchUp}; marked in the changelogged
 * {@link StoreNames#PENDING_CORPUS} store with the change, so a change committed before a crash is published after it).
 */
final class CorpusProcessor implements Processor<String, Event, String, CorpusView> {
    static final Duration PUBLISH_EVERY = Duration.ofSeconds(1);
    private static final char SEP = '\u0001';
    private static final char ITEM = '\u0002';

    /** The key of the config in {@link StoreNames#CHOICE_CONFIG} (the store of a task holds its partition's). */
    static final String CONFIG_KEY = "config";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CorpusProcessor.class);

    private SessionChoiceConfig config;
    private KeyValueStore<String, String> configStore;
    private ProcessorContext<String, CorpusView> context;
    private KeyValueStore<String, String> docs;
    private KeyValueStore<String, String> claims;
    private KeyValueStore<String, Long> pending;
    private final Map<String, CorpusStats> live = new HashMap<>();
    private final Map<String, Long> nextSeq = new HashMap<>();
    /** Per table in {@link #live}: each task's key → the sequence of its document in {@link StoreNames#CORPUS_DOCS}. */
    private final Map<String, Map<String, Long>> seqs = new HashMap<>();
    private final CatchUp catchUp = new CatchUp();
    private TextAnalysis analysis;
    private SessionChoiceConfig analysed;

    CorpusProcessor() {
    }

    @Override
    public void init(ProcessorContext<String, CorpusView> context) {
        this.context = context;
        this.docs = context.getStateStore(StoreNames.CORPUS_DOCS);
        this.claims = context.getStateStore(StoreNames.CORPUS_CLAIMS);
        this.pending = context.getStateStore(StoreNames.PENDING_CORPUS);
        this.configStore = context.getStateStore(StoreNames.CHOICE_CONFIG);
        this.config = ChoiceConfigEvents.ofStored(configStore.get(CONFIG_KEY));
        // a task re-initialised after an aborted transaction has its stores restored to the last commit: the
        // tables in memory may hold documents that were not committed, so they are rebuilt from the stores
        live.clear();
        nextSeq.clear();
        seqs.clear();
        context.schedule(PUBLISH_EVERY, PunctuationType.WALL_CLOCK_TIME, t -> publish());
    }

    @Override
    public void process(Record<String, Event> record) {
        Event e = record.value();
        if (e == null) {
            return;
        }
        dev.ensemble.sessions.streams.DeadLetterProcessingExceptionHandler.refuseIfFailedBefore(context, Projector.CORPUS_STATS);
        catchUp.processed(record.timestamp());
        Object p = e.getPayload(); // valid and new: the event intake upstream refused the others
        if (p instanceof ChoiceConfigChanged) {
            changeConfig(e);
        } else if (p instanceof RunClaimed rc && rc.getTask() != null) {
            TextAnalysis.CorpusDoc doc = analysis().corpusDoc(ViewMapping.taskKey(rc), ViewMapping.facts(rc.getTask()), List.of(),
                    config.limits().corpusFieldChars());
            String encoded = encode(doc);
            claims.put(Keys.of(e.getAccount(), rc.getRunId()), Claim.encode(rc.getComputerId(), encoded));
            add(Keys.of(e.getAccount(), rc.getComputerId()), doc, encoded);
        } else if (p instanceof RunStatusChanged rs && !rs.getFilesChanged().isEmpty()) {
            String stored = claims.get(Keys.of(e.getAccount(), rs.getRunId()));
            if (stored != null) {
                Claim claim = Claim.decode(stored);
                TextAnalysis.CorpusDoc doc = analysis().withFiles(claim.doc(), rs.getFilesChanged());
                add(Keys.of(e.getAccount(), claim.computerId()), doc, encode(doc));
            }
        }
    }

    /**
     * Puts the config of a {@code ChoiceConfigChanged} in force from this point of the partition on (the defaults for
     * an invalid one, logged); the tables in memory are loaded again under its window at their next use.
     */
    private void changeConfig(Event e) {
        SessionChoiceConfig next;
        try {
            next = ChoiceConfigEvents.config(e);
        } catch (ConfigLoader.InvalidConfigException x) {
            LOG.warn("session-choice config change {} is invalid, the defaults apply from here: {}", e.getEventId(), x.getMessage());
            next = SessionChoiceConfig.defaults();
        }
        String json = ConfigLoader.toJson(next);
        configStore.put(CONFIG_KEY, json);
        config = ChoiceConfigEvents.ofStored(json);
        live.clear();
        nextSeq.clear();
        seqs.clear();
    }

    /** The analysis of the config in force (made again when it changed). */
    private TextAnalysis analysis() {
        SessionChoiceConfig cfg = config;
        if (analysis == null || analysed != cfg) {
            analysis = TextAnalysis.forConfig(cfg.text());
            analysed = cfg;
        }
        return analysis;
    }

    /**
     * A claimed run's computer and analysed document ({@link StoreNames#CORPUS_CLAIMS}), stored as
     * {@code <length of computerId>:<computerId><document>}: a computer id may hold any character.
     */
    record Claim(String computerId, TextAnalysis.CorpusDoc doc) {
        /** The claim of {@code computerId} whose document is encoded as {@code doc} ({@link CorpusProcessor#encode}). */
        static String encode(String computerId, String doc) {
            return computerId.length() + ":" + computerId + doc;
        }

        static Claim decode(String s) {
            int colon = s.indexOf(':');
            int end = colon + 1 + Integer.parseInt(s, 0, colon, 10);
            return new Claim(s.substring(colon + 1, end), CorpusProcessor.decode(s.substring(end)));
        }
    }

    /** Puts {@code doc} ({@code encoded} by {@link #encode}) into the table {@code account/computer}, replacing the task's older document. */
    private void add(String table, TextAnalysis.CorpusDoc doc, String encoded) {
        CorpusStats stats = load(table, config.limits().corpusTasks());
        Map<String, Long> seqOf = seqs.get(table);
        String taskKey = doc.taskId();
        Long old = seqOf.get(taskKey);
        if (old != null) {
            docs.delete(docKey(table, old));
        }
        long seq = nextSeq.merge(table, 1L, Long::sum);
        docs.put(docKey(table, seq), encoded);
        seqOf.put(taskKey, seq);
        String gone = stats.add(doc);
        if (gone != null) {
            Long goneSeq = seqOf.remove(gone);
            if (goneSeq != null) {
                docs.delete(docKey(table, goneSeq));
            }
        }
        pending.put(table, seq); // in the same transaction as the change: published after a crash too
    }

    /**
     * The table of {@code account/computer}, rebuilt from its stored documents, oldest first, on first use, with the
     * sequence of each task's document ({@link #seqs}: a document's key holds its sequence, its value its task).
     */
    private CorpusStats load(String table, int capacity) {
        CorpusStats stats = live.get(table);
        if (stats != null) {
            return stats;
        }
        String[] parts = {Keys.accountOf(table), Keys.idOf(table)};
        stats = new CorpusStats(parts[0], parts[1], capacity);
        Map<String, Long> seqOf = new HashMap<>();
        long last = 0;
        List<String> dropped = new java.util.ArrayList<>();
        try (KeyValueIterator<String, String> it = docs.prefixScan(table + Keys.SEPARATOR,
                new org.apache.kafka.common.serialization.StringSerializer())) {
            while (it.hasNext()) {
                KeyValue<String, String> kv = it.next();
                TextAnalysis.CorpusDoc doc = decode(kv.value);
                long seq = Long.parseLong(kv.key.substring(kv.key.lastIndexOf(Keys.SEPARATOR) + 1));
                seqOf.put(doc.taskId(), seq);
                String gone = stats.add(doc);
                if (gone != null) {
                    dropped.add(gone); // beyond a window that shrank
                }
                last = Math.max(last, seq);
            }
        }
        for (String gone : dropped) {
            Long goneSeq = seqOf.remove(gone);
            if (goneSeq != null) {
                docs.delete(docKey(table, goneSeq));
            }
        }
        nextSeq.put(table, last);
        seqs.put(table, seqOf);
        live.put(table, stats);
        return stats;
    }

    private void publish() {
        int capacity = config.limits().corpusTasks();
        catchUp.publish(context.currentSystemTimeMs(), pending, (table, seq) -> {
            CorpusStats stats = load(table, capacity);
            // the view's sequence is the newest document's: it grows with every change
            CorpusView view = new CorpusView(stats.account(), stats.computerId(), nextSeq.get(table), stats.n(),
                    ByteBuffer.wrap(stats.toBytes()));
            context.forward(new Record<>(table, ViewBounds.corpus(view), context.currentSystemTimeMs()));
        });
    }

    /** {@code <table>/<seq>} with the sequence zero-padded to 19 digits, so that key order is sequence order. */
    static String docKey(String table, long seq) {
        String digits = Long.toString(seq);
        StringBuilder sb = new StringBuilder(table.length() + 20).append(table).append(Keys.SEPARATOR);
        for (int i = digits.length(); i < 19; i++) {
            sb.append('0');
        }
        return sb.append(digits).toString();
    }

    static String encode(TextAnalysis.CorpusDoc d) {
        return d.taskId() + SEP + String.join(String.valueOf(ITEM), d.terms()) + SEP + String.join(String.valueOf(ITEM), d.anchors());
    }

    static TextAnalysis.CorpusDoc decode(String s) {
        String[] p = s.split(String.valueOf(SEP), -1);
        return new TextAnalysis.CorpusDoc(p[0], set(p[1]), set(p[2]));
    }

    private static Set<String> set(String joined) {
        return joined.isEmpty() ? Set.of() : new LinkedHashSet<>(Arrays.asList(joined.split(String.valueOf(ITEM))));
    }
}
