package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnAction;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnReason;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.LimitExceededException;
import dev.ensemble.sessions.schema.Limits;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationView;
import io.javalin.http.Context;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

/**
 * The assistant endpoints (guide §5, with §6's deletions; docs/assistant-sessions.md), JSON in {@link AssistantJson}:
 * <ul>
 *   <li>{@code POST /api/assistant/turns} (a computer): which session a turn runs in, decided by the pure
 *       {@link TurnRules#decide} from what the computer sends (its store entry for the chat, the chat's messages, the
 *       instructions, the prompt count read now), appended as {@code TurnDecided} (source {@code service:gateway}, eventId
 *       name-based on account and turnId: the same turn posted again answers the same decision, {@code duplicate: true},
 *       and appends nothing) and answered. A turn of kind ask runs only when its ask is the line's next ({@link AskRules#inLine}):
 *       409 {@code not_next} with {@code waitingFor} otherwise. A turnId another computer decided first is a 409
 *       {@code taken}.</li>
 *   <li>{@code POST /api/pages/{kind}/{id}/ensemble} and {@code POST /api/ensemble/invoke} (a person): an
 *       {@code AskRequested} (key {@link AskRules#sessionKey}), 202; {@code GET /api/asks/{askId}}.</li>
 *   <li>{@code DELETE /api/assistant/conversations/{id}} (a person): a {@code ConversationDeletionRequested}, 202; the
 *       projector's guard decides and the deletion audit ({@code GET /api/audit/deletions}) shows it.
 *       {@code GET /api/assistant/conversations} and {@code /{id}}: the conversation views.</li>
 * </ul>
 * Every request is handled on the gateway instance that holds the caller's account (forwarded there like a read), where
 * the views are read and the events appended through {@link OnceAppender}.
 */
final class AssistantEndpoints {
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    /** The source of the events the gateway writes. */
    static final String SOURCE = "service:gateway";
    /** How many turn ids this instance remembers with the computer whose decision it appended (for {@code taken}). */
    private static final int DECIDED_MEMORY = 10_000;

    private final Supplier<SessionReads> reads;
    private final Supplier<OnceAppender> appender;
    private final BiPredicate<String, String> logKnows;
    private final Clock clock;
    private final DeletionEndpoints.Router router;
    /** eventId of a TurnDecided this instance appended → the computer it was decided for (newest {@value #DECIDED_MEMORY}). */
    private final Map<String, String> decidedFor = java.util.Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > DECIDED_MEMORY;
        }
    });

    /**
     * @param reads    the read side (started after the routes are registered, so looked up per request)
     * @param appender appends each eventId once
     * @param logKnows whether the gateway's reading of the log holds an account's eventId
     */
    AssistantEndpoints(Supplier<SessionReads> reads, Supplier<OnceAppender> appender, BiPredicate<String, String> logKnows,
                       Clock clock, DeletionEndpoints.Router router) {
        this.reads = reads;
        this.appender = appender;
        this.logKnows = logKnows;
        this.clock = clock;
        this.router = router;
    }

    void register(io.javalin.Javalin app) {
        app.post("/api/assistant/turns", this::decideTurn);
        app.post("/api/pages/{kind}/{id}/ensemble", this::askOnPage);
        app.post("/api/ensemble/invoke", this::invoke);
        app.get("/api/asks/{askId}", this::getAsk);
        app.get("/api/assistant/conversations", this::listConversations);
        app.get("/api/assistant/conversations/{id}", this::getConversation);
        app.delete("/api/assistant/conversations/{id}", this::deleteConversation);
    }

    private static Principal principal(Context ctx) {
        return ctx.attribute("principal");
    }

    /** The eventId of a turn's TurnDecided: name-based (UUID v3) on the account and the turn id. */
    static String turnEventId(String account, String turnId) {
        return UUID.nameUUIDFromBytes(("TurnDecided\u0000" + account + "\u0000" + turnId).getBytes(StandardCharsets.UTF_8)).toString();
    }

    // ---- POST /api/assistant/turns -----------------------------------------------------------------------------

    void decideTurn(Context ctx) {
        Principal me = principal(ctx);
        if (!me.role().equals("computer")) {
            throw new ApiError(403, "forbidden", "only a computer's token asks which session a turn runs in (this one is "
                    + (me.role().matches("^[aeiou].*") ? "an " : "a ") + me.role() + "'s)");
        }
        if (router.forwarded(ctx, me)) {
            return;
        }
        AssistantJson.TurnRequest req = AssistantJson.turnRequest(readJson(ctx), me.subject());
        String eventId = turnEventId(me.account(), req.turnId());
        boolean decidedBefore = logKnows.test(me.account(), eventId) || decidedFor.containsKey(eventId);
        ConversationView view = null;
        if (req.askId() != null || decidedBefore) {
            view = reads.get().conversation(me.account(), req.chat().key());
        }
        if (decidedBefore) {
            refuseTaken(eventId, req, view, me);
        } else if (req.askId() != null) {
            refuseOutOfLine(req, view);
        }
        TurnRules.Decision d = TurnRules.decide(req.chat(), req.turn(), req.places());
        Event e = turnDecided(me.account(), eventId, req, d);
        OnceAppender.Outcome o = append(me.account(), e);
        if (o.appended()) {
            decidedFor.put(eventId, me.subject());
        } else {
            refuseTaken(eventId, req, view != null ? view : reads.get().conversation(me.account(), req.chat().key()), me);
        }
        ctx.json(AssistantJson.decision(req, d, eventId, o.duplicate()));
    }

    /**
     * A turn decided before (its TurnDecided is in the log) is answered again only to the computer it was decided for:
     * as this instance remembers it, or as the view says (the running turn, or the ask's computer).
     */
    private void refuseTaken(String eventId, AssistantJson.TurnRequest req, ConversationView view, Principal me) {
        String owner = decidedFor.get(eventId);
        if (owner == null && view != null) {
            if (view.getRunningTurn() != null && view.getRunningTurn().getTurnId().equals(req.turnId())) {
                owner = view.getRunningTurn().getComputerId();
            } else if (req.askId() != null) {
                owner = view.getAsks().stream().filter(a -> a.getAskId().equals(req.askId())).map(AskState::getComputerId)
                        .filter(java.util.Objects::nonNull).findFirst().orElse(null);
            }
        }
        if (owner != null && !owner.equals(me.subject())) {
            throw new ApiError(409, "taken", "turn '" + req.turnId() + "' was decided for computer '" + owner
                    + "'; this computer does not run it").with("computerId", owner);
        }
    }

    /** A turn of kind ask runs only when its ask is the line's next: else 409 (not yet in the view, not next, ended). */
    private static void refuseOutOfLine(AssistantJson.TurnRequest req, ConversationView view) {
        AskState ask = view == null ? null : view.getAsks().stream().filter(a -> a.getAskId().equals(req.askId())).findFirst().orElse(null);
        if (ask == null) {
            throw new ApiError(409, "ask_unknown", "ask '" + req.askId() + "' of conversation '" + req.chat().key()
                    + "' is not in the conversation's view (yet): ask again in a few seconds").with("askId", req.askId())
                    .retryAfter(1);
        }
        if (ask.getStatus() == AskStatus.RUNNING) {
            return; // it is this one (its decision is asked for again)
        }
        if (ask.getStatus() != AskStatus.WAITING) {
            throw new ApiError(409, "ask_ended", "ask '" + req.askId() + "' is " + ask.getStatus() + " already; nothing to run")
                    .with("askId", req.askId()).with("status", ask.getStatus().name());
        }
        String next = AssistantJson.line(view).stream().filter(AskRules.Place::runNow).map(AskRules.Place::askId).findFirst()
                .orElse(null);
        if (!req.askId().equals(next)) {
            String waitingFor = next != null ? next : view.getAsks().stream().filter(a -> a.getStatus() == AskStatus.RUNNING)
                    .map(AskState::getAskId).findFirst().orElse(null);
            throw new ApiError(409, "not_next", "ask '" + req.askId() + "' waits for the answer to ask '" + waitingFor
                    + "' (asks on one page are answered one after another); ask again when it is answered")
                    .with("waitingFor", waitingFor).with("askId", req.askId());
        }
    }

    /** The TurnDecided of a decision (times the gateway's now). */
    private Event turnDecided(String account, String eventId, AssistantJson.TurnRequest req, TurnRules.Decision d) {
        TurnRules.Turn t = req.turn();
        TurnDecided.Builder p = TurnDecided.newBuilder()
                .setTurnId(req.turnId()).setConversationKey(req.chat().key())
                .setConversationKind(ConversationKind.valueOf(req.chat().kind().name()))
                .setComputerId(t.computerId()).setAgent(t.agent()).setModel(t.model())
                .setPosition(req.chat().kind() == TurnRules.Kind.ASK ? 0 : t.position())
                .setAction(TurnAction.valueOf(d.action().name()))
                .setReason(d.reason() == null ? null : TurnReason.valueOf(d.reason().name()))
                .setSessionId(d.sessionId()).setHistoryMessages(d.history().size())
                .setInstructionsAdded(d.instructionsUpdate() == null ? List.of() : d.instructionsUpdate().added())
                .setInstructionsRemoved(d.instructionsUpdate() == null ? List.of() : d.instructionsUpdate().removed())
                .setReplacedSessionId(d.replaced() == null ? null : d.replaced().sessionId())
                .setReplacedFolderDeleted(d.replaced() != null && d.replaced().deleteFolder())
                .setRetiredSessionId(d.retired()).setFolder(d.folder())
                .setGroupId(d.group() == null ? null : d.group().id()).setGroupName(d.group() == null ? null : d.group().name())
                .setKeepDays(d.keepDays()).setNextRunAt(req.nextRunAt());
        return envelope(eventId, account, req.space(), SOURCE, p.build());
    }

    // ---- asks ------------------------------------------------------------------------------------------------------

    /** {@code POST /api/pages/{kind}/{id}/ensemble} {prompt}: an ask on a page. */
    void askOnPage(Context ctx) {
        Principal me = asker(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        String kind = ctx.pathParam("kind");
        if (!AssistantJson.PAGE_KINDS.contains(kind)) {
            throw AssistantJson.bad("kind", "'" + kind + "' is not a page kind; one of " + String.join(", ", AssistantJson.PAGE_KINDS));
        }
        String id = AssistantJson.checkId(ctx.pathParam("id"), "id");
        JsonNode body = readJson(ctx);
        ask(ctx, me, kind, id, AssistantJson.prompt(body), AssistantJson.optionalId(AssistantJson.object(body), "space", "space"));
    }

    /** {@code POST /api/ensemble/invoke} {surface, anchorKey, prompt}: an ask on a surface, its anchorKey as the page id. */
    void invoke(Context ctx) {
        Principal me = asker(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        JsonNode body = AssistantJson.object(readJson(ctx));
        String surface = AssistantJson.id(body, "surface", "surface");
        if (!AssistantJson.SURFACE.matcher(surface).matches()) {
            throw AssistantJson.bad("surface", "'" + surface + "' is not a surface name: lower-case letters, digits, '.', '_'"
                    + " and '-', at most 64, starting with a letter or digit");
        }
        String anchorKey = AssistantJson.id(body, "anchorKey", "anchorKey");
        ask(ctx, me, surface, anchorKey, AssistantJson.prompt(body), AssistantJson.optionalId(body, "space", "space"));
    }

    private static Principal asker(Context ctx) {
        Principal me = principal(ctx);
        if (!me.role().equals("person") && !me.isAdmin()) {
            throw new ApiError(403, "forbidden", "a person asks Ensemble on a page; a " + me.role() + " does not");
        }
        return me;
    }

    private void ask(Context ctx, Principal me, String kind, String id, String prompt, String space) {
        String key = AskRules.sessionKey(me.subject(), kind, id);
        ConversationView v = reads.get().conversation(me.account(), key);
        String before = v == null || v.getDeleted() ? null : v.getAsks().stream()
                .filter(a -> a.getStatus() == AskStatus.WAITING || a.getStatus() == AskStatus.RUNNING)
                .map(AskState::getAskId).reduce((a, b) -> b).orElse(null);
        String askId = UUID.randomUUID().toString();
        Event e = envelope(askId, me.account(), space != null ? space : "person:" + me.subject(), "person:" + me.subject(),
                AskRequested.newBuilder().setAskId(askId).setConversationKey(key).setPersonId(me.subject())
                        .setPageKind(kind).setPageId(id).setPrompt(prompt).build());
        append(me.account(), e);
        ObjectNode out = N.objectNode();
        out.put("askId", askId);
        out.put("conversationKey", key);
        out.put("status", before != null ? "waiting" : "requested");
        out.put("message", before != null ? AskRules.WAITING
                : "sent to your computers that run assistant turns; the answer shows at GET /api/asks/" + askId);
        if (before != null) {
            out.put("waitingFor", before);
        }
        out.put("ask", "/api/asks/" + askId);
        ctx.status(202).json(out);
    }

    /** {@code GET /api/asks/{askId}}: the ask as its conversation view holds it; 404 when no conversation of the account holds it. */
    void getAsk(Context ctx) {
        Principal me = principal(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        String askId = ctx.pathParam("askId");
        for (ConversationView v : reads.get().conversations(me.account())) {
            for (AskState a : v.getAsks()) {
                if (a.getAskId().equals(askId)) {
                    ctx.json(AssistantJson.ask(v, a));
                    return;
                }
            }
        }
        throw ApiError.notFound("no ask '" + askId + "' in your account (an ask just made shows within a few seconds)");
    }

    // ---- conversations ---------------------------------------------------------------------------------------------

    /** {@code GET /api/assistant/conversations?kind=&deleted=&limit=}: newest use first. */
    void listConversations(Context ctx) {
        Principal me = principal(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        String kindText = blankToNull(ctx.queryParam("kind"));
        String kind = kindText == null ? null : AssistantJson.kindName(AssistantJson.kind(kindText, "kind"));
        Boolean onlyDeleted = SessionQuery.deletedParam(ctx.queryParam("deleted"));
        int limit = Gateway.intParam(ctx, "limit", 50, 1, Gateway.MAX_LIMIT);
        List<ConversationView> all = reads.get().conversations(me.account()).stream()
                .filter(v -> kind == null || kind.equals(AssistantJson.kindName(v.getKind())))
                .filter(v -> onlyDeleted == null || onlyDeleted == v.getDeleted())
                .sorted(Comparator.comparing((ConversationView v) -> v.getLastUsedAt() == null ? Instant.EPOCH : v.getLastUsedAt())
                        .reversed().thenComparing(ConversationView::getConversationKey))
                .toList();
        ArrayNode arr = N.arrayNode();
        all.stream().limit(limit).forEach(v -> arr.add(AssistantJson.summary(v)));
        ObjectNode out = N.objectNode();
        out.set("conversations", arr);
        out.put("total", all.size());
        ctx.json(out);
    }

    void getConversation(Context ctx) {
        Principal me = principal(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        String id = ctx.pathParam("id");
        ConversationView v = reads.get().conversation(me.account(), id);
        if (v == null) {
            throw ApiError.notFound("no assistant conversation '" + id + "' in your account");
        }
        ctx.json(AssistantJson.detail(v));
    }

    /**
     * {@code DELETE /api/assistant/conversations/{id}} (a person): 404 for a conversation the account does not have, 409
     * for one deleted already; else a ConversationDeletionRequested (requestedBy person, reason person) and 202.
     */
    void deleteConversation(Context ctx) {
        Principal me = principal(ctx);
        if (!me.role().equals("person") && !me.isAdmin()) {
            throw new ApiError(403, "forbidden", "a person deletes an assistant conversation; a " + me.role() + " does not");
        }
        if (router.forwarded(ctx, me)) {
            return;
        }
        String id = ctx.pathParam("id");
        ConversationView v = reads.get().conversation(me.account(), id);
        if (v == null) {
            throw ApiError.notFound("no assistant conversation '" + id + "' in your account (one shows a few seconds after its first turn)");
        }
        if (v.getDeleted()) {
            throw new ApiError(409, "already_deleted", "assistant conversation '" + id + "' was deleted already");
        }
        String requestId = UUID.randomUUID().toString();
        Event e = envelope(requestId, me.account(), "person:" + me.subject(), "person:" + me.subject(),
                ConversationDeletionRequested.newBuilder().setConversationKey(id).setRequestedBy(Requester.person)
                        .setRequesterId(me.subject()).setReason("person").build());
        append(me.account(), e);
        ObjectNode out = N.objectNode();
        out.put("requestId", requestId);
        out.put("conversationKey", id);
        out.put("status", "requested");
        out.put("audit", "/api/audit/deletions?conversationKey=" + java.net.URLEncoder.encode(id, StandardCharsets.UTF_8));
        ctx.status(202).json(out);
    }

    // ---- helpers -------------------------------------------------------------------------------------------------

    private Event envelope(String eventId, String account, String space, String source, Object payload) {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        return Event.newBuilder().setEventId(eventId).setAccount(account).setSpace(space).setOccurredAt(now).setRecordedAt(now)
                .setSource(source).setPayload(payload).build();
    }

    /** The event encoded, checked against {@link Limits} first: a value over a limit is a 400 naming the field. */
    private static byte[] encode(Event e) {
        byte[] bytes;
        try {
            Limits.check(e);
            bytes = Topics.EVENTS.valueSerde().serializer().serialize(Topics.EVENTS.name(), e);
            Limits.checkEncodedSize(e, bytes.length);
        } catch (LimitExceededException ex) {
            throw ApiError.badRequest(ex.getMessage()).with("field", requestField(ex.field())).with("limit", String.valueOf(ex.limit()));
        } catch (InvalidEventException ex) {
            throw ApiError.badRequest(ex.getMessage()).with("field", requestField(ex.field()));
        }
        return bytes;
    }

    /** The request's field behind an event's field path (payload.instructionsAdded → instructionLines). */
    private static String requestField(String path) {
        if (path == null) {
            return "body";
        }
        if (path.startsWith("payload.instructions")) {
            return "instructionLines";
        }
        return path.startsWith("payload.") ? path.substring("payload.".length()) : path.equals("event") ? "body" : path;
    }

    /** Appends the event once (by its eventId): appended, or a duplicate; a 503 when it could not be. */
    private OnceAppender.Outcome append(String account, Event e) {
        OnceAppender.Outcome o = appender.get().append(account, List.of(new OnceAppender.Item(e.getEventId(), encode(e)))).get(0);
        if (!o.appended() && !o.duplicate()) {
            throw new ApiError(503, "unavailable", o.reason());
        }
        return o;
    }

    /** One JSON value (a blank body is an empty object); text after it is a 400. */
    private static JsonNode readJson(Context ctx) {
        String text = Gateway.body(ctx);
        if (text == null || text.isBlank()) {
            return N.objectNode();
        }
        return Gateway.oneJsonValue(text);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
