package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Deletes one agent session's saved history from the agents' own stores on this computer (guide §6: "each
 * computer deletes the agent's own saved history"; Ensemble's run records, project folders and files stay):
 * <ul>
 *   <li>Claude Code, in each projects folder: the transcript {@code <folder>/<sessionId>.jsonl} (its file name
 *       is the session id), its sub-agents in the old layout ({@code agent-*.jsonl} in a project folder whose
 *       lines carry the same {@code sessionId}) and in the new one ({@code <folder>/<sessionId>/subagents/},
 *       then {@code <folder>/<sessionId>/} when nothing else is left in it);</li>
 *   <li>Codex, in each sessions folder: the rollout {@code YYYY/MM/DD/rollout-<time>-<id>.jsonl};</li>
 *   <li>Gemini CLI, in each {@code tmp/<project>/chats/}: the chat files {@code session-*-<id8>.json[l]} whose
 *       {@code sessionId} is the session's (as Gemini's own delete does), and its sub-agents' folder
 *       {@code chats/<sessionId>/};</li>
 *   <li>Copilot CLI: the folder {@code session-state/<id>/} and the older {@code session-state/<id>.jsonl};</li>
 *   <li>OpenCode: in {@code opencode.db}, in one transaction, the rows of the session and of its child sessions
 *       (parts, messages, sessions), waiting at most 2 s for the agent's own writes and else failing (retried
 *       later); in {@code storage/}, the session's file, its messages' folder and their parts' folders, the same
 *       for its children;</li>
 *   <li>Qwen Code: {@code projects/<project>/chats/<id>.jsonl};</li>
 *   <li>Cursor: the transcript folder {@code projects/<p>/agent-transcripts/<id>/} (with its sub-agents) and the
 *       chat folder {@code chats/<md5>/<id>/} (its store.db);</li>
 *   <li>Grok Build: the session folder {@code sessions/<encoded folder>/<id>/} (as Grok's own {@code /delete});</li>
 *   <li>Mistral Vibe: the session folder {@code logs/session/<prefix>_*_<id8>/} whose {@code meta.json} names the
 *       session (with its sub-agents' logs), and the {@code logs/session/.last_session/} pointers that name it (as
 *       Vibe's own delete);</li>
 *   <li>Kimi Code CLI: the session folder {@code sessions/<md5>/<id>/} (as kimi-cli's own delete); Kimi Code: the
 *       session folder {@code sessions/wd_*}{@code /<id>/} with its agents' logs, and a {@code {sessionId, deleted:
 *       true}} line appended to {@code session_index.jsonl} (as Kimi Code's own delete).</li>
 * </ul>
 * Antigravity's sessions are not deleted (its store is encrypted and not read: an error says so).
 * Nothing else is touched: other sessions' files, files whose name only resembles, links are removed as links
 * and never followed. A session already gone counts as deleted (an empty list of removed paths).
 */
public final class AgentStoreDeleter {
    /** What a session id may look like before it is used in a file name: no separators, no dot first. */
    private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The agents whose stores this class knows. */
    public static final Set<String> AGENTS = Set.of(ClaudeParser.AGENT, CodexParser.AGENT, GeminiParser.AGENT,
            CopilotParser.AGENT, OpenCodeParser.AGENT, QwenParser.AGENT, CursorParser.AGENT, GrokParser.AGENT,
            VibeParser.AGENT, KimiParser.AGENT);

    private final AgentStores stores;

    /**
     * @param claudeDirs Claude Code {@code projects} folders (missing ones hold nothing)
     * @param codexDirs  Codex {@code sessions} folders
     */
    public AgentStoreDeleter(List<Path> claudeDirs, List<Path> codexDirs) {
        this(AgentStores.of(claudeDirs, codexDirs));
    }

    /** A deleter for every agent's store (missing folders hold nothing). */
    public AgentStoreDeleter(AgentStores stores) {
        this.stores = stores;
    }

    /**
     * Whether this computer can delete {@code agent}'s sessions at all. Not for an agent outside {@link #AGENTS}
     * (Antigravity, whose store is encrypted, or an agent this version does not know): a permanent refusal, unlike an
     * I/O error, which a later attempt may get past.
     */
    public static boolean deletes(String agent) {
        return AGENTS.contains(agent);
    }

    /**
     * The outcome of one deletion.
     *
     * @param ok           every file of the session is gone (also when none was there)
     * @param error        why not, for the audit; null when ok
     * @param removedPaths the absolute paths removed, in order
     */
    public record Result(boolean ok, String error, List<String> removedPaths) {
    }

    /**
     * Deletes the sessions {@code agentSessionIds} of {@code agent}. The ids also come from an imported
     * session's own id ({@code <agent>:<agentSessionId>}, see {@link #agentSessionIdOf}).
     *
     * @return ok with the paths removed; or not ok with the error (an agent whose store this computer does not
     *         know, an id that is not a file name, a file that could not be removed) and whatever was removed
     */
    public Result delete(String agent, Collection<String> agentSessionIds) {
        List<String> removed = new ArrayList<>();
        if (!AGENTS.contains(agent)) {
            return new Result(false, "this computer deletes only " + AGENTS.stream().sorted().toList() + " sessions, not " + agent, removed);
        }
        for (String id : agentSessionIds) {
            if (!SAFE_ID.matcher(id).matches()) {
                return new Result(false, "'" + id + "' is not an agent session id; nothing of it was deleted", removed);
            }
        }
        try {
            for (String id : new LinkedHashSet<>(agentSessionIds)) {
                switch (agent) {
                    case ClaudeParser.AGENT -> {
                        for (Path root : stores.claude()) {
                            deleteClaude(root, id, removed);
                        }
                    }
                    case CodexParser.AGENT -> {
                        for (Path root : stores.codex()) {
                            deleteCodex(root, id, removed);
                        }
                    }
                    case GeminiParser.AGENT -> {
                        for (Path root : stores.gemini()) {
                            deleteGemini(root, id, removed);
                        }
                    }
                    case CopilotParser.AGENT -> {
                        for (Path root : stores.copilot()) {
                            deleteTree(root.resolve("session-state").resolve(id), removed);
                            deleteIfThere(root.resolve("session-state").resolve(id + ".jsonl"), removed);
                        }
                    }
                    case OpenCodeParser.AGENT -> {
                        for (Path root : stores.opencode()) {
                            deleteOpenCode(root, id, removed);
                        }
                    }
                    case QwenParser.AGENT -> {
                        for (Path root : stores.qwen()) {
                            for (Path project : folders(root.resolve("projects"))) {
                                deleteIfThere(project.resolve("chats").resolve(id + ".jsonl"), removed);
                            }
                        }
                    }
                    case CursorParser.AGENT -> {
                        for (Path root : stores.cursor()) {
                            for (Path project : folders(root.resolve("projects"))) {
                                deleteTree(project.resolve("agent-transcripts").resolve(id), removed);
                                deleteIfThere(project.resolve("agent-transcripts").resolve(id + ".jsonl"), removed);
                            }
                            for (Path hash : folders(root.resolve("chats"))) {
                                deleteTree(hash.resolve(id), removed);
                            }
                        }
                    }
                    case GrokParser.AGENT -> {
                        for (Path root : stores.grok()) {
                            for (Path group : folders(root.resolve("sessions"))) {
                                deleteTree(group.resolve(id), removed);
                            }
                        }
                    }
                    case VibeParser.AGENT -> {
                        for (Path root : stores.vibe()) {
                            deleteVibe(root.resolve("logs/session"), id, removed);
                        }
                    }
                    case KimiParser.AGENT -> {
                        for (Path root : stores.kimi()) {
                            int before = removed.size();
                            for (Path group : folders(root.resolve("sessions"))) {
                                deleteTree(group.resolve(id), removed);
                            }
                            Path index = root.resolve("session_index.jsonl");
                            if (removed.size() > before && Files.isRegularFile(index, LinkOption.NOFOLLOW_LINKS)) {
                                // Kimi Code's own delete also writes the session's tombstone into its index
                                Files.writeString(index, MAPPER.createObjectNode().put("sessionId", id).put("deleted", true)
                                        + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
                            }
                        }
                    }
                    default -> throw new IllegalStateException(agent);
                }
            }
            return new Result(true, null, removed);
        } catch (SQLException e) {
            return new Result(false, "OpenCode's database: " + e.getMessage(), removed);
        } catch (IOException | UncheckedIOException e) {
            return new Result(false, e.getClass().getSimpleName() + ": " + e.getMessage(), removed);
        }
    }

    /** The agent session id an imported session's id names ({@code claude-code:<id>}, {@code codex:<id>}), or null. */
    public static String agentSessionIdOf(String agent, String sessionId) {
        String prefix = agent + ":";
        if (sessionId == null || !sessionId.startsWith(prefix)) {
            return null;
        }
        String rest = sessionId.substring(prefix.length());
        int colon = rest.indexOf(':');
        return colon < 0 ? rest : rest.substring(0, colon);
    }

    private static void deleteClaude(Path root, String id, List<String> removed) throws IOException {
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> folders = Files.newDirectoryStream(root)) {
            for (Path folder : folders) {
                if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                deleteIfThere(folder.resolve(id + ".jsonl"), removed);
                Path own = folder.resolve(id);
                if (Files.isDirectory(own, LinkOption.NOFOLLOW_LINKS)) {
                    deleteTree(own.resolve("subagents"), removed);
                    try (DirectoryStream<Path> left = Files.newDirectoryStream(own)) {
                        if (!left.iterator().hasNext()) {
                            deleteIfThere(own, removed);
                        }
                    }
                }
                try (DirectoryStream<Path> agents = Files.newDirectoryStream(folder, "agent-*.jsonl")) {
                    for (Path sub : agents) {
                        if (Files.isRegularFile(sub, LinkOption.NOFOLLOW_LINKS) && id.equals(sessionIdInside(sub))) {
                            deleteIfThere(sub, removed);
                        }
                    }
                }
            }
        }
    }

    /** The sessionId the first line that has one carries, or null. */
    static String sessionIdInside(Path file) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int read = 0;
            while ((line = r.readLine()) != null && read++ < 50) {
                if (!line.contains("\"sessionId\"")) {
                    continue;
                }
                try {
                    JsonNode n = MAPPER.readTree(line);
                    if (n != null && n.path("sessionId").isTextual()) {
                        return n.path("sessionId").asText();
                    }
                } catch (IOException malformed) {
                    // a malformed line says nothing about whose file it is; the next one may
                }
            }
            return null;
        } catch (java.nio.charset.MalformedInputException notText) {
            return null;
        }
    }

    private static void deleteCodex(Path root, String id, List<String> removed) throws IOException {
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        String suffix = "-" + id + ".jsonl";
        List<Path> found = new ArrayList<>();
        Files.walkFileTree(root, EnumSet.noneOf(FileVisitOption.class), 8, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                String name = file.getFileName().toString();
                if (name.startsWith("rollout-") && name.endsWith(suffix) && !attrs.isDirectory()) {
                    found.add(file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                throw e;
            }
        });
        for (Path f : found) {
            deleteIfThere(f, removed);
        }
    }

    /** The folders (not links) directly in {@code dir}; none when it is not there. */
    private static List<Path> folders(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    out.add(p);
                }
            }
        }
        return out;
    }

    private static void deleteGemini(Path root, String id, List<String> removed) throws IOException {
        if (id.length() < 8) {
            throw new IOException("'" + id + "' is too short for a Gemini CLI session id");
        }
        String short8 = id.substring(0, 8);
        for (Path project : folders(root.resolve("tmp"))) {
            Path chats = project.resolve("chats");
            if (!Files.isDirectory(chats, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            List<Path> files = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(chats, "session-*-" + short8 + ".json*")) {
                ds.forEach(files::add);
            }
            for (Path f : files) {
                String name = f.getFileName().toString();
                if ((name.endsWith(".json") || name.endsWith(".jsonl")) && Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)
                        && id.equals(geminiSessionId(f))) {
                    deleteIfThere(f, removed);
                }
            }
            deleteTree(chats.resolve(id), removed); // its sub-agents' chats
        }
    }

    /** The sessionId of a Gemini chat file: its first line's (JSONL), or the document's (older JSON). */
    static String geminiSessionId(Path file) throws IOException {
        String first;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            first = r.readLine();
        } catch (java.nio.charset.MalformedInputException notText) {
            return null;
        }
        for (String text : new String[] {first, null}) {
            try {
                JsonNode n = text != null ? MAPPER.readTree(text) : MAPPER.readTree(file.toFile());
                if (n != null && n.path("sessionId").isTextual()) {
                    return n.path("sessionId").asText();
                }
            } catch (IOException notThisWay) {
                // a pretty-printed JSON document: read it whole
            }
            if (text == null) {
                break;
            }
        }
        return null;
    }

    private static void deleteOpenCode(Path root, String id, List<String> removed) throws IOException, SQLException {
        Path db = root.resolve("opencode.db");
        if (Files.isRegularFile(db, LinkOption.NOFOLLOW_LINKS)) {
            try (Connection c = AgentDiscovery.openForWrite(db)) {
                c.setAutoCommit(false);
                try {
                    // the rows of the session and of its children, in one transaction
                    List<String> ids = new ArrayList<>(List.of(id));
                    for (int i = 0; i < ids.size(); i++) {
                        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM session WHERE parent_id = ?")) {
                            ps.setString(1, ids.get(i));
                            try (ResultSet rs = ps.executeQuery()) {
                                while (rs.next()) {
                                    if (!ids.contains(rs.getString(1))) {
                                        ids.add(rs.getString(1));
                                    }
                                }
                            }
                        }
                    }
                    for (String sid : ids) {
                        for (String sql : new String[] {
                                "DELETE FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = ?)",
                                "DELETE FROM message WHERE session_id = ?",
                                "DELETE FROM session WHERE id = ?"}) {
                            try (PreparedStatement ps = c.prepareStatement(sql)) {
                                ps.setString(1, sid);
                                int n = ps.executeUpdate();
                                if (sql.startsWith("DELETE FROM session") && n > 0) {
                                    removed.add(db.toAbsolutePath() + "#session/" + sid);
                                }
                            }
                        }
                    }
                    c.commit();
                } catch (SQLException e) {
                    c.rollback();
                    throw e;
                }
            }
        }
        Path storage = root.resolve("storage");
        if (!Files.isDirectory(storage, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<String> ids = new ArrayList<>(List.of(id));
        for (int i = 0; i < ids.size(); i++) {
            String sid = ids.get(i);
            for (Path project : folders(storage.resolve("session"))) {
                try (DirectoryStream<Path> ds = Files.newDirectoryStream(project, "*.json")) {
                    for (Path f : ds) {
                        try {
                            JsonNode n = MAPPER.readTree(f.toFile());
                            if (sid.equals(n.path("parentID").asText(null)) && n.path("id").isTextual() && !ids.contains(n.path("id").asText())) {
                                ids.add(n.path("id").asText());
                            }
                            if (sid.equals(n.path("id").asText(null)) && Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                                deleteIfThere(f, removed); // the session's file (named <id>.json by OpenCode)
                            }
                        } catch (IOException unreadable) {
                            // not a session of this one's
                        }
                    }
                }
            }
            Path messages = storage.resolve("message").resolve(sid);
            if (Files.isDirectory(messages, LinkOption.NOFOLLOW_LINKS)) {
                try (DirectoryStream<Path> ds = Files.newDirectoryStream(messages, "*.json")) {
                    for (Path m : ds) {
                        String msgId;
                        try {
                            msgId = MAPPER.readTree(m.toFile()).path("id").asText(null);
                        } catch (IOException unreadable) {
                            msgId = null;
                        }
                        if (msgId != null && SAFE_ID.matcher(msgId).matches()) {
                            deleteTree(storage.resolve("part").resolve(msgId), removed);
                        }
                    }
                }
                deleteTree(messages, removed);
            }
        }
    }

    private static void deleteVibe(Path sessions, String id, List<String> removed) throws IOException {
        if (id.length() < 8) {
            throw new IOException("'" + id + "' is too short for a Mistral Vibe session id");
        }
        for (Path dir : folders(sessions)) {
            String name = dir.getFileName().toString();
            if (name.endsWith("_" + id.substring(0, 8)) && !name.startsWith(".")) {
                JsonNode meta;
                try {
                    meta = MAPPER.readTree(dir.resolve("meta.json").toFile());
                } catch (IOException unreadable) {
                    continue; // not a session Vibe would find by this id either
                }
                if (meta != null && id.equals(meta.path("session_id").asText(null))) {
                    deleteTree(dir, removed);
                }
            }
        }
        Path pointers = sessions.resolve(".last_session");
        if (Files.isDirectory(pointers, LinkOption.NOFOLLOW_LINKS)) {
            List<Path> files = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(pointers)) {
                ds.forEach(files::add);
            }
            for (Path p : files) {
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
                        && id.equals(Files.readString(p, StandardCharsets.UTF_8).strip())) {
                    deleteIfThere(p, removed);
                }
            }
        }
    }

    private static void deleteTree(Path dir, List<String> removed) throws IOException {
        FileTrees.deleteTree(dir, removed);
    }

    private static void deleteIfThere(Path p, List<String> removed) throws IOException {
        FileTrees.deleteIfThere(p, removed);
    }
}
