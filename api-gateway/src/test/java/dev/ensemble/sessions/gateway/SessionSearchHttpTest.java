package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /api/agent/sessions} over HTTP against the projector and the gateway's read side on a real broker (issue 19
 * item 3): search (stemming, phrases, snippets) only in the caller's account, the filters, and cursor paging through
 * more sessions than a page, with no session twice or left out while sessions change.
 */
class SessionSearchHttpTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient http = HttpClient.newHttpClient();
    static final String DAN = "token-dan";
    static final String EVE = "token-eve";
    static final String FAY = "token-fay";
    static final String GUS = "token-gus";
    static final Instant T0 = Instant.parse("2026-11-20T09:00:00Z");
    static GatewayOnBroker rig;
    static Gateway gateway;
    static int seq;

    @BeforeAll
    static void start() throws Exception {
        Tokens tokens = Tokens.inMemory();
        tokens.register(DAN, new Principal("acct-dan", "admin", "dan"));
        tokens.register(EVE, new Principal("acct-eve", "admin", "eve"));
        tokens.register(FAY, new Principal("acct-fay", "admin", "fay"));
        tokens.register(GUS, new Principal("acct-gus", "admin", "gus"));
        rig = GatewayOnBroker.start("gw-search", tokens, Duration.ofSeconds(120));
        gateway = rig.gateway;
    }

    @AfterAll
    static void stop() {
        rig.close();
    }

    static String event(String account, String computer, Instant at, String type, String payload) {
        return "{\"eventId\":\"f0000000-0000-0000-0000-" + String.format("%012d", ++seq) + "\",\"type\":\"" + type
                + "\",\"account\":\"" + account + "\",\"space\":\"web:space-1\",\"occurredAt\":\"" + at
                + "\",\"source\":\"computer:" + computer + "\",\"payload\":" + payload + "}";
    }

    static String claim(String account, String computer, String agent, Instant at, String runId, String title, String folder) {
        return event(account, computer, at, "RunClaimed", "{\"runId\":\"" + runId + "\",\"taskId\":\"task-" + runId
                + "\",\"computerId\":\"" + computer + "\",\"agent\":\"" + agent + "\",\"folder\":\"" + folder
                + "\",\"task\":{\"title\":\"" + title + "\"}}");
    }

    static String done(String account, String computer, Instant at, String runId, String report, String file) {
        return event(account, computer, at, "RunStatusChanged", "{\"runId\":\"" + runId + "\",\"status\":\"DONE\",\"reportSummary\":\""
                + report + "\",\"filesChanged\":[\"" + file + "\"]}");
    }

    static void post(String token, List<String> events) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/api/events"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("[" + String.join(",", events) + "]")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).get("rejected").asInt()).as(r.body()).isZero();
    }

    static HttpResponse<String> get(String path, String token) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
                .header("Authorization", "Bearer " + token).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode list(String query, String token) throws Exception {
        HttpResponse<String> r = get("/api/agent/sessions?" + query, token);
        assertThat(r.statusCode()).as(query + ": " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    static List<String> ids(JsonNode page) {
        List<String> out = new ArrayList<>();
        page.get("sessions").forEach(s -> out.add(s.get("id").asText()));
        return out;
    }

    static String q(String text) {
        return "q=" + URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    /** Polls the query until its answer passes {@code ready}. */
    static JsonNode await(String query, String token, Predicate<JsonNode> ready) throws Exception {
        long until = System.currentTimeMillis() + 90_000;
        JsonNode last = null;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = get("/api/agent/sessions?" + query, token);
            if (r.statusCode() == 200) {
                last = JSON.readTree(r.body());
                if (ready.test(last)) {
                    return last;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError(query + " never became ready; last: " + last);
    }

    @Test
    void aSearchIsStemmedTakesPhrasesMarksTheMatchAndStaysInTheCallersAccount() throws Exception {
        post(DAN, List.of(
                claim("acct-dan", "laptop", "claude-code", T0, "d1", "Speed up the checkout", "/work/shop"),
                done("acct-dan", "laptop", T0.plusSeconds(60), "d1", "The checkout runs in half the time now", "src/cart/CheckoutFlow.java"),
                claim("acct-dan", "laptop", "claude-code", T0.plusSeconds(120), "d2", "Write the release notes for billing", "/work/billing"),
                claim("acct-dan", "desk", "codex", T0.plusSeconds(180), "d3", "Fix the flaky login test", "/work/shop")));
        post(EVE, List.of(claim("acct-eve", "pad", "claude-code", T0, "e1", "Why the checkout runs slowly", "/home/eve")));
        await("limit=10", DAN, j -> j.get("sessions").size() == 3 && ids(j).get(2).equals("d1")
                && j.get("sessions").get(2).get("latestReportSummary").isTextual());
        await("limit=10", EVE, j -> j.get("sessions").size() == 1);

        // "running" finds "runs" (Porter stemming), in the report; only dan's own session
        JsonNode running = list(q("running") + "&limit=10", DAN);
        assertThat(ids(running)).containsExactly("d1");
        JsonNode hit = running.get("sessions").get(0);
        assertThat(hit.get("snippet").asText()).isEqualTo("The checkout [[runs]] in half the time now");
        assertThat(hit.get("snippetField").asText()).isEqualTo("report");
        assertThat(hit.get("agent").asText()).as("a full list entry").isEqualTo("claude-code");
        assertThat(running.has("next")).as("one page only").isFalse();
        assertThat(ids(list(q("running"), EVE))).containsExactly("e1");
        // phrases keep their words' order; words alone may be anywhere
        assertThat(ids(list(q("\"release notes\""), DAN))).containsExactly("d2");
        assertThat(ids(list(q("\"notes release\""), DAN))).isEmpty();
        assertThat(ids(list(q("notes billing"), DAN))).containsExactly("d2");
        // files changed and folders: a file's name parts
        JsonNode file = list(q("checkoutflow"), DAN).get("sessions").get(0);
        assertThat(file.get("snippet").asText()).isEqualTo("src/cart/[[CheckoutFlow]].java");
        assertThat(ids(list(q("shop"), DAN))).containsExactlyInAnyOrder("d1", "d3");
        // only the caller's session that says "checkout" (eve's says it too); the order by relevance: SessionIndexTest
        assertThat(ids(list(q("checkout"), DAN))).containsExactly("d1");
        assertThat(ids(list(q("codex"), DAN))).as("the agent").containsExactly("d3");
        assertThat(ids(list(q("flaky"), EVE))).as("not another account's").isEmpty();
    }

    @Test
    void theFiltersNarrowTheListAndABadValueIsRefusedNamingItsField() throws Exception {
        post(GUS, List.of(
                claim("acct-gus", "laptop", "claude-code", T0, "f1", "Filter one", "/work/f"),
                claim("acct-gus", "desk", "codex", T0.plusSeconds(5), "f2", "Filter two", "/work/f"),
                done("acct-gus", "desk", T0.plusSeconds(10), "f2", "Done", "a.txt")));
        await(q("filter"), GUS, j -> j.get("sessions").size() == 2);
        assertThat(ids(list(q("filter") + "&agent=codex", GUS))).containsExactly("f2");
        assertThat(ids(list(q("filter") + "&agent=CLAUDE-CODE", GUS))).containsExactly("f1");
        assertThat(ids(list(q("filter") + "&computer=desk", GUS))).containsExactly("f2");
        assertThat(ids(list(q("filter") + "&deviceId=desk", GUS))).as("deviceId is computer's older name").containsExactly("f2");
        assertThat(ids(list(q("filter") + "&taskId=task-f1", GUS))).containsExactly("f1");
        assertThat(ids(list(q("filter") + "&status=working", GUS))).as("claimed, not done").containsExactly("f1");
        assertThat(ids(list(q("filter") + "&status=idle", GUS))).containsExactly("f2");
        assertThat(ids(list(q("filter") + "&deleted=false", GUS))).containsExactlyInAnyOrder("f1", "f2");
        assertThat(ids(list(q("filter") + "&deleted=true", GUS))).isEmpty();
        assertThat(ids(list("agent=codex&computer=desk&taskId=task-f2", GUS))).as("without q, newest first").containsExactly("f2");
        assertThat(list("q=" + "x".repeat(1_001), GUS).get("sessions")).as("a word longer than any id: searched as text").isEmpty();

        for (String[] bad : new String[][]{{"status=sleeping", "status"}, {"deleted=maybe", "deleted"}, {"cursor=nope", "cursor"},
                {"computer=a&deviceId=b", "deviceId"}, {"q=" + "x".repeat(1_001) + "*", "q"}}) {
            HttpResponse<String> r = get("/api/agent/sessions?" + bad[0], GUS);
            assertThat(r.statusCode()).as(bad[0]).isEqualTo(400);
            JsonNode body = JSON.readTree(r.body());
            assertThat(body.get("error").asText()).isEqualTo("bad_request");
            assertThat(body.get("field").asText()).as(bad[0]).isEqualTo(bad[1]);
        }
    }

    @Test
    void followingNextListsEverySessionOnceWhileSessionsChange() throws Exception {
        List<String> events = new ArrayList<>();
        List<String> all = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            String id = String.format("p%03d", i);
            all.add(id);
            events.add(claim("acct-fay", "laptop", "claude-code", T0.plusSeconds(i), id, "Page task " + i, "/work/p"));
        }
        post(FAY, events);
        await("limit=1", FAY, j -> {
            try {
                return walk("limit=500", FAY).size() == 120;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        JsonNode first = list("limit=50", FAY);
        assertThat(ids(first)).hasSize(50).startsWith("p119", "p118");
        String next = first.get("next").asText();
        // p010 (on the third page) and p100 (on this one) change and become the newest; a new session starts
        post(FAY, List.of(
                event("acct-fay", "laptop", T0.plusSeconds(1000), "RunStatusChanged", "{\"runId\":\"p010\",\"status\":\"WORKING\"}"),
                event("acct-fay", "laptop", T0.plusSeconds(1001), "RunStatusChanged", "{\"runId\":\"p100\",\"status\":\"WORKING\"}"),
                claim("acct-fay", "laptop", "claude-code", T0.plusSeconds(1002), "p999", "Page task new", "/work/p")));
        await("limit=3", FAY, j -> ids(j).equals(List.of("p999", "p100", "p010")));

        List<String> seen = new ArrayList<>(ids(first));
        while (next != null) {
            JsonNode page = list("limit=50&cursor=" + next, FAY);
            seen.addAll(ids(page));
            next = page.has("next") ? page.get("next").asText() : null;
        }
        assertThat(seen).as("the pages of the first page's snapshot").hasSize(120).doesNotHaveDuplicates();
        assertThat(new HashSet<>(seen)).isEqualTo(new HashSet<>(all));
        // a fresh walk has all 121, newest first, and the last page has no next
        List<String> now = walk("limit=40", FAY);
        assertThat(now).hasSize(121).doesNotHaveDuplicates().startsWith("p999", "p100", "p010", "p119");
        // a search pages the same way
        List<String> found = walk(q("page task") + "&limit=7", FAY);
        assertThat(found).hasSize(121).doesNotHaveDuplicates();
    }

    /** Every session the query lists, following next. */
    static List<String> walk(String query, String token) throws Exception {
        List<String> seen = new ArrayList<>();
        String next = null;
        do {
            JsonNode page = list(query + (next == null ? "" : "&cursor=" + next), token);
            seen.addAll(ids(page));
            next = page.has("next") ? page.get("next").asText() : null;
        } while (next != null);
        return seen;
    }
}
