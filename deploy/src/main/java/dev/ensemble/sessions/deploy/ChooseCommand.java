package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions choose "TASK TITLE" [--folder DIR] [--agent A] [--data-dir DIR] [--json]}: asks the running
 * system (the one {@code up} started with the same data folder) whether a task should continue one of the person's
 * agent sessions on this computer or start a new one (guide §4, with the person's own imported sessions as candidates:
 * {@code importedSessions.candidates}, docs/choice-evaluation.md "A person's own sessions"). It posts a
 * {@code RunClaimed} of a task run in this computer's own space ({@code local:<computer-id>}, the data folder's
 * {@code computer-id}) to {@code POST /api/session-choice} with the data folder's token, once per agent: the one
 * {@code --agent} names, else every agent with sessions on this computer ({@code GET /api/agent/sessions}); each
 * decision is recorded as any. It prints the best answer: a continue with the highest score, else the new session with
 * the best candidate (and, when several agents were asked, each agent's reason: {@link #best}), as the decision, band,
 * score, reason and the command that resumes the chosen session in its folder, or that a new session should start; {@code --json} prints that answer's decision record as the API gave it.
 * Exit code 0 for either decision; 1 with one line when no system runs on the data folder.
 */
@Command(name = "choose", mixinStandardHelpOptions = true,
        description = "Ask the running system whether a task should continue one of your agent sessions here (and how to resume it) or start a new one.")
final class ChooseCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "TASK TITLE", description = "the task, as you would prompt it (several words are joined)")
    List<String> title;

    @Option(names = "--folder", paramLabel = "DIR", description = "only sessions that worked in this folder (or one under it), as the sessions recorded it: it need not exist here (e.g. a copied agent store's)")
    Path folder;

    @Option(names = "--agent", paramLabel = "A", description = "only this agent's sessions (claude-code, codex, gemini-cli, copilot, cursor, opencode, qwen-code, grok-build, mistral-vibe, kimi-code); default: every agent with sessions here")
    String agent;

    @picocli.CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @Option(names = "--json", description = "print the decision record (JSON) instead of text")
    boolean json;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** How long a choice service that is still loading its views (503) is asked again. */
    static final Duration STARTING_WAIT = ApiClient.STARTING_WAIT;

    @Override
    public Integer call() throws Exception {
        String task = String.join(" ", title).strip();
        if (task.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "TASK TITLE is empty: say what the task is");
        }
        if (task.length() > dev.ensemble.sessions.schema.Limits.MAX_TEXT_CHARS) { // a task's title, as the event log takes it
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "TASK TITLE is " + task.length()
                    + " characters; a task's title is at most " + dev.ensemble.sessions.schema.Limits.MAX_TEXT_CHARS + ": say it shorter");
        }
        if (folder != null && folder.toString().isBlank()) { // '' would mean no folder at all, silently
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--folder is empty: name a folder, or leave the option out");
        }
        ApiClient api = ApiClient.of(system.dataDir);
        String computer = api.readLine(api.data().computerId(), "computer id (written by 'up' at its start)");
        String account = api.get("/api/me").path("account").asText();
        if (agent != null && !dev.ensemble.sessions.agent.AgentStoreDeleter.AGENTS.contains(agent)) {
            List<String> here = agentsOn(api, computer);
            if (!here.contains(agent)) { // a misspelt name would be asked about, found nothing, and answered NEW
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--agent '" + agent
                        + "' is not an agent this system knows (" + String.join(", ",
                        new java.util.TreeSet<>(dev.ensemble.sessions.agent.AgentStoreDeleter.AGENTS))
                        + ") and none of your sessions on this computer is of it"
                        + (here.isEmpty() ? "" : "; agents with sessions here: " + String.join(", ", here)));
            }
        }
        List<String> agents = agent != null ? List.of(agent) : agentsOn(api, computer);
        PrintWriter out = spec.commandLine().getOut();
        if (agents.isEmpty()) {
            ObjectNode none = DataDir.JSON.createObjectNode().put("decision", "NEW").put("band", "NONE")
                    .put("reason", "No agent session of yours is on this computer (" + computer + ") yet.");
            none.putNull("resume");
            print(out, none);
            return 0;
        }
        String dir = folder == null ? null : folder.toAbsolutePath().normalize().toString();
        List<JsonNode> answers = new ArrayList<>();
        for (String a : agents) {
            answers.add(decide(api, account, computer, a, task, dir));
        }
        print(out, best(answers));
        return 0;
    }

    /**
     * The best of the answers ({@link #better}); a new session when several agents were asked carries each agent's own
     * answer in {@code byAgent} (agent, band, score, reason, in the order asked), since each reason speaks of that agent's
     * sessions only.
     */
    static JsonNode best(List<JsonNode> answers) {
        JsonNode best = null;
        for (JsonNode answer : answers) {
            if (best == null || better(answer, best)) {
                best = answer;
            }
        }
        if (answers.size() < 2 || "CONTINUE".equals(best.path("decision").asText())) {
            return best;
        }
        ObjectNode all = best.deepCopy();
        com.fasterxml.jackson.databind.node.ArrayNode each = all.putArray("byAgent");
        for (JsonNode answer : answers) {
            ObjectNode one = each.addObject();
            one.set("agent", answer.path("agent"));
            one.set("band", answer.path("band"));
            one.set("score", answer.path("score").isMissingNode() ? com.fasterxml.jackson.databind.node.NullNode.getInstance() : answer.path("score"));
            one.set("reason", answer.path("reason"));
        }
        return all;
    }

    private void print(PrintWriter out, JsonNode answer) throws IOException {
        if (json) {
            out.println(DataDir.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(answer));
        } else {
            out.print(text(answer));
        }
        out.flush();
    }

    /**
     * The answer as a person reads it: {@code CONTINUE  band CONFIDENT, score 9.1}, the reason, then the resume command
     * (or, for a session whose command is not known, its agent and agent session id); or {@code NEW  band …}, the reason
     * and that a new session should start. Lines end with the platform's line separator.
     */
    static String text(JsonNode a) {
        String nl = System.lineSeparator();
        StringBuilder b = new StringBuilder();
        String decision = a.path("decision").asText();
        b.append(decision).append("  band ").append(a.path("band").asText());
        if (a.hasNonNull("score")) {
            b.append(", score ").append(String.format(java.util.Locale.ROOT, "%.2f", a.path("score").asDouble()));
        }
        if ("CONTINUE".equals(decision) && a.hasNonNull("agent")) {
            b.append(", agent ").append(a.path("agent").asText());
        }
        b.append(nl);
        if (a.path("byAgent").isArray()) { // a new session after asking for several agents: each one's reason
            for (JsonNode one : a.path("byAgent")) {
                b.append(one.path("agent").asText()).append(" (band ").append(one.path("band").asText());
                if (one.hasNonNull("score")) {
                    b.append(", score ").append(String.format(java.util.Locale.ROOT, "%.2f", one.path("score").asDouble()));
                }
                b.append("): ").append(one.path("reason").asText()).append(nl);
            }
        } else {
            b.append(a.path("reason").asText()).append(nl);
        }
        JsonNode resume = a.path("resume");
        if ("CONTINUE".equals(decision) && resume.isObject()) {
            if (resume.hasNonNull("command")) {
                b.append("Resume it: ").append(resume.path("command").asText()).append(nl);
            } else {
                b.append("Resume ").append(resume.path("agent").asText()).append(" session ")
                        .append(resume.path("agentSessionId").asText())
                        .append(resume.hasNonNull("folder") ? " in " + resume.path("folder").asText() : "").append(nl);
            }
        } else if ("CONTINUE".equals(decision)) {
            b.append("Continue session ").append(a.path("sessionId").asText()).append(nl);
        } else {
            b.append("Start a new session.").append(nl);
        }
        return b.toString();
    }

    /** A continue beats a new session; then the higher band; then the higher score. */
    static boolean better(JsonNode a, JsonNode than) {
        int byDecision = Boolean.compare("CONTINUE".equals(a.path("decision").asText()), "CONTINUE".equals(than.path("decision").asText()));
        if (byDecision != 0) return byDecision > 0;
        int byBand = Integer.compare(band(than), band(a)); // CONFIDENT is the first
        if (byBand != 0) return byBand > 0;
        return a.path("score").asDouble(Double.NEGATIVE_INFINITY) > than.path("score").asDouble(Double.NEGATIVE_INFINITY);
    }

    private static int band(JsonNode a) {
        return switch (a.path("band").asText()) {
            case "CONFIDENT" -> 0;
            case "UNSURE" -> 1;
            case "BELOW" -> 2;
            default -> 3;
        };
    }

    /** The agents of the account's sessions on {@code computer}, the most recently active first. */
    private static List<String> agentsOn(ApiClient api, String computer) throws Exception {
        // every page: an agent whose sessions are all older than the first page's must be found too
        JsonNode list = SessionsCommand.list(api, "&computer=" + URLEncoder.encode(computer, StandardCharsets.UTF_8), null);
        Set<String> agents = new LinkedHashSet<>();
        for (JsonNode s : list) {
            if (s.path("agent").isTextual()) agents.add(s.path("agent").asText());
        }
        return new ArrayList<>(agents);
    }

    /** One decision for {@code agent}, with {@code agent} added to the answer. */
    private static JsonNode decide(ApiClient api, String account, String computer, String agentName, String task,
                                   String dir) throws Exception {
        String id = UUID.randomUUID().toString();
        ObjectNode claim = DataDir.JSON.createObjectNode();
        claim.put("eventId", id).put("type", "RunClaimed").put("account", account).put("space", "local:" + computer)
                .put("occurredAt", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString()).put("source", "computer:" + computer);
        ObjectNode p = claim.putObject("payload");
        p.put("runId", "choose:" + id).put("computerId", computer).put("agent", agentName).put("kind", "TASK_RUN");
        if (dir != null) {
            p.put("folder", dir).put("folderKind", "LOCAL");
        }
        ObjectNode facts = p.putObject("task");
        facts.put("title", task);
        facts.putArray("labels");
        facts.putArray("linkedTaskIds");
        long until = System.nanoTime() + STARTING_WAIT.toNanos();
        while (true) {
            HttpResponse<String> r = api.send(api.request("/api/session-choice").header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString(claim.toString())).build());
            if (r.statusCode() == 200) {
                ObjectNode answer = (ObjectNode) DataDir.JSON.readTree(r.body());
                answer.put("agent", agentName);
                return answer;
            }
            if (r.statusCode() != 503 || System.nanoTime() > until) {
                throw new IllegalStateException("the session choice at " + api.url() + " answered " + r.statusCode() + ": "
                        + ApiClient.message(r.body()));
            }
            Thread.sleep(1000); // still loading its views: asked again, the same event id
        }
    }
}
