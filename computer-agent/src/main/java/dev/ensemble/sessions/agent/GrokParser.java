package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;

/**
 * Grok Build (xAI's {@code grok} CLI) sessions: {@code $GROK_HOME/sessions/<url-encoded folder>/<sessionId>/}
 * ({@code GROK_HOME} else {@code ~/.grok}) with {@code updates.jsonl}, the session's log that Grok resumes from
 * (read here), {@code summary.json} (folder {@code info.cwd}, {@code current_model_id}, {@code session_kind},
 * {@code parent_session_id}) and {@code signals.json} ({@code contextWindowTokens}, the model's window). Each line
 * of {@code updates.jsonl} is {@code {timestamp (epoch seconds), method: "session/update" | "_x.ai/session/update",
 * params: {sessionId, update: {sessionUpdate, ...}, _meta: {agentTimestampMs, eventId, totalTokens, ...}}}}.
 *
 * <ul>
 *   <li>A prompt is the first {@code user_message_chunk} of a run whose {@code update._meta.promptIndex} is set
 *       (what the person sent); a chunk marked {@code hostTurn} or {@code hideFromScrollback} (turns Grok starts
 *       itself: a background task or sub-agent finished, a goal nudge) is not, nor an interjection or a
 *       {@code !command} (a chunk with a {@code modelId} but no {@code promptIndex}). Its key is the
 *       notification's {@code eventId}; its model the chunk's {@code modelId}.</li>
 *   <li>A reply with usage is a {@code turn_completed} with {@code usage} ({@code inputTokens}, the whole turn's
 *       prompt tokens cache reads included, and {@code outputTokens}), keyed by its {@code prompt_id}: the fill is
 *       the newest {@code _meta.totalTokens} (Grok's own count of the context) over the model's window from
 *       {@code signals.json} or an {@code auto_compact_started}, each unknown when Grok has not written it.</li>
 *   <li>{@code tool_call}s of kind {@code edit} give the files changed ({@code locations[].path}); a
 *       {@code turn_completed} ends the turn; {@code model_changed} changes the model.</li>
 *   <li>A fork ({@code summary.json parent_session_id}) continues its parent; its log begins with a copy of the
 *       parent's, whose prompts (the same {@code eventId}s as in the parent's log) are not its runs; sub-agents' sessions
 *       ({@code session_kind} {@code subagent...}) are not sessions of their own.</li>
 * </ul>
 */
final class GrokParser extends SessionParser {
    static final String AGENT = "grok-build";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final String parent;
    /** The sessions folder ({@code sessions/}), where a fork's parent is looked up; or null. */
    private final Path sessionsDir;
    /** The event ids of the parent's prompts that a fork's log starts with (copied, not the fork's), once read. */
    private Set<String> replayed;
    /** Whether the line before was a user chunk of a prompt (not kept between imports). */
    private String userRun;
    private boolean textOpen;

    /**
     * @param sessionDir the session's folder (its {@code summary.json} and {@code signals.json} are read), or null
     * @param folder     the folder {@code summary.json} or the folder name names, or null
     * @param model      {@code summary.json}'s {@code current_model_id}, or null
     */
    GrokParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, Path sessionDir,
               String folder, String model) {
        super(AGENT, state, events, sessionId, fallbackAt);
        if (folder != null && s.cwd == null) {
            cwd(folder);
        }
        if (model != null && s.model == null) {
            s.model = model;
        }
        sessionsDir = sessionDir == null || sessionDir.getParent() == null ? null : sessionDir.getParent().getParent();
        JsonNode summary = sessionDir == null ? null : json(sessionDir.resolve("summary.json"));
        String p = text(summary, "parent_session_id");
        parent = p == null || p.isBlank() ? null : p;
        JsonNode signals = sessionDir == null ? null : json(sessionDir.resolve("signals.json"));
        Long window = number(signals, "contextWindowTokens");
        if (window != null && window > 0) {
            s.window = window;
        }
    }

    static JsonNode json(Path file) {
        try {
            return Files.isRegularFile(file) ? MAPPER.readTree(file.toFile()) : null;
        } catch (IOException e) {
            return null; // being rewritten, or not JSON: what it says stays unknown
        }
    }

    @Override
    Long windowForClaim(String model) {
        return s.window;
    }

    @Override
    String continuesSessionOf() {
        return parent;
    }

    @Override
    void line(JsonNode line, long lineNo) {
        JsonNode params = line.has("method") ? line.get("params") : line;
        JsonNode update = params == null ? null : params.get("update");
        String kind = text(update, "sessionUpdate");
        if (kind == null) {
            return;
        }
        s.recognized = true;
        if (s.sessionId == null && text(params, "sessionId") != null) {
            s.sessionId = text(params, "sessionId");
        }
        JsonNode meta = params.get("_meta");
        Long total = number(meta, "totalTokens");
        if (total != null && total > 0) {
            s.lastUsed = total;
        }
        long at = at(line, meta);
        if (!"user_message_chunk".equals(kind)) {
            userRun = null;
        }
        if (!"agent_message_chunk".equals(kind)) {
            textOpen = false;
        }
        JsonNode chunkMeta = update.get("_meta");
        switch (kind) {
            case "user_message_chunk" -> {
                boolean synthetic = chunkMeta != null && (chunkMeta.path("hostTurn").asBoolean(false)
                        || chunkMeta.path("hideFromScrollback").asBoolean(false));
                JsonNode index = chunkMeta == null ? null : chunkMeta.get("promptIndex");
                boolean person = !synthetic && (index != null && index.isNumber()
                        || index == null && text(chunkMeta, "modelId") == null);
                String run = index != null && index.isNumber() ? "p" + index.asLong() : "legacy";
                if (!person || run.equals(userRun)) {
                    touch(at);
                    return;
                }
                userRun = run;
                String key = text(meta, "eventId") != null ? text(meta, "eventId") : "line-" + lineNo;
                if (parent != null && s.prompts == 0 && replayed().contains(key)) {
                    touch(at); // the parent's prompt, copied into the fork's log when it was made
                    return;
                }
                JsonNode content = update.path("content");
                String type = text(content, "type");
                String promptText = "text".equals(type) ? text(content, "text") : "";
                prompt(key, at, promptText == null ? "" : promptText, "image".equals(type), s.cwd);
                model(text(chunkMeta, "modelId"));
            }
            case "agent_message_chunk" -> {
                touch(at);
                if (chunkMeta != null && chunkMeta.path("hostTurn").asBoolean(false)) {
                    return;
                }
                JsonNode content = update.path("content");
                String t = "text".equals(text(content, "type")) ? text(content, "text") : null;
                if (t != null && !t.isEmpty() && s.turn != null) {
                    assistantText(textOpen && s.turn.lastText != null ? s.turn.lastText + t : t);
                    textOpen = true;
                }
            }
            case "tool_call" -> {
                touch(at);
                ended(false);
                if ("edit".equals(text(update, "kind"))) {
                    for (JsonNode loc : update.path("locations")) {
                        fileChanged(text(loc, "path"));
                    }
                }
            }
            case "turn_completed" -> {
                touch(at);
                JsonNode usage = update.get("usage");
                if (usage != null && usage.isObject()) {
                    String model = firstKey(usage.get("modelUsage"));
                    model(model);
                    String promptId = text(update, "prompt_id");
                    reply(promptId != null ? "turn-" + promptId : "line-" + lineNo, at, count(usage, "inputTokens"),
                            count(usage, "outputTokens"), s.lastUsed, s.lastUsed == null ? null : s.window, s.model);
                }
                String result = text(update, "agent_result");
                if (result != null && !result.isBlank()) {
                    assistantText(result);
                }
                ended(true);
            }
            case "model_changed" -> {
                touch(at);
                model(text(update, "model_id"));
            }
            case "auto_compact_started" -> {
                touch(at);
                Long window = number(update, "context_window");
                if (window != null && window > 0) {
                    s.window = window;
                }
            }
            default -> touch(at);
        }
    }

    /**
     * The event ids of the user chunks in the parent's {@code updates.jsonl} ({@code sessions/<any folder>/<parent>/}):
     * a fork's log begins with a copy of its parent's, notifications and their {@code _meta} unchanged but the session
     * id. Empty when the parent is gone.
     */
    private Set<String> replayed() {
        if (replayed != null) {
            return replayed;
        }
        replayed = new HashSet<>();
        if (sessionsDir == null || !Files.isDirectory(sessionsDir)) {
            return replayed;
        }
        try (DirectoryStream<Path> groups = Files.newDirectoryStream(sessionsDir)) {
            for (Path g : groups) {
                Path log = g.resolve(parent).resolve("updates.jsonl");
                if (!Files.isRegularFile(log)) {
                    continue;
                }
                try (BufferedReader r = Files.newBufferedReader(log, StandardCharsets.UTF_8)) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        if (!l.contains("user_message_chunk")) {
                            continue;
                        }
                        try {
                            String id = text(MAPPER.readTree(l).path("params").path("_meta"), "eventId");
                            if (id != null) {
                                replayed.add(id);
                            }
                        } catch (IOException malformed) {
                            // a torn line names no prompt
                        }
                    }
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            // the parent cannot be read: every prompt of the fork is taken for its own
        }
        return replayed;
    }

    /** The line's time: {@code _meta.agentTimestampMs}, else the envelope's {@code timestamp} (seconds). */
    private long at(JsonNode line, JsonNode meta) {
        Long ms = number(meta, "agentTimestampMs");
        if (ms != null && ms > 0) {
            s.lastAt = ms;
            return ms;
        }
        Long seconds = number(line, "timestamp");
        if (seconds != null && seconds > 0) {
            s.lastAt = seconds * 1000;
            return seconds * 1000;
        }
        return time(line);
    }

    private static String firstKey(JsonNode map) {
        if (map == null || !map.isObject()) {
            return null;
        }
        Iterator<String> names = map.fieldNames();
        return names.hasNext() ? names.next() : null;
    }
}
