package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 *       {@code uuid}: the fill is the request's prompt (the three inputs) over the model's window, which the wire log
 *       does not carry: Kimi Code's {@code config.toml} {@code [models."<alias>"] max_context_size} (by alias or
 *       {@code model} name), else what {@link ModelWindows} knows, else unknown.</li>
 *   <li>The model is the newest {@code llm.request}'s {@code model} (else {@code config.update}'s
 *       {@code modelAlias}); a {@code turn.ended} ends the turn; {@code content.part} text parts are the reply
 *       text; {@code tool.call}s of {@code Edit} and {@code Write} give the files changed ({@code args.path}).</li>
 * </ul>
 */
final class KimiCodeParser extends SessionParser {
    static final Set<String> EDIT_TOOLS = Set.of("Edit", "Write");
    private static final Set<String> PROMPT_ORIGINS = Set.of("user");

    private static final Pattern MODEL_SECTION = Pattern.compile("^\\[models\\.(?:\"([^\"]+)\"|([A-Za-z0-9_-]+))\\]\\s*(#.*)?$");
    private static final Pattern KEY = Pattern.compile("^([A-Za-z0-9_]+)\\s*=\\s*(.+?)\\s*(#.*)?$");

    private final Map<String, Long> windows;
    private String textStep;

    /** @param home the Kimi Code home (its {@code config.toml} gives the models' windows), or null */
    KimiCodeParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, String folder, Path home) {
        super(KimiParser.AGENT, state, events, sessionId, fallbackAt);
        windows = home == null ? Map.of() : windows(home.resolve("config.toml"));
        if (s.sessionId == null) {
            s.sessionId = sessionId;
        }
        if (folder != null && s.cwd == null) {
            cwd(folder);
        }
    }

    @Override
    Long windowForClaim(String model) {
        return window(model);
    }

    private Long window(String model) {
        Long w = model == null ? null : windows.get(model);
        return w != null ? w : ModelWindows.of(model);
    }

    /**
     * Model alias and model name to {@code max_context_size}, from the {@code [models."<alias>"]} tables of a Kimi Code
     * {@code config.toml} (read line by line: only those tables' {@code model} and {@code max_context_size} keys).
     */
    static Map<String, Long> windows(Path configToml) {
        Map<String, Long> out = new HashMap<>();
        java.util.List<String> lines;
        try {
            lines = Files.readAllLines(configToml, StandardCharsets.UTF_8);
        } catch (IOException | java.io.UncheckedIOException e) {
            return out; // no config: the windows stay unknown
        }
        String alias = null;
        String name = null;
        Long size = null;
        for (String raw : lines) {
            String line = raw.strip();
            if (line.startsWith("[")) {
                put(out, alias, name, size);
                Matcher m = MODEL_SECTION.matcher(line);
                alias = m.matches() ? (m.group(1) != null ? m.group(1) : m.group(2)) : null;
                name = null;
                size = null;
                continue;
            }
            Matcher k = KEY.matcher(line);
            if (alias == null || !k.matches()) {
                continue;
            }
            String v = k.group(2);
            if (k.group(1).equals("model") && v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                name = v.substring(1, v.length() - 1);
            } else if (k.group(1).equals("max_context_size")) {
                try {
                    size = Long.parseLong(v.replace("_", ""));
                } catch (NumberFormatException e) {
                    size = null;
                }
            }
        }
        put(out, alias, name, size);
        return out;
    }

    private static void put(Map<String, Long> out, String alias, String name, Long size) {
        if (alias != null && size != null && size > 0) {
            out.put(alias, size);
            if (name != null) {
                out.putIfAbsent(name, size);
            }
        }
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
                            window(s.model), s.model);
                }
            }
            default -> {
                // step.begin, tool.result
            }
        }
    }
}
