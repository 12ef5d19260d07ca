package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.agent.ImportSummary.Skip;
import dev.ensemble.sessions.agent.StoreImporter.Candidate;
import dev.ensemble.sessions.agent.StoreImporter.Format;

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
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sqlite.SQLiteConfig;

/**
 * Where each agent keeps its sessions, and how its non-line stores are read as records (see each parser for
 * what a line or record means):
 *
 * <ul>
 *   <li>Claude Code {@code projects/<folder>/<id>.jsonl}; Codex {@code sessions/YYYY/MM/DD/rollout-*.jsonl};</li>
 *   <li>Gemini CLI {@code tmp/<project>/chats/session-*.json[l]} (the folder from {@code projects.json},
 *       {@code .project_root}, or the sha256 {@code projectHash} of a known path; a {@code .json} that Gemini
 *       migrated to a {@code .jsonl} of the same name is skipped; {@code chats/<parent>/} holds sub-agents);</li>
 *   <li>Copilot CLI {@code session-state/<id>/events.jsonl} (folder fallback: {@code workspace.yaml}'s cwd) and
 *       {@code session-state/<id>.jsonl};</li>
 *   <li>OpenCode {@code opencode.db} (one candidate per session row; child sessions are sub-agents) and
 *       {@code storage/session/<project>/<id>.json} (or {@code storage/session/<id>.json}), whose messages and
 *       parts are under the same {@code storage/};</li>
 *   <li>Qwen Code {@code projects/<project>/chats/<id>.jsonl};</li>
 *   <li>Grok Build {@code sessions/<url-encoded folder>/<id>/updates.jsonl} (folder, model and kind from
 *       {@code summary.json}; a {@code subagent} session is a sub-agent's);</li>
 *   <li>Mistral Vibe {@code logs/session/<dir>/messages.jsonl} (id, folder and model from {@code meta.json});</li>
 *   <li>Kimi Code CLI {@code sessions/<md5 of the folder>/<id>/wire.jsonl} (the folder from {@code kimi.json}) and
 *       Kimi Code {@code sessions/wd_<slug>_<hash>/<id>/agents/main/wire.jsonl} (the folder from {@code state.json},
 *       else {@code session_index.jsonl}); Antigravity's encrypted {@code conversations/*.pb} are named as not
 *       read;</li>
 *   <li>Cursor {@code projects/<p>/agent-transcripts/<id>/<id>.jsonl} ({@code subagents/} are sub-agents); the
 *       folder is the project name decoded ({@code /} written as {@code -}) in the way whose md5 names the chat
 *       folder {@code chats/<md5>/<id>/store.db}, whose {@code meta} gives the model.</li>
 * </ul>
 *
 * SQLite databases are opened read-only with a short busy timeout, one query at a time, so the agent's own
 * writes are never held up.
 */
final class AgentDiscovery {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int BUSY_TIMEOUT_MS = 2_000;

    private AgentDiscovery() {
    }

    /**
     * Adds the transcripts of {@code agent} under {@code root} to {@code found}; files it cannot look at go to
     * {@code skipped}.
     *
     * @throws IOException when the store itself cannot be read (an OpenCode database that will not open)
     */
    static void discover(String agent, Path root, List<Candidate> found, List<Skip> skipped) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        switch (agent) {
            case ClaudeParser.AGENT -> walk(root, CLAUDE_DEPTH, skipped, (file, attrs) -> claude(root, file, attrs, found));
            case CodexParser.AGENT -> walk(root, CODEX_DEPTH, skipped, (file, attrs) -> codex(root, file, attrs, found));
            case QwenParser.AGENT -> walk(root.resolve("projects"), 3, skipped, (file, attrs) -> {
                if (file.getFileName().toString().endsWith(".jsonl") && file.getParent().getFileName().toString().equals("chats")) {
                    found.add(new Candidate(file, root, agent, false, attrs.size(), attrs.lastModifiedTime().toMillis()));
                }
            });
            case CopilotParser.AGENT -> copilot(root, found, skipped);
            case GeminiParser.AGENT -> gemini(root, found, skipped);
            case CursorParser.AGENT -> cursor(root, found, skipped);
            case OpenCodeParser.AGENT -> opencode(root, found, skipped);
            case GrokParser.AGENT -> grok(root, found, skipped);
            case VibeParser.AGENT -> vibe(root, found, skipped);
            case KimiParser.AGENT -> kimi(root, found, skipped);
            case AntigravityStore.AGENT -> {
                int n = AntigravityStore.conversations(root);
                if (n > 0) {
                    throw new IOException(AntigravityStore.notRead(n));
                }
            }
            default -> throw new IllegalArgumentException("no store known for agent " + agent);
        }
    }

    /** Folder levels under a Claude Code projects folder that hold transcripts ({@code <folder>/<id>/subagents/}). */
    static final int CLAUDE_DEPTH = 4;
    /** Folder levels under a Codex sessions folder ({@code YYYY/MM/DD/}, with room for copies). */
    static final int CODEX_DEPTH = 8;

    private static void claude(Path root, Path file, BasicFileAttributes attrs, List<Candidate> found) {
        String name = file.getFileName().toString();
        if (name.endsWith(".jsonl")) {
            boolean sub = name.startsWith("agent-") || root.relativize(file).toString().contains("subagents");
            found.add(new Candidate(file, root, ClaudeParser.AGENT, sub, attrs.size(), attrs.lastModifiedTime().toMillis()));
        }
    }

    private static void codex(Path root, Path file, BasicFileAttributes attrs, List<Candidate> found) {
        String name = file.getFileName().toString();
        if (name.endsWith(".jsonl") && name.startsWith("rollout-")) {
            found.add(new Candidate(file, root, CodexParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis()));
        }
    }

    /**
     * Adds to {@code found} the transcripts among {@code files} (paths under {@code root} that changed; some may be
     * gone), as {@link #discover} would find them, without walking the store: for Claude Code and Codex, whose
     * transcripts are each one file. A file that is gone, or not a transcript, adds nothing.
     *
     * @return false for another agent, whose store must be discovered whole ({@link #discover})
     */
    static boolean discoverFiles(String agent, Path root, Iterable<Path> files, List<Candidate> found, List<Skip> skipped) {
        boolean claude = ClaudeParser.AGENT.equals(agent);
        if (!claude && !CodexParser.AGENT.equals(agent)) {
            return false;
        }
        for (Path file : files) {
            if (!file.startsWith(root) || root.relativize(file).getNameCount() > (claude ? CLAUDE_DEPTH : CODEX_DEPTH)) {
                continue;
            }
            BasicFileAttributes attrs;
            try {
                attrs = Files.readAttributes(file, BasicFileAttributes.class); // a link to a file is followed, as in walk
            } catch (java.nio.file.NoSuchFileException e) {
                continue; // gone: the importer forgets it
            } catch (IOException e) {
                skipped.add(new Skip(file, "unreadable: " + e.getMessage()));
                continue;
            }
            if (!attrs.isRegularFile()) {
                continue;
            }
            if (claude) {
                claude(root, file, attrs, found);
            } else {
                codex(root, file, attrs, found);
            }
        }
        return true;
    }

    @FunctionalInterface
    private interface FileSeen {
        void seen(Path file, BasicFileAttributes attrs);
    }

    /** Visits the regular files under {@code dir} (links to files followed, links to folders not). */
    private static void walk(Path dir, int depth, List<Skip> skipped, FileSeen seen) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, EnumSet.noneOf(FileVisitOption.class), depth, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isSymbolicLink()) {
                        try {
                            attrs = Files.readAttributes(file, BasicFileAttributes.class);
                        } catch (IOException e) {
                            skipped.add(new Skip(file, "unreadable: " + e));
                            return FileVisitResult.CONTINUE;
                        }
                    }
                    if (attrs.isRegularFile()) {
                        seen.seen(file, attrs);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    skipped.add(new Skip(file, "unreadable: " + e.getMessage()));
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            skipped.add(new Skip(dir, "unreadable: " + e.getMessage()));
        }
    }

    // ---- Copilot CLI

    private static void copilot(Path root, List<Candidate> found, List<Skip> skipped) {
        walk(root.resolve("session-state"), 2, skipped, (file, attrs) -> {
            String name = file.getFileName().toString();
            Path parent = file.getParent();
            boolean nested = !parent.equals(root.resolve("session-state"));
            if (nested && name.equals("events.jsonl")) {
                String id = parent.getFileName().toString();
                found.add(new Candidate(file, root, CopilotParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis())
                        .with(Format.LINES, id, workspaceCwd(parent.resolve("workspace.yaml")), null));
            } else if (!nested && name.endsWith(".jsonl")) {
                found.add(new Candidate(file, root, CopilotParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis())
                        .with(Format.LINES, StoreImporter.stem(file), null, null));
            }
        });
    }

    /** The {@code cwd:} of a Copilot {@code workspace.yaml} (a flat YAML map), or null. */
    static String workspaceCwd(Path yaml) {
        try {
            for (String line : Files.readAllLines(yaml, StandardCharsets.UTF_8)) {
                if (line.startsWith("cwd:")) {
                    String v = line.substring(4).strip();
                    if (v.length() >= 2 && (v.startsWith("\"") && v.endsWith("\"") || v.startsWith("'") && v.endsWith("'"))) {
                        v = v.substring(1, v.length() - 1);
                    }
                    return v.isEmpty() ? null : v;
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return null; // no workspace file: the session's own context names the folder
        }
        return null;
    }

    // ---- Grok Build

    private static void grok(Path root, List<Candidate> found, List<Skip> skipped) {
        Path sessions = root.resolve("sessions");
        walk(sessions, 3, skipped, (file, attrs) -> {
            Path rel = sessions.relativize(file);
            if (rel.getNameCount() != 3 || !file.getFileName().toString().equals("updates.jsonl")) {
                return;
            }
            Path dir = file.getParent();
            JsonNode summary = GrokParser.json(dir.resolve("summary.json"));
            String kind = SessionParser.text(summary, "session_kind");
            String folder = SessionParser.text(summary == null ? null : summary.get("info"), "cwd");
            if (folder == null) {
                folder = grokFolder(dir.getParent());
            }
            found.add(new Candidate(file, root, GrokParser.AGENT, kind != null && kind.startsWith("subagent"),
                    attrs.size(), attrs.lastModifiedTime().toMillis())
                    .with(Format.LINES, dir.getFileName().toString(), folder, SessionParser.text(summary, "current_model_id")));
        });
    }

    /** The folder a Grok Build group folder stands for: its {@code .cwd} file (long paths), else its name URL-decoded. */
    static String grokFolder(Path group) {
        try {
            String cwd = Files.readString(group.resolve(".cwd"), StandardCharsets.UTF_8).strip();
            if (!cwd.isEmpty()) {
                return cwd;
            }
        } catch (IOException e) {
            // the usual case: the name is the folder
        }
        try {
            return java.net.URLDecoder.decode(group.getFileName().toString().replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    // ---- Mistral Vibe

    private static void vibe(Path root, List<Candidate> found, List<Skip> skipped) {
        Path sessions = root.resolve("logs/session");
        walk(sessions, 2, skipped, (file, attrs) -> {
            Path rel = sessions.relativize(file);
            if (rel.getNameCount() != 2 || !file.getFileName().toString().equals("messages.jsonl")
                    || rel.getName(0).toString().startsWith(".")) {
                return;
            }
            JsonNode meta = GrokParser.json(file.resolveSibling("meta.json"));
            String id = SessionParser.text(meta, "session_id");
            if (id == null) {
                // Vibe writes the messages, then meta.json: until it is there the session's id is not known
                skipped.add(new Skip(file, "no meta.json yet"));
                return;
            }
            String folder = SessionParser.text(meta == null ? null : meta.get("environment"), "working_directory");
            found.add(new Candidate(file, root, VibeParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis())
                    .with(Format.LINES, id, folder, VibeParser.model(meta)));
        });
    }

    // ---- Kimi Code

    private static void kimi(Path root, List<Candidate> found, List<Skip> skipped) {
        Path sessions = root.resolve("sessions");
        if (!Files.isDirectory(sessions)) {
            return;
        }
        Map<String, String> folders = kimiFolders(root);
        Map<String, String> indexed = kimiCodeIndex(root);
        // kimi-cli: <md5>/<id>/wire.jsonl; Kimi Code: wd_<slug>_<hash>/<id>/agents/main/wire.jsonl (other agents
        // under agents/ are its sub-agents)
        walk(sessions, 5, skipped, (file, attrs) -> {
            Path rel = sessions.relativize(file);
            if (!file.getFileName().toString().equals("wire.jsonl")) {
                return;
            }
            String group = rel.getName(0).toString();
            String id = rel.getName(1).toString();
            if (rel.getNameCount() == 3 && !group.startsWith("wd_")) {
                found.add(new Candidate(file, root, KimiParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis())
                        .with(Format.LINES, id, folders.get(group), null));
            } else if (rel.getNameCount() == 5 && group.startsWith("wd_") && rel.getName(2).toString().equals("agents")
                    && rel.getName(3).toString().equals("main")) {
                JsonNode state = GrokParser.json(sessions.resolve(group).resolve(id).resolve("state.json"));
                String folder = SessionParser.text(state, "cwd");
                found.add(new Candidate(file, root, KimiParser.AGENT, false, attrs.size(), attrs.lastModifiedTime().toMillis())
                        .with(Format.LINES, id, folder != null ? folder : indexed.get(id), null));
            }
        });
    }

    /** Whether {@code wire} is a Kimi Code (not kimi-cli) wire log: {@code .../<session>/agents/<agent>/wire.jsonl}. */
    static boolean isKimiCodeWire(Path wire) {
        Path agents = wire.getParent() == null ? null : wire.getParent().getParent();
        return agents != null && agents.getFileName() != null && agents.getFileName().toString().equals("agents");
    }

    /** Session id to folder from Kimi Code's {@code session_index.jsonl} ({@code {sessionId, sessionDir, workDir}} lines). */
    static Map<String, String> kimiCodeIndex(Path root) {
        Map<String, String> out = new HashMap<>();
        Path index = root.resolve("session_index.jsonl");
        if (!Files.isRegularFile(index)) {
            return out;
        }
        try {
            for (String line : Files.readAllLines(index, StandardCharsets.UTF_8)) {
                try {
                    JsonNode n = MAPPER.readTree(line);
                    String id = SessionParser.text(n, "sessionId");
                    String dir = SessionParser.text(n, "workDir");
                    if (id != null && dir != null) {
                        out.put(id, dir);
                    }
                } catch (IOException malformed) {
                    // a line being written, or not JSON: its session's folder comes from its state.json
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return out;
        }
        return out;
    }

    /** Session group folder name ({@code md5} of the path, or {@code <kaos>_<md5>}) to folder, from {@code kimi.json}. */
    static Map<String, String> kimiFolders(Path root) {
        Map<String, String> out = new HashMap<>();
        JsonNode meta = GrokParser.json(root.resolve("kimi.json"));
        for (JsonNode wd : meta == null ? MAPPER.createArrayNode() : meta.path("work_dirs")) {
            String path = SessionParser.text(wd, "path");
            if (path == null) {
                continue;
            }
            String kaos = SessionParser.text(wd, "kaos");
            String md5 = md5(path);
            out.put(kaos == null || kaos.equals("local") ? md5 : kaos + "_" + md5, path);
        }
        return out;
    }

    // ---- Gemini CLI

    private static void gemini(Path root, List<Candidate> found, List<Skip> skipped) {
        Path tmp = root.resolve("tmp");
        if (!Files.isDirectory(tmp)) {
            return;
        }
        Map<String, String> known = geminiProjects(root);
        try (DirectoryStream<Path> projects = Files.newDirectoryStream(tmp)) {
            for (Path project : projects) {
                Path chats = project.resolve("chats");
                if (!Files.isDirectory(chats, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                String folder = geminiFolder(root, project, known);
                walk(chats, 2, skipped, (file, attrs) -> {
                    String name = file.getFileName().toString();
                    boolean sub = !file.getParent().equals(chats);
                    boolean json = name.endsWith(".json");
                    if (!(name.endsWith(".jsonl") || json) || !sub && !name.startsWith("session-")) {
                        return;
                    }
                    String id8 = name.substring(name.lastIndexOf('-') + 1, name.lastIndexOf('.'));
                    Candidate c = new Candidate(file, root, GeminiParser.AGENT, sub, attrs.size(), attrs.lastModifiedTime().toMillis())
                            .with(json ? Format.GEMINI_JSON : Format.LINES, id8, folder, null);
                    if (json && Files.exists(file.resolveSibling(name + "l"))) {
                        c = new Candidate(c.path(), root, c.agent(), false, c.size(), c.mtime(), c.format(), c.id(), folder, null,
                                "migrated to " + name + "l");
                    }
                    found.add(c);
                });
            }
        } catch (IOException e) {
            skipped.add(new Skip(tmp, "unreadable: " + e.getMessage()));
        }
    }

    /** Known project paths by the name of their folder under {@code tmp/}: slugs and sha256 hashes. */
    private static Map<String, String> geminiProjects(Path root) {
        Map<String, String> byFolder = new HashMap<>();
        List<String> paths = new ArrayList<>();
        try {
            JsonNode projects = MAPPER.readTree(root.resolve("projects.json").toFile()).path("projects");
            projects.fields().forEachRemaining(e -> {
                paths.add(e.getKey());
                if (e.getValue().isTextual()) {
                    byFolder.put(e.getValue().asText(), e.getKey());
                }
            });
        } catch (IOException e) {
            // no projects.json (older Gemini CLI): hashes of the .project_root paths only
        }
        for (String dir : new String[] {"tmp", "history"}) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.resolve(dir))) {
                for (Path p : ds) {
                    String r = projectRoot(p);
                    if (r != null) {
                        paths.add(r);
                        byFolder.putIfAbsent(p.getFileName().toString(), r);
                    }
                }
            } catch (IOException e) {
                // not there
            }
        }
        for (String p : paths) {
            byFolder.putIfAbsent(sha256(p), p);
        }
        return byFolder;
    }

    private static String projectRoot(Path dir) {
        try {
            String r = Files.readString(dir.resolve(".project_root"), StandardCharsets.UTF_8).strip();
            return r.isEmpty() ? null : r;
        } catch (IOException e) {
            return null;
        }
    }

    private static String geminiFolder(Path root, Path project, Map<String, String> known) {
        String own = projectRoot(project);
        return own != null ? own : known.get(project.getFileName().toString());
    }

    static String sha256(String s) {
        return digest("SHA-256", s);
    }

    static String md5(String s) {
        return digest("MD5", s);
    }

    private static String digest(String algorithm, String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- Cursor

    private static void cursor(Path root, List<Candidate> found, List<Skip> skipped) {
        Map<String, Path> chatOf = new HashMap<>(); // agent id -> its chats/<md5>/<id>/ folder
        try (DirectoryStream<Path> hashes = Files.newDirectoryStream(root.resolve("chats"))) {
            for (Path h : hashes) {
                try (DirectoryStream<Path> ids = Files.newDirectoryStream(h)) {
                    for (Path id : ids) {
                        chatOf.put(id.getFileName().toString(), id);
                    }
                } catch (IOException e) {
                    // not a folder
                }
            }
        } catch (IOException e) {
            // no chats folder
        }
        Path projects = root.resolve("projects");
        walk(projects, 5, skipped, (file, attrs) -> {
            Path rel = projects.relativize(file);
            String name = file.getFileName().toString();
            if (rel.getNameCount() < 3 || !rel.getName(1).toString().equals("agent-transcripts") || !name.endsWith(".jsonl")) {
                return;
            }
            boolean sub = rel.toString().contains("subagents");
            String id = StoreImporter.stem(file);
            Path chat = chatOf.get(id);
            String folder = cursorFolder(rel.getName(0).toString(), chat == null ? null : chat.getParent().getFileName().toString());
            String model = chat == null ? null : cursorModel(chat.resolve("store.db"));
            found.add(new Candidate(file, root, CursorParser.AGENT, sub, attrs.size(), attrs.lastModifiedTime().toMillis())
                    .with(Format.LINES, id, folder, model));
        });
    }

    /**
     * The folder a Cursor project name stands for: Cursor writes the path with every {@code /} as {@code -} and
     * no leading one, so a {@code -} may have been a {@code /} or a {@code -}; the way whose md5 is the chat's
     * folder name is the one. Without a chat, every {@code -} is taken for a {@code /}.
     */
    static String cursorFolder(String project, String md5) {
        String plain = "/" + project.replace('-', '/');
        if (md5 == null) {
            return plain;
        }
        List<Integer> dashes = new ArrayList<>();
        for (int i = 0; i < project.length(); i++) {
            if (project.charAt(i) == '-') {
                dashes.add(i);
            }
        }
        if (dashes.size() > 16) {
            return md5.equals(md5(plain)) ? plain : null;
        }
        for (int mask = 0; mask < 1 << dashes.size(); mask++) {
            char[] c = project.toCharArray();
            for (int b = 0; b < dashes.size(); b++) {
                c[dashes.get(b)] = (mask & (1 << b)) == 0 ? '/' : '-';
            }
            String candidate = "/" + new String(c);
            if (md5.equals(md5(candidate))) {
                return candidate;
            }
        }
        return null;
    }

    /** The model in a Cursor chat's store.db ({@code meta} key {@code 0}: hex JSON with {@code lastUsedModel}), or null. */
    static String cursorModel(Path storeDb) {
        JsonNode meta = cursorMeta(storeDb);
        return meta == null ? null : SessionParser.text(meta, "lastUsedModel");
    }

    static JsonNode cursorMeta(Path storeDb) {
        if (!Files.isRegularFile(storeDb)) {
            return null;
        }
        try (Connection c = openReadOnly(storeDb); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT value FROM meta WHERE key = '0'")) {
            if (!rs.next()) {
                return null;
            }
            String hex = rs.getString(1);
            return MAPPER.readTree(new String(HexFormat.of().parseHex(hex.strip()), StandardCharsets.UTF_8));
        } catch (SQLException | IOException | IllegalArgumentException e) {
            return null; // a chat we cannot read gives no model
        }
    }

    // ---- OpenCode

    private static void opencode(Path root, List<Candidate> found, List<Skip> skipped) throws IOException {
        Path db = root.resolve("opencode.db");
        if (Files.isRegularFile(db)) {
            try (Connection c = openReadOnly(db); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT s.id, s.parent_id, s.directory, s.time_updated,"
                         + " (SELECT count(*) FROM message m WHERE m.session_id = s.id),"
                         + " (SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id)"
                         + " FROM session s")) {
                while (rs.next()) {
                    long messages = rs.getLong(5);
                    long mtime = Math.max(rs.getLong(4), rs.getLong(6));
                    found.add(new Candidate(db, root, OpenCodeParser.AGENT, rs.getString(2) != null, messages, mtime,
                            Format.OPENCODE_DB, rs.getString(1), rs.getString(3), null, null));
                }
            } catch (SQLException e) {
                throw new IOException(db + ": " + e.getMessage(), e);
            }
        }
        Path sessions = root.resolve("storage/session");
        walk(sessions, 2, skipped, (file, attrs) -> {
            if (!file.getFileName().toString().endsWith(".json")) {
                return;
            }
            try {
                JsonNode session = MAPPER.readTree(file.toFile());
                String id = SessionParser.text(session, "id");
                if (id == null) {
                    return;
                }
                Path messages = root.resolve("storage/message").resolve(id);
                long count = 0;
                long mtime = attrs.lastModifiedTime().toMillis();
                if (Files.isDirectory(messages)) {
                    try (DirectoryStream<Path> ms = Files.newDirectoryStream(messages, "*.json")) {
                        for (Path m : ms) {
                            count++;
                            mtime = Math.max(mtime, Files.getLastModifiedTime(m).toMillis());
                        }
                    }
                }
                found.add(new Candidate(file, root, OpenCodeParser.AGENT, session.hasNonNull("parentID"), count, mtime,
                        Format.OPENCODE_STORAGE, id, SessionParser.text(session, "directory"), null, null));
            } catch (IOException e) {
                skipped.add(new Skip(file, "unreadable: " + e.getMessage()));
            }
        });
    }

    /** Opens a SQLite database read-only (an agent's own store: never written here except by a deletion). */
    static Connection openReadOnly(Path db) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        return config.createConnection("jdbc:sqlite:" + db.toAbsolutePath());
    }

    /** Opens a SQLite database to write (a deletion), waiting up to the busy timeout for the agent's own writes. */
    static Connection openForWrite(Path db) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        config.enforceForeignKeys(true);
        config.resetOpenMode(org.sqlite.SQLiteOpenMode.CREATE); // never create a database that is not there
        return config.createConnection("jdbc:sqlite:" + db.toAbsolutePath());
    }

    // ---- records

    /**
     * The records of a transcript that is not one JSON object a line, in order: {@code path} found under the
     * store folder {@code root}.
     *
     * @throws IOException when it cannot be read (the import reports it and tries again next time)
     */
    static List<JsonNode> records(Format format, Path path, Path root, String id) throws IOException {
        return switch (format) {
            case GEMINI_JSON -> {
                JsonNode doc = MAPPER.readTree(path.toFile());
                List<JsonNode> out = new ArrayList<>();
                if (doc instanceof ObjectNode o) {
                    JsonNode messages = o.get("messages");
                    ObjectNode header = o.deepCopy();
                    header.remove("messages");
                    out.add(header);
                    if (messages != null) {
                        messages.forEach(out::add);
                    }
                }
                yield out;
            }
            case OPENCODE_DB -> opencodeDbMessages(path, id);
            case OPENCODE_STORAGE -> opencodeStorageMessages(root, id);
            case LINES -> throw new IllegalArgumentException("lines are read line by line");
        };
    }

    /**
     * Whether record {@code r} can be read now: an OpenCode assistant message still being written cannot, nor the
     * last message of a Gemini JSON document that is a reply still without its tokens (unless the file is idle).
     */
    static boolean complete(Format format, JsonNode r, boolean last, boolean idle) {
        return switch (format) {
            case OPENCODE_DB, OPENCODE_STORAGE -> idle || OpenCodeParser.complete(r);
            case GEMINI_JSON -> idle || !last || !"gemini".equals(SessionParser.text(r, "type")) || r.has("tokens");
            case LINES -> true;
        };
    }

    private static List<JsonNode> opencodeDbMessages(Path db, String sessionId) throws IOException {
        Map<String, ObjectNode> messages = new LinkedHashMap<>();
        try (Connection c = openReadOnly(db)) {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id")) {
                ps.setString(1, sessionId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ObjectNode m = (ObjectNode) MAPPER.readTree(rs.getString(3));
                        m.put("id", rs.getString(1));
                        if (!m.path("time").has("created")) {
                            m.withObject("/time").put("created", rs.getLong(2));
                        }
                        m.putArray("parts");
                        messages.put(rs.getString(1), m);
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT message_id, data FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = ?)"
                            + " ORDER BY message_id, time_created, id")) {
                ps.setString(1, sessionId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ObjectNode m = messages.get(rs.getString(1));
                        if (m != null) {
                            ((ArrayNode) m.get("parts")).add(MAPPER.readTree(rs.getString(2)));
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw new IOException(db + ": " + e.getMessage(), e);
        }
        return new ArrayList<>(messages.values());
    }

    private static List<JsonNode> opencodeStorageMessages(Path root, String sessionId) throws IOException {
        Path dir = root.resolve("storage/message").resolve(sessionId);
        List<ObjectNode> messages = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> ms = Files.newDirectoryStream(dir, "*.json")) {
                for (Path m : ms) {
                    JsonNode n = MAPPER.readTree(m.toFile());
                    if (n instanceof ObjectNode o && o.hasNonNull("id")) {
                        ArrayNode parts = o.putArray("parts");
                        Path pd = root.resolve("storage/part").resolve(o.get("id").asText());
                        if (Files.isDirectory(pd)) {
                            List<Path> files = new ArrayList<>();
                            try (DirectoryStream<Path> ps = Files.newDirectoryStream(pd, "*.json")) {
                                ps.forEach(files::add);
                            }
                            files.sort(Comparator.comparing(p -> p.getFileName().toString()));
                            for (Path f : files) {
                                parts.add(MAPPER.readTree(f.toFile()));
                            }
                        }
                        messages.add(o);
                    }
                }
            }
        }
        messages.sort(Comparator.comparingLong((ObjectNode m) -> m.path("time").path("created").asLong(0))
                .thenComparing(m -> m.get("id").asText()));
        return new ArrayList<>(messages);
    }
}
