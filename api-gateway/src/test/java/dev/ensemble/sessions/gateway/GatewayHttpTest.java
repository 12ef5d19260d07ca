package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The gateway over HTTP, against the projector on a real in-process broker. */
class GatewayHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static GatewayOnBroker rig;
    static KafkaTestCluster cluster;
    static Gateway gateway;
    static final HttpClient http = HttpClient.newHttpClient();
    static final String ANA = "token-ana";
    static final String BO = "token-bo";
    /** A service of ana's account (the web relaying events): the contract batch holds the cleanup's deletion request. */
    static final String ANA_WEB = "token-ana-web";
    /** A third account, whose sessions no other test counts. */
    static final String CY = "token-cy";
    /** The account the browser sign-in test signs in as. */
    static final String DEE = "token-dee";

    @BeforeAll
    static void start() throws Exception {
        Tokens tokens = Tokens.inMemory();
        tokens.register(ANA, new Principal("acct-ana", "person", "ana"));
        tokens.register(BO, new Principal("acct-bo", "person", "bo"));
        tokens.register(ANA_WEB, new Principal("acct-ana", "service", "web"));
        tokens.register(CY, new Principal("acct-cy", "person", "cy"));
        tokens.register(DEE, new Principal("acct-dee", "person", "dee"));
        rig = GatewayOnBroker.start("gw", tokens, Duration.ofSeconds(60));
        cluster = rig.cluster;
        gateway = rig.gateway;
    }

    @AfterAll
    static void stop() {
        rig.close();
    }

    static HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path)).GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String path, String token, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode awaitSession(String id, String token, java.util.function.Predicate<JsonNode> ready) throws Exception {
        long until = System.currentTimeMillis() + 60_000;
        JsonNode last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = get("/api/agent/sessions/" + id, token);
            if (r.statusCode() == 200) {
                last = JSON.readTree(r.body());
                if (ready.test(last)) {
                    return last;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("session " + id + " never became ready; last: " + last);
    }

    @Test
    void theContractBatchIsAcceptedAndTheSessionIsServed() throws Exception {
        List<String> lines = Files.readAllLines(SharedData.require("contract/events-example.jsonl"));
        String batch = "[" + lines.stream().filter(l -> !l.isBlank()).collect(Collectors.joining(",")) + "]";
        // the file as it is (JSON Lines, one event a line) is the batch of its events
        HttpResponse<String> r = post("/api/events", ANA_WEB, Files.readString(SharedData.require("contract/events-example.jsonl")));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.get("accepted").asInt()).isEqualTo(10);
        assertThat(answer.get("rejected").asInt()).isZero();
        // posting the same batch again is accepted and changes nothing; a person may not post the system's deletion request
        HttpResponse<String> again = post("/api/events", ANA, batch);
        assertThat(again.statusCode()).isEqualTo(200);
        JsonNode againAnswer = JSON.readTree(again.body());
        assertThat(againAnswer.get("accepted").asInt()).isEqualTo(9);
        assertThat(againAnswer.get("results").get(9).get("reason").asText()).startsWith("forbidden: a person asks for a deletion only as itself");

        // the batch ends with the cleanup's request to delete the retired session: the guard accepts it
        JsonNode s = awaitSession("job-101", ANA, j -> j.get("runs").asInt() == 2 && "idle".equals(j.get("status").asText())
                && j.get("deleting").asBoolean());
        assertThat(s.get("agent").asText()).isEqualTo("claude-code");
        assertThat(s.get("folder").asText()).isEqualTo("/home/ana/workspace/projects/ranking");
        assertThat(s.get("firstTask").get("title").asText()).isEqualTo("Build the ranking API");
        assertThat(s.get("latestReportSummary").asText()).isEqualTo("The endpoint now returns total.");
        assertThat(s.get("fill").asDouble()).isEqualTo(0.305);
        assertThat(s.get("resumable").asBoolean()).as("being deleted: not resumed any more").isFalse();
        assertThat(s.get("runList")).hasSize(2);
        assertThat(s.get("runList").get(1).get("continueFromJobId").asText()).isEqualTo("job-101");

        JsonNode list = JSON.readTree(get("/api/agent/sessions?limit=10", ANA).body());
        assertThat(list.get("sessions")).hasSize(1);
        assertThat(list.get("sessions").get(0).get("id").asText()).isEqualTo("job-101");
        assertThat(JSON.readTree(get("/api/agent/sessions?taskId=task-7", ANA).body()).get("sessions")).hasSize(1);
        assertThat(JSON.readTree(get("/api/agent/sessions?taskId=task-8", ANA).body()).get("sessions")).isEmpty();
        assertThat(JSON.readTree(get("/api/agent/sessions?deviceId=laptop-ana", ANA).body()).get("sessions")).hasSize(1);
        assertThat(JSON.readTree(get("/api/agent/sessions?q=RANKING%20api", ANA).body()).get("sessions")).hasSize(1);
        assertThat(JSON.readTree(get("/api/agent/sessions?q=nothing-like-this", ANA).body()).get("sessions")).isEmpty();

        // another account sees nothing of it
        HttpResponse<String> other = get("/api/agent/sessions/job-101", BO);
        assertThat(other.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(other.body()).get("message").asText()).contains("no session 'job-101'");
        assertThat(JSON.readTree(get("/api/agent/sessions", BO).body()).get("sessions").findValuesAsText("id")).doesNotContain("job-101");
    }

    @Test
    void aTokenPostsOnlyForItsOwnAccount() throws Exception {
        String event = "{\"eventId\":\"f0000000-0000-0000-0000-000000000001\",\"type\":\"ComputerStatus\",\"account\":\"acct-ana\","
                + "\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"computer:x\","
                + "\"payload\":{\"computerId\":\"x\",\"online\":true}}";
        HttpResponse<String> r = post("/api/events", BO, event);
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(r.body()).get("results").get(0).get("reason").asText()).contains("only for account 'acct-bo'");
        assertThat(JSON.readTree(r.body()).get("results").get(0).get("field").asText()).isEqualTo("account");
    }

    @Test
    void aRejectedEventNeverMakesTheBatchLoseTheGoodOnes() throws Exception {
        String good = "{\"eventId\":\"f0000000-0000-0000-0000-000000000010\",\"type\":\"RunClaimed\",\"account\":\"acct-bo\","
                + "\"space\":\"local:pc\",\"occurredAt\":\"2026-11-03T09:00:00Z\",\"source\":\"computer:pc\","
                + "\"payload\":{\"runId\":\"bo-1\",\"computerId\":\"pc\",\"agent\":\"codex\",\"task\":{\"title\":\"Fix the flaky test\","
                + "\"labelz\":[\"ci\"]}}}"; // a misspelt optional field: accepted, and named as left out
        String bad = "{\"eventId\":\"f0000000-0000-0000-0000-000000000011\",\"type\":\"RunClaimed\",\"account\":\"acct-bo\","
                + "\"space\":\"local:pc\",\"occurredAt\":\"2026-11-03T09:00:00Z\",\"source\":\"computer:pc\","
                + "\"payload\":{\"computerId\":\"pc\",\"agent\":\"codex\"}}";
        String unknown = "{\"eventId\":\"f0000000-0000-0000-0000-000000000012\",\"type\":\"RunTeleported\"}";
        HttpResponse<String> r = post("/api/events", BO, "{\"events\":[" + bad + "," + good + "," + unknown + "]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode a = JSON.readTree(r.body());
        assertThat(a.get("accepted").asInt()).isEqualTo(1);
        assertThat(a.get("results").get(0).get("status").asText()).isEqualTo("rejected");
        assertThat(a.get("results").get(0).get("reason").asText()).isEqualTo("RunClaimed f0000000-0000-0000-0000-000000000011: payload.runId: required field is missing");
        assertThat(a.get("results").get(1).get("status").asText()).isEqualTo("accepted");
        assertThat(a.get("results").get(1).get("ignored")).as(r.body()).containsExactly(JSON.getNodeFactory().textNode("payload.task.labelz"));
        assertThat(a.get("results").get(0).has("ignored")).isFalse();
        assertThat(a.get("results").get(2).get("reason").asText()).contains("unknown event type 'RunTeleported'");
        JsonNode s = awaitSession("bo-1", BO, j -> true);
        assertThat(s.get("firstTask").get("title").asText()).isEqualTo("Fix the flaky test");

        // the invalid ones are kept in the dead-letter topic with the reason
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "group.id", "gw-dlq", "auto.offset.reset", "earliest"), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(Topics.DEAD_LETTER.name()));
            List<String> reasons = new java.util.ArrayList<>();
            long until = System.currentTimeMillis() + 20_000;
            while (reasons.size() < 2 && System.currentTimeMillis() < until) {
                for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                    if (rec.headers().lastHeader("ensemble.error.reason") != null) {
                        reasons.add(new String(rec.headers().lastHeader("ensemble.error.reason").value()));
                    }
                }
            }
            assertThat(reasons).anyMatch(x -> x.contains("payload.runId: required field is missing"))
                    .anyMatch(x -> x.contains("RunTeleported"));
        }
    }

    /** bo's RunClaimed (run {@code runId}, eventId {@code id}) in the JSON form, occurring at {@code occurredAt}, with the given title. */
    static String boClaim(String id, String runId, String occurredAt, String title) {
        return "{\"eventId\":\"" + id + "\",\"type\":\"RunClaimed\",\"account\":\"acct-bo\",\"space\":\"local:pc\",\"occurredAt\":\""
                + occurredAt + "\",\"source\":\"computer:pc\",\"payload\":{\"runId\":\"" + runId
                + "\",\"computerId\":\"pc\",\"agent\":\"codex\",\"task\":{\"title\":\"" + title + "\"}}}";
    }

    /** Every record of bo's in the event log now, by eventId: how many copies, each decoded (a record that does not decode fails). */
    static Map<String, Integer> boEventsInTheLog() {
        Map<String, Integer> copies = new java.util.HashMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of("bootstrap.servers", cluster.bootstrapServers(),
                "isolation.level", "read_committed"), new org.apache.kafka.common.serialization.StringDeserializer(), new ByteArrayDeserializer())) {
            List<org.apache.kafka.common.TopicPartition> parts = c.partitionsFor(Topics.EVENTS.name()).stream()
                    .map(i -> new org.apache.kafka.common.TopicPartition(i.topic(), i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<org.apache.kafka.common.TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if ("acct-bo".equals(r.key())) {
                        copies.merge(Topics.eventSerde().deserializer().deserialize(r.topic(), r.value()).getEventId(), 1, Integer::sum);
                    }
                }
            }
        }
        return copies;
    }

    /** A post of {@code body} to {@code /api/events} with bo's token, sent as {@code contentType}. */
    private static HttpResponse<String> postAsBo(String contentType, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + BO).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * In JSON Lines, a line that is not JSON at all (plain text) is refused on its own, naming its line and the parser's
     * reason, and the other lines are accepted and in the log: sent as JSON with a first line that is a whole event, or
     * sent as JSON Lines ({@code application/x-ndjson}) whatever its first line is.
     */
    @Test
    void aJsonLinesLineThatIsNotJsonAtAllIsRefusedAloneAndTheOtherLinesAreInTheLog() throws Exception {
        String first = boClaim("f1500000-0000-0000-0000-000000000001", "bo-lines-1", "2026-11-03T11:00:00Z", "First line");
        String third = boClaim("f1500000-0000-0000-0000-000000000002", "bo-lines-2", "2026-11-03T11:01:00Z", "Third line");
        HttpResponse<String> r = postAsBo("application/json", first + "\nnot json\n" + third + "\n");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.get("accepted").asInt()).as(r.body()).isEqualTo(2);
        assertThat(answer.get("rejected").asInt()).isEqualTo(1);
        assertThat(answer.get("results").findValuesAsText("status")).containsExactly("accepted", "rejected", "accepted");
        JsonNode refused = answer.get("results").get(1);
        assertThat(refused.get("error").asText()).isEqualTo("invalid");
        assertThat(refused.get("reason").asText()).startsWith("line 2 cannot be read as JSON: unrecognized token 'not'")
                .contains("at column").doesNotContain("at line");

        // sent as JSON Lines: a first line of plain text is refused alone too (CRLF line ends, a blank line between)
        String second = boClaim("f1500000-0000-0000-0000-000000000003", "bo-lines-3", "2026-11-03T11:02:00Z", "Second line");
        String fourth = boClaim("f1500000-0000-0000-0000-000000000004", "bo-lines-4", "2026-11-03T11:03:00Z", "Fourth line");
        HttpResponse<String> declared = postAsBo("application/x-ndjson", "hello there\r\n" + second + "\r\n\r\n" + fourth + "\r\n");
        assertThat(declared.statusCode()).as(declared.body()).isEqualTo(200);
        JsonNode d = JSON.readTree(declared.body());
        assertThat(d.get("results").findValuesAsText("status")).as(declared.body()).containsExactly("rejected", "accepted", "accepted");
        assertThat(d.get("results").get(0).get("reason").asText()).startsWith("line 1 cannot be read as JSON: unrecognized token 'hello'");

        // sent as JSON, a body whose first line is plain text is not JSON Lines: one error for the whole body, nothing taken
        String notTaken = boClaim("f1500000-0000-0000-0000-000000000005", "bo-lines-5", "2026-11-03T11:04:00Z", "Not taken");
        HttpResponse<String> whole = postAsBo("application/json", "not json\n" + notTaken + "\n");
        assertThat(whole.statusCode()).as(whole.body()).isEqualTo(400);
        assertThat(JSON.readTree(whole.body()).get("message").asText()).startsWith("the body is not valid JSON: unrecognized token 'not'")
                .contains("at line 1");

        Map<String, Integer> log = boEventsInTheLog();
        for (String id : List.of("f1500000-0000-0000-0000-000000000001", "f1500000-0000-0000-0000-000000000002",
                "f1500000-0000-0000-0000-000000000003", "f1500000-0000-0000-0000-000000000004")) {
            assertThat(log.get(id)).as("%s in the log once", id).isEqualTo(1);
        }
        assertThat(log).doesNotContainKey("f1500000-0000-0000-0000-000000000005");
    }

    @Test
    void anEventTheSchemaCannotHoldIsRefusedNamingTheFieldAndAffectsNoOtherEvent() throws Exception {
        String far = "+1000000000-01-01T00:00:00Z";
        // alone: a 400 naming the field, not a 500
        HttpResponse<String> alone = post("/api/events", BO, boClaim("f1400000-0000-0000-0000-000000000001", "bo-far", far, "Far"));
        assertThat(alone.statusCode()).as(alone.body()).isEqualTo(400);
        JsonNode a = JSON.readTree(alone.body()).get("results").get(0);
        assertThat(a.get("status").asText()).isEqualTo("rejected");
        assertThat(a.get("error").asText()).isEqualTo("invalid");
        assertThat(a.get("field").asText()).isEqualTo("occurredAt");
        assertThat(a.get("reason").asText()).contains("occurredAt: +1000000000-01-01T00:00:00Z is outside the times an event may name");
        // first in a batch: the good one after it is appended; after a good one: only the good one is
        HttpResponse<String> badFirst = post("/api/events", BO, "[" + boClaim("f1400000-0000-0000-0000-000000000002", "bo-far2", far, "Far")
                + "," + boClaim("f1400000-0000-0000-0000-000000000003", "bo-after", "2026-11-03T10:00:00Z", "After the far one") + "]");
        assertThat(badFirst.statusCode()).as(badFirst.body()).isEqualTo(200);
        assertThat(JSON.readTree(badFirst.body()).get("results").findValuesAsText("status")).containsExactly("rejected", "accepted");
        HttpResponse<String> badLast = post("/api/events", BO, "[" + boClaim("f1400000-0000-0000-0000-000000000004", "bo-before",
                "2026-11-03T10:00:00Z", "Before the far one") + "," + boClaim("f1400000-0000-0000-0000-000000000005", "bo-far3", far, "Far") + "]");
        assertThat(badLast.statusCode()).as(badLast.body()).isEqualTo(200);
        assertThat(JSON.readTree(badLast.body()).get("results").findValuesAsText("status")).containsExactly("accepted", "rejected");
        // the next event on the same connection (another account's) is written whole
        HttpResponse<String> next = post("/api/events", CY, boClaim("f1400000-0000-0000-0000-000000000006", "cy-next",
                "2026-11-03T10:00:00Z", "Cy's next").replace("acct-bo", "acct-cy"));
        assertThat(next.statusCode()).as(next.body()).isEqualTo(200);
        assertThat(awaitSession("cy-next", CY, j -> true).get("firstTask").get("title").asText()).isEqualTo("Cy's next");
        assertThat(awaitSession("bo-after", BO, j -> true).get("firstTask").get("title").asText()).isEqualTo("After the far one");
        assertThat(awaitSession("bo-before", BO, j -> true).get("firstTask").get("title").asText()).isEqualTo("Before the far one");
        // each answer is true of its event: the accepted ones are in the log once, decodable, the refused ones not at all
        Map<String, Integer> log = boEventsInTheLog();
        assertThat(log).containsEntry("f1400000-0000-0000-0000-000000000003", 1).containsEntry("f1400000-0000-0000-0000-000000000004", 1)
                .doesNotContainKeys("f1400000-0000-0000-0000-000000000001", "f1400000-0000-0000-0000-000000000002",
                        "f1400000-0000-0000-0000-000000000005");
    }

    /**
     * The web page's sign-in (issue 19): a page without the cookie is the sign-in page; a one-time login link sets an
     * HttpOnly, SameSite=Strict cookie once; the cookie reads the API; a state-changing request made with it needs the
     * page's CSRF token and its origin; a signed-in browser hands out no login link; signing out ends it.
     */
    @Test
    void aBrowserSignsInWithAOneTimeLinkAndSendsTheCsrfTokenToChangeAnything() throws Exception {
        String base = "http://127.0.0.1:" + gateway.port();
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(URI.create(base + "/")).header("Accept", "text/html").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.body()).contains("<h2>Sign in</h2>");
        assertThat(anonymous.headers().firstValue("Content-Security-Policy").orElseThrow()).contains("script-src 'self'");

        String link = gateway.loginLink(DEE);
        assertThat(link).startsWith("/login?token=");
        HttpResponse<String> login = http.send(HttpRequest.newBuilder(URI.create(base + link)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.headers().firstValue("Location")).contains("/");
        String setCookie = login.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(setCookie).startsWith("ensemble_session=").contains("; HttpOnly", "; SameSite=Strict", "; Path=/");
        String cookie = setCookie.substring(0, setCookie.indexOf(';'));
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + link)).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                .as("the link works once").isEqualTo(401);

        HttpResponse<String> page = http.send(HttpRequest.newBuilder(URI.create(base + "/")).header("Accept", "text/html")
                .header("Cookie", cookie).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<meta name=\"csrf-token\" content=\"([A-Za-z0-9_-]{40,})\">").matcher(page.body());
        assertThat(m.find()).as(page.body()).isTrue();
        String csrf = m.group(1);
        assertThat(page.body()).contains("account <b>acct-dee</b>").contains("<script src=\"/web/list.js\" defer></script>");
        HttpResponse<String> script = get("/web/list.js", null);
        assertThat(script.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/javascript");
        assertThat(get("/web/nothing.js", null).statusCode()).isEqualTo(404);

        HttpResponse<String> me = http.send(HttpRequest.newBuilder(URI.create(base + "/api/me")).header("Cookie", cookie).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(JSON.readTree(me.body()).get("account").asText()).isEqualTo("acct-dee");
        String claim = boClaim("f1900000-0000-0000-0000-000000000001", "dee-web", "2026-11-03T10:00:00Z", "From the page")
                .replace("acct-bo", "acct-dee");
        java.util.function.Function<HttpRequest.Builder, HttpResponse<String>> send = b -> {
            try {
                return http.send(b.header("Cookie", cookie).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(claim)).build(), HttpResponse.BodyHandlers.ofString());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        HttpResponse<String> noToken = send.apply(HttpRequest.newBuilder(URI.create(base + "/api/events")));
        assertThat(noToken.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(noToken.body()).get("error").asText()).isEqualTo("csrf");
        HttpResponse<String> otherOrigin = send.apply(HttpRequest.newBuilder(URI.create(base + "/api/events"))
                .header("X-CSRF-Token", csrf).header("Origin", "http://evil.example"));
        assertThat(otherOrigin.statusCode()).isEqualTo(403);
        HttpResponse<String> crossSite = send.apply(HttpRequest.newBuilder(URI.create(base + "/api/events"))
                .header("X-CSRF-Token", csrf).header("Sec-Fetch-Site", "cross-site"));
        assertThat(crossSite.statusCode()).isEqualTo(403);
        HttpResponse<String> fromThePage = send.apply(HttpRequest.newBuilder(URI.create(base + "/api/events"))
                .header("X-CSRF-Token", csrf).header("Origin", base).header("Sec-Fetch-Site", "same-origin"));
        assertThat(fromThePage.statusCode()).as(fromThePage.body()).isEqualTo(200);
        assertThat(JSON.readTree(fromThePage.body()).get("accepted").asInt()).isEqualTo(1);

        HttpResponse<String> linkFromBrowser = http.send(HttpRequest.newBuilder(URI.create(base + "/api/login-links")).header("Cookie", cookie)
                .header("X-CSRF-Token", csrf).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(linkFromBrowser.statusCode()).isEqualTo(403);
        HttpResponse<String> linkWithToken = post("/api/login-links", DEE, "");
        assertThat(linkWithToken.statusCode()).isEqualTo(201);
        assertThat(JSON.readTree(linkWithToken.body()).get("url").asText()).startsWith(base + "/login?token=");

        HttpResponse<String> logout = http.send(HttpRequest.newBuilder(URI.create(base + "/logout")).header("Cookie", cookie)
                .header("X-CSRF-Token", csrf).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(logout.statusCode()).isEqualTo(303);
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/api/me")).header("Cookie", cookie).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).as("signed out").isEqualTo(401);
    }

    @Test
    void anEventOverALimitIsRefusedNamingTheFieldAndTheLimit() throws Exception {
        HttpResponse<String> title = post("/api/events", BO, boClaim("f1400000-0000-0000-0000-000000000010", "bo-long",
                "2026-11-03T10:00:00Z", "t".repeat(300_000)));
        assertThat(title.statusCode()).as(title.body()).isEqualTo(413);
        JsonNode t = JSON.readTree(title.body()).get("results").get(0);
        assertThat(t.get("error").asText()).isEqualTo("too_large");
        assertThat(t.get("field").asText()).isEqualTo("payload.task.title");
        assertThat(t.get("limit").asInt()).isEqualTo(4096);
        assertThat(t.get("reason").asText()).endsWith("payload.task.title: 300000 characters; at most 4096");
        // texts and lists each within their limits, but together over the limit of one event (256 KiB encoded)
        String labels = java.util.stream.IntStream.range(0, 70).mapToObj(i -> "\"" + "l".repeat(4000) + "\"").collect(Collectors.joining(","));
        String big = boClaim("f1400000-0000-0000-0000-000000000011", "bo-big", "2026-11-03T10:00:00Z", "Big")
                .replace("\"title\":\"Big\"", "\"title\":\"Big\",\"labels\":[" + labels + "]");
        String small = boClaim("f1400000-0000-0000-0000-000000000012", "bo-small", "2026-11-03T10:00:00Z", "Small");
        HttpResponse<String> batch = post("/api/events", BO, "[" + big + "," + small + "]");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        JsonNode b = JSON.readTree(batch.body()).get("results");
        assertThat(b.get(0).get("error").asText()).isEqualTo("too_large");
        assertThat(b.get(0).get("field").asText()).isEqualTo("event");
        assertThat(b.get(0).get("limit").asInt()).isEqualTo(262_144);
        assertThat(b.get(1).get("status").asText()).isEqualTo("accepted");
        awaitSession("bo-small", BO, j -> true);
        assertThat(boEventsInTheLog()).containsKey("f1400000-0000-0000-0000-000000000012")
                .doesNotContainKeys("f1400000-0000-0000-0000-000000000010", "f1400000-0000-0000-0000-000000000011");

        // refusals of several kinds and nothing the log failed to take: a 400, not a 503 ("post it again" would not help)
        HttpResponse<String> mixed = post("/api/events", BO, "[" + boClaim("f1400000-0000-0000-0000-000000000013", "bo-other",
                "2026-11-03T10:00:00Z", "Another account's").replace("acct-bo", "acct-ana") + "," + boClaim(
                "f1400000-0000-0000-0000-000000000014", "bo-long2", "2026-11-03T10:00:00Z", "t".repeat(300_000)) + "]");
        assertThat(mixed.statusCode()).as(mixed.body()).isEqualTo(400);
        assertThat(JSON.readTree(mixed.body()).get("results").findValuesAsText("error")).containsExactly("forbidden", "too_large");
    }

    @Test
    void valuesOutsideWhatAnEventMayHoldAreRefusedNamingTheField() throws Exception {
        String status = "{\"eventId\":\"ID\",\"type\":\"RunStatusChanged\",\"account\":\"acct-bo\",\"space\":\"local:pc\","
                + "\"occurredAt\":\"AT\",\"source\":\"computer:pc\",\"payload\":{\"runId\":\"bo-1\",\"status\":\"DONE\"PLUS}}";
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put(status.replace("ID", "f1400000-0000-0000-0000-000000000020").replace("AT", "2026-11-03T10:00:00Z").replace("PLUS", ",\"tokens\":-1"),
                "payload.tokens");
        cases.put(status.replace("ID", "f1400000-0000-0000-0000-000000000021").replace("AT", "2026-11-03T10:00:00Z").replace("PLUS", ",\"durationMs\":-1"),
                "payload.durationMs");
        cases.put(status.replace("ID", "f1400000-0000-0000-0000-000000000022").replace("AT", "0001-01-01T00:00:00Z").replace("PLUS", ""), "occurredAt");
        cases.put(status.replace("ID", "f1400000-0000-0000-0000-000000000023").replace("AT", "+292278994-08-17T07:12:55.807Z").replace("PLUS", ""),
                "occurredAt");
        cases.put(status.replace("ID", "f1400000-0000-0000-0000-0000000000\\u00004").replace("AT", "2026-11-03T10:00:00Z").replace("PLUS", ""),
                "eventId");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            HttpResponse<String> r = post("/api/events", BO, c.getKey());
            assertThat(r.statusCode()).as(c.getKey() + " -> " + r.body()).isEqualTo(400);
            JsonNode answer = JSON.readTree(r.body()).get("results").get(0);
            assertThat(answer.get("error").asText()).isEqualTo("invalid");
            assertThat(answer.get("field").asText()).as(r.body()).isEqualTo(c.getValue());
            assertThat(answer.get("reason").asText()).contains(c.getValue() + ": ");
        }
        assertThat(boEventsInTheLog().keySet()).noneMatch(id -> id.startsWith("f1400000-0000-0000-0000-00000000002"));
    }

    @Test
    void aBodyThatStopsArrivingIsAnsweredWithAJson408() throws Exception {
        String head = "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + BO + "\r\nContent-Type: application/json\r\n";
        String shortBody = head + "Content-Length: 1000\r\n\r\n[{\"eventId\":\"stalled-1\",";
        String noLastChunk = head + "Transfer-Encoding: chunked\r\n\r\n10\r\n[{\"eventId\":\"st\"\r\n";
        var shortAnswer = java.util.concurrent.CompletableFuture.supplyAsync(() -> rawExchange(shortBody));
        var chunkedAnswer = java.util.concurrent.CompletableFuture.supplyAsync(() -> rawExchange(noLastChunk));
        for (var answer : List.of(shortAnswer, chunkedAnswer)) {
            String[] r = answer.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(r[0]).as(String.join("\n", r)).contains(" 408 ");
            assertThat(r[1].toLowerCase()).contains("content-type: application/json");
            JsonNode body = JSON.readTree(r[2]);
            assertThat(body.get("error").asText()).isEqualTo("timeout");
            assertThat(body.get("message").asText()).contains("stopped arriving").contains("15 s");
            assertThat(Long.parseLong(r[3])).as("answered after the idle timeout, not the connector's 30 s").isBetween(14_000L, 25_000L);
        }
        assertThat(boEventsInTheLog()).doesNotContainKey("stalled-1");
    }

    /** Sends {@code request} as is over a socket and reads the answer: status line, headers, body, milliseconds taken. */
    static String[] rawExchange(String request) {
        long start = System.nanoTime();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", gateway.port())) {
            s.setSoTimeout(45_000);
            s.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            java.io.InputStream in = s.getInputStream();
            java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int head = -1;
            long length = -1;
            for (int n; (n = in.read(buf)) > 0; ) { // until the declared body is in (the connection may stay open)
                got.write(buf, 0, n);
                String all = got.toString(java.nio.charset.StandardCharsets.UTF_8);
                head = all.indexOf("\r\n\r\n");
                if (head >= 0) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?im)^content-length: *(\\d+)").matcher(all.substring(0, head));
                    length = m.find() ? Long.parseLong(m.group(1)) : -1;
                    if (length >= 0 && got.size() >= head + 4 + length) break;
                }
            }
            String all = got.toString(java.nio.charset.StandardCharsets.UTF_8);
            if (head < 0) return new String[]{all.isEmpty() ? "no answer" : all, "", "", String.valueOf((System.nanoTime() - start) / 1_000_000)};
            int line = all.indexOf("\r\n");
            return new String[]{all.substring(0, line), all.substring(line + 2, head), all.substring(head + 4),
                    String.valueOf((System.nanoTime() - start) / 1_000_000)};
        } catch (java.io.IOException e) {
            return new String[]{"no answer: " + e, "", "", String.valueOf((System.nanoTime() - start) / 1_000_000)};
        }
    }

    @Test
    void whileItsViewsLoadAGatewayAnswers503WithRetryAfterAndItsHealthSaysStarting() throws Exception {
        Tokens tokens = Tokens.inMemory();
        tokens.register(ANA, new Principal("acct-ana", "person", "ana"));
        // a read side of its own (not in the test gateway's group), started from nothing: its stores load while it is polled
        Gateway starting = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, Files.createTempDirectory("gw-starting"),
                1, tokens, Clock.systemUTC())).withReadSideApplicationId("ensemble-gateway-starting-test");
        try {
            starting.start();
            Map<String, Integer> starts = new java.util.TreeMap<>();
            boolean ready = false;
            long until = System.currentTimeMillis() + 90_000;
            while (!ready && System.currentTimeMillis() < until) {
                for (String path : List.of("/health", "/api/agent/sessions", "/api/agent/sessions/job-101", "/api/audit/deletions",
                        "/api/agent/sessions/job-101/events")) {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + starting.port() + path))
                            .header("Authorization", "Bearer " + ANA).GET().build(), HttpResponse.BodyHandlers.ofString());
                    JsonNode body = JSON.readTree(r.body());
                    assertThat(r.statusCode()).as(path + ": " + r.body()).isIn(200, 404, 503);
                    if (r.statusCode() == 503) {
                        assertThat(r.headers().firstValue("Retry-After")).as(path).hasValue("5");
                        assertThat(body.get(path.equals("/health") ? "status" : "error").asText()).as(path).isEqualTo("starting");
                        starts.merge(path, 1, Integer::sum);
                    }
                    if (path.equals("/health")) {
                        ready = r.statusCode() == 200;
                        assertThat(body.get("status").asText()).isEqualTo(ready ? "ready" : "starting");
                        assertThat(body.has("views") && body.has("eventLog")).as(r.body()).isTrue();
                    }
                }
            }
            assertThat(ready).as("ready within 90 s").isTrue();
            assertThat(starts).as("polled while it started").containsKeys("/health", "/api/agent/sessions");
            assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + starting.port() + "/api/agent/sessions"))
                    .header("Authorization", "Bearer " + ANA).GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        } finally {
            starting.stop();
        }
    }

    @Test
    void aQueryParameterWithAMalformedPercentEscapeIsRefusedNamingTheParameter() throws Exception {
        // java.net.URI refuses such a URI, so these requests go over a plain socket, as curl would send them
        for (String query : List.of("q=%ZZ", "q=ranking%2", "limit=5&q=50%", "taskId=t1%G1")) {
            String[] r = rawGet("/api/agent/sessions?" + query, ANA);
            assertThat(r[0]).as(query + ": " + r[2]).contains(" 400 ");
            assertThat(r[1].toLowerCase()).contains("content-type: application/json");
            JsonNode body = JSON.readTree(r[2]);
            assertThat(body.get("error").asText()).isEqualTo("bad_request");
            String name = query.substring(query.lastIndexOf('&') + 1, query.lastIndexOf('='));
            assertThat(body.get("message").asText()).as(query).startsWith("query parameter '" + name + "' has a malformed percent escape")
                    .contains("%25");
        }
        assertThat(JSON.readTree(rawGet("/api/agent/sessions?q=%ZZtop", ANA)[2]).get("message").asText()).contains("'%ZZ'");
        // well-formed escapes still decode: %25 is a literal percent sign, %20 a space
        assertThat(rawGet("/api/agent/sessions?q=50%25", ANA)[0]).contains(" 200 ");
        assertThat(rawGet("/api/agent/sessions?q=RANKING%20api", ANA)[0]).contains(" 200 ");
    }

    @Test
    void aGatewayWhosePortIsTakenFailsToStartAndLeavesNothingRunning() throws Exception {
        long feedsBefore = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("gateway-session-events")).count();
        Tokens tokens = Tokens.inMemory();
        Gateway second = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", gateway.port(),
                Files.createTempDirectory("gw2"), 1, tokens, Clock.systemUTC()));
        Throwable failure = org.assertj.core.api.Assertions.catchThrowable(second::start);
        assertThat(failure).isNotNull().hasRootCauseInstanceOf(java.net.BindException.class);
        assertThat(Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("gateway-session-events")).count())
                .as("the failed gateway's session-events feed is stopped").isEqualTo(feedsBefore);
        assertThat(get("/health", null).statusCode()).as("the gateway holding the port still answers").isEqualTo(200);
    }

    /** A GET sent as is over a socket (HTTP/1.0, so the answer is not chunked): status line, headers, body. */
    static String[] rawGet(String target, String token) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", gateway.port())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            int head = all.indexOf("\r\n\r\n");
            int line = all.indexOf("\r\n");
            return new String[]{all.substring(0, line), all.substring(line + 2, head), all.substring(head + 4)};
        }
    }

    /**
     * An eventId names one event: posting the same event again (its map in another order, a later recordedAt) is a
     * duplicate, but another event under that eventId is refused as a conflict naming the field, alone (409) or in a batch
     * beside a duplicate (200), and it is not appended.
     */
    @Test
    void anEventIdReusedForAnotherEventIsAConflictAndTheSameEventAgainADuplicate() throws Exception {
        String id = java.util.UUID.randomUUID().toString();
        String head = "{\"eventId\":\"" + id + "\",\"type\":\"ComputerStatus\",\"account\":\"acct-ana\","
                + "\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"computer:laptop-ana\",";
        String first = head + "\"payload\":{\"computerId\":\"laptop-ana\",\"online\":true,\"capabilities\":{\"a\":1,\"b\":2,\"c\":3}}}";
        String same = head + "\"recordedAt\":\"2026-11-02T10:00:00Z\","
                + "\"payload\":{\"capabilities\":{\"c\":3,\"a\":1,\"b\":2},\"online\":true,\"computerId\":\"laptop-ana\"}}";
        String other = head + "\"payload\":{\"computerId\":\"laptop-ana\",\"online\":false,\"capabilities\":{\"a\":1,\"b\":2,\"c\":3}}}";

        HttpResponse<String> posted = post("/api/events", ANA, first);
        assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
        assertThat(JSON.readTree(posted.body()).get("results").get(0).path("duplicate").asBoolean()).isFalse();

        long until = System.currentTimeMillis() + 30_000; // both the feed's reading of the log and the appender's own commit know it
        HttpResponse<String> again;
        do {
            again = post("/api/events", ANA, same);
        } while (again.statusCode() == 503 && System.currentTimeMillis() < until);
        assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
        assertThat(JSON.readTree(again.body()).get("results").get(0).path("duplicate").asBoolean()).as(again.body()).isTrue();

        HttpResponse<String> conflict = post("/api/events", ANA, other);
        assertThat(conflict.statusCode()).as(conflict.body()).isEqualTo(409);
        JsonNode refused = JSON.readTree(conflict.body()).get("results").get(0);
        assertThat(refused.get("status").asText()).isEqualTo("rejected");
        assertThat(refused.get("error").asText()).isEqualTo("conflict");
        assertThat(refused.get("field").asText()).isEqualTo("eventId");
        assertThat(refused.get("reason").asText()).contains(id).contains("other content");

        HttpResponse<String> batch = post("/api/events", ANA, "[" + same + "," + other + "]");
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        JsonNode results = JSON.readTree(batch.body()).get("results");
        assertThat(results.get(0).path("duplicate").asBoolean()).as(batch.body()).isTrue();
        assertThat(results.get(1).path("error").asText()).as(batch.body()).isEqualTo("conflict");

        String fresh = java.util.UUID.randomUUID().toString();
        HttpResponse<String> inOneBatch = post("/api/events", ANA, "[" + first.replace(id, fresh) + "," + other.replace(id, fresh) + "]");
        assertThat(inOneBatch.statusCode()).as(inOneBatch.body()).isEqualTo(200);
        JsonNode both = JSON.readTree(inOneBatch.body()).get("results");
        assertThat(both.get(0).path("status").asText()).as(inOneBatch.body()).isEqualTo("accepted");
        assertThat(both.get(1).path("error").asText()).as("a second event under an eventId of the same batch").isEqualTo("conflict");
    }

    /** A ComputerStatus of acct-ana's laptop with a new eventId, as one line of JSON. */
    private static String statusLine() {
        return "{\"eventId\":\"" + java.util.UUID.randomUUID() + "\",\"type\":\"ComputerStatus\",\"account\":\"acct-ana\","
                + "\"space\":\"web:space-1\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"computer:laptop-ana\","
                + "\"payload\":{\"computerId\":\"laptop-ana\",\"online\":true}}";
    }

    private static HttpResponse<String> postBytes(String contentType, String contentEncoding, byte[] body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + ANA).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) b.header("Content-Type", contentType);
        if (contentEncoding != null) b.header("Content-Encoding", contentEncoding);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Bodies a buggy client sends: a JSON Lines batch with one broken line keeps its good lines (the broken one refused on
     * its own, naming its line); a body that says it is not JSON, or is compressed, is a 415 saying what to send; bytes
     * that are not UTF-8 and a field given twice are refused, not silently changed; a byte-order mark is taken; a wrong
     * type or NaN is named without the parser's internals.
     */
    @Test
    void badBodiesAreRefusedWithAReasonAndAJsonLinesBatchKeepsItsGoodLines() throws Exception {
        String first = statusLine();
        String last = statusLine();
        HttpResponse<String> lines = post("/api/events", ANA, first + "\n{\"eventId\": broken\n" + last + "\n");
        assertThat(lines.statusCode()).as(lines.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(lines.body());
        assertThat(answer.get("accepted").asInt()).as(lines.body()).isEqualTo(2);
        assertThat(answer.get("rejected").asInt()).isEqualTo(1);
        assertThat(answer.get("results").get(0).get("status").asText()).isEqualTo("accepted");
        assertThat(answer.get("results").get(1).get("status").asText()).isEqualTo("rejected");
        assertThat(answer.get("results").get(1).get("error").asText()).isEqualTo("invalid");
        assertThat(answer.get("results").get(1).get("reason").asText()).startsWith("line 2 cannot be read as JSON: ")
                .contains("at column 13").doesNotContain("at line");
        assertThat(answer.get("results").get(2).get("status").asText()).isEqualTo("accepted");
        // a pretty-printed body, or an array one element a line, with an error is one error for the whole body, where it is:
        // nothing of it is taken
        HttpResponse<String> pretty = post("/api/events", ANA, "{\n  \"eventId\": \"x\",\n  \"type\": oops\n}");
        assertThat(pretty.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(pretty.body()).get("message").asText()).startsWith("the body is not valid JSON: ").contains("at line 3");
        String kept = statusLine();
        HttpResponse<String> array = post("/api/events", ANA, "[\n{\"eventId\":\"e1\",\"type\": oops},\n" + kept + "\n]");
        assertThat(array.statusCode()).as(array.body()).isEqualTo(400);
        assertThat(JSON.readTree(array.body()).get("message").asText()).startsWith("the body is not valid JSON: ").contains("at line 2");
        HttpResponse<String> keptAfter = post("/api/events", ANA, kept);
        assertThat(JSON.readTree(keptAfter.body()).get("results").get(0).path("duplicate").asBoolean())
                .as("the good element of the refused array was not taken").isFalse();
        HttpResponse<String> trailing = post("/api/events", ANA, "[" + statusLine() + "] and more");
        assertThat(trailing.statusCode()).as(trailing.body()).isEqualTo(400);
        HttpResponse<String> truncated = post("/api/events", ANA, "{\"eventId\": \"x\"");
        assertThat(truncated.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(truncated.body()).get("message").asText()).contains("unexpected end of input")
                .doesNotContain("Source").doesNotContain("REDACTED").doesNotContain("start marker");

        byte[] one = statusLine().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        HttpResponse<String> form = postBytes("application/x-www-form-urlencoded", null, one);
        assertThat(form.statusCode()).as(form.body()).isEqualTo(415);
        assertThat(JSON.readTree(form.body()).get("error").asText()).isEqualTo("unsupported_media_type");
        assertThat(JSON.readTree(form.body()).get("message").asText()).contains("Content-Type: application/json");
        HttpResponse<String> gzip = postBytes("application/json", "gzip", one);
        assertThat(gzip.statusCode()).isEqualTo(415);
        assertThat(JSON.readTree(gzip.body()).get("message").asText()).contains("uncompressed");
        assertThat(postBytes("application/json; charset=utf-8", null, one).statusCode()).isEqualTo(200);
        assertThat(postBytes("text/plain;charset=UTF-8", null, statusLine().getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .statusCode()).as("a script's fetch of a string").isEqualTo(200);
        HttpResponse<String> latin1 = postBytes("application/json; charset=ISO-8859-1", null, one);
        assertThat(latin1.statusCode()).isEqualTo(415);
        assertThat(JSON.readTree(latin1.body()).get("message").asText()).contains("must be UTF-8");
        assertThat(postBytes(null, null, statusLine().getBytes(java.nio.charset.StandardCharsets.UTF_8)).statusCode())
                .as("no Content-Type: taken as JSON").isEqualTo(200);

        byte[] bom = ("\uFEFF" + statusLine()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        HttpResponse<String> withBom = postBytes("application/json", null, bom);
        assertThat(withBom.statusCode()).as(withBom.body()).isEqualTo(200);
        String summary = statusLine().replace("\"online\":true", "\"online\":true,\"note\":\"bad XX bytes\"");
        byte[] latin = summary.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int at = summary.indexOf("XX");
        latin[at] = (byte) 0xff;
        latin[at + 1] = (byte) 0xfe;
        HttpResponse<String> notUtf8 = postBytes("application/json", null, latin);
        assertThat(notUtf8.statusCode()).as(notUtf8.body()).isEqualTo(400);
        assertThat(JSON.readTree(notUtf8.body()).get("message").asText()).startsWith("the body is not UTF-8 text: the byte at offset " + at + " ");

        String twice = statusLine().replaceFirst("\\{\"eventId\":\"", "{\"eventId\":\"first\",\"eventId\":\"");
        HttpResponse<String> duplicate = post("/api/events", ANA, twice);
        assertThat(duplicate.statusCode()).as(duplicate.body()).isEqualTo(400);
        assertThat(JSON.readTree(duplicate.body()).get("message").asText()).contains("duplicate field 'eventId'");

        HttpResponse<String> numberType = post("/api/events", ANA, statusLine().replace("\"type\":\"ComputerStatus\"", "\"type\":7"));
        assertThat(numberType.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(numberType.body()).get("results").get(0).get("reason").asText())
                .contains("must be the event type's name (a string), not 7").doesNotContain("missing");
        HttpResponse<String> nan = post("/api/events", ANA, "{\"eventId\": NaN}");
        assertThat(nan.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(nan.body()).get("message").asText()).contains("not allowed in JSON").doesNotContain("JsonReadFeature");
        for (String empty : List.of("[]", " [ ] ", "{\"events\": []}")) {
            HttpResponse<String> none = post("/api/events", ANA, empty);
            assertThat(none.statusCode()).isEqualTo(400);
            assertThat(JSON.readTree(none.body()).get("message").asText()).as(empty).startsWith("the batch is empty");
        }
        HttpResponse<String> foobar = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + ANA).method("FOOBAR", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(foobar.statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(foobar.body()).get("message").asText()).isEqualTo("FOOBAR is not allowed on /api/events");
        String badEscape; // a path no URI class builds: sent as raw bytes
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", gateway.port())) {
            socket.getOutputStream().write(("GET /api/agent/sessions/%ZZ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + ANA
                    + "\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            badEscape = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        assertThat(badEscape).startsWith("HTTP/1.1 400").contains("followed by two hex digits");
        HttpResponse<String> deep = post("/api/events", ANA, "[".repeat(1200) + "]".repeat(1200));
        assertThat(deep.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(deep.body()).get("message").asText()).doesNotContain("StreamReadConstraints").doesNotContain("`");
    }

    @Test
    void requestsNeedAKnownTokenAndErrorsAreJson() throws Exception {
        HttpResponse<String> none = get("/api/agent/sessions", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(none.body()).get("message").asText()).contains("Authorization: Bearer");
        assertThat(get("/api/agent/sessions", "wrong").statusCode()).isEqualTo(401);
        JsonNode me = JSON.readTree(get("/api/me", ANA).body());
        assertThat(me.get("account").asText()).isEqualTo("acct-ana");
        assertThat(me.get("role").asText()).isEqualTo("person");
        HttpResponse<String> badLimit = get("/api/agent/sessions?limit=lots", ANA);
        assertThat(badLimit.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(badLimit.body()).get("message").asText()).isEqualTo("limit must be a whole number, not 'lots'");
        HttpResponse<String> notJson = post("/api/events", ANA, "{oops");
        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(notJson.body()).get("error").asText()).isEqualTo("bad_request");
        assertThat(JSON.readTree(notJson.body()).get("message").asText()).startsWith("the body is not valid JSON: ")
                .contains("at line 1, column").doesNotContain("StreamReadFeature").doesNotContain("Source:");
        HttpResponse<String> nul = get("/api/agent/sessions/a%00b", ANA);
        assertThat(nul.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(nul.body()).get("error").asText()).isEqualTo("bad_request");
        HttpResponse<String> hugeHeader = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/me"))
                .header("Authorization", "Bearer " + "x".repeat(20_000)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(hugeHeader.statusCode()).isEqualTo(431);
        assertThat(JSON.readTree(hugeHeader.body()).get("error").asText()).isEqualTo("http_431");
        HttpResponse<String> wrongMethod = get("/api/events", ANA);
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(wrongMethod.body()).get("message").asText()).isEqualTo("GET is not allowed on /api/events");
                HttpResponse<String> root = get("/", null);
        assertThat(root.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(root.body()).get("api").asText()).isEqualTo("/api/openapi.yaml");
        HttpResponse<String> unknown = get("/api/no-such-thing", ANA);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(unknown.body()).get("error").asText()).isEqualTo("not_found");
        assertThat(JSON.readTree(unknown.body()).get("message").asText()).contains("GET /api/no-such-thing");
        HttpResponse<String> hugeLimit = get("/api/agent/sessions?limit=99999999999", ANA);
        assertThat(JSON.readTree(hugeLimit.body()).get("message").asText()).isEqualTo("limit must be between 1 and 500, not 99999999999");
        assertThat(JSON.readTree(hugeLimit.body()).path("field").asText()).as("names the field").isEqualTo("limit");
        for (String[] bad : new String[][]{{"/api/audit/deletions?limit=-1", "limit"}, {"/api/audit/deletions?since=yesterday", "since"},
                {"/api/agent/sessions/x/events?after=-1", "after"}, {"/api/agent/sessions/x/events?limit=-5", "limit"}}) {
            HttpResponse<String> r = get(bad[0], ANA);
            assertThat(r.statusCode()).as(bad[0] + ": " + r.body()).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).path("field").asText()).as(bad[0] + " names the field").isEqualTo(bad[1]);
        }
        HttpResponse<String> trailing = post("/api/session-choice", ANA, "{\"type\":\"RunClaimed\"} and more");
        assertThat(trailing.statusCode()).as(trailing.body()).isEqualTo(400);
        assertThat(JSON.readTree(trailing.body()).get("message").asText()).contains("not valid JSON");
        HttpResponse<String> trailingEvents = post("/api/events", ANA, "{\"type\":\"RunClaimed\"} garbage");
        assertThat(trailingEvents.statusCode()).as("text after the events is not dropped silently: " + trailingEvents.body()).isEqualTo(400);
        HttpResponse<String> emptyChoice = post("/api/session-choice", ANA, "[]");
        assertThat(emptyChoice.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(emptyChoice.body()).get("message").asText()).contains("must be a RunClaimed event");
        HttpResponse<String> otherType = post("/api/session-choice", ANA, "{\"type\":\"RunStatusChanged\",\"account\":\"acct-ana\"}");
        assertThat(otherType.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(otherType.body()).get("message").asText())
                .isEqualTo("the body must be a RunClaimed event (the run about to start), not a RunStatusChanged");
        assertThat(JSON.readTree(otherType.body()).get("field").asText()).isEqualTo("type");
        HttpResponse<String> noAccount = post("/api/session-choice", ANA, "{\"type\":\"RunClaimed\"}");
        assertThat(noAccount.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(noAccount.body()).get("field").asText()).as(noAccount.body()).isEqualTo("account");
        HttpResponse<String> tooLong = get("/api/agent/sessions?q=" + "a".repeat(20_000), ANA);
        assertThat(tooLong.statusCode()).isEqualTo(414);
        assertThat(tooLong.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
        assertThat(JSON.readTree(tooLong.body()).get("message").asText()).contains("shorten the query");
        HttpResponse<String> tooLarge = post("/api/events", ANA, "[" + "0,".repeat(500_001) + "0]");
        assertThat(tooLarge.statusCode()).isEqualTo(413);
        assertThat(JSON.readTree(tooLarge.body()).get("error").asText()).isEqualTo("too_large");
        assertThat(JSON.readTree(tooLarge.body()).get("message").asText()).contains("over 1000000 bytes").contains("split it");
        // the same limit for a body sent chunked (no Content-Length): 2 MB of spaces
        byte[] twoMegabytes = " ".repeat(2_000_000).getBytes();
        for (String path : List.of("/api/events", "/api/session-choice")) {
            HttpResponse<String> chunked = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                    .header("Authorization", "Bearer " + ANA).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(twoMegabytes))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(chunked.statusCode()).as(path + ": " + chunked.body()).isEqualTo(413);
            assertThat(JSON.readTree(chunked.body()).get("error").asText()).isEqualTo("too_large");
        }
        String small = "[{\"type\":\"NoSuchType\",\"eventId\":\"chunked-1\"}]";
        HttpResponse<String> smallChunked = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + ANA).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(small.getBytes()))).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> smallSized = post("/api/events", ANA, small);
        assertThat(smallChunked.statusCode()).as("a small chunked body is read as a sized one: " + smallChunked.body())
                .isEqualTo(smallSized.statusCode()).isEqualTo(400);
        assertThat(smallChunked.body()).isEqualTo(smallSized.body()).contains("NoSuchType");
                HttpResponse<String> spec = get("/api/openapi.yaml", null);
        assertThat(spec.statusCode()).isEqualTo(200);
        assertThat(spec.body()).contains("/api/agent/sessions/{id}").contains("/api/events").contains("/api/me");
    }
}
