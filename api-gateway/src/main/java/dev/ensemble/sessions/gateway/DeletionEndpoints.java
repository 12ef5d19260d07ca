package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementComputer;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionView;
import io.javalin.http.Context;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The deletion endpoints (guide §6, DESIGN.md §7):
 * <ul>
 *   <li>{@code DELETE /api/agent/sessions/{id}}: refused with 409, naming the computer to connect or update,
 *       unless every computer that ran the session (while a deletion is under way: every computer that has
 *       not confirmed) is online and reports sessionDelete 1 or more; otherwise a SessionDeletionRequested
 *       (requestedBy person, or node, with the runs the caller's view shows) goes to the log and the answer is
 *       202 with the request id. The projector's guard decides; the audit says what it decided. A node deletes
 *       only sessions it started for itself (sourceRef {@code node:<its id>}) and only with its owner's
 *       confirmation ({@code confirmedBy} in the body), else 403.</li>
 *   <li>{@code GET /api/audit/deletions?sessionId=&conversationKey=&since=&reason=&limit=}: the audit records of the
 *       account, newest request first (a node sees those of its own sessions); {@code conversationKey}: an assistant
 *       conversation's deletions only.</li>
 *   <li>{@code POST /api/cleanup/sweep} (admin only): a CleanupCommand on {@code sessions.cleanup.commands}
 *       for one account ({@code account} in the body) or every account (one record per partition); 202.</li>
 * </ul>
 */
final class DeletionEndpoints {
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    /** The most audit records one answer holds. */
    static final int MAX_AUDITS = 1000;

    /** Read-side routing: true when the request was answered by the instance that holds the account. */
    interface Router {
        boolean forwarded(Context ctx, Principal me);
    }

    private final java.util.function.Supplier<SessionReads> reads;
    private final Producer<String, byte[]> producer;
    private final Clock clock;
    private final Router router;

    /** @param reads the read side (started after the routes are registered, so it is looked up per request) */
    DeletionEndpoints(java.util.function.Supplier<SessionReads> reads, Producer<String, byte[]> producer, Clock clock, Router router) {
        this.reads = reads;
        this.producer = producer;
        this.clock = clock;
        this.router = router;
    }

    private static Principal principal(Context ctx) {
        return ctx.attribute("principal");
    }

    // ---- DELETE /api/agent/sessions/{id} ---------------------------------------------------------------

    void deleteSession(Context ctx) {
        Principal me = principal(ctx);
        boolean node = me.role().equals("node");
        if (!node && !me.role().equals("person") && !me.isAdmin()) {
            throw new ApiError(403, "forbidden", "a " + me.role() + " does not delete sessions; a person or a node does");
        }
        if (router.forwarded(ctx, me)) {
            return;
        }
        String id = ctx.pathParam("id");
        JsonNode body = body(ctx);
        checkDeletionBody(body);
        SessionView s = reads.get().get(me.account(), id);
        if (s == null) {
            throw ApiError.notFound("no session '" + id + "' in your account");
        }
        String confirmedBy = text(body, "confirmedBy");
        if (node) {
            if (!("node:" + me.subject()).equals(s.getSourceRef())) {
                throw new ApiError(403, "not_own_session", "a node deletes only the sessions it started for itself (sourceRef node:"
                        + me.subject() + "); this one is not");
            }
            if (confirmedBy == null) {
                throw new ApiError(403, "confirmation_required", "a node deletes a session only with its owner's confirmation: "
                        + "ask the owner and send {\"confirmedBy\": \"<owner>\"}");
            }
        }
        if (s.getDeleted()) {
            throw new ApiError(409, "already_deleted", "session '" + id + "' was deleted already");
        }
        RetirementView rv = reads.get().retirement(me.account(), id);
        List<String> mustDelete = new ArrayList<>(s.getComputerIds());
        if (s.getDeleting() && rv != null && rv.getDeletion() != null) {
            mustDelete = new ArrayList<>(rv.getDeletion().getOwedComputerIds());
        }
        for (String computer : mustDelete) {
            RetirementComputer c = rv == null ? null : rv.getComputers().stream().filter(x -> x.getComputerId().equals(computer))
                    .findFirst().orElse(null);
            if (c == null || !c.getKnown() || !c.getOnline()) {
                throw unavailable(computer, "connect", "computer '" + computer + "' " + (c == null || !c.getKnown()
                        ? "has not reported its status" : "is offline") + ": connect it, then delete the session again; nothing was hidden");
            }
            if (c.getSessionDelete() < 1) {
                throw unavailable(computer, "update", "computer '" + computer + "' runs a version that cannot delete sessions"
                        + " (sessionDelete " + c.getSessionDelete() + "): update it, then delete the session again; nothing was hidden");
            }
        }
        List<String> runIds = new ArrayList<>();
        JsonNode saw = body.path("runIds");
        if (saw.isArray()) {
            saw.forEach(r -> runIds.add(r.asText()));
        } else {
            for (RunView r : s.getRuns()) {
                runIds.add(r.getRunId());
            }
        }
        String reason = text(body, "reason");
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        Event e = Event.newBuilder().setEventId(UUID.randomUUID().toString()).setAccount(me.account()).setSpace(s.getSpace())
                .setOccurredAt(now).setRecordedAt(now).setSource((node ? "node:" : "person:") + me.subject())
                .setPayload(SessionDeletionRequested.newBuilder().setSessionId(id).setRequestedBy(node ? Requester.node : Requester.person)
                        .setRequesterId(me.subject()).setReason(reason != null ? reason : node ? "node" : "person").setRunIds(runIds)
                        .setConfirmedBy(confirmedBy).build())
                .build();
        send(new ProducerRecord<>(Topics.EVENTS.name(), me.account(),
                Topics.EVENTS.valueSerde().serializer().serialize(Topics.EVENTS.name(), e)));
        ObjectNode out = N.objectNode();
        out.put("requestId", e.getEventId());
        out.put("sessionId", id);
        out.put("status", "requested");
        ArrayNode runs = out.putArray("runIds");
        runIds.forEach(runs::add);
        out.put("audit", "/api/audit/deletions?sessionId=" + id);
        ctx.status(202).json(out);
    }

    private static ApiError unavailable(String computer, String action, String message) {
        return new ApiError(409, "computer_unavailable", message).with("computer", computer).with("action", action);
    }

    // ---- GET /api/audit/deletions ----------------------------------------------------------------------

    void audit(Context ctx) {
        Principal me = principal(ctx);
        if (router.forwarded(ctx, me)) {
            return;
        }
        String sessionId = blankToNull(ctx.queryParam("sessionId"));
        String conversationKey = blankToNull(ctx.queryParam("conversationKey"));
        String reason = blankToNull(ctx.queryParam("reason"));
        Instant since = null;
        String sinceText = blankToNull(ctx.queryParam("since"));
        if (sinceText != null) {
            try {
                since = Instant.parse(sinceText);
            } catch (DateTimeParseException e) {
                throw ApiError.badRequest("since must be an ISO-8601 instant such as 2026-11-02T09:00:00Z, not '" + sinceText + "'")
                        .with("field", "since");
            }
        }
        int limit = 100;
        String limitText = blankToNull(ctx.queryParam("limit"));
        if (limitText != null) {
            try {
                limit = Integer.parseInt(limitText.trim());
            } catch (NumberFormatException e) {
                throw ApiError.badRequest("limit must be a whole number, not '" + limitText + "'").with("field", "limit");
            }
            if (limit < 1 || limit > MAX_AUDITS) {
                throw ApiError.badRequest("limit must be between 1 and " + MAX_AUDITS + ", not " + limit).with("field", "limit");
            }
        }
        String ownNode = me.role().equals("node") ? "node:" + me.subject() : null;
        Instant from = since;
        List<DeletionAudit> selected = reads.get().audits(me.account()).stream()
                .filter(a -> sessionId == null || sessionId.equals(a.getSessionId()))
                .filter(a -> conversationKey == null || conversationKey.equals(a.getConversationKey()))
                .filter(a -> reason == null || reason.equals(a.getReason()))
                .filter(a -> from == null || !a.getRequestedAt().isBefore(from))
                .filter(a -> ownNode == null || ownNode.equals(a.getSessionSourceRef()))
                .sorted(Comparator.comparing(DeletionAudit::getRequestedAt).reversed().thenComparing(DeletionAudit::getRequestId))
                .limit(limit)
                .toList();
        ArrayNode arr = N.arrayNode();
        for (DeletionAudit a : selected) {
            arr.add(EventJson.recordToJson(a));
        }
        ObjectNode out = N.objectNode();
        out.set("deletions", arr);
        ctx.json(out);
    }

    // ---- POST /api/cleanup/sweep -----------------------------------------------------------------------

    void sweep(Context ctx) {
        Principal me = principal(ctx);
        if (!me.isAdmin()) {
            throw new ApiError(403, "forbidden", "only the admin runs a sweep");
        }
        JsonNode body = body(ctx);
        String account = text(body, "account");
        if (account == null) {
            account = blankToNull(ctx.queryParam("account"));
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        CleanupCommand c = CleanupCommand.newBuilder().setCommandId(UUID.randomUUID().toString()).setAccount(account)
                .setRequestedBy("admin:" + me.subject()).setRequestedAt(now).build();
        byte[] value = Topics.CLEANUP_COMMANDS.valueSerde().serializer().serialize(Topics.CLEANUP_COMMANDS.name(), c);
        if (account != null) {
            send(new ProducerRecord<>(Topics.CLEANUP_COMMANDS.name(), account, value));
        } else {
            for (PartitionInfo p : producer.partitionsFor(Topics.CLEANUP_COMMANDS.name())) {
                send(new ProducerRecord<>(Topics.CLEANUP_COMMANDS.name(), p.partition(), "*", value));
            }
        }
        ObjectNode out = N.objectNode();
        out.put("commandId", c.getCommandId());
        out.put("account", account == null ? "*" : account);
        out.put("status", "sweeping");
        out.put("message", "the cleanup service sweeps " + (account == null ? "every account" : "account '" + account + "'")
                + " now; what it asks for shows in GET /api/audit/deletions");
        ctx.status(202).json(out);
    }

    // ---- helpers ---------------------------------------------------------------------------------------

    private void send(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "unavailable", "interrupted while writing to Kafka; try again");
        } catch (ExecutionException | TimeoutException e) {
            throw new ApiError(503, "unavailable", "Kafka did not take the request (" + e.getMessage() + "); try again");
        }
    }

    private static JsonNode body(Context ctx) {
        String text = Gateway.body(ctx);
        if (text == null || text.isBlank()) {
            return N.objectNode();
        }
        JsonNode n = Gateway.oneJsonValue(text);
        if (!n.isObject()) {
            throw ApiError.badRequest("the body must be a JSON object");
        }
        return n;
    }

    /** The fields a deletion request's body may hold. */
    private static final List<String> DELETION_FIELDS = List.of("confirmedBy", "reason", "runIds");

    /**
     * A deletion request's body, checked before anything is looked up or sent: only {@link #DELETION_FIELDS}, each of its
     * type ({@code confirmedBy} and {@code reason} strings, {@code runIds} an array of run ids), null or absent; else a 400
     * naming the field. A deletion is not guessed from a body it cannot read.
     */
    static void checkDeletionBody(JsonNode body) {
        for (java.util.Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String f = names.next();
            if (!DELETION_FIELDS.contains(f)) {
                throw ApiError.badRequest(f + ": not a field of a deletion request (it takes " + String.join(", ", DELETION_FIELDS) + ")")
                        .with("field", f);
            }
        }
        for (String f : List.of("confirmedBy", "reason")) {
            JsonNode n = body.get(f);
            if (n != null && !n.isNull() && !n.isTextual()) {
                throw ApiError.badRequest(f + ": must be a string, not " + kind(n)).with("field", f);
            }
        }
        JsonNode runs = body.get("runIds");
        if (runs != null && !runs.isNull()) {
            if (!runs.isArray()) {
                throw ApiError.badRequest("runIds: must be an array of run ids (the runs you saw in the session), not " + kind(runs))
                        .with("field", "runIds");
            }
            for (int i = 0; i < runs.size(); i++) {
                if (!runs.get(i).isTextual() || runs.get(i).asText().isBlank()) {
                    throw ApiError.badRequest("runIds[" + i + "]: must be a run id (a non-empty string), not " + kind(runs.get(i)))
                            .with("field", "runIds[" + i + "]");
                }
            }
        }
    }

    /** What a JSON value is, for an error message: "a number", "an array", ... */
    private static String kind(JsonNode n) {
        return switch (n.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case NUMBER -> "a number";
            case BOOLEAN -> "true or false";
            case STRING -> n.asText().isBlank() ? "an empty string" : "a string";
            case NULL -> "null";
            default -> n.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static String text(JsonNode body, String field) {
        JsonNode n = body.get(field);
        return n == null || !n.isTextual() || n.asText().isBlank() ? null : n.asText();
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
