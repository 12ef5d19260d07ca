package dev.ensemble.sessions.agent.assistant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.assistant.TurnRules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The computer's assistant sessions (guide §5 "One chat, one session"): {@code <state>/assistant-sessions.json}, chat
 * → agent, agent session id, the instructions the session was given, its folder and how many days it is kept, with
 * what the turn rules need to decide the next turn ({@link TurnRules.SessionEntry}), and a folder per chat,
 * {@code <state>/assistant/<key>}, for the turn's files, instructions and MCP config.
 *
 * <p>The file is one JSON object, {@code {"version": 1, "sessions": {"<key>": {entry}}}}; an entry's fields are
 * those of {@link Entry}, {@code updatedAt} as ISO-8601. It is read once when the store opens and written whole after
 * every change: to a temporary file beside it, forced to disk, then moved over the old one atomically (and the folder
 * forced where the platform allows), so a crash leaves the old file or the new one, never half of one. A file that is
 * not such an object (not JSON, an entry without its agent or session id, a negative count) is moved aside to
 * {@code assistant-sessions.json.corrupt-<epoch millis>}, logged as an error naming that file, and the store starts
 * empty: the agent goes on, and the chats start new sessions.
 *
 * <p>One store per state folder: while open it holds an OS lock on {@code <state>/assistant-sessions.lock}, so a
 * second computer agent on the same folder (which would write its own entries over this one's) is refused at open.
 * {@link #close()} releases it. Temporary files a write cut short left beside the file are deleted when it opens.
 *
 * <p>Thread-safe: every method is synchronized on the store. Turns of one chat are serialised by {@link ChatLocks},
 * not by the store.
 */
public final class AssistantSessions implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AssistantSessions.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The store's file name in the state folder. */
    public static final String FILE = "assistant-sessions.json";
    /** The lock file in the state folder: held (an OS file lock) while the store is open. */
    public static final String LOCK = "assistant-sessions.lock";
    /** The folder of the chats' own folders in the state folder. */
    public static final String FOLDERS = "assistant";
    static final int VERSION = 1;

    /** A session kept unresumed after it was used outside Ensemble (retired): deleted with the chat or its entry. */
    public record Retired(String agent, String sessionId) {
        public Retired {
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(sessionId, "sessionId");
        }
    }

    /**
     * One chat's entry.
     *
     * @param key              the chat's key (conversation id, session.key)
     * @param agent            the agent's standard name ({@code claude-code}, {@code copilot}, ...)
     * @param sessionId        the agent's own session id
     * @param model            the model of the session's last turn, or null
     * @param instructionLines the instructions the session was given (its first), one entry a line
     * @param folder           the agent's working folder: the chat's own folder or the group's project folder
     * @param keepDays         how many days the session is kept unused, or null for the default (30)
     * @param positionLeft     the chat's position the session's last turn left
     * @param messagesSent     messages sent to the session, one per turn
     * @param promptsNoted     prompts counted in the agent's transcript after the session's last turn, or null when not
     *                         counted (an agent not counted, a transcript not read)
     * @param computerId       the computer that keeps the entry
     * @param updatedAt        the end of the session's last turn
     * @param retired          sessions of this chat used outside Ensemble, kept unresumed until the chat is dropped
     */
    public record Entry(String key, String agent, String sessionId, String model, List<String> instructionLines,
                        String folder, Integer keepDays, int positionLeft, int messagesSent, Integer promptsNoted,
                        String computerId, Instant updatedAt, List<Retired> retired) {
        public Entry {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(sessionId, "sessionId");
            Objects.requireNonNull(updatedAt, "updatedAt");
            instructionLines = List.copyOf(instructionLines);
            retired = List.copyOf(retired);
            if (positionLeft < 0 || messagesSent < 0 || (promptsNoted != null && promptsNoted < 0) || (keepDays != null && keepDays < 0)) {
                throw new IllegalArgumentException("chat " + key + ": positionLeft, messagesSent, promptsNoted and keepDays must not be negative");
            }
        }

        /** The record {@link TurnRules#decide} takes; {@code gone} when the agent cannot reopen the session. */
        public TurnRules.SessionEntry toSessionEntry(boolean gone) {
            return new TurnRules.SessionEntry(sessionId, agent, model, computerId, positionLeft, messagesSent,
                    instructionLines, folder, promptsNoted, gone);
        }

        /**
         * The entry the turn rules left after a turn ({@link TurnRules#afterTurn}), for {@code key}, kept
         * {@code keepDays} (the decision's), at {@code updatedAt} (the turn's end), with {@code retired}: the retired
         * sessions of the entry it follows, plus that entry's own session when the decision retired it.
         */
        public static Entry of(String key, TurnRules.SessionEntry e, Integer keepDays, Instant updatedAt, List<Retired> retired) {
            return new Entry(key, e.agent(), e.sessionId(), e.model(), e.instructionLines(), e.folder(), keepDays,
                    e.positionLeft(), e.messagesSent(), e.promptsNoted(), e.computerId(), updatedAt, retired);
        }

        /** This entry with {@code session} added to its retired ones (a touched session, kept unresumed). */
        public Entry withRetired(Retired session) {
            List<Retired> r = new ArrayList<>(retired);
            if (!r.contains(session)) {
                r.add(session);
            }
            return new Entry(key, agent, sessionId, model, instructionLines, folder, keepDays, positionLeft, messagesSent,
                    promptsNoted, computerId, updatedAt, r);
        }
    }

    private final Path stateDir;
    private final Path file;
    private final Path folders;
    private final Clock clock;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private FileChannel lockChannel;
    private FileLock lock;

    private AssistantSessions(Path stateDir, Clock clock) {
        this.stateDir = stateDir.toAbsolutePath().normalize();
        this.file = this.stateDir.resolve(FILE);
        this.folders = this.stateDir.resolve(FOLDERS);
        this.clock = clock;
    }

    /**
     * Opens the store of {@code stateDir} (the computer agent's state folder), reading its file when there is one.
     * A corrupt file is set aside (see the class comment); an unreadable one (permissions, I/O) is an error. The store
     * holds an OS lock on {@code <state>/assistant-sessions.lock} until {@link #close()}: a second store of the same
     * state folder, in this process or another, would overwrite this one's entries with its own, so it is refused.
     *
     * @throws IllegalStateException when the store of {@code stateDir} is open already (another computer agent on the
     *                               same state folder, or a store not closed)
     * @throws UncheckedIOException  when the file exists and cannot be read, or a corrupt one cannot be moved aside
     */
    public static AssistantSessions open(Path stateDir, Clock clock) {
        AssistantSessions s = new AssistantSessions(stateDir, clock);
        s.lock();
        try {
            s.removeLeftTemporaryFiles();
            s.load();
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void lock() {
        Path lockFile = stateDir.resolve(LOCK);
        FileChannel ch = null;
        FileLock l = null;
        try {
            Files.createDirectories(stateDir);
            ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                l = ch.tryLock();
            } catch (OverlappingFileLockException sameProcess) {
                l = null;
            }
        } catch (IOException e) {
            closeQuietly(ch);
            throw new UncheckedIOException("cannot lock " + lockFile, e);
        }
        if (l == null) {
            closeQuietly(ch);
            throw new IllegalStateException(file + " is open already (" + lockFile + " is locked): another computer agent "
                    + "uses the state folder " + stateDir + "; stop it, or give this one its own state folder");
        }
        lockChannel = ch;
        lock = l;
    }

    /**
     * Deletes the temporary files a write cut short left ({@code .assistant-sessions.json*.tmp}, see {@link #save()}):
     * the store is locked, so none is another store's write under way. One that cannot be deleted is logged.
     */
    private void removeLeftTemporaryFiles() {
        try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(stateDir, "." + FILE + "*.tmp")) {
            for (Path tmp : ds) {
                try {
                    if (Files.isRegularFile(tmp, java.nio.file.LinkOption.NOFOLLOW_LINKS) && Files.deleteIfExists(tmp)) {
                        log.info("removed {}, left by a write of the assistant sessions that did not finish", tmp);
                    }
                } catch (IOException e) {
                    log.warn("cannot remove {}, left by a write of the assistant sessions: {}", tmp, e.toString());
                }
            }
        } catch (IOException e) {
            log.warn("cannot list {} for temporary files left by a write: {}", stateDir, e.toString());
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing a lock file that was never locked
            }
        }
    }

    /** Releases the store's lock; the store cannot be changed after (reads still answer what it held). */
    @Override
    public synchronized void close() {
        if (lockChannel == null) {
            return;
        }
        try {
            if (lock != null && lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // closing the channel releases it too
        } finally {
            closeQuietly(lockChannel);
            lockChannel = null;
            lock = null;
        }
    }

    private void checkOpen() {
        if (lockChannel == null) {
            throw new IllegalStateException("the assistant sessions store of " + stateDir + " is closed");
        }
    }

    /** The store's file. */
    public Path file() {
        return file;
    }

    /** The chat's entry, or null. */
    public synchronized Entry get(String key) {
        return entries.get(key);
    }

    /** Every entry, by key, in the order they were first stored. */
    public synchronized Map<String, Entry> all() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(entries));
    }

    /** Stores {@code entry} (replacing the chat's), then writes the file. */
    public synchronized void put(Entry entry) {
        checkOpen();
        Entry before = entries.put(entry.key(), entry);
        try {
            save();
        } catch (UncheckedIOException e) {
            if (before == null) {
                entries.remove(entry.key());
            } else {
                entries.put(entry.key(), before);
            }
            throw e;
        }
    }

    /** Removes the chat's entry, then writes the file; the entry removed, or null when there was none (nothing written). */
    public synchronized Entry remove(String key) {
        checkOpen();
        Entry removed = entries.remove(key);
        if (removed != null) {
            try {
                save();
            } catch (UncheckedIOException e) {
                entries.put(key, removed);
                throw e;
            }
        }
        return removed;
    }

    /** The places the turn rules compute folders from: {@code workspace} and this state folder. */
    public TurnRules.Places places(Path workspace) {
        return new TurnRules.Places(workspace.toAbsolutePath().normalize().toString(), stateDir.toString());
    }

    /** {@code <state>/assistant}, the folder every chat's own folder is in. */
    public Path chatFolders() {
        return folders;
    }

    /**
     * The chat's own folder, {@code <state>/assistant/<key>} with the key as {@link TurnRules#chatFolderName} (the
     * same path as {@link TurnRules#chatFolder} with {@link #places}); never outside {@code <state>/assistant}.
     */
    public Path chatFolder(String key) {
        Path p = folders.resolve(TurnRules.chatFolderName(key)).normalize();
        if (!p.getParent().equals(folders)) {
            throw new IllegalStateException("chat " + key + " would have a folder outside " + folders + ": " + p);
        }
        return p;
    }

    /**
     * Checks that {@code <state>/assistant} is the state folder's own folder, not a link to another place (nor under
     * one): its real path is the real state folder's {@code assistant}. When it is not there, nothing to check.
     *
     * @throws IOException when it is a link, or reaches elsewhere
     */
    void checkChatFolders() throws IOException {
        if (!Files.exists(folders, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.isSymbolicLink(folders)) {
            throw new IOException(folders + " is a link, not the state folder's own folder of chats");
        }
        Path real = folders.toRealPath();
        if (!real.equals(stateDir.toRealPath().resolve(FOLDERS))) {
            throw new IOException(folders + " is really " + real + ", not in the state folder");
        }
    }

    /**
     * Makes the chat's own folder (and {@code <state>/assistant}) when missing; refuses one that is a link, and a
     * {@code <state>/assistant} that is a link.
     */
    public Path makeChatFolder(String key) {
        Path p = chatFolder(key);
        try {
            Files.createDirectories(stateDir);
            checkChatFolders();
            Files.createDirectories(folders);
            checkChatFolders();
            if (Files.isSymbolicLink(p)) {
                throw new IOException(p + " is a link, not the chat's own folder");
            }
            Files.createDirectories(p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the folder of chat " + key, e);
        }
    }

    /**
     * Whether {@code folder} (an entry's folder) is the chat's own folder, not a group's project folder. A folder that
     * is not a path on this computer (a hand-edited file: a NUL, a name the file system refuses) is not.
     */
    public boolean isChatsOwn(String key, String folder) {
        if (folder == null) {
            return false;
        }
        try {
            return Path.of(folder).toAbsolutePath().normalize().equals(chatFolder(key));
        } catch (java.nio.file.InvalidPathException notAPath) {
            return false;
        }
    }

    private void load() {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException none) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        try {
            entries.putAll(parse(text));
        } catch (RuntimeException | IOException corrupt) {
            Path aside = file.resolveSibling(FILE + ".corrupt-" + clock.millis());
            for (int n = 1; Files.exists(aside, java.nio.file.LinkOption.NOFOLLOW_LINKS); n++) {
                aside = file.resolveSibling(FILE + ".corrupt-" + clock.millis() + "-" + n); // one set aside before, same instant
            }
            try {
                Files.move(file, aside, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot move the corrupt " + file + " aside", e);
            }
            log.error("{} is not an assistant sessions file ({}); kept as {}; starting with no assistant sessions: "
                    + "each chat starts a new session at its next turn", file, corrupt.getMessage(), aside);
        }
    }

    static Map<String, Entry> parse(String text) throws IOException {
        JsonNode root = MAPPER.readTree(text);
        if (root == null || !root.isObject() || !root.path("sessions").isObject()) {
            throw new IOException("expected {\"version\": 1, \"sessions\": {...}}");
        }
        if (root.path("version").asInt(-1) != VERSION) {
            throw new IOException("version " + root.path("version") + " is not " + VERSION);
        }
        Map<String, Entry> out = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = root.path("sessions").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            out.put(f.getKey(), entry(f.getKey(), f.getValue()));
        }
        return out;
    }

    private static Entry entry(String key, JsonNode n) throws IOException {
        if (!n.isObject()) {
            throw new IOException("sessions." + key + " is not an object");
        }
        List<String> lines = new ArrayList<>();
        for (JsonNode l : array(n, key, "instructionLines")) {
            if (!l.isTextual()) {
                throw new IOException("sessions." + key + ".instructionLines holds a non-string");
            }
            lines.add(l.asText());
        }
        List<Retired> retired = new ArrayList<>();
        for (JsonNode r : array(n, key, "retired")) {
            retired.add(new Retired(required(r, key, "retired[].agent"), required(r, key, "retired[].sessionId")));
        }
        Instant updatedAt;
        try {
            updatedAt = Instant.parse(required(n, key, "updatedAt"));
        } catch (DateTimeParseException e) {
            throw new IOException("sessions." + key + ".updatedAt is not an instant: " + e.getParsedString());
        }
        try {
            return new Entry(key, required(n, key, "agent"), required(n, key, "sessionId"), optional(n, "model"), lines,
                    optional(n, "folder"), integer(n, key, "keepDays", false), integer(n, key, "positionLeft", true),
                    integer(n, key, "messagesSent", true), integer(n, key, "promptsNoted", false),
                    optional(n, "computerId"), updatedAt, retired);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage());
        }
    }

    private static List<JsonNode> array(JsonNode n, String key, String field) throws IOException {
        JsonNode a = n.get(field);
        if (a == null || a.isNull()) {
            return List.of();
        }
        if (!a.isArray()) {
            throw new IOException("sessions." + key + "." + field + " is not an array");
        }
        List<JsonNode> out = new ArrayList<>();
        a.forEach(out::add);
        return out;
    }

    private static String required(JsonNode n, String key, String field) throws IOException {
        String name = field.substring(field.lastIndexOf('.') + 1);
        JsonNode v = n.get(name);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IOException("sessions." + key + "." + field + " is missing or not a string");
        }
        return v.asText();
    }

    private static String optional(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    private static Integer integer(JsonNode n, String key, String field, boolean required) throws IOException {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw new IOException("sessions." + key + "." + field + " is missing");
            }
            return null;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber()) {
            throw new IOException("sessions." + key + "." + field + " is not a whole number");
        }
        return v.intValue();
    }

    private String render() throws IOException {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("version", VERSION);
        ObjectNode sessions = root.putObject("sessions");
        for (Entry e : entries.values()) {
            ObjectNode n = sessions.putObject(e.key());
            n.put("agent", e.agent());
            n.put("sessionId", e.sessionId());
            if (e.model() != null) {
                n.put("model", e.model());
            }
            ArrayNode lines = n.putArray("instructionLines");
            e.instructionLines().forEach(lines::add);
            if (e.folder() != null) {
                n.put("folder", e.folder());
            }
            if (e.keepDays() != null) {
                n.put("keepDays", e.keepDays());
            }
            n.put("positionLeft", e.positionLeft());
            n.put("messagesSent", e.messagesSent());
            if (e.promptsNoted() != null) {
                n.put("promptsNoted", e.promptsNoted());
            }
            if (e.computerId() != null) {
                n.put("computerId", e.computerId());
            }
            n.put("updatedAt", e.updatedAt().toString());
            ArrayNode retired = n.putArray("retired");
            for (Retired r : e.retired()) {
                retired.addObject().put("agent", r.agent()).put("sessionId", r.sessionId());
            }
        }
        return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root);
    }

    /** Writes the file whole: a temporary file beside it, forced, moved over it atomically, the folder forced. */
    private void save() {
        Path tmp = null;
        try {
            Files.createDirectories(stateDir);
            byte[] bytes = render().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            tmp = Files.createTempFile(stateDir, "." + FILE, ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
            forceFolder(stateDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the temporary file is left beside the store; the store itself is unchanged
                }
            }
        }
    }

    /** Forces a folder's entries to disk where the platform allows opening a folder (not on Windows). */
    private static void forceFolder(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException notHere) {
            // the rename is atomic; only its durability across a power loss is up to the file system here
        }
    }
}
