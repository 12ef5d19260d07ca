package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.schema.EventJson;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.views.SessionView;
import io.javalin.Javalin;
import io.javalin.http.Context;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The API gateway service (DESIGN.md §7): JSON over HTTP, every {@code /api} request authenticated by a
 * bearer token ({@link Tokens}); a request sees only its account's sessions (another account's session
 * answers 404) and posts events only for its own account (403). Documented in {@code /api/openapi.yaml}.
 *
 * <p>Life cycle: {@link #start()} opens the read side and the HTTP port; {@link #stop()} closes both.
 */
public final class Gateway implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
    private static final JsonNodeFactory N = JsonNodeFactory.instance;
    /** The most sessions one list answers with. */
    public static final int MAX_LIMIT = 500;

    /**
     * Settings of one gateway instance.
     *
     * @param bootstrapServers  the Kafka cluster
     * @param host              the address to listen on (127.0.0.1 for the local default)
     * @param port              the HTTP port (0 picks a free one)
     * @param stateDir          where the read side keeps its store
     * @param replicationFactor of the read side's changelog
     * @param tokens            the bearer tokens it accepts
     * @param clock             sets recordedAt on posted events
     * @param choiceUrl         base URL of the choice service's decision endpoint, or null when none runs
     * @param choiceSecret      the choice service's secret, sent as {@code Authorization: Bearer} with each request
     *                          forwarded to it; required with {@code choiceUrl}
     * @throws IllegalArgumentException when {@code choiceUrl} is given without {@code choiceSecret}
     */
    public record Settings(String bootstrapServers, String host, int port, Path stateDir, int replicationFactor,
                           Tokens tokens, Clock clock, String choiceUrl, String choiceSecret) {
        public Settings {
            if (choiceUrl != null && (choiceSecret == null || choiceSecret.isBlank())) {
                throw new IllegalArgumentException("a choice service URL needs that service's secret (ChoiceService.secret())");
            }
        }

        /** Settings without a choice service. */
        public Settings(String bootstrapServers, String host, int port, Path stateDir, int replicationFactor,
                        Tokens tokens, Clock clock) {
            this(bootstrapServers, host, port, stateDir, replicationFactor, tokens, clock, null, null);
        }
    }

    private final Settings settings;
    private final HttpClient forwarder = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private Javalin app;
    private final BrowserLogins logins;
    private SessionReads reads;
    private Producer<String, byte[]> producer;
    private EventIntake intake;
    private OnceAppender appender;
    private volatile int eventPartitions;
    /**
     * How long a request may go without a byte arriving or leaving while it is handled (Jetty's idle timeout for a
     * request's reads and writes): a body that stalls for longer is answered 408.
     */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(15);
    /** The largest request body taken (bytes, {@link dev.ensemble.sessions.schema.Limits#MAX_REQUEST_BYTES}); a larger one is answered 413 in JSON. */
    static final long MAX_BODY_BYTES = dev.ensemble.sessions.schema.Limits.MAX_REQUEST_BYTES;
    private String self;
    private Subscriptions subscriptions;
    private long sessionEventWindowBytes = SessionEventBuffers.DEFAULT_WINDOW_BYTES;
    private String readSideApplicationId = SessionReads.APPLICATION_ID;
    private Map<String, ?> clientProperties = Map.of();
    private Map<String, ?> streamsSettings = Map.of();
    private String applicationServer;
    private io.micrometer.prometheusmetrics.PrometheusMeterRegistry meters;
    private String metricsToken;
    /** The metric bindings it made (JVM, its producer), closed by {@link #stop()}. */
    private final List<AutoCloseable> meterBindings = new ArrayList<>();

    public Gateway(Settings settings) {
        this.settings = settings;
        this.logins = new BrowserLogins(settings.clock());
    }

    /**
     * The registry {@code GET /metrics} serves (the one every service of the JVM counts into, {@code up}) and the
     * scrape token it asks for ({@code Authorization: Bearer <token>}); before {@link #start()}. Without it the gateway
     * makes a registry of its own and a random scrape token ({@link #metricsToken()}). The gateway binds the JVM's
     * meters to it, and its own: HTTP requests, events accepted, refused and dead-lettered, its Kafka clients'.
     *
     * @throws IllegalArgumentException when the token is blank
     */
    public Gateway withMetrics(io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry, String scrapeToken) {
        if (scrapeToken == null || scrapeToken.isBlank()) {
            throw new IllegalArgumentException("a scrape token is required for GET /metrics");
        }
        this.meters = registry;
        this.metricsToken = scrapeToken;
        return this;
    }

    /** The token {@code GET /metrics} asks for (given with {@link #withMetrics}, or made at {@link #start()}). */
    public String metricsToken() {
        return metricsToken;
    }

    /**
     * The cluster's client properties (security settings, {@link dev.ensemble.sessions.schema.KafkaClients}) for every
     * Kafka client it makes (intake producer, read side, event feed and streams); before {@link #start()}.
     */
    public Gateway withClientProperties(Map<String, ?> properties) {
        this.clientProperties = Map.copyOf(properties);
        return this;
    }

    /**
     * The {@code host:port} other gateway instances reach this one at, Kafka Streams' {@code application.server} of its
     * read side: a read or post for an account whose partition another instance holds is forwarded to that instance's
     * address (interactive-query routing); before {@link #start()}. Default: the listen host and port, right for one
     * instance on one computer; several instances on several computers each give an address the others can reach (a
     * listen address of {@code 0.0.0.0} is no such address).
     *
     * @throws IllegalArgumentException when it is not {@code host:port}
     */
    public Gateway withApplicationServer(String hostPort) {
        int colon = hostPort == null ? -1 : hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1 || !hostPort.substring(colon + 1).chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("application.server must be host:port, not " + hostPort);
        }
        this.applicationServer = hostPort;
        return this;
    }

    /**
     * Further Kafka Streams settings of its read side only (e.g. {@code num.standby.replicas}, {@code num.stream.threads}),
     * put over its defaults and the client properties; before {@link #start()}. Its plain clients do not get them.
     */
    public Gateway withStreamsSettings(Map<String, ?> settings) {
        this.streamsSettings = Map.copyOf(settings);
        return this;
    }

    /** The retained window of each session's events, in bytes of encoded events (default 1 MiB); before {@link #start()}. */
    public Gateway withSessionEventWindowBytes(long bytes) {
        this.sessionEventWindowBytes = bytes;
        return this;
    }

    /**
     * The Streams application id of the read side (default {@value SessionReads#APPLICATION_ID}); before {@link #start()}.
     * Only for a gateway whose read side must not join the others' group, e.g. a second one started beside them in a test.
     */
    Gateway withReadSideApplicationId(String applicationId) {
        this.readSideApplicationId = applicationId;
        return this;
    }

    /**
     * Starts the read side and the HTTP server; returns once the port is open. When it cannot start (e.g. the port is
     * taken: a {@link java.net.BindException} in the cause chain), it stops what it had started and throws.
     */
    public synchronized Gateway start() {
        try {
            return startAll();
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
    }

    private Gateway startAll() {
        Map<String, Object> p = dev.ensemble.sessions.schema.LogProducers.config(settings.bootstrapServers(),
                "ensemble-gateway-intake", dev.ensemble.sessions.schema.KafkaClients.merge(clientProperties,
                        Map.of(ProducerConfig.LINGER_MS_CONFIG, 2)));
        producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        if (meters == null) {
            meters = new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
        }
        if (metricsToken == null) {
            metricsToken = dev.ensemble.sessions.schema.Secrets.newSecret();
        }
        meterBindings.addAll(GatewayMetrics.bindJvm(meters));
        meterBindings.add(dev.ensemble.sessions.streams.ServiceMeters.bind(meters, producer, "gateway"));
        // the appender's producers need the cluster's security settings too (the embedded broker takes only SASL clients)
        appender = new OnceAppender(settings.bootstrapServers(), dev.ensemble.sessions.schema.KafkaClients.merge(clientProperties,
                Map.of(ProducerConfig.LINGER_MS_CONFIG, 2)), this::eventPartitions,
                new OnceAppender.LogReading() {
                    @Override
                    public Long content(String account, String eventId) {
                        Subscriptions s = subscriptions;
                        return s == null ? null : s.content(account, eventId);
                    }

                    @Override
                    public boolean awaitLogEnd(Duration timeout) throws InterruptedException {
                        Subscriptions s = subscriptions;
                        return s != null && s.awaitLogEnd(timeout);
                    }
                }, Duration.ofSeconds(60)).withMeters(meters);
        intake = new EventIntake(producer, settings.clock(), appender, meters);
        GatewayMetrics served = new GatewayMetrics(meters, metricsToken);

        app = Javalin.create(cfg -> {
            cfg.showJavalinBanner = false;
            cfg.http.defaultContentType = "application/json";
            cfg.http.prefer405over404 = true; // a known path with another method is 405, not "no such endpoint"
            cfg.http.maxRequestSize = MAX_BODY_BYTES;
            cfg.jetty.modifyHttpConfiguration(http -> http.setIdleTimeout(IDLE_TIMEOUT.toMillis()));
            cfg.jetty.timeoutStatus = 408; // a timed-out read that reaches Javalin's own handling (body() answers it in JSON)
            cfg.jetty.modifyServer(server -> server.setErrorHandler(new JsonBadMessages()));
            cfg.requestLogger.http(served::record); // every request, after its status is final
        });
        app.exception(ApiError.class, (e, ctx) -> {
            ObjectNode body = error(e.code(), e.getMessage());
            e.details().forEach(body::put);
            if (e.retryAfterSeconds() > 0) {
                ctx.header("Retry-After", String.valueOf(e.retryAfterSeconds()));
            }
            ctx.status(e.status()).json(body);
        });
        app.exception(Exception.class, (e, ctx) -> {
            LOG.error("request {} {} failed", ctx.method(), ctx.path(), e);
            ctx.status(500).json(error("internal", "the gateway failed on this request: " + e.getMessage()));
        });
        app.exception(io.javalin.http.HttpResponseException.class, (e, ctx) -> ctx.status(e.getStatus()).json(switch (e.getStatus()) {
            case 404 -> error("not_found", "no such endpoint: " + ctx.method() + " " + ctx.path() + " (see /api/openapi.yaml)");
            case 413 -> error("too_large", TOO_LARGE);
            default -> error("http_" + e.getStatus(), e.getMessage());
        }));
        // the method as sent (Javalin names one it does not know INVALID)
        app.error(405, ctx -> ctx.json(error("method_not_allowed", ctx.req().getMethod() + " is not allowed on " + ctx.path())));
        app.before(ctx -> refuseMalformedEscapes(ctx.queryString()));
        app.before("/api/*", this::authenticate);
        new WebPages(logins, ctx -> ctx.json(N.objectNode().put("service", "ensemble-sessions")
                .put("api", "/api/openapi.yaml").put("sessions", "/api/agent/sessions").put("health", "/health")
                .put("metrics", "/metrics").put("web", "/ (in a browser, after opening the login link up prints)")
                .put("auth", "send 'Authorization: Bearer <token>' to /api/*; the local token is in <data-dir>/token")))
                .register(app);
        app.post("/api/login-links", this::postLoginLink);
        app.get("/health", this::health);
        app.get("/metrics", served::scrape);
        app.head("/metrics", served::head);
        app.get("/api/openapi.yaml", ctx -> ctx.contentType("application/yaml").result(resource("/openapi.yaml")));
        app.get("/api/me", ctx -> {
            Principal me = principal(ctx);
            ctx.json(N.objectNode().put("account", me.account()).put("role", me.role()).put("subject", me.subject()));
        });
        app.get("/api/agent/sessions", this::listSessions);
        app.get("/api/agent/sessions/{id}", this::getSession);
        app.post("/api/events", this::postEvents);
        app.post("/api/session-choice", this::sessionChoice);
        app.post("/api/devices/self/jobs/{id}/session-choice", this::computerSessionChoice);
        DeletionEndpoints deletions = new DeletionEndpoints(this::reads, producer, settings.clock(), this::forwarded);
        app.delete("/api/agent/sessions/{id}", deletions::deleteSession);
        app.get("/api/audit/deletions", deletions::audit);
        app.post("/api/cleanup/sweep", deletions::sweep);
        new AssistantEndpoints(this::reads, () -> appender, (account, eventId) -> {
            Subscriptions s = subscriptions;
            return s != null && s.knows(account, eventId);
        }, settings.clock(), this::forwarded).register(app);
        subscriptions = new Subscriptions(settings.bootstrapServers(), clientProperties, sessionEventWindowBytes);
        subscriptions.register(app);
        meterBindings.add(subscriptions.bindMetrics(meters));
        app.start(settings.host(), settings.port());
        self = applicationServer != null ? applicationServer : settings.host() + ":" + app.port();

        reads = new SessionReads(readSideApplicationId, settings.bootstrapServers(),
                dev.ensemble.sessions.schema.KafkaClients.merge(clientProperties, streamsSettings), settings.stateDir(),
                settings.replicationFactor(), self).withMeters(meters);
        reads.start();
        LOG.info("gateway listening on http://{}:{}", settings.host(), app.port());
        return this;
    }

    /** The projector generation whose views the read side answers from (docs/operations.md "Generations"). */
    public dev.ensemble.sessions.schema.Generation viewsGeneration() {
        return reads.generation();
    }

    /** The HTTP port it listens on. */
    public int port() {
        return app.port();
    }

    /** The instance ({@code host:port}) that holds the account as this one's read side knows it; empty when it is this one. */
    Optional<String> ownerOf(String account) {
        return reads().ownerOf(account, self);
    }

    /** Waits until reads can be served. */
    public void awaitReady(Duration timeout) throws InterruptedException {
        reads.awaitRunning(timeout);
        subscriptions.awaitReady(timeout);
    }

    /**
     * {@code GET /health}: 200 {@code {"status": "ready", ...}} once the views can be read and the event log has been read
     * up to where it was at the start; until then 503 {@code "starting"} with Retry-After; 503 {@code "unavailable"} when
     * the read side is stopping or has failed. {@code views} is the read side's Streams state, {@code eventLog} whether the
     * gateway's reading of the log has caught up ({@code read}) or not ({@code reading}).
     */
    private void health(Context ctx) {
        StartState st = startState();
        if (st.status().equals("starting")) {
            ctx.header("Retry-After", String.valueOf(ApiError.STARTING_RETRY_SECONDS));
        }
        ctx.status(st.status().equals("ready") ? 200 : 503).json(N.objectNode().put("status", st.status()).put("views", st.views().name())
                .put("eventLog", st.logRead() ? "read" : "reading"));
    }

    /**
     * Where its start stands, as {@code GET /health} says it.
     *
     * @param status  {@code ready} (views readable, the event log read up to where it was at start), {@code starting}, or
     *                {@code unavailable} (the read side is stopping or has failed)
     * @param views   the read side's Kafka Streams state ({@code CREATED} before it exists)
     * @param logRead whether the gateway's reading of the event log has caught up
     */
    public record StartState(String status, org.apache.kafka.streams.KafkaStreams.State views, boolean logRead) {
    }

    /** Where its start stands now. */
    public StartState startState() {
        SessionReads r = reads;
        Subscriptions subs = subscriptions;
        // the port opens before the read side exists, and the read side exists before its Streams application does
        org.apache.kafka.streams.KafkaStreams s = r == null ? null : r.streams();
        org.apache.kafka.streams.KafkaStreams.State views = s == null ? org.apache.kafka.streams.KafkaStreams.State.CREATED : s.state();
        boolean logRead = subs != null && subs.caughtUp();
        boolean starting = views == org.apache.kafka.streams.KafkaStreams.State.CREATED
                || views == org.apache.kafka.streams.KafkaStreams.State.REBALANCING || views == org.apache.kafka.streams.KafkaStreams.State.RUNNING;
        boolean ready = r != null && r.ready() && logRead;
        return new StartState(ready ? "ready" : starting ? "starting" : "unavailable", views, logRead);
    }

    /** The read side; a 503 {@code starting} before it exists (the port opens first). */
    private SessionReads reads() {
        SessionReads r = reads;
        if (r == null) {
            throw ApiError.starting("the gateway is starting; try again in a few seconds");
        }
        return r;
    }

    /**
     * Every {@code /api} request: a bearer token ({@code Authorization: Bearer <token>}), or a browser's sign-in cookie
     * ({@link BrowserLogins}) when no Authorization header is sent. A state-changing request (anything but GET, HEAD and
     * OPTIONS) made with the cookie must pass the CSRF check ({@link BrowserLogins#csrfRefusal}), else 403 {@code csrf}.
     */
    private void authenticate(Context ctx) {
        if (ctx.path().equals("/api/openapi.yaml")) {
            return;
        }
        String h = ctx.header("Authorization");
        if (h == null) {
            java.util.Optional<BrowserLogins.BrowserSession> browser = logins.session(ctx.cookie(BrowserLogins.COOKIE));
            if (browser.isPresent()) {
                io.javalin.http.HandlerType m = ctx.method();
                if (m != io.javalin.http.HandlerType.GET && m != io.javalin.http.HandlerType.HEAD && m != io.javalin.http.HandlerType.OPTIONS) {
                    String refusal = BrowserLogins.csrfRefusal(browser.get(), ctx.header(BrowserLogins.CSRF_HEADER),
                            ctx.header("Origin"), ctx.header("Host"), ctx.header("Sec-Fetch-Site"));
                    if (refusal != null) {
                        throw new ApiError(403, "csrf", refusal);
                    }
                }
                ctx.attribute("principal", browser.get().principal());
                ctx.attribute(BEARER, browser.get().bearerToken());
                return;
            }
        }
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new ApiError(401, "unauthorized", "send 'Authorization: Bearer <token>'; the local token is in <data-dir>/token"
                    + " (a browser signs in with the login link up prints)");
        }
        Principal p = settings.tokens().authenticate(h.substring(7))
                .orElseThrow(() -> new ApiError(401, "unauthorized", "this token is not known; use the token in <data-dir>/token or ask for a new one"));
        ctx.attribute("principal", p);
        ctx.attribute(BEARER, h.substring(7).strip());
    }

    /** The request attribute holding the bearer token a request acts with (its own, or the one behind its browser session). */
    private static final String BEARER = "ensemble.bearer";

    /**
     * A new one-time login link for a bearer token this gateway accepts: {@code /login?token=<code>} (relative to the
     * gateway's address); opened in a browser it signs that browser in as the token's principal ({@link BrowserLogins}).
     *
     * @throws IllegalArgumentException when the token is not known
     */
    public String loginLink(String bearerToken) {
        Principal p = settings.tokens().authenticate(bearerToken)
                .orElseThrow(() -> new IllegalArgumentException("the token is not known to this gateway"));
        return "/login?token=" + logins.issueLink(bearerToken.strip(), p);
    }

    /**
     * {@code POST /api/login-links}: a new one-time login link for the caller's bearer token, {@code {"url": ...,
     * "path": ...}}; 403 for a browser's sign-in (a signed-in browser does not hand out links).
     */
    private void postLoginLink(Context ctx) {
        if (ctx.header("Authorization") == null) {
            throw new ApiError(403, "forbidden", "a login link is asked for with a bearer token, not from a signed-in browser");
        }
        String path = loginLink((String) ctx.attribute(BEARER));
        String host = ctx.header("Host");
        ctx.status(201).json(N.objectNode().put("url", host == null ? path : "http://" + host + path).put("path", path));
    }

    private static Principal principal(Context ctx) {
        return ctx.attribute("principal");
    }

    /**
     * {@code GET /api/agent/sessions}: one page of the account's sessions from its session index ({@link SessionIndex}),
     * newest first, or by relevance with {@code q} (each entry then with its {@code snippet}); filters {@code agent},
     * {@code computer} ({@code deviceId} is the same), {@code taskId}, {@code status}, {@code deleted}; {@code limit}
     * entries at most; {@code next} (absent on the last page) is the {@code cursor} of the page after. A 400 naming the
     * field for a bad value.
     */
    private void listSessions(Context ctx) {
        Principal me = principal(ctx);
        if (forwarded(ctx, me)) {
            return;
        }
        int limit = intParam(ctx, "limit", 50, 1, MAX_LIMIT);
        String computer = blankToNull(ctx.queryParam("computer"));
        String deviceId = blankToNull(ctx.queryParam("deviceId"));
        if (computer != null && deviceId != null && !computer.strip().equals(deviceId.strip())) {
            throw ApiError.badRequest("computer and deviceId name the same filter (deviceId is its older name): give one, not '"
                    + computer + "' and '" + deviceId + "'").with("field", "deviceId");
        }
        SessionQuery query = new SessionQuery(ctx.queryParam("q"), ctx.queryParam("agent"), computer != null ? computer : deviceId,
                ctx.queryParam("taskId"), ctx.queryParam("status"), SessionQuery.deletedParam(ctx.queryParam("deleted")), limit,
                ctx.queryParam("cursor"));
        SessionIndex.Page page = reads().sessions(me.account(), query);
        ArrayNode arr = N.arrayNode();
        for (SessionIndex.Hit h : page.hits()) {
            ObjectNode s = h.summary();
            if (h.snippet() != null) {
                s.put("snippet", h.snippet());
                s.put("snippetField", h.snippetField());
            }
            arr.add(s);
        }
        ObjectNode out = N.objectNode();
        out.set("sessions", arr);
        if (page.next() != null) {
            out.put("next", page.next());
        }
        ctx.json(out);
    }

    private void getSession(Context ctx) {
        Principal me = principal(ctx);
        if (forwarded(ctx, me)) {
            return;
        }
        String id = ctx.pathParam("id");
        SessionView s = reads().get(me.account(), id);
        if (s == null) {
            throw ApiError.notFound("no session '" + id + "' in your account");
        }
        ctx.json(SessionJson.detail(s));
    }

    /** How many partitions the event log has (asked once). */
    private int eventPartitions() {
        int n = eventPartitions;
        if (n == 0) {
            n = producer.partitionsFor(dev.ensemble.sessions.schema.Topics.EVENTS.name()).size();
            eventPartitions = n;
        }
        return n;
    }

    /**
     * {@code POST /api/events}, on the instance that holds the account's partition (forwarded there like a read), where
     * the account's duplicate check and append are one step ({@link OnceAppender}).
     */
    private void postEvents(Context ctx) {
        Principal me = principal(ctx);
        if (forwarded(ctx, me)) {
            return;
        }
        EventIntake.Result r = intake.post(me, eventsBody(body(ctx), jsonLinesType(ctx.header("Content-Type"))));
        ctx.status(r.status()).json(r.body());
    }

    /**
     * {@code POST /api/session-choice} (guide §4): a RunClaimed event in the JSON form (continueFromJobId left
     * out) of the caller's account; forwarded to the choice service, whose decision record is the answer.
     */
    private void sessionChoice(Context ctx) throws Exception {
        Principal me = principal(ctx);
        JsonNode body = readJson(ctx);
        if (body == null || !body.isObject()) {
            throw ApiError.badRequest("the body must be a RunClaimed event (a JSON object with eventId, type, account, space, occurredAt, source, payload)");
        }
        if (body.has("type") && !"RunClaimed".equals(body.path("type").asText())) {
            throw ApiError.badRequest("the body must be a RunClaimed event (the run about to start), not a " + body.path("type").asText())
                    .with("field", "type");
        }
        if (!body.path("account").isTextual()) {
            throw ApiError.badRequest("account: required field is missing").with("field", "account");
        }
        if (!me.account().equals(body.path("account").asText())) {
            throw new ApiError(403, "forbidden", "a session choice is made only for your own account '" + me.account() + "'");
        }
        if (settings.choiceUrl() == null) {
            throw new ApiError(503, "unavailable", "no choice service runs with this gateway");
        }
        HttpRequest req = HttpRequest.newBuilder(URI.create(settings.choiceUrl() + "/choice/decide"))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + settings.choiceSecret())
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        HttpResponse<String> resp;
        try {
            resp = forwarder.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new ApiError(503, "unavailable", "the choice service did not answer (" + e.getMessage() + "); try again");
        }
        if (resp.statusCode() == 401) { // the service refused this gateway's secret: not the person's doing
            LOG.error("the choice service at {} refused this gateway's secret: {}", settings.choiceUrl(), resp.body());
            throw new ApiError(502, "bad_gateway", "the choice service refused this gateway; restart the system");
        }
        ctx.status(resp.statusCode()).contentType("application/json").result(resp.body());
    }

    /**
     * {@code POST /api/devices/self/jobs/{id}/session-choice} (guide §4 "Records"): a computer reports the
     * decision it made itself, as a SessionChoiceRecorded event. Refused (409, note not-linked) when the
     * session it continued is not one of this account's sessions on that computer with the same agent.
     */
    private void computerSessionChoice(Context ctx) {
        Principal me = principal(ctx);
        if (!me.role().equals("computer") && !me.isAdmin()) {
            throw new ApiError(403, "forbidden", "only a computer's token reports its own session choices");
        }
        Event e;
        try {
            e = EventJson.fromJson(readJson(ctx), settings.clock());
        } catch (dev.ensemble.sessions.schema.LimitExceededException ex) {
            throw new ApiError(413, "too_large", ex.getMessage()).with("field", ex.field()).with("limit", String.valueOf(ex.limit()));
        } catch (InvalidEventException ex) {
            ApiError bad = ApiError.badRequest(ex.getMessage());
            throw ex.field() == null ? bad : bad.with("field", ex.field());
        }
        if (!(e.getPayload() instanceof SessionChoiceRecorded c)) {
            throw ApiError.badRequest("the body must be a SessionChoiceRecorded event");
        }
        if (!e.getAccount().equals(me.account())) {
            throw new ApiError(403, "forbidden", "this token reports only for account '" + me.account() + "'");
        }
        if (!c.getRunId().equals(ctx.pathParam("id"))) {
            throw ApiError.badRequest("the record is for run '" + c.getRunId() + "', not '" + ctx.pathParam("id") + "'");
        }
        if (me.role().equals("computer") && !c.getComputerId().equals(me.subject())) {
            throw new ApiError(403, "forbidden", "this computer is '" + me.subject() + "', the record names '" + c.getComputerId() + "'");
        }
        if (c.getDecision() == dev.ensemble.sessions.events.ChoiceDecision.CONTINUE) {
            SessionView s = c.getSessionId() == null ? null : reads().get(me.account(), c.getSessionId());
            if (s == null || !s.getComputerIds().contains(c.getComputerId()) || !s.getAgent().equals(c.getAgent())) {
                throw new ApiError(409, "not_linked", "not-linked: session '" + c.getSessionId()
                        + "' is not a session of this account with agent '" + c.getAgent() + "' on computer '" + c.getComputerId() + "'");
            }
        }
        EventIntake.Result posted = intake.post(me, EventJson.toJson(e));
        ctx.status(posted.status() == 200 ? 202 : posted.status()).json(posted.body()); // refused (a conflict, the log away): said so
    }

    private static final String BODY = "ensemble.body";
    private static final String TOO_LARGE = "the request body is over " + MAX_BODY_BYTES + " bytes; split it (e.g. a batch into"
            + " smaller batches: each event is answered on its own, so nothing is lost)";

    /**
     * The request body as text (UTF-8), at most {@link #MAX_BODY_BYTES}: Javalin refuses a longer declared
     * Content-Length (413), and a body sent chunked, with no length, is read here with the same limit and refused the
     * same way ({@code too_large}) once it passes it, without reading the rest. A body that stops arriving for
     * {@link #IDLE_TIMEOUT} (shorter than its Content-Length, or chunked without its last chunk) is a 408
     * {@code timeout}. A body with a Content-Type that is not JSON, or a Content-Encoding (compressed), is a 415
     * {@code unsupported_media_type} ({@link #checkMediaType}); bytes that are not UTF-8 are a 400 naming where (never
     * replaced); a leading byte-order mark is dropped.
     */
    static String body(Context ctx) {
        String cached = ctx.attribute(BODY);
        if (cached != null) {
            return cached;
        }
        byte[] bytes;
        if (ctx.req().getContentLengthLong() >= 0) {
            try {
                bytes = ctx.bodyAsBytes();
            } catch (Exception e) { // Javalin passes the stream's IOException on as it is, unchecked
                if (e instanceof RuntimeException r && !causedBy(e, IOException.class)) {
                    throw r; // e.g. Javalin's 413 for a Content-Length over the limit
                }
                throw unreadable(e);
            }
        } else {
            try {
                bytes = ctx.req().getInputStream().readNBytes((int) MAX_BODY_BYTES + 1);
            } catch (IOException e) {
                throw unreadable(e);
            }
            if (bytes.length > MAX_BODY_BYTES) {
                throw new ApiError(413, "too_large", TOO_LARGE);
            }
        }
        String method = ctx.req().getMethod();
        if (!method.equals("GET") && !method.equals("HEAD") && !blank(bytes)) {
            checkMediaType(ctx.header("Content-Type"), ctx.header("Content-Encoding"));
        }
        String text = utf8(bytes);
        ctx.attribute(BODY, text);
        return text;
    }

    /** Whether {@code bytes} are only ASCII white space (or none). */
    private static boolean blank(byte[] bytes) {
        for (byte b : bytes) {
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    /**
     * Media types a JSON body may be sent with (besides any {@code application/...+json}); none at all is taken too, and
     * so is {@code text/plain} (what a script's {@code fetch} sends a string as).
     */
    private static final java.util.Set<String> JSON_TYPES = java.util.Set.of("application/json", "application/x-ndjson",
            "application/ndjson", "application/jsonl", "application/x-jsonl", "application/jsonlines", "application/x-jsonlines",
            "text/json", "text/plain");
    /** The media types of {@link #JSON_TYPES} that say the body is JSON Lines (one JSON value a line). */
    private static final java.util.Set<String> JSON_LINES_TYPES = java.util.Set.of("application/x-ndjson", "application/ndjson",
            "application/jsonl", "application/x-jsonl", "application/jsonlines", "application/x-jsonlines");

    /** Whether {@code contentType} (a request's {@code Content-Type}, parameters and all; may be null) names JSON Lines. */
    static boolean jsonLinesType(String contentType) {
        return contentType != null
                && JSON_LINES_TYPES.contains(contentType.split(";")[0].trim().toLowerCase(java.util.Locale.ROOT));
    }

    /**
     * A 415 for a body that says it is not JSON ({@code Content-Type}, e.g. curl's default
     * {@code application/x-www-form-urlencoded}) or is compressed ({@code Content-Encoding} other than {@code identity}):
     * the answer says what to send instead. No Content-Type at all is taken as JSON.
     */
    static void checkMediaType(String contentType, String contentEncoding) {
        if (contentEncoding != null && !contentEncoding.isBlank() && !contentEncoding.trim().equalsIgnoreCase("identity")) {
            throw new ApiError(415, "unsupported_media_type", "Content-Encoding " + contentEncoding.trim()
                    + " is not taken: send the body uncompressed (no Content-Encoding header)").with("header", "Content-Encoding");
        }
        if (contentType == null || contentType.isBlank()) {
            return;
        }
        String[] parts = contentType.split(";");
        String type = parts[0].trim().toLowerCase(java.util.Locale.ROOT);
        if (!JSON_TYPES.contains(type) && !(type.startsWith("application/") && type.endsWith("+json"))) {
            throw new ApiError(415, "unsupported_media_type", "the body is sent as " + type + "; it must be JSON: send it with"
                    + " Content-Type: application/json (curl: -H 'Content-Type: application/json')").with("header", "Content-Type");
        }
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            if (kv.length == 2 && kv[0].trim().equalsIgnoreCase("charset")) {
                String charset = kv[1].trim().replace("\"", "");
                if (!charset.equalsIgnoreCase("utf-8") && !charset.equalsIgnoreCase("utf8")) {
                    throw new ApiError(415, "unsupported_media_type", "the body is sent in " + charset
                            + "; it must be UTF-8 (Content-Type: application/json; charset=utf-8, or no charset)").with("header", "Content-Type");
                }
            }
        }
    }

    /** {@code bytes} as UTF-8 text without a leading byte-order mark; a 400 naming the first byte that is not UTF-8. */
    static String utf8(byte[] bytes) {
        int from = bytes.length >= 3 && (bytes[0] & 0xff) == 0xEF && (bytes[1] & 0xff) == 0xBB && (bytes[2] & 0xff) == 0xBF ? 3 : 0;
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes, from, bytes.length - from);
        try {
            return java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(in).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            int at = in.position();
            throw ApiError.badRequest("the body is not UTF-8 text: the byte at offset " + at + " (0x"
                    + String.format("%02x", bytes[Math.min(at, bytes.length - 1)] & 0xff) + ") does not belong there; send JSON in UTF-8");
        }
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** A 408 for a body that stopped arriving (Jetty's idle timeout), else a 400 with the reason it could not be read. */
    private static ApiError unreadable(Exception e) {
        if (causedBy(e, java.util.concurrent.TimeoutException.class)) {
            return new ApiError(408, "timeout", "the request body stopped arriving: nothing came for " + IDLE_TIMEOUT.toSeconds()
                    + " s (a body shorter than its Content-Length, or a chunked body without its last chunk); send it again, whole");
        }
        return ApiError.badRequest("the request body could not be read: " + e.getMessage());
    }

    /**
     * The body of {@code POST /api/events}: one JSON value (an event, an array of events, {@code {"events": [...]}}), or
     * several one after another, as JSON Lines (one event a line, as {@code events-example.jsonl} is), taken as an array
     * of them. Anything that is not JSON values (trailing text included) is a 400 naming where, except in JSON Lines: a
     * body sent as JSON Lines ({@code declaredLines}: its Content-Type says so, e.g. {@code application/x-ndjson}), or
     * one whose first line or every line is a whole JSON object on its own, is read line by line, and a line that is not
     * JSON (any text at all, or an object that repeats a field) is an {@link UnreadableLine} there, refused on its own
     * ({@link EventIntake#post}) without costing the other lines. A field given twice in one object is not JSON taken
     * here (the later would silently win).
     */
    static JsonNode eventsBody(String text, boolean declaredLines) {
        if (text.strip().startsWith("[")) { // an array is one value: its reader would give its elements and drop what follows
            return oneJsonValue(text);
        }
        List<JsonNode> values;
        try {
            values = JSON_VALUES.<JsonNode>readValues(text).readAll();
        } catch (IOException e) {
            JsonNode lines = jsonLines(text, declaredLines);
            if (lines == null) {
                throw ApiError.badJson(e);
            }
            return lines;
        }
        if (values.size() == 1) {
            return values.get(0);
        }
        if (values.isEmpty()) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
        ArrayNode all = EventJson.mapper().createArrayNode();
        values.forEach(all::add);
        return all;
    }

    /** The reader of request bodies (immutable, shared): JSON, a field given twice in one object refused. */
    private static final com.fasterxml.jackson.databind.ObjectReader JSON_VALUES = EventJson.mapper().readerFor(JsonNode.class)
            .with(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    /** The same for a body (or a line) that is one JSON value: text after it refused. */
    private static final com.fasterxml.jackson.databind.ObjectReader ONE_JSON_VALUE =
            JSON_VALUES.with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** A request body that is one JSON value ({@link #ONE_JSON_VALUE}); anything else is a 400 naming where ({@link ApiError#badJson}). */
    static JsonNode oneJsonValue(String text) {
        try {
            return ONE_JSON_VALUE.readTree(text);
        } catch (IOException e) {
            throw ApiError.badJson(e);
        }
    }

    /**
     * A line of a JSON Lines body that is not one JSON value: its line number (from 1) and the parser's reason; refused
     * on its own as an invalid event, and dead-lettered as its text.
     */
    static final class UnreadableLine extends com.fasterxml.jackson.databind.node.TextNode {
        private final String reason;

        UnreadableLine(String line, int number, String reason) {
            super(line);
            this.reason = "line " + number + " cannot be read as JSON: " + reason;
        }

        String reason() {
            return reason;
        }
    }

    /**
     * {@code text} read as JSON Lines: every non-blank line parsed on its own, a value or an {@link UnreadableLine}
     * (whatever it holds: plain text, a broken object, {@code null}). Null when the body is not JSON Lines of events, and
     * so one broken JSON value whose error is the answer: when it is not {@code declared} JSON Lines, and neither is its
     * first non-blank line a whole event (an object other than the {@code {"events": [...]}} form) with no unreadable line
     * looking like a piece of a value written over several lines ({@link #pieceOfAValue}), nor every non-blank line one
     * that starts with an object's brace with at least one of them whole (a pretty-printed event or
     * {@code {"events": [...]}} starts with a line that is not a whole value, and has inner lines that do not start with a
     * brace).
     */
    private static JsonNode jsonLines(String text, boolean declared) {
        ArrayNode all = EventJson.mapper().createArrayNode();
        boolean objectLine = false; // some line is a whole object
        boolean bracesOnly = true; // every line starts with an object's brace
        Boolean firstWhole = null; // whether the first non-blank line is a whole object
        boolean firstEvent = false; // ... and not the {"events": [...]} form of a whole batch
        boolean piece = false; // some unreadable line looks like a piece of a value written over several lines
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.isBlank()) {
                continue;
            }
            bracesOnly &= line.strip().startsWith("{");
            boolean whole;
            try {
                JsonNode v = ONE_JSON_VALUE.readTree(line);
                whole = v != null && v.isObject();
                all.add(v);
            } catch (IOException e) {
                whole = false;
                piece |= pieceOfAValue(line.strip());
                String why = e instanceof com.fasterxml.jackson.core.JsonProcessingException j
                        ? dev.ensemble.sessions.schema.JsonErrors.problemAtColumn(j) : e.getMessage();
                all.add(new UnreadableLine(line, i + 1, why));
            }
            objectLine |= whole;
            if (firstWhole == null) {
                firstWhole = whole;
                firstEvent = whole && !all.get(all.size() - 1).has("events");
            }
            if (!declared && (!firstEvent || piece) && !bracesOnly) {
                return null; // neither rule can hold any more: not read further
            }
        }
        return declared || (firstEvent && !piece) || (bracesOnly && objectLine) ? all : null;
    }

    /**
     * Whether an unreadable line (stripped) looks like a piece of a JSON value written over several lines (a
     * pretty-printed event): a lone brace or bracket, a line that opens with a quote, a closing brace or bracket, or one
     * that ends with a comma or an opening brace or bracket. Such a body is one broken value, refused whole.
     */
    private static boolean pieceOfAValue(String line) {
        return line.equals("{") || line.equals("[") || line.startsWith("\"") || line.startsWith("}") || line.startsWith("]")
                || line.endsWith(",") || line.endsWith("{") || line.endsWith("[");
    }

    /** One JSON value; text after it is a 400 (not silently dropped). */
    private static JsonNode readJson(Context ctx) {
        return oneJsonValue(body(ctx));
    }

    /** How often a request whose holder refused the connection asks again which instance holds the account. */
    static final Duration OWNER_POLL = Duration.ofMillis(100);

    /**
     * Read-side routing in one place: when another gateway instance holds the caller's account, the request
     * is forwarded to it (same method, body and token) and its answer returned as is (status, body, Content-Type and
     * Retry-After).
     *
     * <p>An instance that stops closes its port before its read side leaves the group, and one that died stays named as
     * the holder until the group notices: a holder that refuses the connection (or cannot be connected to) has not
     * received the request, so it waits, within the request's own budget (90 s for a post, which may wait for the log;
     * 10 s otherwise), until this read side is running with the account's partitions assigned elsewhere, then forwards
     * it to the new holder or handles it here when that is this instance. Only when they do not move within the budget
     * (a 503 with Retry-After: the group has not noticed yet), or the holder fails after the connection was made, is it
     * a 503.
     */
    private boolean forwarded(Context ctx, Principal me) {
        Optional<String> owner = reads().ownerOf(me.account(), self);
        if (owner.isEmpty() || ctx.header("X-Ensemble-Forwarded") != null) {
            return false;
        }
        Duration budget = Duration.ofSeconds(ctx.method() == io.javalin.http.HandlerType.POST ? 90 : 10);
        long until = System.nanoTime() + budget.toNanos();
        String q = ctx.queryString() == null ? "" : "?" + ctx.queryString();
        String body = body(ctx);
        try {
            while (true) {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + owner.get() + ctx.path() + q))
                        .header("Authorization", "Bearer " + ctx.<String>attribute(BEARER))
                        .header("X-Ensemble-Forwarded", self)
                        .header("Content-Type", jsonLinesType(ctx.header("Content-Type")) ? ctx.header("Content-Type") : "application/json")
                        .timeout(remaining(until))
                        .method(ctx.method().name(), body == null || body.isEmpty() ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body))
                        .build();
                HttpResponse<String> resp;
                try {
                    resp = forwarder.send(req, HttpResponse.BodyHandlers.ofString());
                } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException e) {
                    // not received: the holder is stopping or gone, and its partitions have not moved yet
                    LOG.info("the instance holding account {} ({}) cannot be reached ({}); waiting for its partitions to move",
                            me.account(), owner.get(), e.toString());
                    owner = awaitOtherOwner(me.account(), owner.get(), until);
                    if (owner.isEmpty()) {
                        return false; // this instance holds the account now
                    }
                    continue;
                }
                // the owner's answer as it is: status, body and the headers that say what it is and when to ask again
                ctx.status(resp.statusCode()).contentType(resp.headers().firstValue("Content-Type").orElse("application/json"));
                resp.headers().firstValue("Retry-After").ifPresent(v -> ctx.header("Retry-After", v));
                ctx.result(resp.body());
                return true;
            }
        } catch (IOException e) {
            // reset or cut mid-answer: the holder was killed while answering, its partitions have not moved yet
            throw ApiError.moving("the gateway instance holding your sessions (" + owner.get() + ") did not answer; try again");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "unavailable", "interrupted");
        }
    }

    /**
     * Waits until this read side is running and names another holder of the account than {@code gone}: that holder, or
     * empty when it is this instance. A 503 when that does not happen before {@code until} ({@link System#nanoTime()}).
     */
    private Optional<String> awaitOtherOwner(String account, String gone, long until) throws InterruptedException {
        while (true) {
            SessionReads r = reads();
            if (r.ready()) {
                Optional<String> owner = r.ownerOf(account, self);
                if (!owner.equals(Optional.of(gone))) {
                    return owner;
                }
            }
            if (System.nanoTime() + OWNER_POLL.toNanos() > until) {
                throw ApiError.moving("the gateway instance holding your sessions (" + gone
                        + ") does not answer and its sessions have not moved to another instance yet; try again");
            }
            Thread.sleep(OWNER_POLL.toMillis());
        }
    }

    /** What is left of the budget that ends at {@code until} ({@link System#nanoTime()}), at least a second. */
    private static Duration remaining(long until) {
        return Duration.ofNanos(Math.max(until - System.nanoTime(), Duration.ofSeconds(1).toNanos()));
    }

    /**
     * Requests Jetty refuses before they reach a route (a request line or headers over its 8 KiB limit: 414, 431;
     * an unparseable request: 400) answer in the API's JSON error shape instead of Jetty's HTML page.
     */
    static final class JsonBadMessages extends org.eclipse.jetty.server.handler.ErrorHandler {
        @Override
        public java.nio.ByteBuffer badMessageError(int status, String reason, org.eclipse.jetty.http.HttpFields.Mutable fields) {
            String message = switch (status) {
                case 414 -> "the request's URI is longer than the gateway accepts (8 KiB); shorten the query (e.g. q)";
                case 431 -> "the request's headers are larger than the gateway accepts (8 KiB)";
                case 400 -> "the request could not be read" + (reason == null ? "" : " (" + reason + ")")
                        + ": its path and query must hold no control character (such as %00 or %0A, even escaped), and each %"
                        + " must be followed by two hex digits (a % itself is %25)";
                default -> "the request could not be read" + (reason == null ? "" : ": " + reason);
            };
            fields.put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "application/json");
            return java.nio.ByteBuffer.wrap(error(status == 400 ? "bad_request" : "http_" + status, message).toString()
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    static ObjectNode error(String code, String message) {
        return N.objectNode().put("error", code).put("message", message);
    }

    /**
     * Refuses (400) a query whose parameter holds a malformed percent escape ({@code %} not followed by two hex digits,
     * e.g. {@code q=%ZZ} or {@code q=50%}), naming the parameter; the server would otherwise read it as something the
     * client never meant (an empty or undecoded value).
     */
    static void refuseMalformedEscapes(String query) {
        if (query == null || query.indexOf('%') < 0) {
            return;
        }
        for (String pair : query.split("&")) {
            for (int i = pair.indexOf('%'); i >= 0; i = pair.indexOf('%', i + 1)) {
                int end = Math.min(pair.length(), i + 3);
                if (end - i < 3 || Character.digit(pair.charAt(i + 1), 16) < 0 || Character.digit(pair.charAt(i + 2), 16) < 0) {
                    int eq = pair.indexOf('=');
                    throw ApiError.badRequest("query parameter '" + (eq < 0 ? pair : pair.substring(0, eq))
                            + "' has a malformed percent escape '" + pair.substring(i, end)
                            + "': a % must be followed by two hex digits (send a % itself as %25)");
                }
            }
        }
    }

    /** A whole-number query parameter from {@code min} to {@code max} ({@code dflt} when absent); a 400 naming it otherwise. */
    static int intParam(Context ctx, String name, int dflt, int min, int max) {
        String v = ctx.queryParam(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            int i = Integer.parseInt(v.trim());
            if (i < min || i > max) {
                throw ApiError.badRequest(name + " must be between " + min + " and " + max + ", not " + i).with("field", name);
            }
            return i;
        } catch (NumberFormatException e) {
            if (v.trim().matches("-?\\d+")) {
                throw ApiError.badRequest(name + " must be between " + min + " and " + max + ", not " + v.trim()).with("field", name);
            }
            throw ApiError.badRequest(name + " must be a whole number, not '" + v + "'").with("field", name);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = Gateway.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Stops the HTTP server, the read side and the producer. */
    public synchronized void stop() {
        if (app != null) {
            app.stop();
            app = null;
        }
        if (subscriptions != null) {
            subscriptions.close();
            subscriptions = null;
        }
        if (reads != null) {
            reads.close();
            reads = null;
        }
        if (appender != null) {
            appender.close();
            appender = null;
        }
        meterBindings.forEach(dev.ensemble.sessions.streams.ServiceMeters::closeQuietly);
        meterBindings.clear();
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
    }

    @Override
    public void close() {
        stop();
    }
}
