package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.views.TaskFactsView;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A person's own agent sessions as candidates (beyond the guide, whose chats never are). The computer agent imports
 * the sessions of Claude Code, Codex and the other agents as chats (kind {@code TERMINAL_CHAT}, space
 * {@code local:<computer>}), one run per prompt whose claim carries the prompt as its facts and whose end the files
 * its tools wrote or edited; the projector's session view keeps them as one task per prompt. Pure rules: the one task
 * a session's own content gives ({@link #taskOf}), the candidate it is when {@code importedSessions.candidates} is on
 * ({@link #candidate}), whether it worked in a folder ({@link #workedIn}), and the command that resumes it there
 * ({@link #resumeCommand}). See docs/choice-evaluation.md, "A person's own sessions".
 */
public final class ImportedSessions {
    /** Characters kept of the later prompts, as the description (the guide's description limit of the event intake). */
    public static final int DESCRIPTION_MAX = 32_768;
    /** Characters kept of the first prompt's first line, as the title. */
    public static final int TITLE_MAX = 200;

    private ImportedSessions() {
    }

    /**
     * One prompt of an imported session, in order.
     *
     * @param text         what the person typed (may be null or blank: an image alone)
     * @param filesChanged paths the agent's tools wrote or edited during the prompt's turn (relative to the folder or
     *                     absolute; never null in the result)
     */
    public record Prompt(String text, List<String> filesChanged) {
        public Prompt {
            filesChanged = filesChanged == null ? List.of() : List.copyOf(filesChanged);
        }
    }

    /**
     * The task of an imported session from its own content: the first prompt's first non-blank line as the title
     * (at most {@link #TITLE_MAX} characters), the later prompts (one a paragraph) as the description (at most
     * {@link #DESCRIPTION_MAX}), the files its tools wrote or edited as files changed (each once, in order; paths
     * under {@code folder} made relative to it). Null when no prompt has text (nothing to match against).
     *
     * @param sessionId the agent's session id; the task's id is {@code imported:<sessionId>}
     */
    public static SessionTask taskOf(String sessionId, String space, String account, String folder, List<Prompt> prompts) {
        String title = null;
        List<String> later = new ArrayList<>();
        Set<String> files = new LinkedHashSet<>();
        for (Prompt p : prompts) {
            for (String f : p.filesChanged()) if (f != null && !f.isBlank()) files.add(relative(folder, f.strip()));
            String t = p.text() == null ? "" : p.text().strip();
            if (t.isEmpty()) continue;
            if (title == null) {
                title = firstLine(t);
                String rest = t.substring(t.indexOf(title) + title.length()).strip();
                if (!rest.isEmpty()) later.add(rest);
            } else {
                later.add(t);
            }
        }
        if (title == null) return null;
        String description = String.join("\n\n", later);
        if (description.length() > DESCRIPTION_MAX) description = description.substring(0, DESCRIPTION_MAX);
        return new SessionTask("imported:" + sessionId, space, account, null,
                TaskFacts.of(title, description.isEmpty() ? null : description, List.of()), List.copyOf(files), null);
    }

    /**
     * The command that resumes {@code agent}'s session {@code sessionId} in {@code folder}: {@code cd 'DIR' && claude
     * --resume ID} (Claude Code), {@code codex resume ID} (Codex), {@code gemini --resume ID} (Gemini CLI),
     * {@code copilot --resume ID} (Copilot CLI), {@code cursor-agent --resume ID} (Cursor), {@code opencode --session
     * ID}, {@code qwen --resume ID}, {@code grok --resume ID} (Grok Build), {@code vibe --resume ID} (Mistral Vibe),
     * {@code kimi --session ID} (Kimi Code CLI). Null for an agent it does not know, and for a session id that begins with
     * {@code -} (the agent would read it as an option, e.g. {@code --dangerously-skip-permissions}: quoting does not
     * prevent that); a folder that begins with {@code -} is given to {@code cd} after {@code --}. The command is a Unix
     * shell's: a Windows folder ({@code D:\src\app}, {@code C:/Users/ana}, {@code \\server\share}: a session
     * that ran on Windows, e.g. Copilot CLI's cwd) cannot be {@code cd}'ed into there, so the command has no {@code cd}
     * and is run in that folder (the session's {@code folder}, shown beside it).
     */
    public static String resumeCommand(String agent, String sessionId, String folder) {
        if (agent == null || sessionId == null || sessionId.startsWith("-")) return null;
        String id = shellQuote(sessionId);
        String cmd = switch (agent.toLowerCase(Locale.ROOT)) {
            case "claude", "claude-code", "claude_code" -> "claude --resume " + id;
            case "codex" -> "codex resume " + id;
            case "gemini", "gemini-cli" -> "gemini --resume " + id;
            case "copilot", "copilot-cli" -> "copilot --resume " + id;
            case "cursor", "cursor-agent" -> "cursor-agent --resume " + id;
            case "opencode" -> "opencode --session " + id;
            case "qwen", "qwen-code" -> "qwen --resume " + id;
            case "grok", "grok-build" -> "grok --resume " + id;
            case "vibe", "mistral-vibe" -> "vibe --resume " + id;
            case "kimi", "kimi-code" -> "kimi --session " + id;
            default -> null;
        };
        if (cmd == null) return null;
        if (folder == null || folder.isBlank() || isWindowsPath(folder)) return cmd;
        return "cd " + (folder.startsWith("-") ? "-- " : "") + shellQuote(folder) + " && " + cmd;
    }

    /** Whether {@code folder} is a Windows path: a drive letter ({@code C:\}, {@code C:/}) or a UNC share ({@code \\host}). */
    static boolean isWindowsPath(String folder) {
        return folder.matches("(?s)[A-Za-z]:[\\\\/].*") || folder.startsWith("\\\\");
    }

    /** Whether {@code s} is a person's own agent session imported from its agent's store (a chat in a terminal). */
    public static boolean isImported(SessionView s) {
        return NewRun.RunKind.TERMINAL_CHAT.name().equals(s.getKind());
    }

    /**
     * An imported session as a candidate: a task session (so the candidate rules of the guide apply to it: this computer,
     * the same agent, idle, resumable, not being deleted, active within {@code limits.maxAgeDays}, the same space and
     * account) with one task, {@link #taskOf} its prompts in the view's order (each prompt's whole text, the files its
     * turn changed), in the session's folder; its chain length is its number of prompts. Null when no prompt has text.
     */
    public static CandidateSession candidate(SessionView s) {
        List<Prompt> prompts = new ArrayList<>(s.getTasks().size());
        String space = s.getSpace();
        for (SessionTaskView t : s.getTasks()) {
            TaskFactsView f = t.getFacts();
            String text = f == null ? null : f.getDescription() != null ? f.getDescription() : f.getTitle();
            if (text != null && PLACEHOLDERS.contains(text)) text = null;
            prompts.add(new Prompt(text, t.getFilesChanged()));
            if (t.getSpace() != null) space = t.getSpace();
        }
        String id = s.getAgentSessionId() != null ? s.getAgentSessionId() : s.getSessionId();
        SessionTask task = taskOf(id, space, s.getAccount(), s.getFolder(), prompts);
        if (task == null) return null;
        CandidateSession plain = ViewMapping.candidate(s);
        return new CandidateSession(plain.sessionId(), plain.lastActiveAt(), plain.status(), plain.resumable(),
                NewRun.RunKind.TASK_RUN, plain.deleting(), plain.computerId(), plain.agent(), plain.fill(),
                s.getRuns().size(), plain.lastReport(), List.of(task));
    }

    /** The titles the computer agent gives a prompt without text (an image alone, an empty prompt): no words to match. */
    private static final Set<String> PLACEHOLDERS = Set.of("(image)", "(empty prompt)");

    /**
     * Whether {@code s} worked in {@code folder} or a folder under it (its folder or one of its folders); true for a
     * null or blank {@code folder} (no folder asked for).
     */
    public static boolean workedIn(SessionView s, String folder) {
        if (folder == null || folder.isBlank()) return true;
        String f = folder.endsWith("/") && folder.length() > 1 ? folder.substring(0, folder.length() - 1) : folder;
        List<String> all = new ArrayList<>(s.getFolders());
        if (s.getFolder() != null) all.add(s.getFolder());
        for (String d : all) {
            if (d == null) continue;
            if (d.equals(f) || d.startsWith(f.endsWith("/") ? f : f + "/")) return true;
        }
        return false;
    }

    private static String firstLine(String t) {
        for (String line : t.split("\\R")) {
            String l = line.strip();
            if (!l.isEmpty()) return l.length() > TITLE_MAX ? l.substring(0, TITLE_MAX) : l;
        }
        return t;
    }

    private static String relative(String folder, String path) {
        if (folder == null || folder.isBlank()) return path;
        String f = folder.endsWith("/") ? folder : folder + "/";
        return path.startsWith(f) ? path.substring(f.length()) : path;
    }

    /** A POSIX shell word: bare when safe, else in single quotes. */
    static String shellQuote(String s) {
        if (s.matches("[A-Za-z0-9_./:@%+=,-]+")) return s;
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
