package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.Limits;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationSession;
import dev.ensemble.sessions.views.ConversationView;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The JSON of the assistant endpoints (guide §5, {@link AssistantEndpoints}): the turn request read into the records
 * {@link TurnRules#decide} takes, with every bad field a 400 naming it ({@code field}, and {@code limit} for a size); the
 * decision's answer; an ask's answer; a conversation view's summary and detail. Sizes: ids (turnId, conversationKey,
 * agent, model, askId, session and computer ids, group id) at most {@value Limits#MAX_ID_CHARS} printable characters;
 * a message's text at most {@value #MAX_MESSAGE_CHARS} characters (an answer may be long); an instruction line, a group name, a folder
 * at most {@value Limits#MAX_TEXT_CHARS}; at most {@value #MAX_MESSAGES} messages and {@value #MAX_LINES} instruction
 * lines; the whole body at most {@value Limits#MAX_REQUEST_BYTES} bytes (413).
 */
final class AssistantJson {
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    /** The most messages a turn request carries (the chat's messages before this one). */
    static final int MAX_MESSAGES = Limits.MAX_LIST_ENTRIES;
    /** The most characters of one message's text (the body's 1,000,000 bytes bound them all together). */
    static final int MAX_MESSAGE_CHARS = 262_144;
    /** The most instruction lines a turn request (or its entry) carries. */
    static final int MAX_LINES = Limits.MAX_LIST_ENTRIES;
    /** The most days a conversation's keepDays may say (0 = never dropped). */
    static final int MAX_KEEP_DAYS = 36_500;
    /** A surface's name ({@code POST /api/ensemble/invoke}): it is part of the ask's key. */
    static final Pattern SURFACE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
    /** The kinds of page an ask is made on ({@code POST /api/pages/{kind}/{id}/ensemble}). */
    static final List<String> PAGE_KINDS = List.of("page", "task", "project", "deliverable", "meeting");

    private AssistantJson() {
    }

    /**
     * A turn request, read and checked.
     *
     * @param space  the event's space (default {@code local:<computer>})
     * @param askId  the ask this turn answers (kind ask), else null
     */
    record TurnRequest(String turnId, TurnRules.Chat chat, TurnRules.Turn turn, TurnRules.Places places, String askId,
                       Instant nextRunAt, String space) {
    }

    // ---- reading -----------------------------------------------------------------------------------------------

    /** A 400 naming {@code field}. */
    static ApiError bad(String field, String problem) {
        return ApiError.badRequest(field + ": " + problem).with("field", field);
    }

    /** A 400 naming {@code field} and the {@code limit} it passed. */
    static ApiError tooLong(String field, String what, int limit) {
        return ApiError.badRequest(field + ": " + what + "; at most " + limit).with("field", field).with("limit", String.valueOf(limit));
    }

    static ObjectNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.badRequest("the body must be a JSON object");
        }
        return (ObjectNode) body;
    }

    private static boolean absent(JsonNode n) {
        return n == null || n.isNull() || n.isMissingNode();
    }

    /** A required id: a non-blank string of printable characters, at most {@value Limits#MAX_ID_CHARS}. */
    static String id(JsonNode parent, String name, String path) {
        String v = optionalId(parent, name, path);
        if (v == null) {
            throw bad(path, "required field is missing");
        }
        return v;
    }

    /** An optional id (null when absent or null). */
    static String optionalId(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return null;
        }
        if (!n.isTextual()) {
            throw bad(path, "must be a string");
        }
        return checkId(n.asText(), path);
    }

    /** Checks an id's text (path parameters too). */
    static String checkId(String v, String path) {
        if (v.isBlank()) {
            throw bad(path, "must not be blank");
        }
        if (v.length() > Limits.MAX_ID_CHARS) {
            throw tooLong(path, "is " + v.length() + " characters", Limits.MAX_ID_CHARS);
        }
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            int type = Character.getType(c);
            if (Character.isISOControl(c) || type == Character.FORMAT || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR || type == Character.SURROGATE && !wellFormedAt(v, i)) {
                throw bad(path, String.format("holds a character that is not printable (U+%04X at %d)", (int) c, i));
            }
            if (Character.isHighSurrogate(c)) {
                i++;
            }
        }
        return v;
    }

    /** An optional text of at most {@code max} characters, well-formed Unicode. */
    static String text(JsonNode parent, String name, String path, int max) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return null;
        }
        if (!n.isTextual()) {
            throw bad(path, "must be a string");
        }
        return checkText(n.asText(), path, max);
    }

    static String checkText(String v, String path, int max) {
        if (v.length() > max) {
            throw tooLong(path, "is " + v.length() + " characters", max);
        }
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (Character.isSurrogate(c)) {
                if (!wellFormedAt(v, i)) {
                    throw bad(path, "is not well-formed Unicode (a lone surrogate at " + i + ")");
                }
                i++;
            }
        }
        return v;
    }

    /** Whether a surrogate at {@code i} starts a pair. */
    private static boolean wellFormedAt(String v, int i) {
        return Character.isHighSurrogate(v.charAt(i)) && i + 1 < v.length() && Character.isLowSurrogate(v.charAt(i + 1));
    }

    /** An optional whole number from {@code min} to {@code max}. */
    static Integer integer(JsonNode parent, String name, String path, int min, int max) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return null;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw bad(path, "must be a whole number from " + min + " to " + max);
        }
        int v = n.asInt();
        if (v < min || v > max) {
            throw bad(path, "must be from " + min + " to " + max + ", not " + v);
        }
        return v;
    }

    static boolean bool(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return false;
        }
        if (!n.isBoolean()) {
            throw bad(path, "must be true or false");
        }
        return n.asBoolean();
    }

    static Instant instant(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return null;
        }
        Instant at;
        try {
            at = n.isTextual() ? Instant.parse(n.asText()) : null;
        } catch (DateTimeParseException e) {
            at = null;
        }
        if (at == null) {
            throw bad(path, "must be an ISO-8601 instant such as 2026-12-02T09:00:00Z");
        }
        if (at.isBefore(Limits.EARLIEST) || !at.isBefore(Limits.LATEST)) {
            throw bad(path, "must be from " + Limits.EARLIEST + " up to " + Limits.LATEST);
        }
        return at.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    }

    static List<String> lines(JsonNode parent, String name, String path) {
        JsonNode n = parent.get(name);
        if (absent(n)) {
            return List.of();
        }
        if (!n.isArray()) {
            throw bad(path, "must be an array of strings (one per line)");
        }
        if (n.size() > MAX_LINES) {
            throw tooLong(path, "has " + n.size() + " lines", MAX_LINES);
        }
        List<String> out = new ArrayList<>(n.size());
        for (int i = 0; i < n.size(); i++) {
            JsonNode l = n.get(i);
            if (!l.isTextual()) {
                throw bad(path + "[" + i + "]", "must be a string");
            }
            out.add(checkText(l.asText(), path + "[" + i + "]", Limits.MAX_TEXT_CHARS));
        }
        return out;
    }

    /** chat, routine, node-conversation, ask, one-off (any case, '_' for '-'). */
    static TurnRules.Kind kind(String v, String path) {
        if (v != null) {
            switch (v.toLowerCase(Locale.ROOT).replace('_', '-')) {
                case "chat":
                    return TurnRules.Kind.CHAT;
                case "routine":
                    return TurnRules.Kind.ROUTINE;
                case "node-conversation":
                    return TurnRules.Kind.NODE_CONVERSATION;
                case "ask":
                    return TurnRules.Kind.ASK;
                case "one-off":
                    return TurnRules.Kind.ONE_OFF;
                default:
            }
        }
        throw bad(path, (v == null ? "required field is missing" : "'" + v + "' is not a kind")
                + "; one of chat, routine, node-conversation, ask, one-off");
    }

    static String kindName(Object kind) {
        return kind.toString().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * {@code POST /api/assistant/turns}'s body, for the computer {@code computerId} (the caller): every field checked,
     * a 400 naming the first bad one. {@code position} defaults to {@link TurnRules#position} of {@code messages}.
     */
    static TurnRequest turnRequest(JsonNode body, String computerId) {
        ObjectNode b = object(body);
        String turnId = id(b, "turnId", "turnId");
        String key = id(b, "conversationKey", "conversationKey");
        JsonNode kindNode = b.get("kind");
        if (!absent(kindNode) && !kindNode.isTextual()) {
            throw bad("kind", "must be a string");
        }
        TurnRules.Kind kind = kind(absent(kindNode) ? null : kindNode.asText(), "kind");
        String agent = id(b, "agent", "agent");
        String model = optionalId(b, "model", "model");
        String claimed = optionalId(b, "computerId", "computerId");
        if (claimed != null && !claimed.equals(computerId)) {
            throw new ApiError(403, "forbidden", "computerId: this token is computer '" + computerId + "', not '" + claimed + "'")
                    .with("field", "computerId");
        }
        List<TurnRules.Message> messages = messages(b);
        Integer position = integer(b, "position", "position", 0, Integer.MAX_VALUE);
        List<String> lines = lines(b, "instructionLines", "instructionLines");
        TurnRules.Group group = null;
        JsonNode g = b.get("group");
        if (!absent(g)) {
            if (!g.isObject()) {
                throw bad("group", "must be an object {id, name}");
            }
            String name = text(g, "name", "group.name", Limits.MAX_TEXT_CHARS);
            if (name == null || name.isBlank()) {
                throw bad("group.name", "required field is missing");
            }
            group = new TurnRules.Group(optionalId(g, "id", "group.id"), name);
        }
        Integer keepDays = integer(b, "keepDays", "keepDays", 0, MAX_KEEP_DAYS);
        Instant nextRunAt = instant(b, "nextRunAt", "nextRunAt");
        Integer promptsNow = integer(b, "promptsNow", "promptsNow", 0, Integer.MAX_VALUE);
        TurnRules.SessionEntry entry = entry(b.get("entry"), computerId);
        JsonNode p = b.get("places");
        if (absent(p)) {
            throw bad("places", "required field is missing: {workspace, stateDir}");
        }
        if (!p.isObject()) {
            throw bad("places", "must be an object {workspace, stateDir}");
        }
        String workspace = text(p, "workspace", "places.workspace", Limits.MAX_TEXT_CHARS);
        String stateDir = text(p, "stateDir", "places.stateDir", Limits.MAX_TEXT_CHARS);
        if (workspace == null || workspace.isBlank()) {
            throw bad("places.workspace", "required field is missing");
        }
        if (stateDir == null || stateDir.isBlank()) {
            throw bad("places.stateDir", "required field is missing");
        }
        String askId = optionalId(b, "askId", "askId");
        if (kind == TurnRules.Kind.ASK && askId == null) {
            throw bad("askId", "required for kind ask: the ask this turn answers");
        }
        if (kind != TurnRules.Kind.ASK && askId != null) {
            throw bad("askId", "only a turn of kind ask answers an ask, not one of kind " + kindName(kind));
        }
        String space = optionalId(b, "space", "space");
        int pos = kind == TurnRules.Kind.ASK ? 0 : position != null ? position : TurnRules.position(messages);
        TurnRules.Chat chat = new TurnRules.Chat(key, kind, group, keepDays, entry, messages);
        TurnRules.Turn turn = new TurnRules.Turn(agent, model, computerId, pos, lines, promptsNow);
        return new TurnRequest(turnId, chat, turn, new TurnRules.Places(workspace, stateDir), askId, nextRunAt,
                space != null ? space : "local:" + computerId);
    }

    private static List<TurnRules.Message> messages(ObjectNode b) {
        JsonNode n = b.get("messages");
        if (absent(n)) {
            return List.of();
        }
        if (!n.isArray()) {
            throw bad("messages", "must be an array of {id, role, text, sessionId}");
        }
        if (n.size() > MAX_MESSAGES) {
            throw tooLong("messages", "has " + n.size() + " messages", MAX_MESSAGES);
        }
        List<TurnRules.Message> out = new ArrayList<>(n.size());
        for (int i = 0; i < n.size(); i++) {
            String path = "messages[" + i + "]";
            JsonNode m = n.get(i);
            if (!m.isObject()) {
                throw bad(path, "must be an object {id, role, text, sessionId}");
            }
            JsonNode r = m.get("role");
            TurnRules.Role role;
            if (absent(r)) {
                throw bad(path + ".role", "required field is missing; one of user, assistant, error");
            }
            role = switch (r.isTextual() ? r.asText().toLowerCase(Locale.ROOT) : "") {
                case "user" -> TurnRules.Role.USER;
                case "assistant" -> TurnRules.Role.ASSISTANT;
                case "error" -> TurnRules.Role.ERROR;
                default -> throw bad(path + ".role", "'" + r.asText() + "' is not a role; one of user, assistant, error");
            };
            out.add(new TurnRules.Message(optionalId(m, "id", path + ".id"), role,
                    text(m, "text", path + ".text", MAX_MESSAGE_CHARS), optionalId(m, "sessionId", path + ".sessionId")));
        }
        return out;
    }

    /** The computer's store entry for the chat ({@code entry}), or null; its computerId defaults to the caller's. */
    private static TurnRules.SessionEntry entry(JsonNode e, String computerId) {
        if (absent(e)) {
            return null;
        }
        if (!e.isObject()) {
            throw bad("entry", "must be an object (the computer's store entry for this chat) or null");
        }
        String sessionId = id(e, "sessionId", "entry.sessionId");
        String agent = id(e, "agent", "entry.agent");
        String computer = optionalId(e, "computerId", "entry.computerId");
        Integer positionLeft = integer(e, "positionLeft", "entry.positionLeft", 0, Integer.MAX_VALUE);
        Integer messagesSent = integer(e, "messagesSent", "entry.messagesSent", 0, Integer.MAX_VALUE);
        return new TurnRules.SessionEntry(sessionId, agent, optionalId(e, "model", "entry.model"),
                computer != null ? computer : computerId, positionLeft == null ? 0 : positionLeft,
                messagesSent == null ? 0 : messagesSent, lines(e, "instructionLines", "entry.instructionLines"),
                text(e, "folder", "entry.folder", Limits.MAX_TEXT_CHARS),
                integer(e, "promptsNoted", "entry.promptsNoted", 0, Integer.MAX_VALUE), bool(e, "gone", "entry.gone"));
    }

    /** An ask's prompt: required, not blank, at most {@value Limits#MAX_TEXT_CHARS} characters. */
    static String prompt(JsonNode body) {
        String p = text(object(body), "prompt", "prompt", Limits.MAX_TEXT_CHARS);
        if (p == null || p.isBlank()) {
            throw bad("prompt", "required field is missing: what to ask");
        }
        return p;
    }

    // ---- writing -----------------------------------------------------------------------------------------------

    /**
     * The decision's answer (assistant-design: action, sessionId, reason, history[], instructionsUpdate {lead, added,
     * removed}, replaced {sessionId, agent, computerId, folder, deleteFolder}, retiredSessionId, folder, oneOff), with
     * the turn and its event: turnId, conversationKey, eventId, chatFolder, group, keepDays, and {@code duplicate} when
     * the turn was decided before.
     */
    static ObjectNode decision(TurnRequest req, TurnRules.Decision d, String eventId, boolean duplicate) {
        ObjectNode o = N.objectNode();
        o.put("turnId", req.turnId());
        o.put("conversationKey", req.chat().key());
        o.put("eventId", eventId);
        o.put("action", d.action().name());
        o.put("sessionId", d.sessionId());
        o.put("reason", d.reason() == null ? null : d.reason().name());
        ArrayNode h = o.putArray("history");
        for (TurnRules.Message m : d.history()) {
            h.addObject().put("id", m.id()).put("role", m.role().name().toLowerCase(Locale.ROOT)).put("text", m.text())
                    .put("sessionId", m.sessionId());
        }
        if (d.instructionsUpdate() == null) {
            o.putNull("instructionsUpdate");
        } else {
            ObjectNode u = o.putObject("instructionsUpdate");
            u.put("lead", d.instructionsUpdate().lead());
            d.instructionsUpdate().added().forEach(u.putArray("added")::add);
            d.instructionsUpdate().removed().forEach(u.putArray("removed")::add);
        }
        if (d.replaced() == null) {
            o.putNull("replaced");
        } else {
            o.putObject("replaced").put("sessionId", d.replaced().sessionId()).put("agent", d.replaced().agent())
                    .put("computerId", d.replaced().computerId()).put("folder", d.replaced().folder())
                    .put("deleteFolder", d.replaced().deleteFolder());
        }
        o.put("retiredSessionId", d.retired());
        o.put("folder", d.folder());
        o.put("chatFolder", d.chatFolder());
        if (d.group() == null) {
            o.putNull("group");
        } else {
            o.putObject("group").put("id", d.group().id()).put("name", d.group().name());
        }
        if (d.keepDays() == null) {
            o.putNull("keepDays");
        } else {
            o.put("keepDays", d.keepDays());
        }
        o.put("oneOff", d.oneOff() == null ? null : d.oneOff().name());
        if (duplicate) {
            o.put("duplicate", true);
        }
        return o;
    }

    /** The view's waiting asks in their line ({@link AskRules#inLine}): which runs now, and what each other one shows. */
    static List<AskRules.Place> line(ConversationView v) {
        List<AskRules.Ask> asks = new ArrayList<>();
        long order = 0;
        for (AskState a : v.getAsks()) {
            asks.add(new AskRules.Ask(a.getAskId(), order++, AskRules.AskState.valueOf(a.getStatus().name()),
                    a.getStartedAt() != null ? a.getStartedAt() : a.getRequestedAt()));
        }
        return AskRules.inLine(asks);
    }

    /** The place of ask {@code askId} in its line: the message it shows ({@link AskRules#WAITING} while an earlier one is unanswered), or null. */
    static String waitingMessage(ConversationView v, String askId) {
        for (AskRules.Place p : line(v)) {
            if (p.askId().equals(askId)) {
                return p.shows();
            }
        }
        return null;
    }

    /** {@code GET /api/asks/{askId}}: the ask as its conversation view holds it. */
    static ObjectNode ask(ConversationView v, AskState a) {
        ObjectNode o = N.objectNode();
        o.put("askId", a.getAskId());
        o.put("conversationKey", v.getConversationKey());
        o.put("status", a.getStatus().name());
        String waiting = a.getStatus() == AskStatus.WAITING ? waitingMessage(v, a.getAskId()) : null;
        o.put("message", waiting);
        o.put("pageKind", v.getPageKind());
        o.put("pageId", v.getPageId());
        o.put("prompt", a.getPrompt());
        o.put("requestedAt", a.getRequestedAt().toString());
        o.put("computerId", a.getComputerId());
        o.put("startedAt", a.getStartedAt() == null ? null : a.getStartedAt().toString());
        o.put("endedAt", a.getEndedAt() == null ? null : a.getEndedAt().toString());
        o.put("answer", a.getAnswer());
        o.put("deleted", v.getDeleted());
        return o;
    }

    /** One entry of {@code GET /api/assistant/conversations}. */
    static ObjectNode summary(ConversationView v) {
        ObjectNode o = N.objectNode();
        o.put("conversationKey", v.getConversationKey());
        o.put("kind", kindName(v.getKind()));
        o.put("groupId", v.getGroupId());
        o.put("groupName", v.getGroupName());
        if (v.getKeepDays() == null) {
            o.putNull("keepDays");
        } else {
            o.put("keepDays", v.getKeepDays());
        }
        o.put("nextRunAt", time(v.getNextRunAt()));
        o.put("firstTurnAt", time(v.getFirstTurnAt()));
        o.put("lastUsedAt", time(v.getLastUsedAt()));
        o.put("lastAnswerAt", time(v.getLastAnswerAt()));
        o.put("turns", v.getTurns());
        o.put("running", v.getRunningTurn() != null);
        ArrayNode computers = o.putArray("computers");
        for (ConversationSession s : v.getSessions()) {
            computers.add(s.getComputerId());
        }
        o.put("asks", v.getAsks().size());
        // a deleted conversation's computers whose drop is still owed: asked, not confirmed ok, not expired
        o.put("dropsPending", v.getDeletion() == null ? 0 : (int) v.getDeletion().getComputers().stream()
                .filter(c -> !Boolean.TRUE.equals(c.getOk()) && !c.getExpired()).count());
        o.put("deleted", v.getDeleted());
        return o;
    }

    /** {@code GET /api/assistant/conversations/{id}}: the view as it is (ConversationView.avsc; times ISO-8601), kind as in the requests. */
    static ObjectNode detail(ConversationView v) {
        ObjectNode o = EventJson.recordToJson(v);
        o.put("kind", kindName(v.getKind()));
        o.put("running", v.getRunningTurn() != null);
        return o;
    }

    private static String time(Instant t) {
        return t == null ? null : t.toString();
    }
}
