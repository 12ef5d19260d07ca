package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.gateway.Gateway;
import dev.ensemble.sessions.gateway.SessionQuery;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
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
 * {@code ensemble-sessions sessions [--q TEXT] [--agent A] [--computer C] [--status S] [--limit N] [--data-dir DIR] [--json]}:
 * the person's agent sessions (guide §1), the most recently active first (with {@code --q}: the best match first), from
 * the running system of the data folder ({@code GET /api/agent/sessions} with the data folder's token), as a table: id
 * (short when unique), agent, model, computer, folder, first and latest prompt or task (shortened), status, fill
 * (percent, or {@code unknown}), resumable, runs, last active (this computer's time zone), and with {@code --q} the
 * passage that matched ({@code [[...]]} around each match). {@code --json} prints {@code {"sessions": [...]}} with each
 * session as the API gives it. {@code --q} is the API's search ({@code q}: stemmed words, all required, in the prompts,
 * reports, folders, files changed, agent; {@code "a phrase"}); {@code --agent}, {@code --computer} and {@code --status}
 * are the API's filters. Pages are followed ({@code next}) until every session is printed, or {@code --limit} of
 * them. Exit code 0 (also for no session); 1 with one line when no system runs on the data folder.
 */
@Command(name = "sessions", mixinStandardHelpOptions = true,
        description = "List your agent sessions (the most recently active first, or the best match first with --q) from the running system, as a table.")
final class SessionsCommand implements Callable<Integer> {
    @Option(names = "--q", paramLabel = "TEXT", description = "search what the sessions said: prompts, task titles, reports, folders, files changed, agent (words stemmed and all required; \"a phrase\"; -word excludes)")
    String q;

    @Option(names = "--agent", paramLabel = "A", description = "only this agent's sessions (claude-code, codex, gemini-cli, copilot, cursor, opencode, qwen-code, grok-build, mistral-vibe, kimi-code)")
    String agent;

    @Option(names = "--computer", paramLabel = "C", description = "only sessions that ran on this computer (its id)")
    String computer;

    @Option(names = "--status", paramLabel = "S", description = "only sessions with this status: working, waiting, queued, idle or gone")
    String status;

    @Option(names = "--limit", paramLabel = "N", description = "at most N sessions (default: every session, page after page)")
    Integer limit;

    @picocli.CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @Option(names = "--json", description = "print {\"sessions\": [...]} (JSON, each session as the API gives it) instead of a table")
    boolean json;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (limit != null && limit < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--limit must be 1 or more, not " + limit);
        }
        if (status != null && !status.isBlank() && !SessionQuery.STATUSES.contains(status.strip().toLowerCase(java.util.Locale.ROOT))) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--status must be one of "
                    + String.join(", ", SessionQuery.STATUSES) + ", not '" + status + "'");
        }
        ApiClient api = ApiClient.of(system.dataDir);
        StringBuilder filters = new StringBuilder();
        if (q != null && !q.isBlank()) filters.append("&q=").append(enc(q));
        if (agent != null && !agent.isBlank()) filters.append("&agent=").append(enc(agent));
        if (computer != null && !computer.isBlank()) filters.append("&computer=").append(enc(computer));
        if (status != null && !status.isBlank()) filters.append("&status=").append(enc(status));
        ArrayNode sessions = list(api, filters.toString(), limit);
        if (sessions.isEmpty() && agent != null && !agent.isBlank()
                && !dev.ensemble.sessions.agent.AgentStoreDeleter.AGENTS.contains(agent.strip().toLowerCase(java.util.Locale.ROOT))
                && list(api, "&agent=" + enc(agent), 1).isEmpty()) {
            // a misspelt name finds nothing, whatever the other filters: say so rather than "No session matches."
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--agent '" + agent + "' is not an agent this system knows ("
                    + String.join(", ", new java.util.TreeSet<>(dev.ensemble.sessions.agent.AgentStoreDeleter.AGENTS))
                    + ") and no session has it");
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            ObjectNode o = DataDir.JSON.createObjectNode();
            o.set("sessions", sessions);
            out.println(DataDir.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o));
        } else if (sessions.isEmpty()) {
            out.println("No session" + (filters.length() > 0 ? " matches." : " yet."));
        } else {
            out.print(table(sessions, ZoneId.systemDefault()));
        }
        out.flush();
        return 0;
    }

    /** The sessions (the API's list entries) as a table for a person, times in {@code zone}. */
    static String table(Iterable<JsonNode> sessions, ZoneId zone) {
        List<JsonNode> all = new ArrayList<>();
        sessions.forEach(all::add);
        Map<String, Integer> shortIds = new HashMap<>();
        for (JsonNode s : all) shortIds.merge(shortId(s.path("id").asText()), 1, Integer::sum);
        boolean matched = all.stream().anyMatch(s -> s.path("snippet").isTextual());
        List<String> columns = new ArrayList<>(List.of("Session", "Agent", "Model", "Computer", "Folder", "First prompt or task",
                "Latest prompt or task", "Status", "Fill>", "Resumable", "Runs>", "Last active"));
        if (matched) columns.add("Matched");
        TextTable t = new TextTable(columns.toArray(String[]::new));
        for (JsonNode s : all) {
            String id = s.path("id").asText();
            String first = text(s.path("firstTask").path("title"));
            String latest = text(s.path("latestTask").path("title"));
            List<Object> row = new ArrayList<>(List.of(shortIds.get(shortId(id)) == 1 ? shortId(id) : id, orEmpty(text(s.path("agent"))),
                    orEmpty(TextTable.shorten(text(s.path("model")), 20)), orEmpty(TextTable.shorten(text(s.path("computer")), 16)),
                    orEmpty(TextTable.shortenPath(text(s.path("folder")), 28)), orEmpty(TextTable.shorten(first, 32)),
                    orEmpty(TextTable.shorten(latest, 32)), status(s), fill(s.path("fill")),
                    s.path("resumable").asBoolean() ? "yes" : "no", s.path("runs").asInt(), when(s.path("lastActiveAt"), zone)));
            if (matched) row.add(orEmpty(matched(text(s.path("snippet")))));
            t.row(row.toArray());
        }
        return t.render();
    }

    /**
     * The sessions {@code GET /api/agent/sessions} lists with {@code filters} ({@code &name=value} each, encoded), page
     * after page (following {@code next}; pages of at most {@link Gateway#MAX_LIMIT}) until {@code limit} of them (null:
     * every one).
     */
    static ArrayNode list(ApiClient api, String filters, Integer limit) throws Exception {
        ArrayNode sessions = DataDir.JSON.createArrayNode();
        String next = null;
        do {
            int ask = limit == null ? Gateway.MAX_LIMIT : Math.min(limit - sessions.size(), Gateway.MAX_LIMIT);
            JsonNode page = api.get("/api/agent/sessions?limit=" + ask + filters + (next == null ? "" : "&cursor=" + enc(next)));
            page.path("sessions").forEach(sessions::add);
            next = page.path("next").isTextual() ? page.path("next").asText() : null;
        } while (next != null && (limit == null || sessions.size() < limit));
        return sessions;
    }

    /** A search's snippet for the table: from a little before its first match, at most 48 characters. */
    static String matched(String snippet) {
        if (snippet == null) return null;
        int mark = snippet.indexOf("[[");
        String from = mark > 12 ? "…" + snippet.substring(mark - 11) : snippet;
        return TextTable.shorten(from, 48);
    }

    private static Object orEmpty(String s) {
        return s == null ? "" : s;
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
