package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.HashSet;
import java.util.Set;

/**
 * Mistral Vibe sessions: {@code $VIBE_HOME/logs/session/<prefix>_<YYYYMMDD_HHMMSS>_<id8>/} ({@code VIBE_HOME} else
 * {@code ~/.vibe}), as its {@code SessionLogger} writes them: {@code messages.jsonl}, one message a line
 * {@code {role: user|assistant|tool, content, injected, message_id, tool_calls[{function: {name, arguments}}]}},
 * appended after each interaction, and {@code meta.json} {@code {session_id, parent_session_id, start_time,
 * end_time, environment.working_directory, stats{last_turn_prompt_tokens, last_turn_completion_tokens, ...},
 * total_messages, config{active_model, models[{name, alias}]}}}, rewritten after each.
 *
 * <ul>
 *   <li>The session is {@code meta.json}'s {@code session_id}; the folder its {@code working_directory}; the
 *       model the {@code active_model} alias's {@code name}; a session made by {@code /compact} or a fork
 *       ({@code parent_session_id}) continues its parent (a fork's log begins with copies of the parent's messages, the
 *       same {@code message_id}s: those prompts are not its runs; {@code /compact}'s summary is {@code injected}). Sub-agents log under the session's own {@code agents/}
 *       and are not sessions of their own.</li>
 *   <li>A prompt is a {@code user} message that Vibe did not inject ({@code injected} false), with text or
 *       images; its key its {@code message_id}.</li>
 *   <li>Messages carry no time: the first prompt is at {@code start_time}, a later one at the {@code end_time} of
 *       the import that first reads it (when Vibe last saved), never before the one before.</li>
 *   <li>Messages carry no usage: each import that reads new messages gives one engine event for the open turn from
 *       {@code meta.json}'s stats, the last request's {@code last_turn_prompt_tokens} as the context used over the
 *       model's window where {@link ModelWindows} knows it (Vibe does not write it), else unknown.</li>
 *   <li>An assistant message without tool calls ends the turn; {@code write_file} and {@code search_replace} calls
 *       give the files changed.</li>
 * </ul>
 */
final class VibeParser extends SessionParser {
    static final String AGENT = "mistral-vibe";
    static final Set<String> EDIT_TOOLS = Set.of("write_file", "search_replace");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final JsonNode meta;
    private final Path sessionsDir;
    /** The message ids of the parent's messages a fork's log begins with (copied, not the fork's), once read. */
    private Set<String> replayed;
    private final long startAt;
    private final long endAt;
    private boolean read;

    /** @param sessionDir the session's folder ({@code meta.json} is read from it), or null */
    VibeParser(SessionState state, EventFactory events, String sessionId, long fallbackAt, Path sessionDir) {
        super(AGENT, state, events, sessionId, fallbackAt);
        meta = sessionDir == null ? null : GrokParser.json(sessionDir.resolve("meta.json"));
        sessionsDir = sessionDir == null ? null : sessionDir.getParent();
        if (s.sessionId == null) {
            s.sessionId = text(meta, "session_id") != null ? text(meta, "session_id") : sessionId;
        }
        if (s.cwd == null) {
            cwd(text(meta == null ? null : meta.path("environment"), "working_directory"));
        }
        String model = model(meta);
        if (model != null) {
            s.model = model;
        }
        startAt = instant(text(meta, "start_time"), fallbackAt);
        endAt = Math.max(startAt, instant(text(meta, "end_time"), fallbackAt));
    }

    /** The model of a {@code meta.json}: the {@code active_model} alias's {@code name}, or the alias. */
    static String model(JsonNode meta) {
        if (meta == null) {
            return null;
        }
        for (String section : new String[] {"config", "agent_config"}) {
            JsonNode config = meta.get(section);
            String alias = text(config, "active_model");
            if (alias == null) {
                continue;
            }
            for (JsonNode m : config.path("models")) {
                if (alias.equals(text(m, "alias")) && text(m, "name") != null) {
                    return text(m, "name");
                }
            }
            return alias;
        }
        return text(meta, "model");
    }

    /** Epoch ms of Vibe's ISO time (with an offset, or without one: UTC), or {@code otherwise}. */
    static long instant(String iso, long otherwise) {
        if (iso == null || iso.isBlank()) {
            return otherwise;
        }
        try {
            return OffsetDateTime.parse(iso).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            try {
                return LocalDateTime.parse(iso).toInstant(ZoneOffset.UTC).toEpochMilli();
            } catch (DateTimeParseException e2) {
                return otherwise;
            }
        }
    }

    @Override
    Long windowForClaim(String model) {
        return ModelWindows.of(model);
    }

    @Override
    String continuesSessionOf() {
        String parent = text(meta, "parent_session_id");
        return parent == null || parent.isBlank() ? null : parent;
    }

    @Override
    void line(JsonNode line, long lineNo) {
        String role = text(line, "role");
        if (role == null || !line.has("content") && !line.has("tool_calls")) {
            return;
        }
        s.recognized = true;
        read = true;
        long at = s.lastAt != null ? s.lastAt : startAt;
        switch (role) {
            case "user" -> {
                String text = GeminiParser.content(line.get("content"));
                boolean image = line.path("images").isArray() && !line.path("images").isEmpty();
                if (line.path("injected").asBoolean(false) || (text == null || text.isBlank()) && !image) {
                    touch(at);
                    return;
                }
                String parent = continuesSessionOf();
                if (parent != null && s.prompts == 0 && text(line, "message_id") != null
                        && replayed(parent).contains(text(line, "message_id"))) {
                    touch(at); // the parent's prompt, copied into the fork when it was made
                    return;
                }
                long promptAt = Math.max(at, s.prompts == 0 ? startAt : endAt);
                s.lastAt = promptAt;
                String id = text(line, "message_id");
                prompt(id != null ? id : "line-" + lineNo, promptAt, text == null ? "" : text, image, s.cwd);
            }
            case "assistant" -> {
                touch(at);
                assistantText(GeminiParser.content(line.get("content")));
                boolean tools = false;
                for (JsonNode call : line.path("tool_calls")) {
                    tools = true;
                    JsonNode function = call.path("function");
                    if (EDIT_TOOLS.contains(text(function, "name"))) {
                        JsonNode args = KimiParser.arguments(function.get("arguments"));
                        String path = text(args, "path");
                        fileChanged(path != null ? path : text(args, "file_path"));
                    }
                }
                ended(!tools);
            }
            default -> touch(at);
        }
    }

    /** The message ids in the parent session's {@code messages.jsonl} ({@code <prefix>_*_<parent id8>/}); none when gone. */
    private Set<String> replayed(String parent) {
        if (replayed != null) {
            return replayed;
        }
        replayed = new HashSet<>();
        if (sessionsDir == null || parent.length() < 8) {
            return replayed;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(sessionsDir, "*_" + parent.substring(0, 8))) {
            for (Path d : dirs) {
                if (!parent.equals(text(GrokParser.json(d.resolve("meta.json")), "session_id"))) {
                    continue;
                }
                for (String l : Files.readAllLines(d.resolve("messages.jsonl"), StandardCharsets.UTF_8)) {
                    try {
                        String id = text(MAPPER.readTree(l), "message_id");
                        if (id != null) {
                            replayed.add(id);
                        }
                    } catch (IOException malformed) {
                        // a torn line names no message
                    }
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            // the parent cannot be read: every prompt of the fork is taken for its own
        }
        return replayed;
    }

    @Override
    void finish(boolean idle) {
        JsonNode stats = meta == null ? null : meta.get("stats");
        Long prompt = number(stats, "last_turn_prompt_tokens");
        if (read && s.turn != null && !s.turn.closed && prompt != null && prompt > 0) {
            // the last request's figures, once per turn and state of meta.json (its message count)
            long messages = meta.path("total_messages").asLong(0);
            Long window = ModelWindows.of(s.model);
            touch(endAt);
            reply("stats-" + s.turn.key + "-" + messages, endAt, prompt, count(stats, "last_turn_completion_tokens"), prompt, window, s.model);
        }
        super.finish(idle);
    }
}
