package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.ImportState.FileState;
import dev.ensemble.sessions.agent.ImportSummary.Skip;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Imports the agents' own transcript stores on this computer as events (guide section 1; the stores are those
 * named in section 5, "A session used outside Ensemble"): Claude Code's {@code ~/.claude/projects} and Codex
 * CLI's {@code ~/.codex/sessions}. One agent session is one coding session; each real prompt is a run that
 * continues the one before; each reply with usage is an engine event. See {@link ClaudeParser},
 * {@link CodexParser} and {@link SessionParser} for what each line means.
 *
 * <p><b>Incremental.</b> The state file ({@link ImportConfig#stateFile()}) keeps, per transcript, its size and
 * modification time, the offset of the last complete line read, and what the session's parser needs to go on.
 * A file whose size and time are unchanged is not read; a file that grew is read from that offset; an
 * incomplete last line is left for the next import; a file that shrank, or whose last bytes read are no longer
 * there (replaced, or rewritten with other bytes), is read again from the start. Event ids
 * are name-based UUIDs, so importing again sends nothing new, and importing from scratch after losing the state
 * sends the same ids. Sub-agent transcripts ({@code agent-*.jsonl} beside a session, or under
 * {@code <sessionId>/subagents/}) are never sessions of their own and are not read.
 *
 * <p><b>Errors.</b> A malformed line is skipped and reported ({@link ImportSummary#skipped()}), and so is a line
 * longer than {@link #MAX_LINE} (never held whole; one without a line end yet is passed over as it grows); an
 * unreadable file is skipped and reported and read again next time. When the sink throws, the exception propagates, no
 * progress past the last successful {@link EventSink#flush()} is saved, and the next import sends the same
 * events again. Not thread-safe: one import at a time.
 */
public final class StoreImporter {
    /** A file not modified for this long has its open run closed as DONE. */
    public static final Duration IDLE = Duration.ofMinutes(30);
    private static final Logger log = LoggerFactory.getLogger(StoreImporter.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern UUID_AT_END =
            Pattern.compile("([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$");
    private static final int CHECKPOINT_FILES = 200;
    /** Transcripts read at once: one per core. */
    private static final int READERS = Math.max(1, Runtime.getRuntime().availableProcessors());
    /** Transcripts read and not yet applied, at most: enough to keep every reader busy while one is applied. */
    private static final int IN_FLIGHT = 2 * READERS;
    private static final byte[] LEAF_UUID = "\"leafUuid\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] USER_MESSAGE = "\"user_message\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] UUID_KEY = "\"uuid\":\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TYPE_USER = "\"type\":\"user\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TYPE_ASSISTANT = "\"type\":\"assistant\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SESSION_ID_KEY = "\"sessionId\":\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] TOOL_CALLS = "\"toolCalls\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SIDECHAIN = "\"isSidechain\":true".getBytes(StandardCharsets.UTF_8);
    private static final long CHECKPOINT_BYTES = 128L << 20;
    /**
     * The longest line read, in bytes before its line end (256 MiB): a longer one is a malformed line, passed over
     * without holding it whole, so one line can neither exhaust memory nor outgrow an array.
     */
    static final int MAX_LINE = 256 << 20;
    /** The last bytes read kept per transcript (up to 64), to tell a file appended to from one replaced or rewritten. */
    static final int TAIL = 64;

    private final ImportConfig config;
    private final ImportProgress progress;
    private final EventFactory events;
    /** The state as last saved, or null to read it from the file. */
    private ImportState state;
    /** Another importer's state file on this computer (only read), or null. */
    private Path known;
    /** The longest line read, in bytes ({@link #MAX_LINE} but in tests). */
    private int maxLine = MAX_LINE;

    /** An importer with no progress listener. */
    public StoreImporter(ImportConfig config) {
        this(config, ImportProgress.NONE);
    }

    public StoreImporter(ImportConfig config, ImportProgress progress) {
        this.config = config;
        this.progress = progress == null ? ImportProgress.NONE : progress;
        this.events = new EventFactory(config);
    }

    /**
     * Takes the transcripts another importer on this computer has read (its state file, e.g. that of the agent
     * {@code up} runs; only read, never written) as read as far as it read them, where this importer has not read
     * as far: importing a folder the running system already imported then reads and sends only what it has not
     * (and says so), instead of every transcript again with the same event ids. Only the transcripts under the
     * stores of each import are taken; an unreadable or missing file is taken as none. Before the first import.
     *
     * @return this importer
     */
    public StoreImporter knowing(Path otherStateFile) {
        this.known = otherStateFile;
        return this;
    }

    /** Sets the longest line read (bytes, 1 to {@link #MAX_LINE}, which it is unless set): for tests. */
    StoreImporter withMaxLine(int bytes) {
        if (bytes < 1 || bytes > MAX_LINE) {
            throw new IllegalArgumentException("a line limit of " + bytes + " bytes");
        }
        this.maxLine = bytes;
        return this;
    }

    /** Imports the Claude Code transcripts under {@code projectsDir} (a {@code ~/.claude/projects} folder). */
    public ImportSummary importClaude(Path projectsDir, EventSink sink) {
        return importAll(List.of(projectsDir), List.of(), sink);
    }

    /** Imports the Codex rollouts under {@code sessionsDir} (a {@code ~/.codex/sessions} folder). */
    public ImportSummary importCodex(Path sessionsDir, EventSink sink) {
        return importAll(List.of(), List.of(sessionsDir), sink);
    }

    /**
     * Imports every transcript under the given folders (missing folders hold nothing), oldest file first, sends
     * the new events to {@code sink}, flushes it and saves the state.
     *
     * @return what was imported and what was skipped
     * @throws RuntimeException whatever the sink throws; the state is then kept as of the last flush
     * @throws UncheckedIOException when the state file cannot be written
     */
    public ImportSummary importAll(List<Path> claudeDirs, List<Path> codexDirs, EventSink sink) {
        return importStores(AgentStores.of(claudeDirs, codexDirs), sink);
    }

    /**
     * Imports every agent session in {@code stores} (missing folders hold nothing), oldest first, sends the new
     * events to {@code sink}, flushes it and saves the state. A transcript that was imported and is gone from
     * disk since (its store still there) gets one engine event with {@code transcriptGone}.
     *
     * @return what was imported and skipped, and per store what it held
     * @throws RuntimeException whatever the sink throws; the state is then kept as of the last flush
     * @throws UncheckedIOException when the state file cannot be written
     */
    public synchronized ImportSummary importStores(AgentStores stores, EventSink sink) {
        return importPass(stores, null, sink);
    }

    /**
     * Imports what changed in the given files only (paths under the folders of {@code stores}, as a file watcher
     * reports them: new, grown, or gone), as {@link #importStores} would: each is read from where the last import
     * left it, a gone one is forgotten (and its session marked gone), nothing else is looked at. Claude Code and
     * Codex transcripts are looked at one by one; a change in another agent's store has that whole store looked
     * at (its unchanged files are still not read). Files outside every store are ignored. The summary counts only
     * what this import did, and lists only the stores it looked at.
     *
     * @param changed the files that changed (not folders)
     */
    public synchronized ImportSummary importChanged(AgentStores stores, java.util.Collection<Path> changed, EventSink sink) {
        Set<Path> scope = new HashSet<>();
        changed.forEach(p -> scope.add(p.toAbsolutePath().normalize()));
        return importPass(stores, scope, sink);
    }

    private ImportSummary importPass(AgentStores stores, Set<Path> scope, EventSink sink) {
        ImportState st = loadState();
        if (known != null) {
            takeKnown(st, stores);
        }
        try {
            Pass pass = new Pass(st, sink, scope);
            ImportSummary summary = pass.run(stores);
            progress.onDone(summary);
            return summary;
        } catch (RuntimeException | Error e) {
            state = null; // read what was last saved next time
            throw e;
        }
    }

    /** See {@link #knowing}: the other state's transcripts under {@code stores} where it read further. */
    private void takeKnown(ImportState st, AgentStores stores) {
        ImportState other;
        try {
            other = ImportState.load(known);
        } catch (UncheckedIOException e) {
            log.warn("{}; importing without it", e.getMessage());
            return;
        }
        if (other.account != null && !other.account.equals(config.account())) {
            return; // another account's import: what it read is not in this account's sessions
        }
        List<String> roots = stores.all().stream().map(e -> rootKey(e.getValue()) + File.separator).toList();
        other.files.forEach((key, theirs) -> {
            FileState mine = st.files.get(key);
            if (roots.stream().anyMatch(key::startsWith) && (mine == null || mine.agent == null
                    || mine.agent.equals(theirs.agent) && (mine.offset < theirs.offset
                    || mine.offset == theirs.offset && mine.lines < theirs.lines))) {
                st.files.put(key, theirs);
            }
        });
    }

    private ImportState loadState() {
        if (state == null) {
            try {
                state = ImportState.load(config.stateFile());
            } catch (UncheckedIOException e) {
                log.warn("{}; importing from scratch (the events keep their ids)", e.getMessage());
                state = new ImportState();
            }
            if (state.account != null && !state.account.equals(config.account())) {
                log.info("the import state {} is account {}'s; importing every store again for account {}", config.stateFile(),
                        state.account, config.account());
                state = new ImportState();
            }
            state.account = config.account();
        }
        return state;
    }

    /** How a transcript is read. */
    enum Format {
        /** One JSON object a line, read from the offset of the last complete line. */
        LINES,
        /** Gemini CLI's older single JSON document: its header, then each message, as records. */
        GEMINI_JSON,
        /** One session of OpenCode's opencode.db: its messages (with their parts) as records. */
        OPENCODE_DB,
        /** One session of OpenCode's older storage/ layout: its messages (with their parts) as records. */
        OPENCODE_STORAGE
    }

    /**
     * One agent session's transcript found on disk.
     *
     * @param root   the store folder it was found under
     * @param size   bytes (for records: the number of messages)
     * @param mtime  epoch ms of the newest change
     * @param id     the session id when the store names it outside the file (OpenCode, Cursor), else null
     * @param folder the working folder when the store names it outside the lines (Gemini, OpenCode, Cursor)
     * @param model  the model when the store names it outside the lines (Cursor's store.db)
     * @param skip   why it is not read (a sub-agent's, migrated), or null
     */
    record Candidate(Path path, Path root, String agent, boolean subAgent, long size, long mtime, Format format,
                             String id, String folder, String model, String skip) {
        Candidate(Path path, Path root, String agent, boolean subAgent, long size, long mtime) {
            this(path, root, agent, subAgent, size, mtime, Format.LINES, null, null, null, null);
        }

        String key() {
            String file = path.toAbsolutePath().normalize().toString();
            return format == Format.OPENCODE_DB ? file + "#" + id : file;
        }

        Candidate with(Format f, String id, String folder, String model) {
            return new Candidate(path, root, agent, subAgent, size, mtime, f, id, folder, model, skip);
        }
    }

    /** One import. */
    private final class Pass {
        private final ImportState st;
        private final EventSink sink;
        private final List<Skip> skipped = new ArrayList<>();
        private final Set<String> sessions = new LinkedHashSet<>();
        private final Map<Path, Map<String, String>> sessionsByMessage = new java.util.concurrent.ConcurrentHashMap<>();
        private int runs;
        private int engineEvents;
        private int sent;
        private int filesRead;
        private boolean dirty;
        private int filesSinceCheckpoint;
        private long bytesSinceCheckpoint;
        private int idleClosed;
        private int gone;
        private final Map<String, ImportSummary.Store> stores = new java.util.LinkedHashMap<>();
        /** Store folders that could not be read this time: their transcripts are not taken for gone. */
        private final Set<String> unreadableRoots = new HashSet<>();
        private final List<Candidate> found = new ArrayList<>();
        /** The changed files this import is limited to (absolute, normalized), or null to look at every store. */
        private final Set<Path> scope;
        /** The store folders (root keys) looked at whole: a transcript of theirs not found is gone. */
        private final Set<String> wholeRoots = new HashSet<>();

        Pass(ImportState st, EventSink sink, Set<Path> scope) {
            this.st = st;
            this.sink = sink;
            this.scope = scope;
        }

        ImportSummary run(AgentStores agentStores) {
            for (Map.Entry<String, Path> store : agentStores.all()) {
                String agent = store.getKey();
                Path root = store.getValue();
                List<Path> inScope = null;
                if (scope != null) {
                    Path abs = root.toAbsolutePath().normalize();
                    inScope = scope.stream().filter(p -> p.startsWith(abs)).toList();
                    if (inScope.isEmpty()) {
                        continue; // nothing changed in this store
                    }
                    root = abs;
                }
                ImportSummary.Store report = store(agent, root);
                int before = found.size();
                int skippedBefore = skipped.size();
                try {
                    if (inScope == null || !AgentDiscovery.discoverFiles(agent, root, inScope, found, skipped)) {
                        AgentDiscovery.discover(agent, root, found, skipped);
                        wholeRoots.add(rootKey(root));
                    }
                } catch (IOException | RuntimeException e) {
                    unreadableRoots.add(rootKey(root));
                    report.unreadable = firstLine(e.getMessage() == null ? e.toString() : e.getMessage());
                }
                report.present = Files.isDirectory(root);
                report.transcripts = (int) found.subList(before, found.size()).stream().filter(c -> !c.subAgent()).count();
                for (Skip k : skipped.subList(skippedBefore, skipped.size())) {
                    if (k.reason().startsWith("unreadable") && k.file().equals(root)) {
                        unreadableRoots.add(rootKey(root));
                        report.unreadable = k.reason().substring(k.reason().indexOf(':') + 1).strip();
                    }
                }
            }
            found.sort(Comparator.comparingLong(Candidate::mtime).thenComparing(c -> c.path().toString()));

            // the files this import reads: the changed ones (size or time not as last read), neither a sub-agent's nor
            // left out by name; the progress bar and the summary ("from N files", "N files checked") count the same
            List<Candidate> changed = new ArrayList<>();
            long bytes = 0;
            for (Candidate c : found) {
                if (c.skip() == null && !c.subAgent() && !unchanged(c)) {
                    changed.add(c);
                    FileState fs = st.files.get(c.key());
                    bytes += fs == null || c.size() < fs.offset ? c.size() : c.size() - fs.offset;
                }
            }
            progress.onStart(changed.size(), bytes);

            long idleBefore = config.clock().millis() - IDLE.toMillis();
            // changed transcripts are read in parallel (each on its own) a few ahead, and applied in order here
            ExecutorService readers = changed.size() > 1 ? Executors.newFixedThreadPool(READERS, r -> {
                Thread t = new Thread(r, "computer-agent-reader");
                t.setDaemon(true);
                return t;
            }) : null;
            try {
                applyInOrder(new ReadAhead(changed, readers, idleBefore), idleBefore);
            } finally {
                if (readers != null) {
                    readers.shutdownNow();
                }
            }
            forgetVanished(agentStores, idleBefore);
            if (dirty) {
                sink.flush();
                st.save(config.stateFile());
            }
            return new ImportSummary(sessions.size(), runs, engineEvents, sent, filesRead, skipped, idleClosed, gone,
                    stores.values().stream().map(ImportSummary.Store::done).toList());
        }

        private void applyInOrder(ReadAhead ahead, long idleBefore) {
            for (Candidate c : found) {
                if (c.skip() != null) {
                    skipped.add(new Skip(c.path(), c.skip()));
                } else if (c.subAgent()) {
                    skipped.add(new Skip(c.path(), "sub-agent transcript"));
                } else {
                    Parsed read = ahead.isNext(c) ? ahead.take() : null;
                    if (read == null || unchanged(c)) { // unchanged now: a transcript found twice, applied already
                        skipped.add(new Skip(c.path(), "unchanged"));
                        closeIdle(c, idleBefore);
                    } else {
                        apply(read);
                    }
                }
                checkpointIfDue();
            }
        }

        /**
         * The changed transcripts, read on the readers in the order they are applied, at most {@link #IN_FLIGHT}
         * ahead: the next is handed over as each is taken, so what is read and not yet applied stays bounded. Each
         * one's state is looked up when it is handed over, on the importing thread (see {@link #readChanged}).
         * Without readers, each is read when it is taken.
         */
        private final class ReadAhead {
            private final List<Candidate> changed;
            private final ExecutorService readers;
            private final long idleBefore;
            private final ArrayDeque<Future<Parsed>> inFlight = new ArrayDeque<>();
            private int handedOver;
            private int taken;

            ReadAhead(List<Candidate> changed, ExecutorService readers, long idleBefore) {
                this.changed = changed;
                this.readers = readers;
                this.idleBefore = idleBefore;
                handOver();
            }

            /** Whether {@code c} (this very candidate) is the next changed transcript to apply. */
            boolean isNext(Candidate c) {
                return taken < changed.size() && changed.get(taken) == c;
            }

            /** What reading the next changed transcript gave, once it is read. */
            Parsed take() {
                Candidate c = changed.get(taken++);
                if (readers == null) {
                    return readChanged(c, st.files.get(c.key()), idleBefore);
                }
                Future<Parsed> next = inFlight.poll();
                handOver();
                try {
                    return next.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("the import was interrupted", e);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }

            private void handOver() {
                while (readers != null && handedOver < changed.size() && inFlight.size() < IN_FLIGHT) {
                    Candidate c = changed.get(handedOver++);
                    FileState old = st.files.get(c.key()); // the state is only ever touched on this thread
                    inFlight.add(readers.submit(() -> readChanged(c, old, idleBefore)));
                }
            }
        }

        private ImportSummary.Store store(String agent, Path root) {
            return stores.computeIfAbsent(agent + " " + rootKey(root), k -> new ImportSummary.Store(agent, root));
        }

        private boolean unchanged(Candidate c) {
            FileState fs = st.files.get(c.key());
            return fs != null && fs.size == c.size() && fs.mtime == c.mtime() && c.agent().equals(fs.agent);
        }

        /** An unchanged file whose open run has been idle for 30 minutes: close it. */
        private void closeIdle(Candidate c, long idleBefore) {
            FileState fs = st.files.get(c.key());
            if (fs.session.turn == null || fs.session.turn.closed || c.mtime() >= idleBefore) {
                return;
            }
            FileState copy = MAPPER.convertValue(fs, FileState.class);
            int closed = closeTurn(c, copy);
            idleClosed += closed;
            store(c.agent(), c.root()).idleClosed += closed > 0 ? 1 : 0;
            st.files.put(c.key(), copy);
            dirty = true;
        }

        /**
         * Closes the open turn of transcript {@code c} as of its last line, changing {@code fs} (a copy of its state, or
         * one no longer kept), and sends what that gives, not as an import.
         *
         * @return the runs closed
         */
        private int closeTurn(Candidate c, FileState fs) {
            SessionParser parser = parser(c, fs);
            parser.finish(true);
            return send(parser, false);
        }

        /** What reading one changed transcript gave, before it is applied to the state and sent. */
        /**
         * @param fresh    whether new lines (or records) were read: when not (a file touched, nothing written), the only
         *                 events are the 30-minute rule's closes
         * @param replaced the state of the last read when the file shrank or was rewritten and was read again from its
         *                 start, else null
         */
        private record Parsed(Candidate c, FileState fs, SessionParser parser, long from, List<Skip> malformed,
                              String unreadable, boolean fresh, FileState replaced) {
        }

        /**
         * Reads what changed in one transcript from its state {@code old} (null when new), on a worker thread. It
         * never touches the import state, which this pass's own thread writes meanwhile: {@code old} is looked up
         * there before the read is handed over, is never changed once stored (a file's new state replaces it), and
         * is only copied here. All else it shares is read-only ({@link #found}, the config, the event factory) or
         * thread-safe (the index of message ids).
         */
        private Parsed readChanged(Candidate c, FileState old, long idleBefore) {
            FileState fs;
            FileState replaced = null;
            if (old == null || c.size() < old.offset || !c.agent().equals(old.agent) || rewritten(c, old)) {
                fs = new FileState();
                fs.agent = c.agent();
                if (old != null && c.agent().equals(old.agent)) {
                    replaced = old;
                    // shrank or rewritten: read again, the session it held remembered
                    ImportState.SessionState was = old.session;
                    boolean held = was.recognized && !was.subAgent && was.sessionId != null && was.firstRunId != null;
                    fs.importedSessionId = held ? was.sessionId : old.importedSessionId;
                    fs.importedFirstRunId = held ? was.firstRunId : old.importedFirstRunId;
                }
            } else {
                fs = MAPPER.convertValue(old, FileState.class);
            }
            long from = fs.offset;
            long longLineFrom = fs.longLineFrom == null ? -1 : fs.longLineFrom;
            long linesBefore = fs.lines;
            SessionParser parser = parser(c, fs);
            List<Skip> malformed = new ArrayList<>();
            try {
                List<JsonNode> records = c.format() == Format.LINES ? null
                        : AgentDiscovery.records(c.format(), c.path(), c.root(), c.id());
                if (parser instanceof GeminiParser && c.folder() == null && fs.session.cwd == null
                        && (records != null || from == 0 || anyLineWith(c.path(), from, c.size(), longLineFrom, TOOL_CALLS))) {
                    // a project hash no known path has: the folder its tools worked in, known before the first claim.
                    // The lines read before gave none: only new tool calls can give one, and then all of them count
                    parser.cwd(GeminiParser.folderFromTools(records != null ? records : geminiLines(c)));
                }
                if (records != null) {
                    int i = (int) Math.min(fs.lines, records.size());
                    for (; i < records.size(); i++) {
                        JsonNode r = records.get(i);
                        if (!AgentDiscovery.complete(c.format(), r, i == records.size() - 1, c.mtime() < idleBefore)) {
                            break; // a message still being written: read it when it is done
                        }
                        parser.line(r, i + 1L);
                    }
                    fs.lines = i;
                    fs.offset = c.size();
                    from = 0;
                } else if (parser instanceof ClaudeParser claude && fs.session.prompts == 0) {
                    // the summary lines Claude Code writes before a resumed conversation: read up to its first message
                    try {
                        readLines(c.path(), from, c.size(), fs.lines, 64 << 10, maxLine, longLineFrom,
                                (bytes, off, len, lineNo) -> {
                            if (contains(bytes, off, len, LEAF_UUID)) {
                                ClaudeLine l;
                                try {
                                    l = ClaudeLine.read(bytes, off, len);
                                } catch (IOException e) {
                                    l = null; // the main pass reports it as a malformed line
                                }
                                if (l != null) {
                                    claude.summaryLeaf(l);
                                }
                            } else if (contains(bytes, off, len, TYPE_USER) || contains(bytes, off, len, TYPE_ASSISTANT)) {
                                throw new ConversationBegun();
                            }
                        }, (lineNo, length) -> {
                            // the main pass reports it as a malformed line
                        });
                    } catch (ConversationBegun begun) {
                        // the rest is read by the main pass
                    }
                }
                if (c.format() == Format.LINES) {
                    LineParse parse = lineParse(parser);
                    LinesRead end = readLines(c.path(), from, c.size(), fs.lines, 1 << 20, maxLine, longLineFrom,
                            (bytes, off, len, lineNo) -> {
                        if (isBlank(bytes, off, len)) {
                            return;
                        }
                        try {
                            if (!parse.line(bytes, off, len, lineNo)) {
                                malformed.add(new Skip(c.path(), Skip.MALFORMED + " " + lineNo + ": not a JSON object"));
                            }
                        } catch (IOException e) {
                            malformed.add(new Skip(c.path(), Skip.MALFORMED + " " + lineNo + ": " + firstLine(e.getMessage())));
                        }
                    }, (lineNo, length) -> malformed.add(new Skip(c.path(), Skip.MALFORMED + " " + lineNo + ": " + length
                            + " bytes, longer than the line length limit of " + maxLine + " bytes")));
                    fs.offset = end.offset();
                    fs.lines = end.lines();
                    fs.longLineFrom = end.longLineFrom() < 0 ? null : end.longLineFrom();
                    fs.tail = end.tail().length == 0 ? null : end.tail();
                }
            } catch (IOException | UncheckedIOException e) {
                return new Parsed(c, fs, parser, from, malformed, e.getMessage(), false, replaced);
            }
            parser.finish(c.mtime() < idleBefore);
            return new Parsed(c, fs, parser, from, malformed, null, fs.lines != linesBefore, replaced);
        }

        /** Every line of a Gemini CLI JSONL chat that is a message with tool calls (a malformed line is left out). */
        private List<JsonNode> geminiLines(Candidate c) throws IOException {
            List<JsonNode> lines = new ArrayList<>();
            readLines(c.path(), 0, c.size(), 0, (bytes, off, len, lineNo) -> {
                if (contains(bytes, off, len, TOOL_CALLS)) {
                    try {
                        JsonNode n = MAPPER.readTree(bytes, off, len); // whole: the tools' results name the paths
                        if (n != null) {
                            lines.add(n);
                        }
                    } catch (IOException e) {
                        // the main pass reports it as a malformed line
                    }
                }
            });
            return lines;
        }

        /**
         * Whether a complete line of {@code file} between {@code from} and {@code to} holds {@code bytes}
         * ({@code longLineFrom}: as in
         * {@link #readLines(Path, long, long, long, int, int, long, LineConsumer, LongLineConsumer)}).
         */
        private boolean anyLineWith(Path file, long from, long to, long longLineFrom, byte[] bytes) throws IOException {
            boolean[] seen = {false};
            readLines(file, from, to, 0, 1 << 20, maxLine, longLineFrom,
                    (b, off, len, lineNo) -> seen[0] |= contains(b, off, len, bytes), (lineNo, length) -> { });
            return seen[0];
        }

        /**
         * Whether the transcript was replaced or rewritten since {@code old} was read: its bytes just before the
         * offset read are not {@link FileState#tail} any more. False for a state without them (written before they
         * were kept), for a store not read by lines, and when the file cannot be read (the read then says so).
         */
        private static boolean rewritten(Candidate c, FileState old) {
            if (c.format() != Format.LINES || old.tail == null || old.tail.length == 0 || old.tail.length > old.offset) {
                return false;
            }
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(c.path(), StandardOpenOption.READ)) {
                byte[] now = new byte[old.tail.length];
                return readAt(ch, now, now.length, old.offset - now.length) < now.length || !Arrays.equals(now, old.tail);
            } catch (IOException e) {
                return false;
            }
        }

        /** Applies what reading one transcript gave: its state, its events, its skips (in the file order). */
        private void apply(Parsed r) {
            Candidate c = r.c();
            FileState fs = r.fs();
            SessionParser parser = r.parser();
            ImportSummary.Store report = store(c.agent(), c.root());
            filesRead++; // a changed file: read, or tried (the progress bar counts it too)
            report.read++;
            if (r.unreadable() != null) {
                skipped.add(new Skip(c.path(), "unreadable: " + r.unreadable()));
                progress.onFile(c.path(), 0);
                return;
            }
            fs.size = c.size();
            fs.mtime = c.mtime();
            st.files.put(c.key(), fs);
            dirty = true;
            if (r.replaced() != null) {
                settleReplaced(c, r.replaced(), parser);
            }
            long readBytes = c.format() == Format.LINES ? fs.offset - r.from() : 0;
            filesSinceCheckpoint++;
            bytesSinceCheckpoint += readBytes;
            if (!fs.session.recognized) {
                skipped.add(new Skip(c.path(), fs.lines > 0 ? "not a transcript"
                        : c.format() == Format.LINES ? "no complete line yet" : "no messages yet"));
            } else if (fs.session.subAgent || (fs.session.prompts == 0 && fs.session.sidechainSeen && fs.session.sessionId == null)) {
                skipped.add(new Skip(c.path(), "sub-agent transcript"));
            } else if (!r.fresh()) {
                // touched, nothing written: what it sends are the 30-minute rule's closes, not an import
                int closed = send(parser, false);
                idleClosed += closed;
                report.idleClosed += closed;
            } else {
                int runsBefore = runs;
                if (!parser.events().isEmpty()) {
                    report.sessions++;
                }
                send(parser);
                report.runs += runs - runsBefore;
                skipped.addAll(r.malformed());
            }
            progress.onFile(c.path(), readBytes);
        }

        private SessionParser parser(Candidate c, FileState fs) {
            switch (c.agent()) {
                case CodexParser.AGENT -> {
                    return new CodexParser(fs.session, events, codexSessionId(c.path()), c.mtime(), this::codexPrompts);
                }
                case GeminiParser.AGENT -> {
                    return new GeminiParser(fs.session, events, c.id(), c.mtime(), c.folder());
                }
                case CopilotParser.AGENT -> {
                    return new CopilotParser(fs.session, events, c.id(), c.mtime(), c.folder());
                }
                case QwenParser.AGENT -> {
                    return new QwenParser(fs.session, events, stem(c.path()), c.mtime());
                }
                case CursorParser.AGENT -> {
                    return new CursorParser(fs.session, events, c.id(), c.mtime(), c.folder(), c.model());
                }
                case OpenCodeParser.AGENT -> {
                    return new OpenCodeParser(fs.session, events, c.id(), c.mtime(), c.folder());
                }
                case GrokParser.AGENT -> {
                    return new GrokParser(fs.session, events, c.id() != null ? c.id() : c.path().getParent().getFileName().toString(),
                            c.mtime(), c.path().getParent(), c.folder(), c.model());
                }
                case VibeParser.AGENT -> {
                    return new VibeParser(fs.session, events, c.id() != null ? c.id() : c.path().getParent().getFileName().toString(),
                            c.mtime(), c.path().getParent());
                }
                case KimiParser.AGENT -> {
                    if (AgentDiscovery.isKimiCodeWire(c.path())) {
                        return new KimiCodeParser(fs.session, events, c.id() != null ? c.id()
                                : c.path().getParent().getParent().getParent().getFileName().toString(), c.mtime(), c.folder(), c.root());
                    }
                    return new KimiParser(fs.session, events, c.id() != null ? c.id() : c.path().getParent().getFileName().toString(),
                            c.mtime(), c.folder());
                }
                default -> {
                    // Claude Code, below
                }
            }
            Path dir = c.path().getParent();
            return new ClaudeParser(fs.session, events, stem(c.path()), c.mtime(),
                    uuid -> sessionsByMessage.computeIfAbsent(dir, this::indexMessages).get(uuid));
        }

        private void send(SessionParser parser) {
            send(parser, true);
        }

        /**
         * Sends the parser's events and counts them; they make their session an imported one when {@code imported}
         * (not when finishing a transcript with nothing new only closed its run by the 30-minute rule).
         *
         * @return the run status changes sent (the runs closed, when nothing new was read)
         */
        private int send(SessionParser parser, boolean imported) {
            int statuses = 0;
            for (Event e : parser.events()) {
                sink.accept(e);
                sent++;
                if (imported) {
                    sessions.add(parser.agent + ":" + parser.sessionId());
                }
                if (e.getPayload() instanceof RunClaimed) {
                    runs++;
                } else if (e.getPayload() instanceof EngineEvent) {
                    engineEvents++;
                } else if (e.getPayload() instanceof dev.ensemble.sessions.events.RunStatusChanged) {
                    statuses++;
                }
            }
            return statuses;
        }

        private void checkpointIfDue() {
            if (dirty && (filesSinceCheckpoint >= CHECKPOINT_FILES || bytesSinceCheckpoint >= CHECKPOINT_BYTES)) {
                sink.flush();
                st.save(config.stateFile());
                filesSinceCheckpoint = 0;
                bytesSinceCheckpoint = 0;
            }
        }

        /**
         * Drops the state of transcripts under the imported folders that are gone; a session imported from one
         * (its store folder still there and readable) gets one engine event saying its transcript is gone: the
         * agent can no longer resume it (guide section 1, "A session that no longer exists"). A transcript not found
         * whose store was not looked at (a store folder missing or unreadable now, or another home's store in a
         * shared data folder) keeps its state, but its open run is closed by the 30-minute rule as of its last line
         * once the file as last seen is 30 minutes old: nothing else would ever close it.
         */
        private void forgetVanished(AgentStores agentStores, long idleBefore) {
            Set<String> present = new HashSet<>();
            found.forEach(c -> present.add(c.key()));
            List<String> roots = new ArrayList<>();
            agentStores.all().forEach(e -> roots.add(rootKey(e.getValue())));
            List<String> looked = new ArrayList<>(roots);
            if (scope != null) {
                looked.retainAll(wholeRoots);
            }
            List<String> vanished = new ArrayList<>();
            List<String> unseen = new ArrayList<>();
            for (String k : st.files.keySet()) {
                if (present.contains(k)) {
                    continue;
                }
                // not found: gone when its store was looked at whole, or when it is a changed file of this import;
                // either way, when its store is there
                boolean gone = (scope != null && inScope(k) ? roots : looked).stream().filter(r -> k.startsWith(r + File.separator))
                        .findFirst().filter(root -> !unreadableRoots.contains(root) && Files.isDirectory(Path.of(root)))
                        .isPresent();
                if (gone) {
                    vanished.add(k);
                } else if (scope == null || roots.stream().noneMatch(r -> k.startsWith(r + File.separator))) {
                    unseen.add(k);
                }
            }
            for (String k : unseen) {
                closeIdleUnseen(k, idleBefore);
            }
            for (String k : vanished) {
                FileState fs = st.files.remove(k);
                dirty = true;
                markGone(asLastSeen(k, fs), fs);
            }
        }

        /** The session the transcript {@code c} held as of {@code fs}, its file no longer there: one gone event (below). */
        private void markGone(Candidate c, FileState fs) {
            ImportState.SessionState ss = fs.session;
            boolean read = ss.recognized && !ss.subAgent && ss.firstRunId != null && ss.sessionId != null;
            String sessionId = read ? ss.sessionId : fs.importedSessionId; // an emptied file's: what it held before
            String firstRunId = read ? ss.firstRunId : fs.importedFirstRunId;
            if (sessionId == null || firstRunId == null) {
                return;
            }
            if (ss.turn != null && !ss.turn.closed) {
                closeTurn(c, fs); // the open turn can go on nowhere: done as of the transcript's last line
            }
            // one id per disappearance (the file as last seen): a transcript restored and deleted again is gone again
            Event e = events.event(fs.agent + "/" + sessionId + "/transcript/gone/" + fs.size + "-" + fs.mtime, config.clock().instant(),
                    EngineEvent.newBuilder().setRunId(firstRunId).setAgentSessionId(sessionId)
                            .setContextUsed(null).setContextSize(null).setModel(ss.model).setTranscriptGone(true).build());
            sink.accept(e);
            sent++;
            gone++;
        }

        /**
         * A transcript read again from its start (it shrank or was rewritten), {@code was} the last read's state: when it
         * no longer holds the run that read left open, that run is done as of its last line (nothing else would ever
         * close it). The session it held is not marked gone here, even when the file now holds another one.
         */
        private void settleReplaced(Candidate c, FileState was, SessionParser parser) {
            ImportState.SessionState old = was.session;
            ImportState.Turn open = old.turn;
            if (open == null || open.closed || !old.recognized || old.subAgent || open.runId == null
                    || parser.events().stream().anyMatch(e -> e.getPayload() instanceof RunClaimed rc && open.runId.equals(rc.getRunId()))) {
                return;
            }
            closeTurn(c, MAPPER.convertValue(was, FileState.class));
        }

        /** The transcript of state key {@code k} as it was last seen, for a parser to finish its open turn. */
        private Candidate asLastSeen(String k, FileState fs) {
            Path file = fileOf(k, fs);
            String id = file.toString().length() < k.length() ? k.substring(file.toString().length() + 1) : StoreImporter.stem(file);
            return new Candidate(file, file.getParent(), fs.agent, false, fs.size, fs.mtime, Format.LINES, id, null, null, null);
        }

        /** The file of state key {@code k}: the key itself, or for an OpenCode database's session ({@code <db>#<id>}) the database. */
        private static Path fileOf(String k, FileState fs) {
            int hash = OpenCodeParser.AGENT.equals(fs.agent) ? k.lastIndexOf('#') : -1;
            return Path.of(hash < 0 ? k : k.substring(0, hash));
        }

        /**
         * The 30-minute rule for a transcript this import did not see (its store not looked at): its open run is closed
         * as of its last line when the file as last seen was modified before {@code idleBefore} and it has not changed
         * since (an OpenCode database: not written since {@code idleBefore}), or when it is not there (or cannot be
         * looked at) any more. A file that changed is left for an import that reads it.
         */
        private void closeIdleUnseen(String k, long idleBefore) {
            FileState fs = st.files.get(k);
            if (fs.session.turn == null || fs.session.turn.closed || fs.mtime >= idleBefore || !fs.session.recognized
                    || fs.session.subAgent) {
                return;
            }
            try {
                java.nio.file.attribute.BasicFileAttributes now = Files.readAttributes(fileOf(k, fs),
                        java.nio.file.attribute.BasicFileAttributes.class);
                long mtime = now.lastModifiedTime().toMillis();
                boolean unchanged = OpenCodeParser.AGENT.equals(fs.agent) ? mtime < idleBefore
                        : now.size() == fs.size && mtime == fs.mtime;
                if (!unchanged) {
                    return;
                }
            } catch (IOException | RuntimeException e) {
                // not there, or not to be looked at: nothing will write to it that this import could read
            }
            FileState copy = MAPPER.convertValue(fs, FileState.class);
            idleClosed += closeTurn(asLastSeen(k, copy), copy);
            st.files.put(k, copy);
            dirty = true;
        }

        /** Whether the transcript of state key {@code k} is a changed file of this import, or under a changed (gone) folder. */
        private boolean inScope(String k) {
            for (Path p : scope) {
                String s = p.toString();
                if (k.equals(s) || k.startsWith(s + File.separator)) {
                    return true;
                }
            }
            return false;
        }

        /** The prompts of the Codex session {@code id} (a fork's parent), from its rollout among those found. */
        private List<String> codexPrompts(String id) {
            for (Candidate c : found) {
                if (CodexParser.AGENT.equals(c.agent()) && id.equals(codexSessionId(c.path()))) {
                    List<String> prompts = new ArrayList<>();
                    try {
                        readLines(c.path(), 0, c.size(), 0, (bytes, off, len, lineNo) -> {
                            if (!contains(bytes, off, len, USER_MESSAGE)) {
                                return;
                            }
                            JsonNode n = lean(bytes, off, len);
                            JsonNode p = n == null ? null : n.path("payload");
                            if (p != null && "user_message".equals(SessionParser.text(p, "type"))) {
                                String t = SessionParser.text(p, "message");
                                if (t != null && !t.isBlank()) {
                                    prompts.add(t);
                                }
                            }
                        });
                    } catch (IOException | UncheckedIOException e) {
                        log.warn("cannot read {} to find the prompts a fork replays: {}", c.path(), e.getMessage());
                    }
                    return prompts;
                }
            }
            return List.of();
        }

        /** Message uuid to session id, over the main transcripts of one Claude Code project folder. */
        private Map<String, String> indexMessages(Path dir) {
            Map<String, String> index = new HashMap<>();
            List<Path> files = new ArrayList<>();
            try (var list = Files.list(dir)) {
                list.filter(p -> p.getFileName().toString().endsWith(".jsonl")
                        && !p.getFileName().toString().startsWith("agent-")).forEach(files::add);
            } catch (IOException | UncheckedIOException e) {
                log.warn("cannot list {} to find the sessions that summary lines point to: {}", dir, e.getMessage());
                return index;
            }
            for (Path f : files) {
                try {
                    readLines(f, 0, Files.size(f), 0, (bytes, off, len, lineNo) -> {
                        // no JSON parse: the values of "sessionId" and every "uuid" key, found as bytes
                        int u = indexOf(bytes, off, len, UUID_KEY, off);
                        if (u < 0 || contains(bytes, off, len, SIDECHAIN)) {
                            return;
                        }
                        String sid = stringAfter(bytes, off, len, SESSION_ID_KEY);
                        while (u >= 0 && sid != null) {
                            String uuid = stringAt(bytes, u + UUID_KEY.length, off + len);
                            if (uuid != null) {
                                index.putIfAbsent(uuid, sid);
                            }
                            u = indexOf(bytes, off, len, UUID_KEY, u + UUID_KEY.length);
                        }
                    });
                } catch (IOException | UncheckedIOException e) {
                    log.warn("cannot read {} to find the sessions that summary lines point to: {}", f, e.getMessage());
                }
            }
            return index;
        }
    }

    /** Reads one line and hands it to a parser: false when it is JSON but not an object. */
    @FunctionalInterface
    private interface LineParse {
        boolean line(byte[] bytes, int off, int len, long lineNo) throws IOException;
    }

    /**
     * How {@code parser} gets its lines: Claude Code's and Codex's as the fields they read, straight from the bytes
     * ({@link ClaudeLine}, {@link CodexLine}: no tree); the other agents' as Jackson trees.
     */
    private static LineParse lineParse(SessionParser parser) {
        if (parser instanceof ClaudeParser claude) {
            return (bytes, off, len, lineNo) -> {
                ClaudeLine l = ClaudeLine.read(bytes, off, len);
                if (l != null) {
                    claude.line(l, lineNo);
                }
                return l != null;
            };
        }
        if (parser instanceof CodexParser codex) {
            return (bytes, off, len, lineNo) -> {
                CodexLine l = CodexLine.read(bytes, off, len);
                if (l != null) {
                    codex.line(l, lineNo);
                }
                return l != null;
            };
        }
        return (bytes, off, len, lineNo) -> {
            JsonNode n = MAPPER.readTree(bytes, off, len);
            if (n != null && n.isObject()) {
                parser.line(n, lineNo);
            }
            return n != null && n.isObject();
        };
    }

    static String rootKey(Path root) {
        return root.toAbsolutePath().normalize().toString();
    }

    /** Ends the look for summary lines at the first line of the conversation. */
    private static final class ConversationBegun extends RuntimeException {
        ConversationBegun() {
            super(null, null, false, false);
        }
    }

    /**
     * Receives one complete line (without its line end): {@code len} bytes of {@code buf} from {@code off}, valid
     * only during the call (the buffer is reused), and its number, counted from 1.
     */
    @FunctionalInterface
    interface LineConsumer {
        void accept(byte[] buf, int off, int len, long lineNo);
    }

    /** Receives a line longer than the limit instead of its bytes: its number, counted from 1, and its length in bytes. */
    @FunctionalInterface
    interface LongLineConsumer {
        void accept(long lineNo, long length);
    }

    /**
     * Where a read of lines stopped.
     *
     * @param offset       just after the last complete line; while in an over-long line, where the look for its end
     *                     stopped
     * @param lines        the lines counted so far
     * @param longLineFrom the start (byte) of an over-long line whose line end is not read yet, or -1
     * @param tail         the last bytes read, up to {@link #TAIL}, just before {@code offset}: empty when it is 0
     */
    record LinesRead(long offset, long lines, long longLineFrom, byte[] tail) {
    }

    /**
     * Reads the complete lines between byte {@code from} and byte {@code to} (a line end at or before {@code to}
     * completes a line; the rest is left for later), handing each to {@code consumer} in place in one reused
     * buffer (up to 1 MiB, doubled for a longer line): no copy of a line is made. A line longer than
     * {@link #MAX_LINE} is passed over unread (not handed to {@code consumer}).
     *
     * @return {offset just after the last complete line (or, in an over-long line without its line end, where the
     *         look for it stopped), line count}
     */
    static long[] readLines(Path file, long from, long to, long linesBefore, LineConsumer consumer) throws IOException {
        return readLines(file, from, to, linesBefore, 1 << 20, consumer);
    }

    private static final java.lang.invoke.VarHandle LONGS = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
    private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;

    /**
     * {@link #readLines(Path, long, long, long, LineConsumer)} reading {@code chunk} bytes at a time (less for a
     * shorter range): a small chunk for a look at a file's first lines. Line ends are found eight bytes at a time.
     */
    static long[] readLines(Path file, long from, long to, long linesBefore, int chunk, LineConsumer consumer)
            throws IOException {
        LinesRead r = readLines(file, from, to, linesBefore, chunk, MAX_LINE, -1, consumer, (lineNo, length) -> {
        });
        return new long[] {r.offset(), r.lines()};
    }

    /**
     * {@link #readLines(Path, long, long, long, int, LineConsumer)} with a limit: a line longer than {@code maxLine}
     * bytes (before its line end) goes to {@code tooLong} instead of {@code consumer} once its line end is read. The
     * buffer never grows past {@code maxLine + 1} bytes: an over-long line's bytes are not kept, and while its line end
     * is not there the read goes on to {@code to} and says where the line began, for the next read to go on from.
     *
     * @param longLineFrom the start (byte) of an over-long line that {@code from} is in (a former read's
     *                     {@link LinesRead#longLineFrom()}), or -1: {@code from} is just after a line end
     */
    static LinesRead readLines(Path file, long from, long to, long linesBefore, int chunk, int maxLine, long longLineFrom,
                               LineConsumer consumer, LongLineConsumer tooLong) throws IOException {
        long consumed = from;
        long lineNo = linesBefore;
        long skip = longLineFrom; // >= 0: in an over-long line that began there, its bytes not kept
        byte[] tail = new byte[TAIL];
        int tailLen = 0;
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.READ)) {
            int before = (int) Math.min(TAIL, from);
            if (before > 0 && readAt(ch, tail, before, from - before) == before) { // the bytes read before
                tailLen = before;
            }
            byte[] buf = new byte[(int) Math.max(64, Math.min(chunk, to - from))];
            int have = 0; // bytes of an incomplete line at the start of buf
            long pos = from; // the file position just after the bytes read so far
            while (pos < to) {
                if (have == buf.length) { // a line longer than the buffer, not yet over the limit
                    buf = Arrays.copyOf(buf, (int) Math.min(2L * buf.length, maxLine + 1L));
                }
                int n = ch.read(java.nio.ByteBuffer.wrap(buf, have, (int) Math.min(buf.length - have, to - pos)), pos);
                if (n < 0) {
                    break;
                }
                pos += n;
                int end = have + n;
                int start = 0;
                int nl = newline(buf, have, end);
                if (skip >= 0) { // nothing kept: have is 0
                    if (nl == end) {
                        tailLen = keepTail(tail, tailLen, buf, end);
                        consumed = pos;
                        continue;
                    }
                    lineNo++;
                    tooLong.accept(lineNo, pos - (end - nl) - skip);
                    skip = -1;
                    start = nl + 1;
                    nl = newline(buf, start, end);
                }
                for (; nl < end; nl = newline(buf, nl + 1, end)) {
                    int len = nl - start;
                    lineNo++;
                    if (len > maxLine) {
                        tooLong.accept(lineNo, len);
                    } else {
                        if (len > 0 && buf[start + len - 1] == '\r') {
                            len--;
                        }
                        consumer.accept(buf, start, len, lineNo);
                    }
                    start = nl + 1;
                }
                if (end - start > maxLine) { // an incomplete line already over the limit: passed over up to its end
                    skip = pos - (end - start);
                    start = end;
                }
                tailLen = keepTail(tail, tailLen, buf, start);
                consumed = pos - (end - start);
                System.arraycopy(buf, start, buf, 0, end - start);
                have = end - start;
            }
        }
        return new LinesRead(consumed, lineNo, skip, Arrays.copyOf(tail, tailLen));
    }

    /**
     * Keeps in {@code tail} the last {@link #TAIL} bytes of {@code tail[0, tailLen)} followed by {@code buf[0, n)}.
     *
     * @return the new length of the bytes in {@code tail}
     */
    private static int keepTail(byte[] tail, int tailLen, byte[] buf, int n) {
        if (n >= TAIL) {
            System.arraycopy(buf, n - TAIL, tail, 0, TAIL);
            return TAIL;
        }
        int keep = Math.min(tailLen, TAIL - n);
        System.arraycopy(tail, tailLen - keep, tail, 0, keep);
        System.arraycopy(buf, 0, tail, keep, n);
        return keep + n;
    }

    /** Reads {@code len} bytes at {@code pos} into {@code b} from 0: the count read, less at the end of the file. */
    private static int readAt(java.nio.channels.FileChannel ch, byte[] b, int len, long pos) throws IOException {
        int got = 0;
        while (got < len) {
            int n = ch.read(java.nio.ByteBuffer.wrap(b, got, len - got), pos + got);
            if (n < 0) {
                break;
            }
            got += n;
        }
        return got;
    }

    /**
     * The index of the first {@code '\n'} in {@code buf} from {@code from} before {@code end}, or {@code end}:
     * eight bytes at a time.
     */
    private static int newline(byte[] buf, int from, int end) {
        int i = from;
        for (int last = end - 8; i <= last; i += 8) {
            long v = (long) LONGS.get(buf, i) ^ NEWLINES;
            long m = ~(((v & LOW7) + LOW7) | v | LOW7); // 0x80 exactly in the bytes that are '\n'
            if (m != 0) {
                return i + (Long.numberOfTrailingZeros(m) >>> 3);
            }
        }
        while (i < end && buf[i] != '\n') {
            i++;
        }
        return i;
    }

    /** A line as a lean tree ({@link LeanJson}), or null when it is not JSON. */
    static JsonNode lean(byte[] bytes, int off, int len) {
        try {
            return LeanJson.read(bytes, off, len);
        } catch (IOException e) {
            return null; // the main pass reports it as a malformed line
        }
    }

    /** The plain string value right after {@code key} (a {@code "name":"} pattern) in the line, or null. */
    static String stringAfter(byte[] b, int off, int len, byte[] key) {
        int at = indexOf(b, off, len, key, off);
        return at < 0 ? null : stringAt(b, at + key.length, off + len);
    }

    /** The characters from {@code start} to the next quote (an id: no escapes), or null when there is none. */
    static String stringAt(byte[] b, int start, int end) {
        for (int i = start; i < end && i - start < 200; i++) {
            if (b[i] == '"') {
                return new String(b, start, i - start, StandardCharsets.UTF_8);
            }
            if (b[i] == '\\') {
                return null;
            }
        }
        return null;
    }

    /** Whether {@code needle} occurs in {@code hay[off, off + len)} (bytes, no decoding). */
    static boolean contains(byte[] hay, int off, int len, byte[] needle) {
        return indexOf(hay, off, len, needle, off) >= 0;
    }

    /** Where {@code needle} next occurs in {@code hay[off, off + len)} at or after {@code at}, or -1. */
    static int indexOf(byte[] hay, int off, int len, byte[] needle, int at) {
        outer:
        for (int i = at, last = off + len - needle.length; i <= last; i++) {
            if (hay[i] != needle[0]) {
                continue;
            }
            for (int j = 1; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static boolean isBlank(byte[] bytes, int off, int len) {
        for (int i = off; i < off + len; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    static String firstLine(String s) {
        if (s == null) {
            return "not JSON";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    static String stem(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(".jsonl") ? name.substring(0, name.length() - ".jsonl".length()) : name;
    }

    /** A rollout's session id from its name ({@code rollout-<time>-<uuid>.jsonl}), or the name. */
    static String codexSessionId(Path file) {
        String stem = stem(file);
        Matcher m = UUID_AT_END.matcher(stem);
        return m.find() ? m.group(1) : stem;
    }
}
