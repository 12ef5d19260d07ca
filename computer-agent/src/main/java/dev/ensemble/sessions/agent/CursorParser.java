package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cursor's agent (CLI) transcripts: {@code ~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl}, lines
 * {@code {role, message{content[{type: text | tool_use}]}}} without times, usage or folder. Its chat
 * {@code ~/.cursor/chats/<md5 of the folder>/<id>/store.db} (a {@code meta} row of hex JSON {@code {agentId,
 * name, createdAt, lastUsedModel}}) gives the importer the folder (the project name decoded, checked against the
 * md5) and the model.
 *
 * <ul>
 *   <li>A prompt is a {@code user} line; its text is what {@code <user_query>} wraps (else the whole text).</li>
 *   <li>No usage is written: the session has one engine event of unknown fill.</li>
 *   <li>Lines without a time take the file's modification time.</li>
 *   <li>{@code Write}, {@code Edit}, {@code StrReplace}, {@code MultiEdit} and {@code Delete} tool uses give the
 *       files changed.</li>
 *   <li>Sub-agents' transcripts ({@code <id>/subagents/}) are not sessions of their own.</li>
 * </ul>
 */
final class CursorParser extends SessionParser {
    static final String AGENT = "cursor";
    static final Set<String> EDIT_TOOLS = Set.of("Write", "Edit", "StrReplace", "MultiEdit", "Delete", "EditNotebook");
    private static final Pattern QUERY = Pattern.compile("<user_query>(.*?)</user_query>", Pattern.DOTALL);

    CursorParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, String folder, String model) {
        super(AGENT, state, events, sessionId, fallbackAt);
        if (s.prompts == 0) {
            cwd(folder);
            if (model != null && s.model == null) {
                s.model = model;
            }
        }
    }

    @Override
    Long windowForClaim(String model) {
        return ModelWindows.of(model);
    }

    @Override
    boolean modelKnownAtPrompt() {
        return true; // the chat's model comes from store.db, not from replies
    }

    @Override
    void line(JsonNode line, long lineNo) {
        String role = text(line, "role");
        JsonNode content = line.path("message").path("content");
        if (role == null || !line.has("message")) {
            return;
        }
        s.recognized = true;
        long at = time(line);
        StringBuilder text = new StringBuilder();
        if (content.isTextual()) {
            text.append(content.asText());
        }
        for (JsonNode block : content) {
            String kind = text(block, "type");
            if ("text".equals(kind) && text(block, "text") != null) {
                text.append(text.length() > 0 ? "\n" : "").append(text(block, "text"));
            } else if ("tool_use".equals(kind) && EDIT_TOOLS.contains(text(block, "name"))) {
                JsonNode input = block.path("input");
                String path = text(input, "path");
                fileChanged(path != null ? path : text(input, "file_path"));
            }
        }
        if ("user".equals(role)) {
            String prompt = query(text.toString());
            if (!prompt.isBlank()) {
                prompt("line-" + lineNo, at, prompt, false, s.cwd);
            }
        } else if ("assistant".equals(role)) {
            touch(at);
            assistantText(text.toString());
        }
    }

    /** What {@code <user_query>} wraps, or the whole text. */
    static String query(String text) {
        Matcher m = QUERY.matcher(text);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            b.append(b.length() > 0 ? "\n" : "").append(m.group(1).strip());
        }
        return b.length() > 0 ? b.toString() : text.strip();
    }
}
