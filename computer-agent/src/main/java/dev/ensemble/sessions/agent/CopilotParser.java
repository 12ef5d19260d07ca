package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;

/**
 * GitHub Copilot CLI sessions: {@code ~/.copilot/session-state/<id>/events.jsonl} (with {@code workspace.yaml}),
 * and the older flat {@code ~/.copilot/session-state/<id>.jsonl}; one event a line,
 * {@code {type, data, id, timestamp, parentId}}.
 *
 * <ul>
 *   <li>The session is {@code session.start}'s {@code data.sessionId}; the folder its {@code data.context.cwd}
 *       (later {@code session.context_changed} / {@code session.resume} contexts add folders), else the
 *       workspace's {@code cwd}.</li>
 *   <li>A prompt is a {@code user.message} whose {@code content} (what the person typed) is not empty; autopilot's
 *       own nudges have an empty content and only a {@code transformedContent}, and are not prompts.</li>
 *   <li>The model is the newest {@code session.model_change} {@code newModel} (or {@code assistant.usage}'s).</li>
 *   <li>A reply with usage is an {@code assistant.usage} event; its fill is the newest {@code session.usage_info}
 *       reading ({@code currentTokens} over {@code tokenLimit}) when the session has one, else unknown. A session
 *       with neither (Copilot CLI 1.0 writes none) has one engine event of unknown fill.</li>
 *   <li>A turn ended with {@code session.task_complete} (its summary is the report) or {@code session.shutdown}.</li>
 *   <li>{@code edit}, {@code create} and {@code write} tool requests give the files changed.</li>
 * </ul>
 */
final class CopilotParser extends SessionParser {
    static final String AGENT = "copilot";
    static final Set<String> EDIT_TOOLS = Set.of("edit", "create", "write", "str_replace_editor", "write_file");

    CopilotParser(SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt, String workspaceCwd) {
        super(AGENT, state, events, fallbackSessionId, fallbackAt);
        if (workspaceCwd != null && s.cwd == null && s.prompts == 0) {
            s.cwd = workspaceCwd; // a fallback only: the session's own context, when it has one, comes first
        }
    }

    @Override
    Long windowForClaim(String model) {
        return s.window != null ? s.window : ModelWindows.of(model);
    }

    @Override
    void line(JsonNode line, long lineNo) {
        String type = text(line, "type");
        JsonNode data = line.get("data");
        if (type == null || data == null || !data.isObject() || !type.contains(".")) {
            return;
        }
        s.recognized = true;
        long at = time(line);
        switch (type) {
            case "session.start", "session.resume" -> {
                String sid = text(data, "sessionId");
                if (sid != null && s.sessionId == null) {
                    s.sessionId = sid;
                }
                cwd(text(data.path("context"), "cwd"));
                model(text(data, "selectedModel"));
            }
            case "session.context_changed" -> cwd(text(data, "cwd"));
            case "session.model_change" -> model(text(data, "newModel"));
            case "session.usage_info" -> {
                Long limit = number(data, "tokenLimit");
                if (limit != null && limit > 0) {
                    s.window = limit;
                }
                s.lastUsed = number(data, "currentTokens");
            }
            case "user.message" -> {
                String content = text(data, "content");
                if (content == null || content.isBlank()) {
                    touch(at); // autopilot's nudge: the agent goes on working, no one typed it
                    return;
                }
                boolean image = false;
                for (JsonNode a : data.path("attachments")) {
                    image |= "image".equals(text(a, "type"));
                }
                prompt(text(line, "id") != null ? text(line, "id") : "line-" + lineNo, at, content, image, s.cwd);
            }
            case "assistant.message" -> {
                touch(at);
                assistantText(text(data, "content"));
                for (JsonNode req : data.path("toolRequests")) {
                    if (EDIT_TOOLS.contains(text(req, "name"))) {
                        JsonNode args = req.path("arguments");
                        String path = text(args, "path");
                        fileChanged(path != null ? path : text(args, "file_path"));
                    }
                }
                ended(false);
            }
            case "assistant.usage" -> {
                String model = text(data, "model");
                model(model);
                touch(at);
                long input = count(data, "inputTokens");
                reply(text(line, "id") != null ? text(line, "id") : "line-" + lineNo, at, input,
                        count(data, "outputTokens"), s.lastUsed, s.lastUsed == null ? null : s.window, s.model);
            }
            case "session.task_complete" -> {
                touch(at);
                assistantText(text(data, "summary"));
                ended(true);
            }
            case "session.shutdown" -> {
                touch(at);
                ended(true);
            }
            default -> {
                if (type.startsWith("assistant.") || type.startsWith("tool.")) {
                    touch(at);
                }
            }
        }
    }
}
