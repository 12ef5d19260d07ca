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
import java.nio.file.NoSuchFileException;
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

/**
 * Deletes one agent session's saved history from the agents' own stores on this computer (guide §6: "each
 * computer deletes the agent's own saved history"; Ensemble's run records, project folders and files stay):
 * <ul>
 *   <li>Claude Code, in each projects folder: the transcript {@code <folder>/<sessionId>.jsonl} (its file name
 *       is the session id), its sub-agents in the old layout ({@code agent-*.jsonl} in a project folder whose
 *       lines carry the same {@code sessionId}) and in the new one ({@code <folder>/<sessionId>/subagents/},
 *       then {@code <folder>/<sessionId>/} when nothing else is left in it);</li>
 *   <li>Codex, in each sessions folder: the rollout {@code YYYY/MM/DD/rollout-<time>-<id>.jsonl}.</li>
 * </ul>
 * Nothing else is touched: other sessions' files, files whose name only resembles, links are removed as links
 * and never followed. A session already gone counts as deleted (an empty list of removed paths).
 */
public final class AgentStoreDeleter {
    /** What a session id may look like before it is used in a file name: no separators, no dot first. */
    private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The agents whose stores this class knows. */
    public static final Set<String> AGENTS = Set.of(ClaudeParser.AGENT, CodexParser.AGENT);

    private final List<Path> claudeDirs;
    private final List<Path> codexDirs;

    /**
     * @param claudeDirs Claude Code {@code projects} folders (missing ones hold nothing)
     * @param codexDirs  Codex {@code sessions} folders
     */
    public AgentStoreDeleter(List<Path> claudeDirs, List<Path> codexDirs) {
        this.claudeDirs = List.copyOf(claudeDirs);
        this.codexDirs = List.copyOf(codexDirs);
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
                if (agent.equals(ClaudeParser.AGENT)) {
                    for (Path root : claudeDirs) {
                        deleteClaude(root, id, removed);
                    }
                } else {
                    for (Path root : codexDirs) {
                        deleteCodex(root, id, removed);
                    }
                }
            }
            return new Result(true, null, removed);
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

    private static void deleteTree(Path dir, List<String> removed) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            deleteIfThere(dir, removed);
            return;
        }
        List<Path> inside = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                inside.add(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                inside.add(d);
                return FileVisitResult.CONTINUE;
            }
        });
        for (Path p : inside) {
            deleteIfThere(p, removed);
        }
    }

    private static void deleteIfThere(Path p, List<String> removed) throws IOException {
        try {
            if (Files.deleteIfExists(p)) {
                removed.add(p.toAbsolutePath().toString());
            }
        } catch (NoSuchFileException gone) {
            // removed meanwhile: gone is what was asked
        }
    }
}
