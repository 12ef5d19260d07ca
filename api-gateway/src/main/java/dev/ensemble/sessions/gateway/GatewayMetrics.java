package dev.ensemble.sessions.gateway;

import io.javalin.http.Context;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /metrics} (docs/operations.md "Metrics"): the registry's meters in the Prometheus text format (version
 * 0.0.4), for a scrape that sends {@code Authorization: Bearer <scrape token>}; any other request is a 401 in the API's
 * JSON error shape. The scrape token is not an API token: it opens {@code /metrics} and nothing else, and no API token
 * opens {@code /metrics}. Also times every HTTP request: {@value #HTTP_REQUESTS} by {@code method}, {@code route} (the
 * route's template, e.g. {@code /api/agent/sessions/{id}}; {@code NOT_FOUND} for a path no route matches) and
 * {@code status}.
 */
final class GatewayMetrics {
    /** The timer of HTTP requests (Prometheus: {@code http_server_requests_seconds_count}, {@code _sum}, {@code _max}). */
    static final String HTTP_REQUESTS = "http.server.requests";

    private final PrometheusMeterRegistry registry;
    private final byte[] expected;

    GatewayMetrics(PrometheusMeterRegistry registry, String scrapeToken) {
        this.registry = registry;
        this.expected = scrapeToken.getBytes(StandardCharsets.UTF_8);
    }

    /** Binds the JVM's meters (memory, GC, threads, classes, CPU, uptime); close the results when done. */
    static List<AutoCloseable> bindJvm(MeterRegistry registry) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        return List.of(gc);
    }

    /** {@code GET /metrics}: the scrape, or a 401 without the scrape token. */
    void scrape(Context ctx) {
        authorize(ctx);
        ctx.contentType(CONTENT_TYPE).result(registry.scrape());
    }

    /** {@code HEAD /metrics}: the scrape's headers without its body, or a 401 without the scrape token, as GET. */
    void head(Context ctx) {
        authorize(ctx);
        ctx.contentType(CONTENT_TYPE);
    }

    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /**
     * A 401 unless the request sends {@code Authorization: Bearer <scrape token>} (the scheme in any case, as RFC 7235
     * and the API's own check allow), compared in constant time.
     */
    private void authorize(Context ctx) {
        String given = ctx.header("Authorization");
        boolean ok = given != null && given.length() > 7 && given.regionMatches(true, 0, "Bearer ", 0, 7)
                && MessageDigest.isEqual(given.substring(7).getBytes(StandardCharsets.UTF_8), expected);
        if (!ok) {
            ctx.header("WWW-Authenticate", "Bearer");
            throw new ApiError(401, "unauthorized", "send the scrape token as 'Authorization: Bearer <token>'; "
                    + "the local one is in <data-dir>/metrics-token (API tokens do not open /metrics)");
        }
    }

    /** Records one finished request (Javalin's request logger: after its status is final). */
    void record(Context ctx, Float millis) {
        Timer.builder(HTTP_REQUESTS).description("HTTP requests the gateway answered")
                .tag("method", ctx.method().name())
                .tag("route", route(ctx))
                .tag("status", String.valueOf(ctx.statusCode()))
                .register(registry)
                .record(Math.round(millis == null ? 0 : millis * 1000.0), TimeUnit.MICROSECONDS);
    }

    /** The template of the route that answered ({@code NOT_FOUND} when none matched), never the path itself. */
    static String route(Context ctx) {
        String path;
        try {
            path = ctx.endpointHandlerPath();
        } catch (RuntimeException none) {
            path = "";
        }
        if (path == null || path.isEmpty() || path.equals("*")) {
            return ctx.statusCode() == 404 ? "NOT_FOUND" : "UNMATCHED";
        }
        return path;
    }
}
