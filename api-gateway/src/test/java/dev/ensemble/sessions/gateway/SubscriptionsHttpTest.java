package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.schema.TopicAdmin;
import dev.ensemble.sessions.schema.testing.KafkaTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The subscription endpoints over HTTP against a real broker: a session's events after a cursor with a small window
 * (persistent-sessions guide, "The output buffer": truncated when the cursor fell out of it), and the live stream
 * (reconnecting with the last cursor: no gap, no duplicate; another account's events never show).
 */
class SubscriptionsHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static KafkaTestCluster cluster;
    static Gateway gateway;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        cluster = KafkaTestCluster.start();
        try (Admin admin = cluster.admin()) {
            TopicAdmin.ensureTopics(admin, 2, (short) 1);
        }
        Path dir = Files.createTempDirectory("subs");
        Tokens tokens = Tokens.inMemory();
        tokens.register("t-ana", new Principal("acct-ana", "person", "ana"));
        tokens.register("t-bo", new Principal("acct-bo", "person", "bo"));
        gateway = new Gateway(new Gateway.Settings(cluster.bootstrapServers(), "127.0.0.1", 0, dir.resolve("gateway"), 1,
                tokens, Clock.systemUTC())).withSessionEventWindowBytes(1500).start();
        gateway.awaitReady(Duration.ofSeconds(60));
    }

    @AfterAll
    static void stop() {
        gateway.stop();
        cluster.close();
    }

    static HttpResponse<String> get(String path, String token) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .header("Authorization", "Bearer " + token).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static void post(String token, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isBetween(200, 299);
    }

    static String claim(String account, String runId, String continueFrom) {
        return "{\"eventId\":\"" + UUID.randomUUID() + "\",\"type\":\"RunClaimed\",\"account\":\"" + account + "\",\"space\":\"web:s\","
                + "\"occurredAt\":\"2026-11-02T12:00:00Z\",\"source\":\"computer:laptop\",\"payload\":{\"runId\":\"" + runId + "\","
                + "\"taskId\":\"task-" + runId + "\",\"computerId\":\"laptop\",\"agent\":\"claude-code\",\"kind\":\"TASK_RUN\","
                + (continueFrom == null ? "" : "\"continueFromJobId\":\"" + continueFrom + "\",")
                + "\"task\":{\"title\":\"Build the ranking API " + runId + "\",\"labels\":[],\"linkedTaskIds\":[]}}}";
    }

    static String status(String account, String runId, String status) {
        return "{\"eventId\":\"" + UUID.randomUUID() + "\",\"type\":\"RunStatusChanged\",\"account\":\"" + account + "\",\"space\":\"web:s\","
                + "\"occurredAt\":\"2026-11-02T12:01:00Z\",\"source\":\"computer:laptop\",\"payload\":{\"runId\":\"" + runId
                + "\",\"status\":\"" + status + "\",\"filesChanged\":[]}}";
    }

    static JsonNode awaitEvents(String path, String token, int atLeast) throws Exception {
        long until = System.currentTimeMillis() + 30_000;
        while (true) {
            HttpResponse<String> r = get(path, token);
            if (r.statusCode() == 200) {
                JsonNode n = JSON.readTree(r.body());
                if (n.get("latest").asLong() >= atLeast || System.currentTimeMillis() > until) return n;
            } else if (System.currentTimeMillis() > until) {
                throw new AssertionError(r.statusCode() + " " + r.body());
            }
            Thread.sleep(100);
        }
    }

    @Test
    void sessionEventsAfterACursorAndTruncatedOnceTheWindowRolledOver() throws Exception {
        post("t-ana", claim("acct-ana", "r1", null));
        post("t-ana", status("acct-ana", "r1", "WORKING"));
        post("t-ana", status("acct-ana", "r1", "DONE"));
        post("t-ana", claim("acct-ana", "r2", "r1")); // joins session r1
        JsonNode all = awaitEvents("/api/agent/sessions/r1/events", "t-ana", 4);
        assertThat(all.get("truncated").asBoolean()).isFalse();
        assertThat(all.get("events")).hasSize(4);
        assertThat(all.get("events").get(3).get("event").get("payload").get("runId").asText()).isEqualTo("r2");
        JsonNode page = JSON.readTree(get("/api/agent/sessions/r1/events?after=2&limit=1", "t-ana").body());
        assertThat(page.get("events")).hasSize(1);
        assertThat(page.get("events").get(0).get("cursor").asText()).isEqualTo("3");
        assertThat(page.get("next").asText()).isEqualTo("3");
        JsonNode rest = JSON.readTree(get("/api/agent/sessions/r1/events?after=3", "t-ana").body());
        assertThat(rest.get("events")).hasSize(1);
        assertThat(rest.get("next").asText()).isEqualTo("4");
        // another account does not see it
        assertThat(get("/api/agent/sessions/r1/events", "t-bo").statusCode()).isEqualTo(404);
        // the window (1,500 bytes) rolls over: a reader at cursor 2 lost events
        for (int i = 0; i < 20; i++) post("t-ana", status("acct-ana", "r2", "WORKING"));
        JsonNode rolled = awaitEvents("/api/agent/sessions/r1/events?after=2", "t-ana", 24);
        assertThat(rolled.get("truncated").asBoolean()).isTrue();
        long oldest = rolled.get("oldest").asLong();
        assertThat(oldest).isGreaterThan(3);
        assertThat(rolled.get("events").get(0).get("cursor").asLong()).isEqualTo(oldest);
        JsonNode fresh = JSON.readTree(get("/api/agent/sessions/r1/events?after=" + rolled.get("next").asText(), "t-ana").body());
        assertThat(fresh.get("truncated").asBoolean()).isFalse();
        assertThat(fresh.get("events")).isEmpty();
        assertThat(get("/api/agent/sessions/r1/events?after=x", "t-ana").statusCode()).isEqualTo(400);
    }

    /** Reads n SSE events (id, data) from the stream, then disconnects. */
    static List<String[]> readStream(String token, String lastEventId, int n) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events/stream"))
                .header("Authorization", "Bearer " + token).header("Accept", "text/event-stream").timeout(Duration.ofSeconds(30)).GET();
        if (lastEventId != null) b.header("Last-Event-ID", lastEventId);
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        List<String[]> out = new ArrayList<>();
        try (InputStream in = r.body(); BufferedReader rd = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String id = null, line;
            while (out.size() < n && (line = rd.readLine()) != null) {
                if (line.startsWith("id:")) id = line.substring(3).trim();
                else if (line.startsWith("data:")) out.add(new String[]{id, line.substring(5).trim()});
            }
        }
        return out;
    }

    @Test
    void theStreamResumesFromTheLastCursorWithNoGapAndNoDuplicate() throws Exception {
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            runs.add("s" + i);
            post("t-bo", claim("acct-bo", "s" + i, null));
            post("t-ana", claim("acct-ana", "other" + i, null)); // another account, maybe in the same partition
        }
        List<String[]> first = readStream("t-bo", null, 3);
        assertThat(first).hasSize(3);
        // more events arrive while the client is away
        for (int i = 6; i < 9; i++) {
            runs.add("s" + i);
            post("t-bo", claim("acct-bo", "s" + i, null));
        }
        List<String[]> second = readStream("t-bo", first.get(2)[0], 6);
        List<String> seen = new ArrayList<>();
        for (String[] e : first) seen.add(JSON.readTree(e[1]).get("payload").get("runId").asText());
        for (String[] e : second) seen.add(JSON.readTree(e[1]).get("payload").get("runId").asText());
        assertThat(seen).isEqualTo(runs);
        for (String[] e : second) assertThat(JSON.readTree(e[1]).get("account").asText()).isEqualTo("acct-bo");
        // unauthenticated: 401
        HttpResponse<String> anon = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events/stream"))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anon.statusCode()).isEqualTo(401);
    }

    @Test
    void aSessionCursorBeyondItsLatestEventIsRefusedWithTheLatestCursor() throws Exception {
        post("t-ana", claim("acct-ana", "a1", null));
        post("t-ana", status("acct-ana", "a1", "WORKING"));
        JsonNode all = awaitEvents("/api/agent/sessions/a1/events", "t-ana", 2);
        assertThat(all.get("latest").asText()).isEqualTo("2");
        // up to date: nothing new, resume from the same cursor
        JsonNode current = JSON.readTree(get("/api/agent/sessions/a1/events?after=2", "t-ana").body());
        assertThat(current.get("events")).isEmpty();
        assertThat(current.get("next").asText()).isEqualTo("2");
        // a cursor this log never gave out (say, kept from before the data folder was reset)
        HttpResponse<String> ahead = get("/api/agent/sessions/a1/events?after=40", "t-ana");
        assertThat(ahead.statusCode()).as(ahead.body()).isEqualTo(400);
        JsonNode error = JSON.readTree(ahead.body());
        assertThat(error.get("error").asText()).isEqualTo("cursor_ahead");
        assertThat(error.get("message").asText()).contains("cursor 40 is ahead of session 'a1'").contains("latest cursor is 2");
        assertThat(error.get("latest").asText()).isEqualTo("2");
        // the cursor of an event just appended (another gateway instance may have served it already) is not refused:
        // the gateway first reads the log to its end
        for (int seq = 3; seq <= 7; seq++) {
            post("t-ana", status("acct-ana", "a1", "WORKING"));
            HttpResponse<String> fresh = get("/api/agent/sessions/a1/events?after=" + seq, "t-ana");
            assertThat(fresh.statusCode()).as(fresh.body()).isEqualTo(200);
            assertThat(JSON.readTree(fresh.body()).get("next").asText()).isEqualTo(String.valueOf(seq));
        }
    }

    @Test
    void aCursorAheadIsRefusedPromptlyWhileOtherEventsKeepArriving() throws Exception {
        post("t-bo", claim("acct-bo", "busy-1", null));
        awaitEvents("/api/agent/sessions/busy-1/events", "t-bo", 1);
        java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread traffic = new Thread(() -> {
            for (int i = 0; busy.get(); i++) {
                try {
                    post("t-ana", claim("acct-ana", "traffic-" + i, null)); // an event every few ms, no quiet poll
                } catch (Exception e) {
                    return;
                }
            }
        });
        traffic.start();
        try {
            Thread.sleep(500);
            HttpResponse<String> ahead = get("/api/agent/sessions/busy-1/events?after=90", "t-bo");
            assertThat(ahead.statusCode()).as("not a 503 for want of a quiet moment: " + ahead.body()).isEqualTo(400);
            assertThat(JSON.readTree(ahead.body()).get("error").asText()).isEqualTo("cursor_ahead");
        } finally {
            busy.set(false);
            traffic.join();
        }
    }

    /** The stream's answer: its status, content type and, when it is not a stream, its body (a stream is closed unread). */
    record Answer(int status, String contentType, String body) {
    }

    static Answer openStream(String query, String lastEventId) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events/stream" + query))
                .header("Authorization", "Bearer t-bo").header("Accept", "text/event-stream").timeout(Duration.ofSeconds(30)).GET();
        if (lastEventId != null) b.header("Last-Event-ID", lastEventId);
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""),
                    r.statusCode() == 200 ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** {@code after=end} (the web page's subscription): only the events that come after the stream opened. */
    @Test
    void aStreamFromTheEndShowsOnlyWhatComesAfter() throws Exception {
        post("t-bo", claim("acct-bo", "before-end", null));
        readStream("t-bo", null, 1); // it is in the log
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
                        + "/api/events/stream?after=end")).header("Authorization", "Bearer t-bo").header("Accept", "text/event-stream")
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200); // the stream's start was fixed when it opened
        post("t-bo", claim("acct-bo", "after-end", null));
        try (InputStream in = r.body(); BufferedReader rd = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = rd.readLine()) != null && !line.startsWith("data:")) {
                // the id and event lines, keep-alive comments
            }
            assertThat(line).isNotNull();
            assertThat(JSON.readTree(line.substring(5).trim()).get("payload").get("runId").asText()).isEqualTo("after-end");
        }
    }

    @Test
    void aStreamCursorBeyondTheEndOfTheLogIsRefusedWithTheEndCursorAndAWrongOneIsA400() throws Exception {
        post("t-bo", claim("acct-bo", "ahead-1", null));
        List<String[]> seen = readStream("t-bo", null, 1);
        String cursor = seen.get(0)[0];
        int partition = Integer.parseInt(cursor.substring(0, cursor.indexOf('-')));
        String farAhead = partition + "-" + 1_000_000;
        for (Answer r : List.of(openStream("", farAhead), openStream("?after=" + farAhead, null))) {
            assertThat(r.status()).as(r.body()).isEqualTo(400);
            assertThat(r.contentType()).startsWith("application/json");
            JsonNode error = JSON.readTree(r.body());
            assertThat(error.get("error").asText()).isEqualTo("cursor_ahead");
            assertThat(error.get("message").asText()).contains("cursor " + farAhead + " is ahead of the log");
            String latest = error.get("latest").asText();
            assertThat(latest).startsWith(partition + "-");
            assertThat(Long.parseLong(latest.substring(latest.indexOf('-') + 1))).isGreaterThanOrEqualTo(
                    Long.parseLong(cursor.substring(cursor.indexOf('-') + 1))).isLessThan(1_000_000);
            assertThat(error.get("message").asText()).contains(latest);
        }
        // resuming after the end cursor it gave: the next event, and nothing before it
        String latest = JSON.readTree(openStream("", farAhead).body()).get("latest").asText();
        post("t-bo", claim("acct-bo", "ahead-2", null));
        List<String[]> next = readStream("t-bo", latest, 1);
        assertThat(JSON.readTree(next.get(0)[1]).get("payload").get("runId").asText()).isEqualTo("ahead-2");
        // a malformed cursor and one of another partition are a 400 too, before the stream opens
        Answer malformed = openStream("?after=x", null);
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(JSON.readTree(malformed.body()).get("message").asText()).contains("looks like '<partition>-<offset>'");
        Answer otherPartition = openStream("", (1 - partition) + "-0");
        assertThat(otherPartition.status()).isEqualTo(400);
        assertThat(JSON.readTree(otherPartition.body()).get("message").asText()).contains("is not of your account's partition");
    }

    static HttpResponse<String> postRaw(String token, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anEventPostedAgainIsNotAppendedAgainAndACopyInTheLogIsShownOnce() throws Exception {
        String claim = claim("acct-ana", "d1", null);
        String working = status("acct-ana", "d1", "WORKING");
        String claimId = JSON.readTree(claim).get("eventId").asText();
        JsonNode firstPost = JSON.readTree(postRaw("t-ana", claim).body());
        assertThat(firstPost.get("results").get(0).has("duplicate")).isFalse();
        JsonNode again = JSON.readTree(postRaw("t-ana", claim).body());
        assertThat(again.get("results").get(0).get("status").asText()).isEqualTo("accepted");
        assertThat(again.get("results").get(0).get("duplicate").asBoolean()).isTrue();
        JsonNode batch = JSON.readTree(postRaw("t-ana", "[" + claim + "," + working + "," + working + "]").body());
        assertThat(batch.get("accepted").asInt()).isEqualTo(3);
        assertThat(batch.get("results").get(0).get("duplicate").asBoolean()).isTrue();
        assertThat(batch.get("results").get(1).has("duplicate")).as("the first copy in the batch is appended").isFalse();
        assertThat(batch.get("results").get(2).get("duplicate").asBoolean()).isTrue();
        // a copy that reached the log anyway (say, posted through two gateways at once)
        try (org.apache.kafka.clients.producer.KafkaProducer<String, byte[]> raw = new org.apache.kafka.clients.producer.KafkaProducer<>(
                dev.ensemble.sessions.schema.LogProducers.config(cluster.bootstrapServers(), "test-copy", java.util.Map.of()),
                new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            dev.ensemble.sessions.events.Event e = dev.ensemble.sessions.schema.EventJson.parse(claim, Clock.systemUTC());
            raw.send(new org.apache.kafka.clients.producer.ProducerRecord<>(dev.ensemble.sessions.schema.Topics.EVENTS.name(), "acct-ana",
                    dev.ensemble.sessions.schema.Topics.EVENTS.valueSerde().serializer().serialize("x", e))).get();
        }
        String done = status("acct-ana", "d1", "DONE");
        String doneId = JSON.readTree(done).get("eventId").asText();
        post("t-ana", done);
        JsonNode events = awaitEvents("/api/agent/sessions/d1/events", "t-ana", 3);
        List<String> ids = new ArrayList<>();
        events.get("events").forEach(n -> ids.add(n.get("event").get("eventId").asText()));
        assertThat(ids).hasSize(3).startsWith(claimId).endsWith(doneId);
        // the stream from the start, up to the last event: the claim once
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events/stream"))
                .header("Authorization", "Bearer t-ana").header("Accept", "text/event-stream").timeout(Duration.ofSeconds(30)).GET().build();
        HttpResponse<InputStream> r = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        int claims = 0;
        try (InputStream in = r.body(); BufferedReader rd = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = rd.readLine()) != null) {
                if (!line.startsWith("data:")) continue;
                String id = JSON.readTree(line.substring(5).trim()).path("eventId").asText();
                if (id.equals(claimId)) claims++;
                if (id.equals(doneId)) break;
            }
        }
        assertThat(claims).as("the claim, in the log twice, is streamed once").isEqualTo(1);
    }
}
