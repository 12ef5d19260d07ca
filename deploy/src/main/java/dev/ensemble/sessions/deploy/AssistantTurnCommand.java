package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ComputerId;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.KafkaEventSink;
import dev.ensemble.sessions.agent.assistant.AssistantStore;
import dev.ensemble.sessions.agent.assistant.AssistantTurns;
import dev.ensemble.sessions.agent.assistant.ChatLocks;
import dev.ensemble.sessions.agent.assistant.TranscriptPrompts;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TurnEnded;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions assistant-turn}: the bookkeeping of one assistant turn (guide §5) for the program that runs
 * the agent (an agent launcher), as JSON lines on standard input and output. One process a turn, so that it holds the
 * chat's lock from the decision until the turn is stored (turns of one chat one at a time; a drop of the chat by the
 * running computer agent waits for it, through the chat's lock file):
 * <ol>
 *   <li>the launcher writes the turn, one line: {@code {turnId, conversationKey, kind, agent, model, messages,
 *       instructionLines, group, keepDays, nextRunAt, workspace, askId}} ({@link AssistantTurns.TurnRequest#fromJson});
 *       the command asks the gateway ({@code POST /api/assistant/turns}) and prints its decision, one line:
 *       {@code {action, sessionId, reason, history, instructionsUpdate, replaced, retiredSessionId, folder, oneOff,
 *       turnId, chatFolder, position}} (a replaced session is deleted by then);</li>
 *   <li>the launcher runs the agent, then writes its report, one line: {@code {answered, agentSessionId, tokens, answer,
 *       error}}; the command stores the chat's entry, appends {@code TurnEnded} to the event log and prints
 *       {@code {eventId, turnId, answered, agentSessionId, messages, promptsNoted}}.</li>
 * </ol>
 * A refused turn (an ask that is not its line's next: 409 {@code waitingFor}) or bad input prints
 * {@code {"error": ..., "status": ..., "answer": ...}} on standard output and ends with code 1; so does a launcher that
 * closes its output without a report (the turn is then reported as not answered). The gateway's address and the
 * event log are the running system's ({@code --data-dir}, as {@code up} wrote them); the token is {@code --token-file}
 * (default: the data folder's {@code computer-token}, which {@code up} issues for this computer with the role
 * {@code computer}, when there is one, else its {@code token}); the computer's store
 * is the data folder's {@code assistant-sessions.json}, the one {@code up}'s computer agent keeps.
 */
@Command(name = "assistant-turn", mixinStandardHelpOptions = true,
        description = "Decide, then record, one assistant turn: the turn as a JSON line on stdin, the decision on stdout; "
                + "then the agent's report as a JSON line on stdin, the TurnEnded on stdout.")
final class AssistantTurnCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @Option(names = "--account", description = "the account (default: the user name)")
    String account;

    @Option(names = "--gateway", description = "the gateway's base URL (default: the running system's)")
    URI gateway;

    @Option(names = "--token-file", description = "the computer's bearer token (default: <data-dir>/computer-token, else <data-dir>/token)")
    Path tokenFile;

    @Option(names = "--home", hidden = true, description = "the home folder whose agent stores are used (tests)")
    Path home;

    @Option(names = "--workspace", description = "the workspace folder, for a turn that names none (default: the home folder)")
    Path workspace;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try {
            return turn(out);
        } catch (Exception | LinkageError e) {
            // the launcher reads standard output only: every failure is one JSON line there, never a bare stack trace
            return fail(out, "the turn could not be run: " + e, 0, null);
        }
    }

    private int turn(PrintWriter out) throws Exception {
        DataDir data = DataDir.of(system.dataDir);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        AssistantTurns.TurnRequest request;
        try {
            request = AssistantTurns.TurnRequest.fromJson(line(in, "the turn"),
                    workspace != null ? workspace : home != null ? home : DataDir.home());
        } catch (IllegalArgumentException bad) {
            return fail(out, bad.getMessage(), 0, null);
        }
        URI url = gateway != null ? gateway : URI.create(data.readEndpoints().path("http").asText());
        Path token = tokenFile != null ? tokenFile
                : Files.exists(data.computerToken()) ? data.computerToken() : data.token();
        String bearer = Files.readString(token).strip();
        String who = account != null ? account : System.getProperty("user.name", "local");
        ImportConfig config = new ImportConfig(who, ComputerId.readOrCreate(data.computerId()), Clock.systemUTC(),
                data.importState("import-state.json"));
        Path state = data.assistantState();
        AgentStores stores = home != null ? AgentStores.underHome(home) : AgentStores.defaults(DataDir.home(), System.getenv());
        DataDir.Cluster kafka = data.runningCluster();
        try (KafkaEventSink sink = new KafkaEventSink(kafka.bootstrapServers(), kafka.clientProperties())) {
            AssistantTurns turns = new AssistantTurns(new AssistantTurns.Gateway(url, bearer),
                    AssistantStore.opening(state, config.clock(), Duration.ofSeconds(60)), new TranscriptPrompts(stores),
                    new AgentStoreDeleter(stores), new ChatLocks(state), new EventFactory(config), sink, config.clock());
            AssistantTurns.Began began;
            try {
                began = turns.begin(request);
            } catch (AssistantTurns.TurnRefused refused) {
                return fail(out, refused.getMessage(), refused.status(), refused.body());
            }
            out.println(began.answer().toString());
            out.flush();
            AssistantTurns.Report report;
            String problem = null;
            try {
                JsonNode r = line(in, "the report");
                report = AssistantTurns.Report.fromJson(r);
            } catch (IllegalArgumentException bad) {
                problem = bad.getMessage();
                report = new AssistantTurns.Report(false, null, null, null, "the launcher's report: " + bad.getMessage());
            }
            Event ended = turns.end(request.turnId(), report.answered(), report.agentSessionId(), report.tokens(), report.answer(),
                    report.error());
            TurnEnded te = (TurnEnded) ended.getPayload();
            ObjectNode o = DataDir.JSON.createObjectNode().put("eventId", ended.getEventId()).put("turnId", te.getTurnId())
                    .put("answered", te.getAnswered()).put("agentSessionId", te.getAgentSessionId()).put("messages", te.getMessages());
            if (te.getPromptsNoted() == null) {
                o.putNull("promptsNoted");
            } else {
                o.put("promptsNoted", te.getPromptsNoted());
            }
            if (problem != null) {
                o.put("error", problem);
            }
            out.println(o.toString());
            out.flush();
            return problem == null ? 0 : 1;
        }
    }

    /** One JSON line of standard input. */
    private static JsonNode line(BufferedReader in, String what) throws IOException {
        String l = in.readLine();
        if (l == null) {
            throw new IllegalArgumentException("standard input ended before " + what);
        }
        try {
            return DataDir.JSON.readTree(l);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(what + " is not JSON: " + e.getOriginalMessage());
        }
    }

    private static int fail(PrintWriter out, String message, int status, JsonNode answer) {
        ObjectNode o = DataDir.JSON.createObjectNode().put("error", message);
        if (status != 0) {
            o.put("status", status);
        }
        if (answer != null) {
            o.set("answer", answer);
        }
        out.println(o.toString());
        out.flush();
        return 1;
    }
}
