package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The importers' notion of a person's prompt, for code outside this package (the assistant sessions' prompt count,
 * guide §5 "A session used outside Ensemble"), so that a prompt is the same thing to both:
 * <ul>
 *   <li>Claude Code: a line the importer reads ({@link #claudeLine}: not a sub-agent's {@code isSidechain} line)
 *       that is a real prompt ({@link #claudePrompt}: not meta, not a compaction summary, not tool results, not a
 *       {@code <task-notification>}, not a local command's output, not an interruption marker), or a slash
 *       command line ({@link #claudeCommand}) that the agent then replies to;</li>
 *   <li>Copilot CLI: a {@code user.message} event whose {@code data.content} is not blank (autopilot's nudges have
 *       none, see {@link CopilotParser}).</li>
 * </ul>
 */
public final class AgentPrompts {
    private AgentPrompts() {
    }

    /** Claude Code's agent name. */
    public static final String CLAUDE_CODE = ClaudeParser.AGENT;
    /** GitHub Copilot CLI's agent name. */
    public static final String COPILOT = CopilotParser.AGENT;

    /** Whether {@code line} is one of Claude Code's transcript lines and the session's own (not a sub-agent's). */
    public static boolean claudeLine(JsonNode line) {
        return line != null && line.isObject() && ClaudeParser.recognizes(line) && !line.path("isSidechain").asBoolean(false);
    }

    /** Whether a Claude Code {@code user} line is a real prompt ({@code ClaudeParser.promptText}). */
    public static boolean claudePrompt(JsonNode line) {
        return ClaudeParser.promptText(line) != null;
    }

    /** Whether a Claude Code {@code user} line is a slash command, a prompt only when the agent replies to it. */
    public static boolean claudeCommand(JsonNode line) {
        return ClaudeParser.command(line) != null;
    }

    /** Whether a Claude Code {@code user} line is a local command's output: the command before it was no prompt. */
    public static boolean claudeLocalOutput(JsonNode line) {
        return ClaudeParser.isLocalOutput(line);
    }

    /** Whether a Copilot CLI event is a person's prompt: {@code user.message} with a non-blank {@code data.content}. */
    public static boolean copilotPrompt(JsonNode event) {
        if (event == null || !"user.message".equals(SessionParser.text(event, "type"))) {
            return false;
        }
        String content = SessionParser.text(event.path("data"), "content");
        return content != null && !content.isBlank();
    }
}
