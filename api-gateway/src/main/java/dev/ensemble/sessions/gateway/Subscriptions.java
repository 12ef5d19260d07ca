package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;

import java.io.IOException;
import java.time.Duration;

/**
 * The subscription endpoints of DESIGN.md §7, registered on the gateway's server:
 * <ul>
 *   <li>{@code GET /api/agent/sessions/{id}/events?after=CURSOR&limit=N}: the session's events after a cursor
 *   (persistent-sessions guide, "The output buffer"): {@code events} (each {@code cursor} and {@code event}),
 *   {@code next}, {@code truncated}, {@code oldest}, {@code latest}. Cursors are the session's event sequence numbers
 *   ({@code 0} = from the start); limit 1..{@value #MAX_LIMIT}, default 100. 404 for a session the account does not
 *   have; 503 {@code starting} (with Retry-After) until the feed has read the log once after a start; 400 {@code cursor_ahead} (with {@code latest}) for a
 *   cursor beyond the session's latest event once the feed has read the log to its end.</li>
 *   <li>{@code GET /api/events/stream?after=CURSOR}: see {@link EventStream}.</li>
 * </ul>
 * Both are authenticated like every {@code /api} route; an account sees only its own events.
 */
final class Subscriptions implements AutoCloseable {
    static final int MAX_LIMIT = 1000;
    /** How long a read with a cursor ahead of its session waits for the feed to read the log to its end before answering. */
    static final Duration AHEAD_WAIT = Duration.ofSeconds(2);
    /** How long the log's stable end is read again, every {@link #AHEAD_RETRY}, while a cursor is still ahead of it. */
    static final Duration AHEAD_SETTLE = Duration.ofMillis(500);
    static final Duration AHEAD_RETRY = Duration.ofMillis(50);
    private static final String STREAM_FROM = "ensemble.stream.from";
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    private final SessionEventsFeed feed;
    private final EventStream stream;

    /** @param clientProperties the cluster's client properties (security settings) for its consumers */
    Subscriptions(String bootstrapServers, java.util.Map<String, ?> clientProperties, long windowBytes) {
        feed = new SessionEventsFeed(bootstrapServers, clientProperties, windowBytes).start();
        stream = new EventStream(bootstrapServers, clientProperties, feed);
    }

    /** Binds the session-events feed's consumer metrics to a registry; close the result before this. */
    AutoCloseable bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
        return feed.bindMetrics(registry);
    }

    /** Whether the gateway has read the account's eventId in the log already. */
    boolean knows(String account, String eventId) {
        return feed.buffers().firstPosition(account, eventId) != null;
    }

    /** The content fingerprint of the account's eventId as the gateway read it in the log, or null when it has not. */
    Long content(String account, String eventId) {
        return feed.buffers().firstContent(account, eventId);
    }

    /** Waits until the gateway has read the log up to its end as it is now; false on timeout. */
    boolean awaitLogEnd(Duration timeout) throws InterruptedException {
        return feed.awaitLogEnd(timeout);
    }

    void register(Javalin app) {
        app.get("/api/agent/sessions/{id}/events", this::sessionEvents);
        app.before("/api/events/stream", ctx -> {
            // the cursor is checked before the stream's headers go out, so a wrong one is answered with a JSON error
            if (ctx.method() == HandlerType.GET) {
                Principal me = ctx.attribute("principal");
                String last = ctx.header("Last-Event-ID");
                ctx.attribute(STREAM_FROM, stream.check(me.account(), last != null && !last.isBlank() ? last : ctx.queryParam("after")));
            }
        });
        app.sse("/api/events/stream", client -> {
            Principal me = client.ctx().attribute("principal");
            stream.serve(client, me.account(), client.ctx().attribute(STREAM_FROM));
        });
    }

    /** Whether the session-events feed has read the log up to where it was at start. */
    boolean caughtUp() {
        return feed.caughtUp();
    }

    /** Waits until the session-events feed has read the log up to where it was at start. */
    boolean awaitReady(Duration timeout) throws InterruptedException {
        return feed.awaitCaughtUp(timeout);
    }

    private void sessionEvents(Context ctx) throws IOException, InterruptedException {
        Principal me = ctx.attribute("principal");
        if (!feed.caughtUp()) {
            throw ApiError.starting("the gateway is still reading the event log after a start; try again in a few seconds");
        }
        long after = longParam(ctx, "after", 0);
        int limit = (int) Math.min(Integer.MAX_VALUE, longParam(ctx, "limit", 100));
        if (limit < 1 || limit > MAX_LIMIT) throw ApiError.badRequest("limit must be between 1 and " + MAX_LIMIT + ", not " + limit).with("field", "limit");
        String id = ctx.pathParam("id");
        SessionEventBuffers.Page page = feed.buffers().read(me.account(), id, after, limit);
        if (page == null) throw ApiError.notFound("no session '" + id + "' in your account");
        if (after > page.latest()) {
            // ahead of what this gateway has read: first read the log up to now (another instance may have been quicker)
            if (!feed.awaitLogEnd(AHEAD_WAIT)) {
                throw new ApiError(503, "unavailable", "the gateway has not read the event log up to cursor " + after + " yet; try again");
            }
            page = feed.buffers().read(me.account(), id, after, limit);
            // a transaction's commit markers reach the log shortly after its producer was told it committed: the log's
            // stable end is read again for up to AHEAD_SETTLE before the cursor is called ahead
            long until = System.nanoTime() + AHEAD_SETTLE.toNanos();
            while (after > page.latest() && System.nanoTime() < until) {
                Thread.sleep(AHEAD_RETRY.toMillis());
                feed.awaitLogEnd(Duration.ofNanos(Math.max(until - System.nanoTime(), 1))); // what it has read is enough
                page = feed.buffers().read(me.account(), id, after, limit);
            }
            if (after > page.latest()) {
                throw new ApiError(400, "cursor_ahead", "cursor " + after + " is ahead of session '" + id + "': its latest cursor is "
                        + page.latest() + " (a cursor from a log since reset, or another session's?); resume with after="
                        + page.latest() + " for what comes next, or after=0 for all its events")
                        .with("latest", String.valueOf(page.latest()));
            }
        }
        ObjectNode out = N.objectNode().put("sessionId", id);
        ArrayNode arr = out.putArray("events");
        for (SessionEventBuffers.Entry e : page.events()) {
            ObjectNode o = arr.addObject().put("cursor", String.valueOf(e.seq()));
            o.set("event", dev.ensemble.sessions.schema.EventJson.mapper().readTree(e.json()));
        }
        out.put("next", String.valueOf(page.next())).put("truncated", page.truncated())
                .put("oldest", String.valueOf(page.oldest())).put("latest", String.valueOf(page.latest()));
        ctx.json(out);
    }

    private static long longParam(Context ctx, String name, long dflt) {
        String v = ctx.queryParam(name);
        if (v == null || v.isBlank()) return dflt;
        try {
            long l = Long.parseLong(v.trim());
            if (l < 0) throw ApiError.badRequest(name + " must not be negative, not " + l).with("field", name);
            return l;
        } catch (NumberFormatException e) {
            if (v.trim().matches("\\d+")) {
                throw ApiError.badRequest(name + " must be at most " + Long.MAX_VALUE + ", not " + v.trim()).with("field", name);
            }
            throw ApiError.badRequest(name + " must be a whole number, not '" + v + "'").with("field", name);
        }
    }

    @Override
    public void close() {
        stream.close();
        feed.close();
    }
}
