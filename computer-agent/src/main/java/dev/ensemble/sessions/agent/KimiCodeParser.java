package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;

/**
 * Kimi Code sessions (the current Kimi Code, successor of kimi-cli):
 * {@code $KIMI_CODE_HOME/sessions/wd_<folder slug>_<sha256 of the folder, 12 hex>/session_<uuid>/} ({@code KIMI_CODE_HOME}
 * else {@code ~/.kimi-code}) with {@code state.json} ({@code cwd}) and one wire log per agent,
 * {@code agents/<agentId>/wire.jsonl}: the main agent's ({@code agents/main/}) is the session's, the others are
 * sub-agents'. A wire log is a header {@code {type: "metadata", protocol_version, created_at}}, then one record a
 * line {@code {type, agentId, ..., time (epoch ms)}}.
 *
 * <ul>
 *   <li>A prompt is a {@code turn.prompt} or {@code turn.steer} whose {@code origin.kind} is {@code user} (what the
 *       person typed; skills, shell commands, injections, cron jobs, hooks and retries are not), its text the
 *       {@code input} parts' text.</li>
 *   <li>A reply with usage is a {@code context.append_loop_event} {@code step.end} with {@code usage}
 *       ({@code inputOther}, {@code inputCacheRead}, {@code inputCacheCreation}, {@code output}), keyed by its
 *       {@code uuid}: the fill is the request's prompt (the three inputs) over the model's window where
 *       {@link ModelWindows} knows it (the wire log does not carry it), else unknown.</li>
 *   <li>The model is the newest {@code llm.request}'s {@code model} (else {@code config.update}'s
 *       {@code modelAlias}); a {@code turn.ended} ends the turn; {@code content.part} text parts are the reply
 *       text; {@code tool.call}s of {@code Edit} and {@code Write} give the files changed ({@code args.path}).</li>
 * </ul>
 */
final class KimiCodeParser extends SessionParser {
    static final Set<String> EDIT_TOOLS = Set.of("Edit", "Write");
    private static final Set<String> PROMPT_ORIGINS = Set.of("user");

    private String textStep;

    KimiCodeParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, String folder) {
        super(KimiParser.AGENT, state, events, sessionId, fallbackAt);
        if (s.sessionId == null) {
            s.sessionId = sessionId;
        }
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
        String type = text(line, "type");
        if (type == null) {
            return;
        }
        if (type.equals("metadata")) {
            s.recognized = true;
            return;
        }
        if (!type.contains(".")) {
            return;
        }
        s.recognized = true;
        Long ms = number(line, "time");
        long at;
        if (ms != null && ms > 0) {
            s.lastAt = ms;
            at = ms;
        } else {
            at = time(line);
        }
        JsonNode event = line.get("event");
        String eventType = text(event, "type");
        if (!"content.part".equals(eventType)) {
            textStep = null;
        }
        switch (type) {
            case "turn.prompt", "turn.steer" -> {
                String origin = text(line.path("origin"), "kind");
                String text = KimiParser.userText(line.get("input"));
                boolean image = false;
                for (JsonNode part : line.path("input")) {
                    image |= "image_url".equals(text(part, "type"));
                }
                if (origin != null && !PROMPT_ORIGINS.contains(origin) || (text == null || text.isBlank()) && !image) {
                    touch(at);
                    return;
                }
                prompt("line-" + lineNo, at, text == null ? "" : text, image, s.cwd);
            }
            case "config.update" -> {
                cwd(text(line, "cwd"));
                if (s.model == null) {
                    model(text(line, "modelAlias"));
                }
            }
            case "llm.request" -> {
                touch(at);
                if (!"compaction".equals(text(line, "kind"))) {
                    model(text(line, "model"));
                }
            }
            case "context.append_loop_event" -> loopEvent(event, eventType, at, lineNo);
            case "turn.ended" -> {
                touch(at);
                ended(true);
            }
            default -> touch(at);
        }
    }

    private void loopEvent(JsonNode event, String type, long at, long lineNo) {
        touch(at);
        if (type == null) {
            return;
        }
        switch (type) {
            case "content.part" -> {
                JsonNode part = event.path("part");
                String t = "text".equals(text(part, "type")) ? text(part, "text") : null;
                String step = text(event, "stepUuid");
                if (t != null && !t.isEmpty() && s.turn != null) {
                    boolean continues = step != null && step.equals(textStep) && s.turn.lastText != null;
                    assistantText(continues ? s.turn.lastText + t : t);
                    textStep = step;
                }
            }
            case "tool.call" -> {
                ended(false);
                if (EDIT_TOOLS.contains(text(event, "name"))) {
                    fileChanged(text(event.path("args"), "path"));
                }
            }
            case "step.end" -> {
                JsonNode usage = event.get("usage");
                if (usage != null && usage.isObject()) {
                    long input = count(usage, "inputOther") + count(usage, "inputCacheRead") + count(usage, "inputCacheCreation");
                    String key = text(event, "uuid");
                    reply(key != null ? "step-" + key : "line-" + lineNo, at, input, count(usage, "output"), input,
                            ModelWindows.of(s.model), s.model);
                }
            }
            default -> {
                // step.begin, tool.result
            }
        }
    }
}
