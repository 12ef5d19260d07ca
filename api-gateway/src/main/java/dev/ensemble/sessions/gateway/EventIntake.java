package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.LimitExceededException;
import dev.ensemble.sessions.schema.Limits;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code POST /api/events}: takes one event or a batch (a JSON array, or {@code {"events": [...]}}) in the
 * JSON form, and appends each valid event of the caller's account to the event log, keyed by account. Each
 * event is answered on its own: {@code accepted} (with its eventId; an eventId the log holds already, or that an
 * earlier event of the batch or a concurrent post carries, is answered {@code accepted} with {@code duplicate: true}
 * and not appended again: {@link OnceAppender} checks and appends as one step per eventId across threads and
 * gateway instances), or {@code rejected} with the reason and an {@code error} code: {@code invalid} (with the
 * {@code field} and the problem), {@code too_large} (over one of the {@link Limits}: the {@code field} and the
 * {@code limit}), {@code forbidden} (another account, or a deletion event this principal may not post:
 * {@link DeletionEventPolicy}), {@code conflict} ({@code field} {@code eventId}: the log holds that eventId for an event
 * that says something else, {@link dev.ensemble.sessions.schema.EventContent}; dead-lettered like an invalid one) or
 * {@code unavailable} (the log did not take it: post it again). Each answer is true of
 * its event: an accepted one is in the log, a rejected one is not; a rejected event never makes the batch lose the good
 * ones. Invalid and too large events also go to the dead-letter topic with the reason in the header
 * {@code ensemble.error.reason}, so nothing sent is lost. The request's status: 200 when any event is accepted, else
 * 503 when any is {@code unavailable} (the log did not take it: post the batch again), else 403 when every refusal is a
 * forbidden one, 413 when every refusal is a too large one, 409 when every refusal is a conflict, else 400 (an invalid
 * one, or refusals of several kinds).
 *
 * <p>Counted (docs/operations.md "Metrics"): {@value #ACCEPTED} by {@code type} (duplicates included: they are answered
 * accepted), {@value #REFUSED} by {@code type} and {@code error}, and dead letters
 * ({@link dev.ensemble.sessions.streams.ServiceMeters#DEAD_LETTERED}, {@code service} {@code gateway}); a type that is
 * not one of the guide's event types is counted as {@code unknown}.
 */
public final class EventIntake {
    /** The most events one request may carry ({@link Limits#MAX_BATCH_EVENTS}). */
    public static final int MAX_BATCH = Limits.MAX_BATCH_EVENTS;
    /** At most this many fields an accepted event's answer names as {@code ignored} (the first ones, in the order given). */
    static final int MAX_IGNORED = 20;

    private final Producer<String, byte[]> producer;
    private final Clock clock;
    private final OnceAppender appender;
    private final io.micrometer.core.instrument.MeterRegistry meters;
    /** The counter of events answered accepted. */
    public static final String ACCEPTED = "ensemble.events.accepted";
    /** The counter of events answered rejected. */
    public static final String REFUSED = "ensemble.events.refused";

    /**
     * @param producer the producer of the dead-letter topic
     * @param appender appends the accepted events, each eventId once
     */
    EventIntake(Producer<String, byte[]> producer, Clock clock, OnceAppender appender) {
        this(producer, clock, appender, null);
    }

    /** @param meters where it counts the events it takes and refuses (none: not counted) */
    EventIntake(Producer<String, byte[]> producer, Clock clock, OnceAppender appender, io.micrometer.core.instrument.MeterRegistry meters) {
        this.producer = producer;
        this.clock = clock;
        this.appender = appender;
        this.meters = dev.ensemble.sessions.streams.ServiceMeters.orNone(meters);
    }

    private void count(String name, String type, String error) {
        io.micrometer.core.instrument.Counter.Builder b = io.micrometer.core.instrument.Counter.builder(name).tag("type", type);
        if (error != null) {
            b.tag("error", error);
        }
        b.description(error == null ? "events answered accepted by POST /api/events" : "events answered rejected by POST /api/events")
                .register(meters).increment();
    }

    /** The type an event names, for counting: one of the guide's types, else {@code unknown}. */
    private static String typeNamed(JsonNode item) {
        return dev.ensemble.sessions.streams.ServiceMeters.eventType(item.path("type").isTextual() ? item.path("type").asText() : null);
    }

    /** The outcome of one request: the per-event answers and the HTTP status that fits them. */
    public record Result(int status, ObjectNode body) {
    }

    /** Handles a request body posted by {@code principal}. */
    public Result post(Principal principal, JsonNode body) {
        JsonNode list = body != null && body.isObject() && body.has("events") ? body.get("events") : body;
        List<JsonNode> items = new ArrayList<>();
        if (list == null || list.isNull() || list.isMissingNode()) {
            throw ApiError.badRequest("the body must be an event, an array of events, or {\"events\": [...]}");
        } else if (list.isArray()) {
            list.forEach(items::add);
        } else if (list.isObject()) {
            items.add(list);
        } else {
            throw ApiError.badRequest("the body must be an event, an array of events, or {\"events\": [...]}");
        }
        if (items.isEmpty()) {
            throw ApiError.badRequest("the batch is empty: send at least one event");
        }
        if (items.size() > MAX_BATCH) {
            throw ApiError.badRequest("a batch holds at most " + MAX_BATCH + " events; this one has " + items.size() + ": split it");
        }
        ArrayNode results = JsonNodeFactory.instance.arrayNode();
        List<OnceAppender.Item> appends = new ArrayList<>();
        List<Pending> pending = new ArrayList<>(); // each append's answer, type and JSON, in the same order
        int accepted = 0, invalid = 0, forbidden = 0, tooLarge = 0, conflicts = 0;
        for (int i = 0; i < items.size(); i++) {
            JsonNode item = items.get(i);
            ObjectNode r = results.addObject();
            r.put("index", i);
            String id = item.path("eventId").isTextual() ? item.path("eventId").asText() : null;
            r.put("eventId", id);
            Event e;
            if (item instanceof Gateway.UnreadableLine line) { // a line of JSON Lines that is not JSON: refused on its own
                r.put("status", "rejected").put("error", "invalid").put("reason", line.reason());
                deadLetter(principal, item, line.reason(), new InvalidEventException(null, null, null, line.reason()));
                invalid++;
                continue;
            }
            List<String> ignored = new ArrayList<>(); // a misspelt optional field would be lost without a word
            try {
                e = EventJson.fromJson(item, clock, ignored);
                e.setRecordedAt(clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
            } catch (InvalidEventException ex) {
                refuse(r, ex);
                deadLetter(principal, item, ex.getMessage(), ex);
                if (ex instanceof LimitExceededException) tooLarge++;
                else invalid++;
                continue;
            }
            String type = dev.ensemble.sessions.schema.EventTypes.typeOf(e);
            if (!e.getAccount().equals(principal.account())) {
                r.put("status", "rejected").put("error", "forbidden").put("field", "account").put("reason", "forbidden: this token may post events only for account '"
                        + principal.account() + "', not '" + e.getAccount() + "'");
                count(REFUSED, type, "forbidden");
                forbidden++;
                continue;
            }
            String refused = DeletionEventPolicy.refusal(principal, e);
            if (refused != null) {
                r.put("status", "rejected").put("error", "forbidden").put("reason", "forbidden: " + refused);
                count(REFUSED, type, "forbidden");
                forbidden++;
                continue;
            }
            byte[] bytes;
            try { // encoded here, before anything is sent, so that an event that cannot be written is refused on its own
                bytes = Topics.EVENTS.valueSerde().serializer().serialize(Topics.EVENTS.name(), e);
                Limits.checkEncodedSize(e, bytes.length);
            } catch (SerializationException ex) {
                InvalidEventException refusal = new InvalidEventException(e.getEventId(), dev.ensemble.sessions.schema.EventTypes.typeOf(e),
                        "event", "cannot be written to the log: " + ex.getMessage());
                refuse(r, refusal);
                deadLetter(principal, item, refusal.getMessage(), refusal);
                invalid++;
                continue;
            } catch (LimitExceededException ex) {
                refuse(r, ex);
                deadLetter(principal, item, ex.getMessage(), ex);
                tooLarge++;
                continue;
            }
            appends.add(new OnceAppender.Item(e.getEventId(), bytes, dev.ensemble.sessions.schema.EventContent.fingerprint(e)));
            pending.add(new Pending(r, type, item));
            r.put("status", "accepted").put("type", dev.ensemble.sessions.schema.EventTypes.typeOf(e));
            if (!ignored.isEmpty()) {
                ignored.stream().limit(MAX_IGNORED).forEach(r.putArray("ignored")::add);
            }
            accepted++;
        }
        // the duplicate check and the append, as one step per eventId (all events here are the principal's account's)
        List<OnceAppender.Outcome> outcomes = appender.append(principal.account(), appends);
        for (int i = 0; i < outcomes.size(); i++) {
            OnceAppender.Outcome o = outcomes.get(i);
            Pending p = pending.get(i);
            ObjectNode r = p.answer();
            if (o.duplicate()) {
                r.put("duplicate", true); // in the log already (or earlier in this batch): not appended again
                count(ACCEPTED, p.type(), null);
            } else if (o.conflict()) { // its eventId names another event in the log: kept in the dead-letter topic
                r.remove("ignored");
                r.put("status", "rejected").put("error", "conflict").put("field", "eventId").put("reason", o.reason());
                deadLetter(principal, p.item(), o.reason(), "conflict");
                accepted--;
                conflicts++;
            } else if (!o.appended()) {
                r.remove("ignored"); // said of an accepted event only
                r.put("status", "rejected").put("error", "unavailable").put("reason", o.reason());
                count(REFUSED, p.type(), "unavailable");
                accepted--;
            } else {
                count(ACCEPTED, p.type(), null);
            }
        }
        int rejected = items.size() - accepted;
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("accepted", accepted);
        out.put("rejected", rejected);
        out.set("results", results);
        int unavailable = rejected - forbidden - tooLarge - invalid - conflicts; // the log did not take them
        int status = accepted > 0 ? 200 : unavailable > 0 ? 503 : forbidden == rejected ? 403 : tooLarge == rejected ? 413
                : conflicts == rejected ? 409 : 400;
        return new Result(status, out);
    }

    /** Marks an answer rejected for an invalid or too large event: its error code, reason, field and limit. */
    private static void refuse(ObjectNode r, InvalidEventException ex) {
        r.put("status", "rejected").put("error", ex instanceof LimitExceededException ? "too_large" : "invalid").put("reason", ex.getMessage());
        if (ex.field() != null) r.put("field", ex.field());
        if (ex instanceof LimitExceededException l) r.put("limit", l.limit());
    }

    /** One event taken for the append: its answer (filled in once appended), its type and its JSON as posted. */
    private record Pending(ObjectNode answer, String type, JsonNode item) {
    }

    /** Counts a refusal of an invalid or too large event and writes it to the dead-letter topic. */
    private void deadLetter(Principal principal, JsonNode item, String reason, InvalidEventException ex) {
        deadLetter(principal, item, reason, ex instanceof LimitExceededException ? "too_large" : "invalid");
    }

    /** Counts a refusal ({@code error}: its code) and writes the event to the dead-letter topic. */
    private void deadLetter(Principal principal, JsonNode item, String reason, String error) {
        String type = typeNamed(item);
        count(REFUSED, type, error);
        dev.ensemble.sessions.streams.ServiceMeters.deadLettered(meters, type, "gateway");
        deadLetter(principal, item, reason);
    }

    private void deadLetter(Principal principal, JsonNode item, String reason) {
        RecordHeaders h = new RecordHeaders();
        h.add("ensemble.error.reason", reason.getBytes(StandardCharsets.UTF_8));
        h.add("ensemble.error.source", ("gateway:" + principal.account() + ":" + principal.subject()).getBytes(StandardCharsets.UTF_8));
        byte[] key = principal.account().getBytes(StandardCharsets.UTF_8);
        byte[] value = item.toString().getBytes(StandardCharsets.UTF_8);
        producer.send(new ProducerRecord<>(Topics.DEAD_LETTER.name(), null, null, new String(key, StandardCharsets.UTF_8), value, h));
    }
}
