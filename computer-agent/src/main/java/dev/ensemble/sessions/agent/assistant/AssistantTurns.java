package dev.ensemble.sessions.agent.assistant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.EventSink;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.TurnEnded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The computer's side of an assistant turn (guide §5 "Assistant chats on an AI plan"): which session the turn runs
 * in is decided by the gateway ({@code POST /api/assistant/turns}, the pure {@link TurnRules#decide}); this class
 * gives it what only the computer knows (its store entry for the chat, the prompts the agent's transcript holds now)
 * and keeps the store after the turn.
 * <ol>
 *   <li>{@link #begin}: takes the chat's lock ({@link ChatLocks}; turns of one chat run one at a time, and a drop of
 *       the chat waits for it), reads the chat's entry ({@link AssistantSessions}) and the prompt count of its
 *       session's transcript ({@link TranscriptPrompts}), posts the turn, deletes a session the decision replaced at
 *       once ({@link AssistantDrops#deleteReplaced}), makes the chat's own folder and returns the decision. The lock
 *       stays held until {@link #end}; a failure in {@code begin} releases it.</li>
 *   <li>{@link #end}: the entry after the turn ({@link TurnRules#afterTurn}, with the prompt count read now as
 *       {@code promptsNoted}) stored, a touched session kept in the entry's retired ones; a one-off's session and
 *       folder deleted ({@link AssistantDrops#dropOneOff}); a {@code TurnEnded} appended through the sink (eventId
 *       name-based on {@code turn-ended/<computer>/<turnId>}, so a repeated report is one event); the lock released.</li>
 * </ol>
 * {@code begin} and {@code end} of one turn are called on the same thread (the chat's lock is the thread's).
 *
 * <p>The request ({@code application/json}, bearer token of the computer): {@code turnId, conversationKey, kind}
 * ({@code chat|routine|node-conversation|ask|one-off}){@code , agent, model, computerId, position, messages} ({@code
 * [{id, role: user|assistant|error, text, sessionId}]}, the chat's messages before this one){@code , instructionLines,
 * group {id, name}, keepDays, nextRunAt} (ISO-8601){@code , promptsNow, entry} ({@code {sessionId, agent, model,
 * computerId, positionLeft, messagesSent, instructionLines, folder, promptsNoted, gone}} or null){@code , places
 * {workspace, stateDir}}, and {@code askId} for an ask. The answer: {@code action} ({@code RESUME|NEW|NONE}), {@code
 * sessionId, reason, history[], instructionsUpdate {lead, added, removed}, replaced {sessionId, agent, folder,
 * deleteFolder}, retiredSessionId, folder, oneOff}, optionally {@code chatFolder, keepDays, group}. The gateway writes
 * actions, reasons and one-off modes as their constant names ({@code NEW}, {@code FIRST_TURN}) and a history
 * message's role in lower case ({@code user}), as its requests take them; one reader takes both spellings.
 */
public final class AssistantTurns {
    private static final Logger log = LoggerFactory.getLogger(AssistantTurns.class);
    static final ObjectMapper MAPPER = new ObjectMapper();
    /** The turn decisions' endpoint, under the gateway's base URL. */
    public static final String PATH = "/api/assistant/turns";

    /** Where the gateway is and who this computer is to it. */
    public record Gateway(URI baseUrl, String bearerToken, Duration timeout) {
        public Gateway {
            Objects.requireNonNull(baseUrl, "baseUrl");
            Objects.requireNonNull(bearerToken, "bearerToken");
            Objects.requireNonNull(timeout, "timeout");
        }

        /** The gateway at {@code baseUrl} with the computer's {@code bearerToken}, 30 s per request. */
        public Gateway(URI baseUrl, String bearerToken) {
            this(baseUrl, bearerToken, Duration.ofSeconds(30));
        }
    }

    /**
     * A turn about to run.
     *
     * @param turnId           the computer's id of the turn (an ask's: the ask's id)
     * @param conversationKey  the chat's conversation id (session.key)
     * @param kind             chat, routine, node conversation, ask or one-off
     * @param agent            the agent's standard name ({@code claude-code}, {@code copilot}, ...)
     * @param model            the model, or null
     * @param messages         the chat's messages before this one, oldest first (the position is counted from them)
     * @param instructionLines the turn's instructions, one entry a line
     * @param group            session.group, or null
     * @param keepDays         the chat's keepDays, or null for the default
     * @param nextRunAt        a routine's next run, or null
     * @param workspace        the person's workspace folder (a group's project folder is {@code <workspace>/projects/<name>})
     * @param askId            an ask's id, else null
     */
    public record TurnRequest(String turnId, String conversationKey, TurnRules.Kind kind, String agent, String model,
                              List<TurnRules.Message> messages, List<String> instructionLines, TurnRules.Group group,
                              Integer keepDays, Instant nextRunAt, Path workspace, String askId) {
        public TurnRequest {
            Objects.requireNonNull(turnId, "turnId");
            Objects.requireNonNull(conversationKey, "conversationKey");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(agent, "agent");
            Objects.requireNonNull(workspace, "workspace");
            messages = List.copyOf(messages);
            instructionLines = List.copyOf(instructionLines);
            if (keepDays != null && keepDays < 0) {
                throw new IllegalArgumentException("keepDays must not be negative: " + keepDays);
            }
            if (kind == TurnRules.Kind.ASK && askId == null) {
                throw new IllegalArgumentException("an ask's turn needs its askId");
            }
        }

        /**
         * The request an agent launcher gives ({@code assistant-turn}'s first line): {@code turnId, conversationKey, kind}
         * ({@code chat|routine|node-conversation|ask|one-off}){@code , agent, model, messages [{id, role, text, sessionId}],
         * instructionLines, group {id, name}, keepDays, nextRunAt, workspace, askId}; the ones after {@code agent} may be
         * left out ({@code workspace}: {@code defaultWorkspace}).
         *
         * @throws IllegalArgumentException naming the field that is missing or not of its type
         */
        public static TurnRequest fromJson(JsonNode n, Path defaultWorkspace) {
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("the turn must be a JSON object");
            }
            List<TurnRules.Message> messages = new ArrayList<>();
            JsonNode ms = n.path("messages");
            if (!ms.isMissingNode() && !ms.isNull() && !ms.isArray()) {
                throw new IllegalArgumentException("messages must be an array");
            }
            for (int i = 0; i < ms.size(); i++) {
                JsonNode m = ms.get(i);
                String role = required(m, "role", "messages[" + i + "].role");
                TurnRules.Role r;
                try {
                    r = TurnRules.Role.valueOf(role.toUpperCase(Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("messages[" + i + "].role must be user, assistant or error: " + role);
                }
                messages.add(new TurnRules.Message(optional(m, "id", "messages[" + i + "].id"), r,
                        optional(m, "text", "messages[" + i + "].text"), optional(m, "sessionId", "messages[" + i + "].sessionId")));
            }
            List<String> lines = new ArrayList<>();
            JsonNode ls = n.path("instructionLines");
            if (!ls.isMissingNode() && !ls.isNull() && !ls.isArray()) {
                throw new IllegalArgumentException("instructionLines must be an array of strings");
            }
            for (JsonNode l : ls) {
                if (!l.isTextual()) {
                    throw new IllegalArgumentException("instructionLines must be an array of strings");
                }
                lines.add(l.asText());
            }
            TurnRules.Group group = null;
            JsonNode g = n.get("group");
            if (g != null && !g.isNull()) {
                if (!g.isObject()) {
                    throw new IllegalArgumentException("group must be an object {id, name}");
                }
                group = new TurnRules.Group(optional(g, "id", "group.id"), required(g, "name", "group.name"));
            }
            Integer keepDays = null;
            JsonNode k = n.get("keepDays");
            if (k != null && !k.isNull()) {
                if (!k.isIntegralNumber() || !k.canConvertToInt() || k.intValue() < 0) {
                    throw new IllegalArgumentException("keepDays must be a whole number of days, 0 or more");
                }
                keepDays = k.intValue();
            }
            Instant nextRunAt = null;
            String next = optional(n, "nextRunAt", "nextRunAt");
            if (next != null) {
                try {
                    nextRunAt = Instant.parse(next);
                } catch (java.time.format.DateTimeParseException e) {
                    throw new IllegalArgumentException("nextRunAt must be an ISO-8601 instant: " + next);
                }
            }
            String kind = required(n, "kind", "kind");
            TurnRules.Kind kd;
            try {
                kd = TurnRules.Kind.valueOf(kind.toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("kind must be chat, routine, node-conversation, ask or one-off: " + kind);
            }
            String workspace = optional(n, "workspace", "workspace");
            String askId = optional(n, "askId", "askId");
            if (kd == TurnRules.Kind.ASK && askId == null) {
                throw new IllegalArgumentException("askId is required for an ask");
            }
            return new TurnRequest(required(n, "turnId", "turnId"), required(n, "conversationKey", "conversationKey"), kd,
                    required(n, "agent", "agent"), optional(n, "model", "model"), messages, lines, group, keepDays, nextRunAt,
                    workspace == null ? defaultWorkspace : Path.of(workspace), askId);
        }

        /** session.position: the messages before this one that a session took part in ({@link TurnRules#position}); 0 for an ask. */
        public int position() {
            return kind == TurnRules.Kind.ASK ? 0 : TurnRules.position(messages);
        }
    }

    /**
     * What the agent launcher reports after the turn ({@code assistant-turn}'s second line).
     *
     * @param answered       whether the agent answered
     * @param agentSessionId the agent's session id, or null
     * @param tokens         tokens used, or null
     * @param answer         an ask's answer, or null
     * @param error          why it failed, or null
     */
    public record Report(boolean answered, String agentSessionId, Long tokens, String answer, String error) {
        /**
         * {@code {answered, agentSessionId, tokens, answer, error}}; only {@code answered} is required.
         *
         * @throws IllegalArgumentException naming the field that is missing or not of its type
         */
        public static Report fromJson(JsonNode n) {
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("the report must be a JSON object");
            }
            JsonNode a = n.get("answered");
            if (a == null || !a.isBoolean()) {
                throw new IllegalArgumentException("answered is required: true or false");
            }
            Long tokens = null;
            JsonNode t = n.get("tokens");
            if (t != null && !t.isNull()) {
                if (!t.isIntegralNumber() || !t.canConvertToLong() || t.longValue() < 0) {
                    throw new IllegalArgumentException("tokens must be a whole number, 0 or more");
                }
                tokens = t.longValue();
            }
            return new Report(a.booleanValue(), optional(n, "agentSessionId", "agentSessionId"), tokens,
                    optional(n, "answer", "answer"), optional(n, "error", "error"));
        }
    }

    private static String required(JsonNode n, String field, String name) {
        String v = optional(n, field, name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(name + " is required (a string)");
        }
        return v;
    }

    private static String optional(JsonNode n, String field, String name) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException(name + " must be a string");
        }
        return v.asText();
    }

    /**
     * A begun turn.
     *
     * @param decision     the gateway's decision
     * @param answer       the gateway's answer as it came, with {@code turnId} and {@code chatFolder} added
     * @param replacedDrop what deleting the replaced session did, or null when none was replaced
     * @param chatFolder   the chat's own folder (made), for the turn's files, instructions and MCP config
     */
    public record Began(String turnId, TurnRules.Decision decision, ObjectNode answer, AssistantDrops.Dropped replacedDrop,
                        Path chatFolder) {
    }

    /** The gateway refused the turn or could not be asked: its HTTP status (0 when not reached) and its JSON answer. */
    public static final class TurnRefused extends RuntimeException {
        private final int status;
        private final transient JsonNode body;

        public TurnRefused(int status, JsonNode body, String message, Throwable cause) {
            super(message, cause);
            this.status = status;
            this.body = body;
        }

        /** The HTTP status; 0 when the gateway was not reached. */
        public int status() {
            return status;
        }

        /** The gateway's JSON answer (for an ask that is not its line's next: {@code {error, waitingFor}}), or null. */
        public JsonNode body() {
            return body;
        }
    }

    /** What {@link #begin} reads from the store before asking the gateway. */
    private record Read(AssistantSessions.Entry entry, TurnRules.Places places) {
    }

    /** What {@link #begin} does with the store after the gateway answered. */
    private record Decided(TurnRules.Decision decision, AssistantDrops.Dropped replacedDrop, Path chatFolder) {
    }

    private record Pending(TurnRequest request, TurnRules.Turn turn, TurnRules.Decision decision,
                           AssistantSessions.Entry before, ChatLocks.Held held, Instant began) {
    }

    private final Gateway gateway;
    private final HttpClient http;
    private final AssistantStore store;
    private final TranscriptPrompts prompts;
    private final AgentStoreDeleter deleter;
    private final ChatLocks locks;
    private final EventFactory events;
    private final EventSink sink;
    private final String computerId;
    private final Clock clock;
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();

    /**
     * @param gateway    the gateway and the computer's token
     * @param store      this computer's assistant sessions
     * @param prompts    the agents' transcripts (touched outside)
     * @param deleter    the agents' own stores (replaced and one-off sessions)
     * @param locks      the chats' locks, shared with the drops
     * @param events     this computer's events (account, computer id, clock)
     * @param sink       where {@code TurnEnded} goes (the agent's producer)
     */
    public AssistantTurns(Gateway gateway, AssistantStore store, TranscriptPrompts prompts, AgentStoreDeleter deleter,
                          ChatLocks locks, EventFactory events, EventSink sink, Clock clock) {
        this.gateway = Objects.requireNonNull(gateway, "gateway");
        this.store = Objects.requireNonNull(store, "store");
        this.prompts = Objects.requireNonNull(prompts, "prompts");
        this.deleter = Objects.requireNonNull(deleter, "deleter");
        this.locks = Objects.requireNonNull(locks, "locks");
        this.events = Objects.requireNonNull(events, "events");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.computerId = events.computerId();
        this.clock = Objects.requireNonNull(clock, "clock");
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * Begins a turn: see the class comment. The chat's lock is held on return, until {@link #end}.
     *
     * @throws TurnRefused           when the gateway answers other than 2xx, or cannot be reached
     * @throws IllegalStateException when a turn of that id is begun already
     */
    public Began begin(TurnRequest request) {
        if (pending.containsKey(request.turnId())) {
            throw new IllegalStateException("turn " + request.turnId() + " is begun already");
        }
        String key = request.conversationKey();
        ChatLocks.Held held = locks.hold(key);
        try {
            Instant began = clock.instant();
            // the store is used twice (once before the gateway is asked, once after), never held while it is asked
            Read read = store.with(s -> new Read(s.get(key), s.places(request.workspace())));
            AssistantSessions.Entry entry = read.entry();
            Integer promptsNow = entry == null ? null : prompts.count(entry);
            TurnRules.Turn turn = new TurnRules.Turn(request.agent(), request.model(), computerId, request.position(),
                    request.instructionLines(), promptsNow);
            ObjectNode body = requestJson(request, turn, entry, read.places());
            ObjectNode answer = post(body);
            Decided decided = store.with(s -> {
                Path folder = s.chatFolder(key);
                TurnRules.Decision d = decision(answer, request, folder);
                AssistantDrops.Dropped drop = d.replaced() == null ? null
                        : new AssistantDrops(s, deleter, locks, computerId).deleteReplaced(key, d.replaced());
                s.makeChatFolder(key);
                return new Decided(d, drop, folder);
            });
            TurnRules.Decision decision = decided.decision();
            AssistantDrops.Dropped replacedDrop = decided.replacedDrop();
            Path chatFolder = decided.chatFolder();
            if (replacedDrop != null) {
                if (replacedDrop.confirmed()) {
                    log.info("chat {}: replaced session {} ({}) deleted: {} paths", key, decision.replaced().sessionId(),
                            decision.replaced().agent(), replacedDrop.removedCount());
                } else {
                    log.warn("chat {}: the replaced session {} ({}) could not be deleted: {}", key, decision.replaced().sessionId(),
                            decision.replaced().agent(), replacedDrop.error());
                }
            }
            answer.put("turnId", request.turnId());
            answer.put("chatFolder", chatFolder.toString());
            answer.put("position", turn.position());
            pending.put(request.turnId(), new Pending(request, turn, decision, entry, held, began));
            return new Began(request.turnId(), decision, answer, replacedDrop, chatFolder);
        } catch (RuntimeException | Error e) {
            held.close();
            throw e;
        }
    }

    /**
     * Ends a begun turn (see the class comment) and returns the {@code TurnEnded} appended.
     *
     * @param answered       whether the agent answered (false: failed, or no answer; it does not count toward the position)
     * @param agentSessionId the agent's session id the turn ran in, or null (none: a one-off that kept none, a failure
     *                       before the agent made one)
     * @param tokens         tokens the turn used, or null
     * @param answer         an ask's answer, or null
     * @param error          why it failed, or null
     * @throws IllegalStateException when no turn of that id is begun (or it was begun on another thread)
     */
    public Event end(String turnId, boolean answered, String agentSessionId, Long tokens, String answer, String error) {
        Pending p = pending.get(turnId);
        if (p == null) {
            throw new IllegalStateException("no turn " + turnId + " is begun");
        }
        String key = p.request().conversationKey();
        if (!locks.heldByCurrentThread(key)) {
            throw new IllegalStateException("turn " + turnId + " is ended on another thread than the one that began it");
        }
        pending.remove(turnId);
        try (ChatLocks.Held held = p.held()) {
            Instant now = clock.instant();
            TurnRules.Decision d = p.decision();
            int messages = 0;
            Integer promptsNoted = null;
            if (d.action() == TurnRules.Action.NONE) {
                AssistantDrops.Dropped dropped = store.with(s -> new AssistantDrops(s, deleter, locks, computerId)
                        .dropOneOff(key, p.request().agent(), agentSessionId));
                if (!dropped.confirmed()) {
                    log.warn("one-off {}: could not leave nothing behind: {}", key, dropped.error());
                }
            } else {
                AssistantSessions.Entry stored = afterTurn(p, agentSessionId, answered, now);
                if (stored != null) {
                    messages = stored.messagesSent();
                    promptsNoted = stored.promptsNoted();
                }
            }
            Event ended = events.event("turn-ended/" + computerId + "/" + turnId, now, TurnEnded.newBuilder()
                    .setTurnId(turnId).setConversationKey(key).setComputerId(computerId).setAnswered(answered)
                    .setAgentSessionId(d.action() == TurnRules.Action.NONE ? null : agentSessionId)
                    .setMessages(messages).setTokens(tokens)
                    .setDurationMs(Math.max(0, Duration.between(p.began(), now).toMillis()))
                    .setPromptsNoted(promptsNoted).setAnswer(answer).setError(error).build());
            sink.accept(ended);
            sink.flush();
            return ended;
        }
    }

    /** Stores the chat's entry after the turn; the entry stored, or null when none (a new session the agent never made). */
    private AssistantSessions.Entry afterTurn(Pending p, String agentSessionId, boolean answered, Instant now) {
        TurnRules.Decision d = p.decision();
        AssistantSessions.Entry before = p.before();
        String key = p.request().conversationKey();
        List<AssistantSessions.Retired> retired = new ArrayList<>(before == null ? List.of() : before.retired());
        if (d.retired() != null && before != null) {
            AssistantSessions.Retired r = new AssistantSessions.Retired(before.agent(), d.retired());
            if (!retired.contains(r)) {
                retired.add(r);
            }
        }
        TurnRules.SessionEntry after;
        if (d.action() == TurnRules.Action.RESUME && before != null) {
            Integer noted = prompts.count(before.agent(), before.sessionId());
            after = TurnRules.afterTurn(before.toSessionEntry(false), p.turn(), answered, noted);
        } else if (agentSessionId != null) {
            Integer noted = prompts.count(p.request().agent(), agentSessionId);
            after = TurnRules.afterTurn(d, p.turn(), agentSessionId, answered, noted);
        } else {
            // a new session the agent never made: a replaced session is deleted already, so its entry goes; a touched
            // one stays the entry (retired at the next turn again) until the chat is dropped
            if (before != null && d.replaced() != null) {
                store.with(s -> s.remove(key));
            }
            return null;
        }
        AssistantSessions.Entry entry = AssistantSessions.Entry.of(key, after, d.keepDays(), now.truncatedTo(ChronoUnit.MILLIS), retired);
        store.with(s -> {
            s.put(entry);
            return null;
        });
        return entry;
    }

    /** The turns begun and not ended, by id. */
    public List<String> begun() {
        return List.copyOf(pending.keySet());
    }

    /** The request's JSON (see the class comment). */
    ObjectNode requestJson(TurnRequest r, TurnRules.Turn turn, AssistantSessions.Entry entry, TurnRules.Places places) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("turnId", r.turnId());
        o.put("conversationKey", r.conversationKey());
        o.put("kind", r.kind().name().toLowerCase(Locale.ROOT).replace('_', '-'));
        o.put("agent", r.agent());
        o.put("model", r.model());
        o.put("computerId", computerId);
        o.put("position", turn.position());
        ArrayNode messages = o.putArray("messages");
        for (TurnRules.Message m : r.messages()) {
            messages.addObject().put("id", m.id()).put("role", m.role().name().toLowerCase(Locale.ROOT)).put("text", m.text())
                    .put("sessionId", m.sessionId());
        }
        strings(o.putArray("instructionLines"), r.instructionLines());
        if (r.group() == null) {
            o.putNull("group");
        } else {
            o.putObject("group").put("id", r.group().id()).put("name", r.group().name());
        }
        if (r.keepDays() == null) {
            o.putNull("keepDays");
        } else {
            o.put("keepDays", r.keepDays());
        }
        o.put("nextRunAt", r.nextRunAt() == null ? null : r.nextRunAt().toString());
        if (turn.promptsNow() == null) {
            o.putNull("promptsNow");
        } else {
            o.put("promptsNow", turn.promptsNow());
        }
        if (entry == null) {
            o.putNull("entry");
        } else {
            TurnRules.SessionEntry e = entry.toSessionEntry(false);
            ObjectNode n = o.putObject("entry");
            n.put("sessionId", e.sessionId()).put("agent", e.agent()).put("model", e.model()).put("computerId", e.computerId())
                    .put("positionLeft", e.positionLeft()).put("messagesSent", e.messagesSent());
            strings(n.putArray("instructionLines"), e.instructionLines());
            n.put("folder", e.folder());
            if (e.promptsNoted() == null) {
                n.putNull("promptsNoted");
            } else {
                n.put("promptsNoted", e.promptsNoted());
            }
            n.put("gone", e.gone());
        }
        o.putObject("places").put("workspace", places.workspace()).put("stateDir", places.stateDir());
        if (r.askId() != null) {
            o.put("askId", r.askId());
        }
        return o;
    }

    private static void strings(ArrayNode a, List<String> values) {
        values.forEach(a::add);
    }

    private ObjectNode post(ObjectNode body) {
        URI uri = gateway.baseUrl().resolve(PATH);
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(gateway.timeout())
                .header("Authorization", "Bearer " + gateway.bearerToken())
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        HttpResponse<String> res;
        try {
            res = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new TurnRefused(0, null, "cannot reach the gateway at " + uri + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TurnRefused(0, null, "interrupted while asking the gateway at " + uri, e);
        }
        JsonNode json;
        try {
            json = MAPPER.readTree(res.body());
        } catch (IOException e) {
            json = null;
        }
        if (res.statusCode() / 100 != 2) {
            String why = json != null && json.hasNonNull("error") ? json.get("error").asText()
                    : json != null && json.hasNonNull("message") ? json.get("message").asText() : res.body();
            throw new TurnRefused(res.statusCode(), json, "the gateway refused turn " + body.path("turnId").asText()
                    + " (HTTP " + res.statusCode() + "): " + why, null);
        }
        if (!(json instanceof ObjectNode o)) {
            throw new TurnRefused(res.statusCode(), json, "the gateway's answer to " + uri + " is not a JSON object: " + res.body(), null);
        }
        return o;
    }

    /** The decision of the gateway's {@code answer} (see the class comment). */
    TurnRules.Decision decision(JsonNode a, TurnRequest r, Path chatFolder) {
        TurnRules.Action action = enumOf(TurnRules.Action.class, a, "action", true);
        TurnRules.Reason reason = enumOf(TurnRules.Reason.class, a, "reason", false);
        List<TurnRules.Message> history = new ArrayList<>();
        for (JsonNode m : a.path("history")) {
            history.add(new TurnRules.Message(text(m, "id"), enumOf(TurnRules.Role.class, m, "role", true), text(m, "text"),
                    text(m, "sessionId")));
        }
        TurnRules.InstructionsUpdate update = null;
        JsonNode u = a.get("instructionsUpdate");
        if (u != null && u.isObject()) {
            update = new TurnRules.InstructionsUpdate(text(u, "lead"), texts(u.path("added")), texts(u.path("removed")));
        }
        TurnRules.Replaced replaced = null;
        JsonNode rep = a.get("replaced");
        if (rep != null && rep.isObject()) {
            String sid = text(rep, "sessionId");
            if (sid == null) {
                throw new TurnRefused(200, a, "the gateway's answer names a replaced session without its sessionId", null);
            }
            String agent = text(rep, "agent");
            replaced = new TurnRules.Replaced(sid, agent == null ? r.agent() : agent, computerId, text(rep, "folder"),
                    rep.path("deleteFolder").asBoolean(false));
        }
        String own = a.hasNonNull("chatFolder") ? a.get("chatFolder").asText() : chatFolder.toString();
        String folder = a.hasNonNull("folder") ? a.get("folder").asText() : own;
        TurnRules.Group group = r.group();
        JsonNode g = a.get("group");
        if (g != null && g.isObject()) {
            group = new TurnRules.Group(text(g, "id"), text(g, "name"));
        }
        Integer keepDays = r.keepDays();
        JsonNode k = a.get("keepDays");
        if (k != null && !k.isNull()) {
            // never read leniently: a garbled number read as 0 would mean "never dropped"
            if (!k.canConvertToInt() || !k.isIntegralNumber() || k.asInt() < 0) {
                throw new TurnRefused(200, a, "the gateway's answer has keepDays " + k + ": not a whole number of days, 0 or more", null);
            }
            keepDays = k.asInt();
        } else if (k != null) {
            keepDays = null;
        }
        TurnRules.OneOff oneOff = enumOf(TurnRules.OneOff.class, a, "oneOff", false);
        String sessionId = text(a, "sessionId");
        if (action == TurnRules.Action.RESUME && sessionId == null) {
            throw new TurnRefused(200, a, "the gateway's answer resumes no session: sessionId is missing", null);
        }
        return new TurnRules.Decision(action, sessionId, reason, history, update, replaced, text(a, "retiredSessionId"),
                folder, own, group, keepDays, oneOff);
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static List<String> texts(JsonNode a) {
        List<String> out = new ArrayList<>();
        a.forEach(v -> out.add(v.asText()));
        return out;
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, JsonNode n, String field, boolean required) {
        String v = text(n, field);
        if (v == null) {
            if (required) {
                throw new TurnRefused(200, n, "the gateway's answer has no " + field, null);
            }
            return null;
        }
        try {
            return Enum.valueOf(type, v.toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new TurnRefused(200, n, "the gateway's answer has an unknown " + field + ": " + v, e);
        }
    }
}
