package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.gateway.Gateway;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions sessions [--q TEXT] [--agent A] [--computer C] [--limit N] [--data-dir DIR] [--json]}: the
 * person's agent sessions (guide §1), the most recently active first, from the running system of the data folder
 * ({@code GET /api/agent/sessions} with the data folder's token), as a table: id (short when unique), agent, model,
 * computer, folder, first and latest prompt or task (shortened), status, fill (percent, or {@code unknown}),
 * resumable, runs, last active (this computer's time zone). {@code --json} prints {@code {"sessions": [...]}} with each
 * session as the API gives it. {@code --q} is the API's {@code q} (words that all appear in the session's id, prompts
 * or task titles, folders, project, report, agent or model); {@code --agent} is applied here, the API having no such
 * filter. The API pages no further than {@link Gateway#MAX_LIMIT} sessions and has no cursor yet: at most that many
 * are printed, with a note on stderr when there may be more. Exit code 0 (also for no session); 1 with one line when
 * no system runs on the data folder.
 */
@Command(name = "sessions", mixinStandardHelpOptions = true,
        description = "List your agent sessions (the most recently active first) from the running system, as a table.")
final class SessionsCommand implements Callable<Integer> {
    @Option(names = "--q", paramLabel = "TEXT", description = "only sessions whose prompts, task titles, folders, project, report, agent, model or id hold every word")
    String q;

    @Option(names = "--agent", paramLabel = "A", description = "only this agent's sessions (claude-code, codex, gemini-cli, copilot, cursor, opencode, qwen-code)")
    String agent;

    @Option(names = "--computer", paramLabel = "C", description = "only sessions that ran on this computer (its id)")
    String computer;

    @Option(names = "--limit", paramLabel = "N", description = "at most N sessions (default: all the API gives, at most " + Gateway.MAX_LIMIT + ")")
    Integer limit;

    @Option(names = "--data-dir", description = "the running system's data folder (default ~/.ensemble-sessions)")
    Path dataDir;

    @Option(names = "--json", description = "print {\"sessions\": [...]} (JSON, each session as the API gives it) instead of a table")
    boolean json;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (limit != null && limit < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--limit must be 1 or more, not " + limit);
        }
        ApiClient api = ApiClient.of(dataDir);
        // --agent is filtered here: ask for the API's largest page then, so that the filter sees as many as it can
        int ask = agent == null && limit != null ? Math.min(limit, Gateway.MAX_LIMIT) : Gateway.MAX_LIMIT;
        StringBuilder path = new StringBuilder("/api/agent/sessions?limit=").append(ask);
        if (q != null && !q.isBlank()) path.append("&q=").append(enc(q));
        if (computer != null && !computer.isBlank()) path.append("&deviceId=").append(enc(computer));
        JsonNode page = api.get(path.toString());
        ArrayNode sessions = DataDir.JSON.createArrayNode();
        for (JsonNode s : page.path("sessions")) {
            if (agent != null && !agent.equalsIgnoreCase(s.path("agent").asText())) continue;
            if (limit != null && sessions.size() >= limit) break;
            sessions.add(s);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectNode o = DataDir.JSON.createObjectNode();
            o.set("sessions", sessions);
            out.println(DataDir.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o));
        } else if (sessions.isEmpty()) {
            out.println("No session" + (q != null || agent != null || computer != null ? " matches." : " yet."));
        } else {
            out.print(table(sessions, ZoneId.systemDefault()));
        }
        out.flush();
        if (page.path("sessions").size() >= Gateway.MAX_LIMIT && (limit == null || sessions.size() < limit)) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("note: the API lists at most " + Gateway.MAX_LIMIT + " sessions per request and has no cursor yet:"
                    + " older sessions may be left out; narrow the list with --q, --computer or --agent");
            err.flush();
        }
        return 0;
    }

    /** The sessions (the API's list entries) as a table for a person, times in {@code zone}. */
    static String table(Iterable<JsonNode> sessions, ZoneId zone) {
        List<JsonNode> all = new ArrayList<>();
        sessions.forEach(all::add);
        Map<String, Integer> shortIds = new HashMap<>();
        for (JsonNode s : all) shortIds.merge(shortId(s.path("id").asText()), 1, Integer::sum);
        TextTable t = new TextTable("Session", "Agent", "Model", "Computer", "Folder", "First prompt or task",
                "Latest prompt or task", "Status", "Fill>", "Resumable", "Runs>", "Last active");
        for (JsonNode s : all) {
            String id = s.path("id").asText();
            String first = text(s.path("firstTask").path("title"));
            String latest = text(s.path("latestTask").path("title"));
            t.row(shortIds.get(shortId(id)) == 1 ? shortId(id) : id, text(s.path("agent")),
                    TextTable.shorten(text(s.path("model")), 20), TextTable.shorten(text(s.path("computer")), 16),
                    TextTable.shortenPath(text(s.path("folder")), 28), TextTable.shorten(first, 32),
                    TextTable.shorten(latest, 32), status(s), fill(s.path("fill")),
                    s.path("resumable").asBoolean() ? "yes" : "no", s.path("runs").asInt(), when(s.path("lastActiveAt"), zone));
        }
        return t.render();
    }

    /**
     * An id as the table shows it: ids of the form {@code agent:<agent session id>} longer than 24 characters keep 8
     * characters of the agent's id ({@code claude-code:4c2ddfdc}), which {@code show} accepts when only one session's
     * id starts so; other ids stay whole.
     */
    static String shortId(String id) {
        int colon = id.indexOf(':');
        return id.length() > 24 && colon > 0 && colon + 9 < id.length() ? id.substring(0, colon + 9) : id;
    }

    /** The status, with {@code deleted} or {@code deleting} after it when so. */
    static String status(JsonNode s) {
        String st = s.path("status").asText();
        if (s.path("deleted").asBoolean()) return st + ", deleted";
        if (s.path("deleting").asBoolean()) return st + ", deleting";
        return st;
    }

    /** The fill (0–1) as a percent, {@code 42%}; {@code unknown} when the API gives null. */
    static String fill(JsonNode fill) {
        return fill.isNumber() ? Math.round(fill.asDouble() * 100) + "%" : "unknown";
    }

    /** An instant of the API as {@code 2026-01-16 11:01} in {@code zone}; empty when absent. */
    static String when(JsonNode at, ZoneId zone) {
        if (!at.isTextual()) return "";
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm", Locale.ROOT).withZone(zone).format(Instant.parse(at.asText()));
    }

    static String text(JsonNode n) {
        return n.isTextual() ? n.asText() : null;
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
