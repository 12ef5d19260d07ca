package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;

/**
 * OpenCode sessions, one message a record: the importer reads them from {@code opencode.db} (tables
 * {@code session}, {@code message}, {@code part}; a message's {@code data} JSON with its {@code id} and its parts
 * added as {@code parts}) or from the older {@code storage/} layout ({@code session/<project>/<id>.json},
 * {@code message/<session>/<msg>.json}, {@code part/<msg>/<part>.json}), oldest message first.
 *
 * <ul>
 *   <li>The session is the session row's id; its folder the session's {@code directory}.</li>
 *   <li>A prompt is a {@code user} message; its text the message's text parts (not {@code synthetic} ones).</li>
 *   <li>A reply with usage is an {@code assistant} message with {@code tokens}: its prompt size is input + cache
 *       read + cache write; the window is the model family's where known ({@link ModelWindows}), else unknown.
 *       A session whose replies carry no tokens has one engine event of unknown fill.</li>
 *   <li>An assistant message that finished ({@code finish} other than {@code tool-calls}), or failed
 *       ({@code error}), ends the turn.</li>
 *   <li>{@code edit}, {@code write}, {@code patch} and {@code multiedit} tool parts give the files changed.</li>
 *   <li>Child sessions ({@code parentID}: sub-agents) belong to their parent and are not sessions of their own.</li>
 * </ul>
 */
final class OpenCodeParser extends SessionParser {
    static final String AGENT = "opencode";
    static final Set<String> EDIT_TOOLS = Set.of("edit", "write", "patch", "multiedit");

    OpenCodeParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, String folder) {
        super(AGENT, state, events, sessionId, fallbackAt);
        if (s.sessionId == null) {
            s.sessionId = sessionId;
        }
        cwd(folder);
    }

    @Override
    Long windowForClaim(String model) {
        return ModelWindows.of(model);
    }

    /** Whether the message is complete: a user message, or an assistant message that finished or failed. */
    static boolean complete(JsonNode message) {
        return !"assistant".equals(text(message, "role")) || message.path("time").has("completed")
                || message.has("error") || message.has("finish");
    }

    @Override
    long time(JsonNode message) {
        Long created = number(message.path("time"), "created");
        if (created != null) {
            s.lastAt = created;
            return created;
        }
        return super.time(message);
    }

    @Override
    void line(JsonNode message, long lineNo) {
        String role = text(message, "role");
        String id = text(message, "id");
        if (role == null || id == null) {
            return;
        }
        s.recognized = true;
        long at = time(message);
        if ("user".equals(role)) {
            StringBuilder b = new StringBuilder();
            boolean image = false;
            for (JsonNode part : message.path("parts")) {
                String kind = text(part, "type");
                if ("text".equals(kind) && !part.path("synthetic").asBoolean(false) && text(part, "text") != null) {
                    b.append(b.length() > 0 ? "\n" : "").append(text(part, "text"));
                } else if ("file".equals(kind) && String.valueOf(text(part, "mime")).startsWith("image/")) {
                    image = true;
                }
            }
            JsonNode model = message.path("model");
            if (text(model, "modelID") != null) {
                s.model = text(model, "modelID");
            }
            if (b.length() > 0 || image) {
                prompt(id, at, b.toString(), image, s.cwd);
            }
            return;
        }
        if (!"assistant".equals(role)) {
            return;
        }
        String model = text(message, "modelID");
        model(model);
        Long completed = number(message.path("time"), "completed");
        touch(completed != null ? completed : at);
        StringBuilder b = new StringBuilder();
        for (JsonNode part : message.path("parts")) {
            String kind = text(part, "type");
            if ("text".equals(kind) && text(part, "text") != null && !part.path("synthetic").asBoolean(false)) {
                b.append(b.length() > 0 ? "\n" : "").append(text(part, "text"));
            } else if ("tool".equals(kind) && EDIT_TOOLS.contains(text(part, "tool"))) {
                fileChanged(text(part.path("state").path("input"), "filePath"));
            }
        }
        assistantText(b.toString());
        String finish = text(message, "finish");
        ended(message.has("error") || (finish != null && !"tool-calls".equals(finish)));
        JsonNode tokens = message.get("tokens");
        if (tokens != null && tokens.isObject()) {
            long input = count(tokens, "input");
            long used = input + count(tokens.path("cache"), "read") + count(tokens.path("cache"), "write");
            String m = model != null ? model : s.model;
            reply(id, completed != null ? completed : at, used, count(tokens, "output"), used, ModelWindows.of(m), m);
        }
    }
}
