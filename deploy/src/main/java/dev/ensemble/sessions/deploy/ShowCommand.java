package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.choice.ImportedSessions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions show ID [--data-dir DIR] [--json]}: one of the person's agent sessions from the running
 * system of the data folder ({@code GET /api/agent/sessions/{id}} with the data folder's token): its fields, its runs
 * oldest first (prompt or task, computer, status, start, duration, tokens), the files its runs changed, and the command
 * that resumes it in its agent ({@link ImportedSessions#resumeCommand}, as {@code choose} prints it). ID is the
 * session's id or, as the {@code sessions} table shows it, the start of one ({@code claude-code:4c2ddfdc}) that only one
 * session's id (or agent session id) starts with. {@code --json} prints the API's session with a {@code resume}
 * object added ({@code agent}, {@code agentSessionId}, {@code folder}, {@code command}; null when the session has no
 * agent session id). Exit code 0; 1 with one line for an id no session of the account has (or starts with, or that
 * several start with), and when no system runs on the data folder.
 */
@Command(name = "show", mixinStandardHelpOptions = true,
        description = "Show one of your agent sessions: its fields, its runs and the command that resumes it.")
final class ShowCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID", description = "the session's id, or the start of it that the 'sessions' table shows")
    String id;

    @picocli.CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @Option(names = "--json", description = "print the session (JSON, as the API gives it, with \"resume\") instead of text")
    boolean json;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        String wanted = id.strip();
        if (wanted.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "ID is empty: give a session's id (see 'ensemble-sessions sessions')");
        }
        ApiClient api = ApiClient.of(system.dataDir);
        ObjectNode s = detail(api, wanted);
        if (s == null) {
            s = detail(api, byPrefix(api, wanted));
        }
        s.set("resume", resume(s));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(DataDir.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(s));
        } else {
            out.print(text(s, ZoneId.systemDefault()));
        }
        out.flush();
        return 0;
    }

    /** The session's detail, or null when the account has no session of that id. */
    private static ObjectNode detail(ApiClient api, String sessionId) throws Exception {
        String path = "/api/agent/sessions/" + SessionsCommand.enc(sessionId).replace("%3A", ":").replace("+", "%20");
        HttpResponse<String> r = api.getResponse(path);
        if (r.statusCode() == 404) return null;
        if (r.statusCode() != 200) {
            throw new IllegalStateException(api.url() + path + " answered " + r.statusCode() + ": " + ApiClient.message(r.body()));
        }
        return (ObjectNode) DataDir.JSON.readTree(r.body());
    }

    /**
     * The one session whose id or agent session id starts with {@code prefix}: looked for among the sessions the API's
     * {@code q=prefix} finds (a single word also finds the sessions whose ids start with it), then (should it find none)
     * among all sessions, page after page.
     */
    private static String byPrefix(ApiClient api, String prefix) throws Exception {
        java.util.Set<String> found = new java.util.LinkedHashSet<>();
        if (!prefix.matches(".*\\s.*")) {
            for (String query : new String[]{"&q=" + SessionsCommand.enc(prefix), ""}) {
                for (JsonNode s : SessionsCommand.list(api, query, null)) {
                    if (s.path("id").asText().startsWith(prefix) || s.path("agentSessionId").asText("\0").startsWith(prefix)) {
                        found.add(s.path("id").asText());
                    }
                }
                if (!found.isEmpty()) break;
            }
        }
        if (found.isEmpty()) {
            throw new IllegalStateException("no session '" + prefix + "' in your account (list them with 'ensemble-sessions sessions')");
        }
        if (found.size() > 1) {
            throw new IllegalStateException("'" + prefix + "' starts the ids of " + found.size() + " sessions ("
                    + String.join(", ", found.stream().limit(5).toList()) + (found.size() > 5 ? ", …" : "")
                    + "): give more of the id");
        }
        return found.iterator().next();
    }

    /** How to resume the session: its agent, agent session id, first folder and command; null without an agent session id. */
    static JsonNode resume(JsonNode s) {
        String agentSessionId = SessionsCommand.text(s.path("agentSessionId"));
        if (agentSessionId == null) return DataDir.JSON.nullNode();
        String folder = SessionsCommand.text(s.path("folder"));
        String agent = SessionsCommand.text(s.path("agent"));
        ObjectNode r = DataDir.JSON.createObjectNode().put("agent", agent).put("agentSessionId", agentSessionId).put("folder", folder);
        r.put("command", ImportedSessions.resumeCommand(agent, agentSessionId, folder));
        return r;
    }

    /**
     * The session as a person reads it (lines end with the platform's line separator): its fields one a line, its runs
     * as a table, the files changed, then {@code Resume it: COMMAND} (or why it cannot be resumed).
     */
    static String text(JsonNode s, ZoneId zone) {
        String nl = System.lineSeparator();
        StringBuilder b = new StringBuilder();
        field(b, "Session", s.path("id").asText());
        field(b, "Agent", SessionsCommand.text(s.path("agent")));
        field(b, "Agent session", SessionsCommand.text(s.path("agentSessionId")));
        field(b, "Model", SessionsCommand.text(s.path("model")));
        List<String> computers = new ArrayList<>();
        s.path("computers").forEach(c -> computers.add(c.asText()));
        field(b, "Computer", computers.size() > 1 ? String.join(", ", computers) : SessionsCommand.text(s.path("computer")));
        List<String> folders = new ArrayList<>();
        s.path("folders").forEach(f -> folders.add(f.asText()));
        field(b, "Folder", folders.isEmpty() ? SessionsCommand.text(s.path("folder")) : String.join(", ", folders));
        field(b, "Project", SessionsCommand.text(s.path("project")));
        field(b, "Kind", SessionsCommand.text(s.path("kind")));
        field(b, "Status", SessionsCommand.status(s));
        field(b, "Resumable", s.path("resumable").asBoolean() ? "yes" : "no");
        String fill = SessionsCommand.fill(s.path("fill"));
        if (s.path("contextUsed").isNumber() && s.path("contextSize").isNumber()) {
            fill += " (" + String.format(java.util.Locale.ROOT, "%,d of %,d tokens", s.path("contextUsed").asLong(),
                    s.path("contextSize").asLong()) + ")";
        }
        field(b, "Fill", fill);
        int omitted = s.path("omitted").path("runs").asInt(0);
        field(b, "Runs", s.path("runs").asInt() + (omitted > 0 ? " (and " + omitted + " older ones left out of the view)" : ""));
        field(b, "Created", SessionsCommand.when(s.path("createdAt"), zone));
        field(b, "Last active", SessionsCommand.when(s.path("lastActiveAt"), zone));
        field(b, "Continues", SessionsCommand.text(s.path("continuesSessionId")));
        field(b, "Latest report", SessionsCommand.text(s.path("latestReportSummary")));
        if (s.path("runList").size() > 0) {
            TextTable runs = new TextTable("#>", "Prompt or task", "Computer", "Status", "Started", "Duration>", "Tokens>");
            int i = 1;
            for (JsonNode r : s.path("runList")) {
                JsonNode started = r.path("startedAt").isTextual() ? r.path("startedAt") : r.path("claimedAt");
                runs.row(i++, TextTable.shorten(SessionsCommand.text(r.path("title")), 60), SessionsCommand.text(r.path("computer")),
                        SessionsCommand.text(r.path("status")), SessionsCommand.when(started, zone), duration(r.path("durationMs")),
                        r.path("tokens").isNumber() ? String.format(java.util.Locale.ROOT, "%,d", r.path("tokens").asLong()) : "");
            }
            b.append(nl).append(runs.render());
        }
        List<String> files = new ArrayList<>();
        s.path("filesChanged").forEach(f -> files.add(f.asText()));
        if (!files.isEmpty()) {
            b.append(nl).append("Files changed (").append(files.size()).append("):").append(nl);
            files.forEach(f -> b.append("  ").append(f).append(nl));
        }
        b.append(nl).append(resumeLine(s)).append(nl);
        return b.toString();
    }

    private static String resumeLine(JsonNode s) {
        JsonNode r = s.path("resume").isMissingNode() ? resume(s) : s.path("resume");
        String why = s.path("deleted").asBoolean() ? "it was deleted"
                : "gone".equals(s.path("status").asText()) ? "its agent's transcript is gone from the computer"
                : !s.path("resumable").asBoolean() ? "it is not resumable" : null;
        if (!r.isObject()) {
            return "Not resumable in its agent: its agent session id is not known" + (why == null ? "" : " (" + why + ")");
        }
        String how = r.hasNonNull("command") ? r.path("command").asText()
                : "resume " + r.path("agent").asText() + " session " + r.path("agentSessionId").asText()
                + (r.hasNonNull("folder") ? " in " + r.path("folder").asText() : "");
        return why == null ? "Resume it: " + how : "Not resumable (" + why + "); its command would be: " + how;
    }

    private static void field(StringBuilder b, String name, String value) {
        if (value == null || value.isBlank()) return;
        b.append(String.format("%-14s", name)).append(value).append(System.lineSeparator());
    }

    /** A duration in ms as {@code 42s}, {@code 3m 05s} or {@code 2h 07m}; empty when absent. */
    static String duration(JsonNode ms) {
        if (!ms.isNumber()) return "";
        Duration d = Duration.ofMillis(ms.asLong());
        if (d.toHours() > 0) return String.format(java.util.Locale.ROOT, "%dh %02dm", d.toHours(), d.toMinutesPart());
        if (d.toMinutes() > 0) return String.format(java.util.Locale.ROOT, "%dm %02ds", d.toMinutes(), d.toSecondsPart());
        return d.toSeconds() + "s";
    }
}
