package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.io.IOException;
import java.util.Set;

/**
 * Kimi Code CLI (kimi-cli) sessions: {@code $KIMI_SHARE_DIR/sessions/<md5 of the folder>/<sessionId>/wire.jsonl}
 * ({@code KIMI_SHARE_DIR} else {@code ~/.kimi}), as its {@code WireFile} writes them: a header line
 * {@code {type: "metadata", protocol_version}}, then one record a line {@code {timestamp (epoch seconds, a
 * float), message: {type, payload}}}. The folder is the {@code work_dirs[].path} of {@code kimi.json} whose md5
 * names the session's parent folder (the importer finds it); the wire log names no model.
 *
 * <ul>
 *   <li>A prompt is a {@code TurnBegin} (its {@code user_input} a string or content parts) or a {@code SteerInput}
 *       (typed while the agent worked); a turn Kimi starts itself (a background task's notification, its text a
 *       {@code <system-reminder>}) is not one.</li>
 *   <li>A reply with usage is a {@code StatusUpdate} with {@code token_usage} ({@code input_other},
 *       {@code input_cache_read}, {@code input_cache_creation}, {@code output}), keyed by its {@code message_id}:
 *       the fill is its {@code context_tokens} (the context the step was computed over) over
 *       {@code max_context_tokens}, the model's window as Kimi reports it, else unknown.</li>
 *   <li>A {@code TurnEnd} ends the turn; {@code ContentPart} text parts are the reply text; {@code ToolCall}s of
 *       {@code WriteFile} and {@code StrReplaceFile} give the files changed. Sub-agents' events arrive wrapped in
 *       {@code SubagentEvent} records and are not this session's.</li>
 * </ul>
 */
final class KimiParser extends SessionParser {
    static final String AGENT = "kimi-code";
    static final Set<String> EDIT_TOOLS = Set.of("WriteFile", "StrReplaceFile");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    KimiParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, String folder) {
        super(AGENT, state, events, sessionId, fallbackAt);
        if (s.sessionId == null) {
            s.sessionId = sessionId;
        }
        if (folder != null && s.cwd == null) {
            cwd(folder);
        }
    }

    @Override
    Long windowForClaim(String model) {
        return s.window;
    }

    @Override
    void line(JsonNode line, long lineNo) {
        if ("metadata".equals(text(line, "type")) && line.has("protocol_version")) {
            s.recognized = true;
            return;
        }
        JsonNode message = line.get("message");
        String type = text(message, "type");
        JsonNode payload = message == null ? null : message.get("payload");
        if (type == null || payload == null || !payload.isObject()) {
            return;
        }
        s.recognized = true;
        long at = seconds(line);
        switch (type) {
            case "TurnBegin", "SteerInput" -> {
                String text = userText(payload.get("user_input"));
                boolean image = hasImage(payload.get("user_input"));
                if ((text == null || text.isBlank()) && !image || text != null && text.strip().startsWith("<system-reminder>")) {
                    touch(at);
                    return;
                }
                prompt("line-" + lineNo, at, text == null ? "" : text, image, s.cwd);
            }
            case "StatusUpdate" -> {
                touch(at);
                Long max = number(payload, "max_context_tokens");
                if (max != null && max > 0) {
                    s.window = max;
                }
                JsonNode usage = payload.get("token_usage");
                if (usage != null && usage.isObject()) {
                    long input = count(usage, "input_other") + count(usage, "input_cache_read")
                            + count(usage, "input_cache_creation");
                    Long used = number(payload, "context_tokens");
                    String key = text(payload, "message_id");
                    reply(key != null ? key : "line-" + lineNo, at, input, count(usage, "output"),
                            used != null ? used : Long.valueOf(input), s.window, s.model);
                }
            }
            case "ContentPart" -> {
                super.touch(at);
                if ("text".equals(text(payload, "type"))) {
                    appendText(text(payload, "text"));
                }
            }
            case "ToolCall" -> {
                touch(at);
                ended(false);
                JsonNode function = payload.path("function");
                if (EDIT_TOOLS.contains(text(function, "name"))) {
                    fileChanged(text(arguments(function.get("arguments")), "path"));
                }
            }
            case "TurnEnd" -> {
                touch(at);
                ended(true);
            }
            default -> {
                if (!"SubagentEvent".equals(type)) {
                    touch(at);
                }
            }
        }
    }

    /** Reply text arrives in parts: consecutive text parts make one reply. */
    private void appendText(String t) {
        if (s.turn == null || t == null || t.isEmpty()) {
            return;
        }
        boolean continues = s.turn.lastText != null && textOpen;
        assistantText(continues ? s.turn.lastText + t : t);
        textOpen = true;
    }

    /** Whether the previous record was a text part (not kept between imports: a reply split there starts anew). */
    private boolean textOpen;

    @Override
    void touch(long at) {
        textOpen = false;
        super.touch(at);
    }

    private long seconds(JsonNode line) {
        JsonNode ts = line.get("timestamp");
        if (ts != null && ts.isNumber()) {
            long at = Math.round(ts.asDouble() * 1000);
            s.lastAt = at;
            return at;
        }
        return time(line);
    }

    /** The text of a user input: a string, or its {@code text} parts joined. */
    static String userText(JsonNode input) {
        if (input == null || input.isNull()) {
            return null;
        }
        if (input.isTextual()) {
            return input.asText();
        }
        StringBuilder b = new StringBuilder();
        for (JsonNode part : input) {
            if ("text".equals(text(part, "type")) && text(part, "text") != null) {
                b.append(b.length() > 0 ? "\n" : "").append(text(part, "text"));
            }
        }
        return b.toString();
    }

    private static boolean hasImage(JsonNode input) {
        if (input == null || !input.isArray()) {
            return false;
        }
        for (JsonNode part : input) {
            if ("image_url".equals(text(part, "type"))) {
                return true;
            }
        }
        return false;
    }

    /** Tool call arguments: a JSON string (as the model wrote them), or already an object. */
    static JsonNode arguments(JsonNode args) {
        if (args == null || args.isObject()) {
            return args;
        }
        if (args.isTextual()) {
            try {
                return MAPPER.readTree(args.asText());
            } catch (IOException e) {
                return null; // arguments still being streamed, or not JSON: no file to name
            }
        }
        return null;
    }
}
