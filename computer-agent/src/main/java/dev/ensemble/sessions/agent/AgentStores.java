package dev.ensemble.sessions.agent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where each agent keeps its sessions on this computer (guide section 1 names the agents); a folder that does
 * not exist holds nothing. Each list may name several folders (copies, other homes).
 *
 * @param claude   Claude Code {@code projects} folders ({@code $CLAUDE_CONFIG_DIR/projects}, else {@code ~/.claude/projects})
 * @param codex    Codex {@code sessions} folders ({@code $CODEX_HOME/sessions}, else {@code ~/.codex/sessions}); Codex
 *                 Desktop writes its rollouts there too
 * @param gemini   Gemini CLI homes ({@code ~/.gemini}: {@code tmp/<project>/chats/}, {@code projects.json})
 * @param copilot  GitHub Copilot CLI homes ({@code $COPILOT_HOME}, else {@code ~/.copilot}: {@code session-state/})
 * @param opencode OpenCode data folders ({@code $XDG_DATA_HOME/opencode}, else {@code ~/.local/share/opencode}:
 *                 {@code opencode.db}, older {@code storage/})
 * @param qwen     Qwen Code homes ({@code $QWEN_HOME}, else {@code ~/.qwen}: {@code projects/<project>/chats/})
 * @param cursor      Cursor homes ({@code ~/.cursor}: {@code projects/<p>/agent-transcripts/}, {@code chats/})
 * @param grok        Grok Build homes ({@code $GROK_HOME}, else {@code ~/.grok}: {@code sessions/<encoded cwd>/<id>/})
 * @param antigravity Antigravity's data folders ({@code ~/.gemini/antigravity}: {@code conversations/<id>.pb},
 *                    encrypted: named, not read)
 * @param vibe        Mistral Vibe homes ({@code $VIBE_HOME}, else {@code ~/.vibe}: {@code logs/session/<dir>/})
 * @param kimi        Kimi Code homes (each named in the summary by its own agent, {@link #displayName(String, Path)}):
 *                    its predecessor kimi-cli's ({@code $KIMI_SHARE_DIR}, else {@code ~/.kimi}:
 *                    {@code sessions/<md5 of the folder>/<id>/wire.jsonl}) and Kimi Code's own ({@code $KIMI_CODE_HOME},
 *                    else {@code ~/.kimi-code}: {@code sessions/wd_<slug>_<hash>/<id>/agents/main/wire.jsonl})
 */
public record AgentStores(List<Path> claude, List<Path> codex, List<Path> gemini, List<Path> copilot,
                          List<Path> opencode, List<Path> qwen, List<Path> cursor, List<Path> grok,
                          List<Path> antigravity, List<Path> vibe, List<Path> kimi) {
    public AgentStores {
        claude = List.copyOf(claude);
        codex = List.copyOf(codex);
        gemini = List.copyOf(gemini);
        copilot = List.copyOf(copilot);
        opencode = List.copyOf(opencode);
        qwen = List.copyOf(qwen);
        cursor = List.copyOf(cursor);
        grok = List.copyOf(grok);
        antigravity = List.copyOf(antigravity);
        vibe = List.copyOf(vibe);
        kimi = List.copyOf(kimi);
    }

    /** The stores of the first seven agents (no Grok Build, Antigravity, Mistral Vibe or Kimi Code folders). */
    public AgentStores(List<Path> claude, List<Path> codex, List<Path> gemini, List<Path> copilot,
                       List<Path> opencode, List<Path> qwen, List<Path> cursor) {
        this(claude, codex, gemini, copilot, opencode, qwen, cursor, List.of(), List.of(), List.of(), List.of());
    }

    /** Only Claude Code and Codex folders. */
    public static AgentStores of(List<Path> claude, List<Path> codex) {
        return new AgentStores(claude, codex, List.of(), List.of(), List.of(), List.of(), List.of());
    }

    /** Every agent's default store under {@code home}, as the agents lay them out (ignoring the environment). */
    public static AgentStores underHome(Path home) {
        return new AgentStores(List.of(home.resolve(".claude/projects")), List.of(home.resolve(".codex/sessions")),
                List.of(home.resolve(".gemini")), List.of(home.resolve(".copilot")),
                List.of(home.resolve(".local/share/opencode")), List.of(home.resolve(".qwen")),
                List.of(home.resolve(".cursor")), List.of(home.resolve(".grok")),
                List.of(home.resolve(".gemini/antigravity")), List.of(home.resolve(".vibe")),
                List.of(home.resolve(".kimi"), home.resolve(".kimi-code")));
    }

    /** Every agent's store for this person: the environment's overrides ({@code CLAUDE_CONFIG_DIR}, ...), else under {@code home}. */
    public static AgentStores defaults(Path home, Map<String, String> env) {
        AgentStores h = underHome(home);
        return new AgentStores(
                env(env, "CLAUDE_CONFIG_DIR", "projects", h.claude),
                env(env, "CODEX_HOME", "sessions", h.codex),
                env(env, "GEMINI_CLI_HOME", ".gemini", h.gemini),
                env(env, "COPILOT_HOME", "", h.copilot),
                env(env, "XDG_DATA_HOME", "opencode", h.opencode),
                env(env, "QWEN_HOME", "", h.qwen),
                h.cursor,
                env(env, "GROK_HOME", "", h.grok),
                h.antigravity,
                env(env, "VIBE_HOME", "", h.vibe),
                kimi(env, h.kimi));
    }

    /** {@code $KIMI_SHARE_DIR} (else {@code ~/.kimi}) and {@code $KIMI_CODE_HOME} (else {@code ~/.kimi-code}). */
    private static List<Path> kimi(Map<String, String> env, List<Path> otherwise) {
        String share = env.get("KIMI_SHARE_DIR");
        String code = env.get("KIMI_CODE_HOME");
        return List.of(share == null || share.isBlank() ? otherwise.get(0) : Path.of(share),
                code == null || code.isBlank() ? otherwise.get(1) : Path.of(code));
    }

    private static List<Path> env(Map<String, String> env, String name, String sub, List<Path> otherwise) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return otherwise;
        }
        return List.of(sub.isEmpty() ? Path.of(v) : Path.of(v).resolve(sub));
    }

    /** The same stores with other Claude Code and Codex folders (when not null). */
    public AgentStores withClaudeAndCodex(List<Path> claudeDirs, List<Path> codexDirs) {
        return new AgentStores(claudeDirs != null ? claudeDirs : claude, codexDirs != null ? codexDirs : codex,
                gemini, copilot, opencode, qwen, cursor, grok, antigravity, vibe, kimi);
    }

    /** Every folder, each with its agent's standard name, in the guide's order. */
    public List<Map.Entry<String, Path>> all() {
        List<Map.Entry<String, Path>> all = new ArrayList<>();
        claude.forEach(p -> all.add(Map.entry(ClaudeParser.AGENT, p)));
        codex.forEach(p -> all.add(Map.entry(CodexParser.AGENT, p)));
        cursor.forEach(p -> all.add(Map.entry(CursorParser.AGENT, p)));
        copilot.forEach(p -> all.add(Map.entry(CopilotParser.AGENT, p)));
        grok.forEach(p -> all.add(Map.entry(GrokParser.AGENT, p)));
        opencode.forEach(p -> all.add(Map.entry(OpenCodeParser.AGENT, p)));
        gemini.forEach(p -> all.add(Map.entry(GeminiParser.AGENT, p)));
        antigravity.forEach(p -> all.add(Map.entry(AntigravityStore.AGENT, p)));
        vibe.forEach(p -> all.add(Map.entry(VibeParser.AGENT, p)));
        qwen.forEach(p -> all.add(Map.entry(QwenParser.AGENT, p)));
        kimi.forEach(p -> all.add(Map.entry(KimiParser.AGENT, p)));
        return all;
    }

    /**
     * The name a person knows the agent of the store {@code root} by: {@link #displayName(String)}, except that a
     * {@code kimi-code} store is Kimi Code's ({@code ~/.kimi-code}: "Kimi Code") or its predecessor kimi-cli's
     * ({@code ~/.kimi}, or a folder holding kimi-cli's {@code kimi.json}: "kimi-cli"); the sessions of both are
     * recorded as agent {@code kimi-code}.
     */
    public static String displayName(String agent, Path root) {
        if (KimiParser.AGENT.equals(agent) && root != null && isKimiCli(root)) {
            return "kimi-cli";
        }
        return displayName(agent);
    }

    /** Whether {@code root} is kimi-cli's share folder rather than Kimi Code's home. */
    static boolean isKimiCli(Path root) {
        Path name = root.getFileName();
        if (name != null && name.toString().equals(".kimi-code")) {
            return false;
        }
        if (name != null && name.toString().equals(".kimi")) {
            return true;
        }
        return java.nio.file.Files.exists(root.resolve("kimi.json"))
                && !java.nio.file.Files.exists(root.resolve("session_index.jsonl"));
    }

    /** The agent's name as a person knows it: "Claude Code", "Gemini CLI", ... */
    public static String displayName(String agent) {
        return switch (agent) {
            case ClaudeParser.AGENT -> "Claude Code";
            case CodexParser.AGENT -> "Codex";
            case CursorParser.AGENT -> "Cursor";
            case CopilotParser.AGENT -> "GitHub Copilot CLI";
            case OpenCodeParser.AGENT -> "OpenCode";
            case GeminiParser.AGENT -> "Gemini CLI";
            case QwenParser.AGENT -> "Qwen Code";
            case GrokParser.AGENT -> "Grok Build";
            case AntigravityStore.AGENT -> "Antigravity";
            case VibeParser.AGENT -> "Mistral Vibe";
            case KimiParser.AGENT -> "Kimi Code";
            default -> agent;
        };
    }
}
