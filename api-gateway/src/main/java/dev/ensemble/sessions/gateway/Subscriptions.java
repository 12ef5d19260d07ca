package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.Javalin;
import io.javalin.http.Context;

import java.io.IOException;
import java.time.Duration;

/**
 * The subscription endpoints of DESIGN.md §7, registered on the gateway's server:
 * <ul>
 *   <li>{@code GET /api/agent/sessions/{id}/events?after=CURSOR&limit=N}: the session's events after a cursor
 *   (persistent-sessions guide, "The output buffer"): {@code events} (each {@code cursor} and {@code event}),
 *   {@code next}, {@code truncated}, {@code oldest}, {@code latest}. Cursors are the session's event sequence numbers
 *   ({@code 0} = from the start); limit 1..{@value #MAX_LIMIT}, default 100. 404 for a session the account does not
 *   have; 503 until the feed has read the log once after a start.</li>
 *   <li>{@code GET /api/events/stream?after=CURSOR}: see {@link EventStream}.</li>
 * </ul>
 * Both are authenticated like every {@code /api} route; an account sees only its own events.
 */
final class Subscriptions implements AutoCloseable {
    static final int MAX_LIMIT = 1000;
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    private final SessionEventsFeed feed;
    private final EventStream stream;

    Subscriptions(String bootstrapServers, long windowBytes) {
        feed = new SessionEventsFeed(bootstrapServers, windowBytes).start();
        stream = new EventStream(bootstrapServers, feed.buffers());
    }

    /** Whether the gateway has read the account's eventId in the log already. */
    boolean knows(String account, String eventId) {
        return feed.buffers().firstPosition(account, eventId) != null;
    }

    void register(Javalin app) {
        app.get("/api/agent/sessions/{id}/events", this::sessionEvents);
        app.sse("/api/events/stream", client -> {
            Principal me = client.ctx().attribute("principal");
            stream.serve(client, me.account());
        });
    }

    /** Waits until the session-events feed has read the log up to where it was at start. */
    boolean awaitReady(Duration timeout) throws InterruptedException {
        return feed.awaitCaughtUp(timeout);
    }

    private void sessionEvents(Context ctx) throws IOException {
        Principal me = ctx.attribute("principal");
        if (!feed.caughtUp()) {
            throw new ApiError(503, "unavailable", "the gateway is still reading the event log after a start; try again in a few seconds");
        }
        long after = longParam(ctx, "after", 0);
        int limit = (int) Math.min(Integer.MAX_VALUE, longParam(ctx, "limit", 100));
        if (limit < 1 || limit > MAX_LIMIT) throw ApiError.badRequest("limit must be between 1 and " + MAX_LIMIT + ", not " + limit);
        String id = ctx.pathParam("id");
        SessionEventBuffers.Page page = feed.buffers().read(me.account(), id, after, limit);
        if (page == null) throw ApiError.notFound("no session '" + id + "' in your account");
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
            if (l < 0) throw ApiError.badRequest(name + " must not be negative, not " + l);
            return l;
        } catch (NumberFormatException e) {
            throw ApiError.badRequest(name + " must be a whole number, not '" + v + "'");
        }
    }

    @Override
    public void close() {
        stream.close();
        feed.close();
    }
}
