package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Codex CLI rollouts ({@code ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl}): lines of
 * {@code {timestamp, type, payload}} with types session_meta, turn_context, response_item, event_msg, compacted.
 *
 * <ul>
 *   <li>The session is {@code session_meta.id}; its folder the newest {@code cwd} (session_meta, turn_context);
 *       its model the newest {@code turn_context.model}.</li>
 *   <li>A real prompt is a {@code user_message} event (Codex Desktop writes only that), or, in rollouts without
 *       those events, a {@code response_item} message of role user; never one of the messages Codex writes
 *       itself: {@code <environment_context>}, {@code <user_instructions>}, the AGENTS.md instructions
 *       ({@code # AGENTS.md instructions for ...}), {@code <turn_aborted>}, {@code <user_shell_command>}. Its
 *       text is the person's request: a Desktop or IDE wrapper ({@code # Files mentioned by the user:} ...
 *       {@code ## My request for Codex:}) is taken off.</li>
 *   <li>A fork ({@code session_meta.forked_from_id}) continues that session ({@code continuesSessionOf}); the
 *       parent's prompts it replays at its start are not its runs.</li>
 *   <li>Each {@code token_count} event with non-null {@code info} is one reply: {@code total_token_usage} is
 *       cumulative, so the fill is {@code last_token_usage.input_tokens} over {@code model_context_window}; the
 *       run's tokens add {@code last_token_usage} input and output tokens.</li>
 *   <li>A turn ended with a {@code task_complete} (or {@code turn_aborted}) event.</li>
 *   <li>Files changed are the paths in {@code apply_patch} inputs ({@code *** Add/Update/Delete File:},
 *       {@code *** Move to:}), made absolute against the session's folder.</li>
 *   <li>A rollout whose session_meta says it is a sub-agent's thread ({@code source.subagent}) is not a session
 *       of its own.</li>
 *   <li>Early rollouts (a first line {@code {id, timestamp, instructions}}, then bare response items and
 *       {@code record_type} lines) are read the same way; their lines have no times of their own.</li>
 * </ul>
 */
final class CodexParser extends SessionParser {
    static final String AGENT = "codex";
    static final Set<String> KNOWN_TYPES = Set.of("session_meta", "response_item", "event_msg", "turn_context", "compacted");
    static final Set<String> BARE_ITEMS = Set.of("message", "reasoning", "function_call", "function_call_output",
            "custom_tool_call", "custom_tool_call_output", "local_shell_call", "web_search_call");
    /** Text a user message starts with when Codex wrote it, not the person. */
    static final List<String> NOT_PROMPTS = List.of("<environment_context>", "<user_instructions>", "<INSTRUCTIONS>",
            "# AGENTS.md instructions for ", "<turn_aborted>", "<user_shell_command>");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** The text Codex Desktop and IDE wrappers put before the person's own request. */
    static final List<String> REQUEST_WRAPPERS = List.of("# Files mentioned by the user:", "# Context from my IDE setup:");
    static final String REQUEST_MARKER = "## My request for Codex:";

    /** The prompts of a Codex session by its id, in order (for a fork, its parent's); empty when not found. */
    private final java.util.function.Function<String, List<String>> promptsOf;

    CodexParser(SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt) {
        this(state, events, fallbackSessionId, fallbackAt, id -> List.of());
    }

    CodexParser(SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt,
                java.util.function.Function<String, List<String>> promptsOf) {
        super(AGENT, state, events, fallbackSessionId, fallbackAt);
        this.promptsOf = promptsOf;
    }

    /** The person's own request inside a wrapped prompt ({@code # Files mentioned by the user: ... ## My request for Codex:}). */
    static String request(String text) {
        String stripped = text.strip();
        for (String wrapper : REQUEST_WRAPPERS) {
            if (stripped.startsWith(wrapper)) {
                int at = stripped.lastIndexOf(REQUEST_MARKER);
                return at < 0 ? text : stripped.substring(at + REQUEST_MARKER.length()).strip();
            }
        }
        return text;
    }

    /**
     * A person's prompt: a run, unless it is one of the parent's prompts a fork replays at its start (matched in
     * order; the first prompt that differs ends the replay).
     */
    private void personPrompt(String text, long at, boolean image) {
        if (s.replayed != null && !s.replayed.isEmpty()) {
            if (s.replayed.get(0).equals(text)) {
                s.replayed.remove(0);
                return;
            }
            s.replayed.clear();
        }
        prompt(String.valueOf(s.prompts + 1), at, request(text), image, s.cwd);
    }

    @Override
    String continuesSessionOf() {
        return s.forkedFrom;
    }

    /** Whether a line is one of a Codex rollout's lines (current or early format). */
    static boolean recognizes(CodexLine line, long lineNo) {
        String type = line.root.type;
        return (type != null && (KNOWN_TYPES.contains(type) || BARE_ITEMS.contains(type) && !line.hasPayload))
                || line.hasRecordType
                || (lineNo == 1 && type == null && line.hasId && line.hasTimestamp);
    }

    @Override
    Long windowForClaim(String model) {
        return s.window;
    }

    @Override
    boolean modelKnownAtPrompt() {
        return s.model != null;
    }

    @Override
    void line(JsonNode line, long lineNo) {
        line(CodexLine.of(line), lineNo);
    }

    /** Reads one line's fields ({@code lineNo} counted from 1), as {@link LeanJson#readCodex} gives them. */
    void line(CodexLine line, long lineNo) {
        if (!recognizes(line, lineNo)) {
            return;
        }
        s.recognized = true;
        String type = line.root.type;
        CodexLine.Fields payload = line.payload;
        if (type == null && line.hasId && !line.hasRecordType) {
            type = "session_meta"; // early format: the first line is the session
            payload = line.root;
            s.bare = true;
        } else if (type != null && BARE_ITEMS.contains(type) && !line.hasPayload) {
            type = "response_item";
            payload = line.root;
            s.bare = true;
        } else if (type == null) {
            return; // early format's {"record_type": "state"} lines
        }
        if (s.subAgent) {
            return; // a sub-agent's thread: nothing in it is this computer's session
        }
        long at = time(line.timestamp);
        boolean userMessage = "event_msg".equals(type) && "user_message".equals(payload.type);
        if (s.command != null && !userMessage) {
            // a user message item no user_message event followed (rollouts before those events): the prompt
            ImportState.Command c = s.command;
            s.command = null;
            personPrompt(c.text, c.at, c.image);
        }
        switch (type) {
            case "session_meta" -> sessionMeta(payload);
            case "turn_context" -> {
                cwd(payload.cwd);
                model(payload.model);
            }
            case "event_msg" -> event(payload, at, lineNo);
            case "response_item" -> item(payload, at);
            default -> {
                // compacted: the history Codex keeps after compaction; no run data
            }
        }
    }

    private void sessionMeta(CodexLine.Fields meta) {
        String id = meta.id;
        if (id != null && s.sessionId == null) {
            s.sessionId = id;
        } else if (id != null && !id.equals(s.sessionId)) {
            return; // a later session_meta names the session this one was forked from
        }
        cwd(meta.cwd);
        String forkedFrom = meta.forkedFromId;
        if (forkedFrom != null && !forkedFrom.isBlank() && s.forkedFrom == null && s.prompts == 0) {
            s.forkedFrom = forkedFrom;
            s.replayed = new ArrayList<>(promptsOf.apply(forkedFrom));
        }
        if (meta.subAgentSource) {
            s.subAgent = true;
            s.sidechainSeen = true;
        }
    }

    private void event(CodexLine.Fields p, long at, long lineNo) {
        String kind = p.type;
        if (kind == null) {
            return;
        }
        switch (kind) {
            case "task_started" -> {
                Long window = p.modelContextWindow;
                if (window != null) {
                    s.window = window;
                }
            }
            case "token_count" -> {
                if (!p.hasInfo) {
                    return;
                }
                Long window = p.infoModelContextWindow;
                if (window != null) {
                    s.window = window;
                }
                Long used = p.lastInputTokens;
                touch(at);
                reply("line-" + lineNo, at, used == null ? 0L : used,
                        p.lastOutputTokens == null ? 0L : p.lastOutputTokens, used, s.window, s.model);
            }
            case "task_complete", "turn_aborted" -> {
                touch(at);
                assistantText(p.lastAgentMessage);
                ended(true);
            }
            case "agent_message" -> {
                touch(at);
                assistantText(p.message);
            }
            case "user_message" -> {
                if (s.bare) {
                    return; // the early format's prompts are its user message items
                }
                long when = s.command != null ? s.command.at : at; // the user message item it repeats, if any
                s.command = null;
                String text = p.message;
                boolean image = p.images > 0 || p.localImages > 0;
                text = text == null ? "" : text;
                String stripped = text.strip();
                if (stripped.isEmpty() && !image || NOT_PROMPTS.stream().anyMatch(stripped::startsWith)) {
                    return;
                }
                personPrompt(text, when, image);
            }
            default -> touch(at);
        }
    }

    private void item(CodexLine.Fields p, long at) {
        String kind = p.type;
        if ("message".equals(kind)) {
            String role = p.role;
            String text = content(p);
            if ("user".equals(role)) {
                String stripped = text.strip();
                boolean image = hasImage(p);
                if (stripped.isEmpty() && !image || NOT_PROMPTS.stream().anyMatch(stripped::startsWith)) {
                    return;
                }
                if (s.bare) {
                    personPrompt(text, at, image);
                } else {
                    // the prompt is the user_message event that follows (Codex Desktop writes only that); a rollout
                    // written before those events has none, and the next line makes this the prompt
                    ImportState.Command c = new ImportState.Command();
                    c.at = at;
                    c.text = text;
                    c.image = image;
                    s.command = c;
                }
                return;
            }
            if (!"assistant".equals(role)) {
                return; // developer and system messages
            }
            assistantText(text);
        } else if ("custom_tool_call".equals(kind) && "apply_patch".equals(p.name)) {
            patch(p.input);
        } else if ("function_call".equals(kind) || "local_shell_call".equals(kind)) {
            patch(patchOf(p));
        }
        touch(at);
        ended(false);
    }

    /** The patch text of an apply_patch function call ({@code apply_patch} by name, or run through the shell). */
    private static String patchOf(CodexLine.Fields call) {
        JsonNode parsed = call.action;
        if (call.arguments != null) {
            try {
                parsed = MAPPER.readTree(call.arguments);
            } catch (java.io.IOException e) {
                return null; // arguments that are not JSON hold no patch we can read
            }
        }
        if (parsed == null) {
            return null;
        }
        if ("apply_patch".equals(call.name)) {
            String input = text(parsed, "input");
            return input != null ? input : text(parsed, "patch");
        }
        JsonNode command = parsed.get("command");
        if (command != null && command.isArray()) {
            for (int i = 0; i + 1 < command.size(); i++) {
                if ("apply_patch".equals(command.get(i).asText())) {
                    return command.get(i + 1).asText();
                }
            }
            String last = command.size() > 0 ? command.get(command.size() - 1).asText() : "";
            int start = last.indexOf("*** Begin Patch");
            if (last.contains("apply_patch") && start >= 0) {
                return last.substring(start);
            }
        }
        return null;
    }

    private void patch(String patch) {
        for (String path : patchPaths(patch)) {
            fileChanged(absolute(path));
        }
    }

    /** The paths an apply_patch text adds, updates, deletes or moves to, in order. */
    static List<String> patchPaths(String patch) {
        List<String> paths = new ArrayList<>();
        if (patch == null) {
            return paths;
        }
        for (String line : patch.split("\\R")) {
            for (String marker : new String[] {"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}) {
                if (line.startsWith(marker)) {
                    String path = line.substring(marker.length()).strip();
                    if (!path.isEmpty() && !paths.contains(path)) {
                        paths.add(path);
                    }
                }
            }
        }
        return paths;
    }

    private String absolute(String path) {
        boolean absolute = path.startsWith("/") || path.startsWith("\\") || hasDrive(path);
        if (absolute || s.cwd == null) {
            return path;
        }
        String rel = path.startsWith("./") ? path.substring(2) : path;
        return s.cwd.endsWith("/") ? s.cwd + rel : s.cwd + "/" + rel;
    }

    private static String content(CodexLine.Fields message) {
        if (message.contentText != null) {
            return message.contentText;
        }
        StringBuilder b = new StringBuilder();
        for (CodexLine.Block block : message.blocks) {
            String kind = block.type();
            if (("input_text".equals(kind) || "output_text".equals(kind) || "text".equals(kind)) && block.text() != null) {
                b.append(b.length() > 0 ? "\n" : "").append(block.text());
            }
        }
        return b.toString();
    }

    private static boolean hasImage(CodexLine.Fields message) {
        for (CodexLine.Block block : message.blocks) {
            String kind = block.type();
            if ("input_image".equals(kind) || "image".equals(kind)) {
                return true;
            }
        }
        return false;
    }
}
