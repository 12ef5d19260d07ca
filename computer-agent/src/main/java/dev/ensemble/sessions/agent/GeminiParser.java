package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;

/**
 * Gemini CLI chats ({@code ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.json[l]}), as its
 * {@code ChatRecordingService} writes them: the older format is one JSON document {@code {sessionId, projectHash,
 * startTime, lastUpdated, messages[]}} (the importer hands its header, then each message, as records); the newer
 * JSONL format is a header line {@code {sessionId, projectHash, startTime, lastUpdated, kind}}, one line per
 * message, a message written again under the same {@code id} when it changes (its tokens, its tool calls),
 * {@code {"$set": {...}}} metadata lines and {@code {"$rewindTo": id}} lines.
 *
 * <ul>
 *   <li>The session is the header's {@code sessionId}; the folder is the project's path (the importer finds it
 *       from {@code projects.json}, {@code .project_root} or the sha256 {@code projectHash}), unknown otherwise.</li>
 *   <li>A prompt is a {@code user} message with text (its {@code content} a string or parts with {@code text});
 *       a message written again under the same id is the same prompt.</li>
 *   <li>A reply is a {@code gemini} message with {@code tokens}: the fill is {@code tokens.input} (the prompt's
 *       size, cached tokens included) over the model's window ({@link ModelWindows}); the run's tokens add input
 *       and output.</li>
 *   <li>{@code write_file}, {@code replace} and {@code edit} tool calls give the files changed.</li>
 *   <li>Sub-agents' chats (under {@code chats/<parent session id>/}, header {@code kind: "subagent"}) are not
 *       sessions of their own.</li>
 * </ul>
 */
final class GeminiParser extends SessionParser {
    static final String AGENT = "gemini-cli";
    static final Set<String> EDIT_TOOLS = Set.of("write_file", "replace", "edit");

    GeminiParser(SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt, String folder) {
        super(AGENT, state, events, fallbackSessionId, fallbackAt);
        if (folder != null && s.cwd == null) {
            cwd(folder);
        }
    }

    @Override
    Long windowForClaim(String model) {
        return ModelWindows.of(model);
    }

    @Override
    void line(JsonNode line, long lineNo) {
        if (line.has("$set") || line.has("$rewindTo")) {
            s.recognized = true;
            return; // metadata; a rewind does not take back runs already claimed
        }
        String type = text(line, "type");
        if (type == null) {
            if (text(line, "sessionId") != null && line.has("projectHash")) {
                s.recognized = true;
                if (s.sessionId == null) {
                    s.sessionId = text(line, "sessionId");
                }
                if ("subagent".equals(text(line, "kind"))) {
                    s.subAgent = true;
                    s.sidechainSeen = true;
                }
            }
            return;
        }
        if (text(line, "id") == null) {
            return;
        }
        s.recognized = true;
        if (s.subAgent) {
            return;
        }
        long at = time(line);
        String id = text(line, "id");
        switch (type) {
            case "user" -> {
                String text = content(line.get("content"));
                if (text == null || text.isBlank() || s.promptKeys.contains(id)) {
                    touch(at);
                    return;
                }
                s.promptKeys.add(id);
                prompt(id, at, text, false, s.cwd);
            }
            case "gemini" -> {
                String model = text(line, "model");
                model(model);
                touch(at);
                String text = content(line.get("content"));
                assistantText(text);
                boolean tools = false;
                for (JsonNode call : line.path("toolCalls")) {
                    tools = true;
                    if (EDIT_TOOLS.contains(text(call, "name"))) {
                        fileChanged(absolute(text(call.path("args"), "file_path")));
                    }
                }
                ended(!tools && text != null && !text.isBlank());
                JsonNode tokens = line.get("tokens");
                if (tokens != null && tokens.isObject()) {
                    long input = count(tokens, "input");
                    reply(id, at, input, count(tokens, "output"), input, ModelWindows.of(model != null ? model : s.model),
                            model != null ? model : s.model);
                }
            }
            default -> touch(at); // info, error, warning
        }
    }

    private String absolute(String path) {
        if (path == null || path.startsWith("/") || path.matches("^[A-Za-z]:[\\\\/].*") || s.cwd == null) {
            return path;
        }
        return s.cwd.endsWith("/") ? s.cwd + path : s.cwd + "/" + path;
    }

    /** A message's text: a string, or the {@code text} of its parts joined. */
    static String content(JsonNode content) {
        if (content == null || content.isNull()) {
            return null;
        }
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder b = new StringBuilder();
        for (JsonNode part : content) {
            String t = text(part, "text");
            if (t != null) {
                b.append(b.length() > 0 ? "\n" : "").append(t);
            }
        }
        return b.toString();
    }
}
