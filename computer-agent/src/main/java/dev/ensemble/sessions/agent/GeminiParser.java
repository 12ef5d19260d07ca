package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 *       from {@code projects.json}, {@code .project_root} or the sha256 {@code projectHash}), else the folder
 *       its tools worked in ({@link #folderFromTools}), else unknown.</li>
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

    /** The tool arguments that name a file or folder the tool worked on. */
    static final List<String> PATH_ARGS = List.of("file_path", "absolute_path", "path", "dir_path");

    /**
     * The project folder of a chat whose {@code projectHash} no known path has, from what its tools touched, or null:
     * where a tool given a relative path reports the absolute one in its result ({@code write_file}'s
     * "Successfully created and wrote to new file: /abs/hello.md"), the folder that absolute path is relative to;
     * else the longest folder all the absolute paths the tools were given share (not the root alone).
     *
     * @param messages the chat's messages (the lines or records, in order; others are ignored)
     */
    static String folderFromTools(Iterable<JsonNode> messages) {
        Map<String, Integer> resolved = new LinkedHashMap<>();
        List<String> absolutes = new ArrayList<>();
        for (JsonNode m : messages) {
            for (JsonNode call : m.path("toolCalls")) {
                for (String arg : PATH_ARGS) {
                    String p = text(call.path("args"), arg);
                    if (p == null || p.isBlank()) {
                        continue;
                    }
                    if (p.startsWith("/")) {
                        absolutes.add(p);
                    } else if (!p.startsWith("~") && !hasDrive(p)) {
                        String root = rootOf(p, call.path("result").toString());
                        if (root != null) {
                            resolved.merge(root, 1, Integer::sum);
                        }
                    }
                }
            }
        }
        if (!resolved.isEmpty()) {
            return resolved.entrySet().stream().max(Map.Entry.comparingByValue()).get().getKey();
        }
        String common = null;
        for (String p : absolutes) {
            String dir = p.endsWith("/") ? p.substring(0, p.length() - 1) : p.substring(0, Math.max(0, p.lastIndexOf('/')));
            common = common == null ? dir : commonDir(common, dir);
        }
        return common == null || common.isEmpty() ? null : common;
    }

    /** The folder {@code rel} is relative to, from an absolute path ending in {@code /rel} in a tool's result, or null. */
    private static String rootOf(String rel, String result) {
        String tail = "/" + (rel.startsWith("./") ? rel.substring(2) : rel);
        for (int at = result.indexOf(tail); at > 0; at = result.indexOf(tail, at + 1)) {
            int end = at + tail.length();
            if (end < result.length() && Character.isLetterOrDigit(result.charAt(end))) {
                continue; // "/hello.mdx", not "/hello.md"
            }
            int start = at;
            while (start > 0 && !Character.isWhitespace(result.charAt(start - 1)) && result.charAt(start - 1) != '"') {
                start--;
            }
            String root = result.substring(start, at);
            if (root.startsWith("/") && root.length() > 1) {
                return root;
            }
        }
        return null;
    }

    private static String commonDir(String a, String b) {
        String[] x = a.split("/", -1);
        String[] y = b.split("/", -1);
        StringBuilder out = new StringBuilder();
        for (int i = 1; i < Math.min(x.length, y.length) && x[i].equals(y[i]); i++) {
            out.append('/').append(x[i]);
        }
        return out.toString();
    }

    private String absolute(String path) {
        if (path == null || path.startsWith("/") || hasDrive(path) || s.cwd == null) {
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
