package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.Set;

/**
 * Qwen Code chats ({@code $QWEN_HOME/projects/<project>/chats/<sessionId>.jsonl}, {@code QWEN_HOME} else
 * {@code ~/.qwen}): one record a line, {@code {uuid, parentUuid, sessionId, timestamp, type, subtype, cwd,
 * version, gitBranch, message{role, parts}, model, usageMetadata}}, types user, assistant, tool_result, system.
 *
 * <ul>
 *   <li>The session is the lines' {@code sessionId}; its folders every {@code cwd} the lines carry, the first
 *       first.</li>
 *   <li>A prompt is a {@code user} record without a subtype, or a {@code mid_turn_user_message} (typed while the
 *       agent worked); its text the parts' text without Qwen's own {@code <qwen:...>} hook parts (or
 *       {@code systemPayload.displayText}). Notifications ({@code subtype: notification}) and tool results are
 *       not prompts.</li>
 *   <li>A reply with usage is an {@code assistant} record with {@code usageMetadata}: fill
 *       {@code promptTokenCount} over the model's window where known ({@link ModelWindows}), else unknown; one
 *       reply written as several records shares its uuid and counts once.</li>
 *   <li>{@code write_file}, {@code replace} and {@code edit} function calls give the files changed.</li>
 *   <li>Records chain by {@code parentUuid}; the active branch is the one ending at the last record. A record
 *       whose parent is not the record before it (a rewind, an earlier message edited) leaves the other branch: its
 *       answers are no report, and a run whose prompt is on it is done there ({@link #branch}).</li>
 * </ul>
 */
final class QwenParser extends SessionParser {
    static final String AGENT = "qwen-code";
    static final Set<String> EDIT_TOOLS = Set.of("write_file", "replace", "edit");
    static final Set<String> PROMPT_SUBTYPES = Set.of("mid_turn_user_message");

    QwenParser(SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt) {
        super(AGENT, state, events, fallbackSessionId, fallbackAt);
    }

    @Override
    Long windowForClaim(String model) {
        return ModelWindows.of(model);
    }

    @Override
    void line(JsonNode line, long lineNo) {
        String type = text(line, "type");
        if (type == null || text(line, "uuid") == null || !line.has("sessionId")) {
            return;
        }
        s.recognized = true;
        if (s.sessionId == null) {
            s.sessionId = text(line, "sessionId");
        }
        cwd(text(line, "cwd"));
        long at = time(line);
        String uuid = text(line, "uuid");
        String subtype = text(line, "subtype");
        branch(uuid, text(line, "parentUuid"));
        switch (type) {
            case "user" -> {
                String text = promptText(line);
                if ((subtype == null || PROMPT_SUBTYPES.contains(subtype)) && text != null && !text.isBlank()) {
                    prompt(uuid, at, text, false, text(line, "cwd"));
                } else {
                    touch(at);
                }
            }
            case "assistant" -> {
                String model = text(line, "model");
                model(model);
                touch(at);
                StringBuilder b = new StringBuilder();
                for (JsonNode part : line.path("message").path("parts")) {
                    if (part.path("thought").asBoolean(false)) {
                        continue;
                    }
                    String t = text(part, "text");
                    if (t != null) {
                        b.append(b.length() > 0 ? "\n" : "").append(t);
                    }
                    JsonNode call = part.get("functionCall");
                    if (call != null && EDIT_TOOLS.contains(text(call, "name"))) {
                        String path = text(call.path("args"), "file_path");
                        fileChanged(path != null ? path : text(call.path("args"), "path"));
                    }
                }
                assistantText(b.toString());
                JsonNode usage = line.get("usageMetadata");
                if (usage != null && usage.isObject()) {
                    long input = count(usage, "promptTokenCount");
                    reply(uuid, at, input, count(usage, "candidatesTokenCount"), input,
                            ModelWindows.of(s.model), s.model);
                }
            }
            case "tool_result" -> touch(at);
            default -> {
                // system records: telemetry, titles, rewinds, snapshots
            }
        }
    }

    /**
     * Follows the active branch: a record whose parent is not the record before it (the person rewound, or edited an
     * earlier message) leaves the branch after its parent. When the parent is in the open turn, the answers after
     * it are taken back (the turn's report forgets them); when it is before the turn's prompt, the turn's prompt
     * itself was left: its run is done there, without the answer given on the left branch as its report. Only an
     * open turn is followed: its chain ends at the record before this one (every record of it is added).
     */
    private void branch(String uuid, String parent) {
        ImportState.Turn t = s.turn;
        if (t == null || t.closed || t.chain == null) {
            return;
        }
        String last = t.chain.get(t.chain.size() - 1);
        if (uuid.equals(last)) {
            return; // one reply written as several records
        }
        if (parent != null && !parent.equals(last)) {
            int at = t.chain.indexOf(parent);
            t.lastText = null;
            if (at < 0) {
                closeTurn();
                return;
            }
            t.chain.subList(at + 1, t.chain.size()).clear();
        }
        t.chain.add(uuid);
    }

    @Override
    void prompt(String key, long at, String text, boolean image, String folder) {
        super.prompt(key, at, text, image, folder);
        s.turn.chain = new java.util.ArrayList<>(java.util.List.of(key));
    }

    /** A closed turn's chain is not followed again: it is not kept in the import state. */
    @Override
    void closeTurn() {
        super.closeTurn();
        if (s.turn != null && s.turn.closed) {
            s.turn.chain = null;
        }
    }

    private static String promptText(JsonNode line) {
        StringBuilder b = new StringBuilder();
        for (JsonNode part : line.path("message").path("parts")) {
            String t = text(part, "text");
            if (t != null && !t.strip().startsWith("<qwen:")) {
                b.append(b.length() > 0 ? "\n" : "").append(t);
            }
        }
        if (b.length() > 0) {
            return b.toString();
        }
        return text(line.path("systemPayload"), "displayText");
    }
}
