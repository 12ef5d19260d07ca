package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * The soak's traffic ({@link Soak}): for each account, its events in the JSON form of {@code POST /api/events}
 * ({@code shared/contract/events-example.jsonl}) cut into batches in the order they are posted. Good events form
 * sessions as a computer reports them: runs ({@code RunClaimed}, {@code RunStatusChanged} WORKING, one to four
 * {@code EngineEvent}s, {@code RunStatusChanged} DONE), chains of up to three runs continuing each other. A share of
 * the event slots holds a bad event instead ({@link Kind}): it names its own new run, or follows a finished run of the
 * account with a report carrying a marker ({@code refused <eventId>}), so that anything of it reaching a view is found.
 * No good event depends on a bad one.
 */
final class SoakWorkload {
    private static final JsonNodeFactory N = JsonNodeFactory.instance;

    /** What an event is: good, or which kind of bad. */
    enum Kind {
        GOOD("good"), MALFORMED("malformed"), OVERSIZED("oversized"), OUT_OF_RANGE("out of range");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** How a batch is posted a second time (same eventIds), besides the first post. */
    enum Repost { NONE, AFTER, CONCURRENT }

    /**
     * One event the soak posts.
     *
     * @param eventId   its eventId (the ledger's key)
     * @param account   its account
     * @param type      RunClaimed, RunStatusChanged or EngineEvent
     * @param kind      good, or which kind of bad
     * @param variant   what is wrong with it (a bad one), e.g. "title of 300,000 characters"; "" for a good one
     * @param runId     the run it is about (null when it names none)
     * @param sessionId the session that run belongs to (its chain's first run)
     * @param json      the event as posted
     */
    record Item(String eventId, String account, String type, Kind kind, String variant, String runId, String sessionId,
                ObjectNode json) {
        /** The status a RunStatusChanged reports, lower-cased as the API shows it, or null. */
        String status() {
            return json.path("payload").path("status").isTextual() ? json.path("payload").path("status").asText().toLowerCase(java.util.Locale.ROOT) : null;
        }
    }

    /** Events of one account posted in one request, and whether and how they are posted again. */
    record Batch(String account, List<Item> items, Repost repost) {
    }

    /** An account, its person token and its batches, in posting order. */
    record Account(String name, String token, List<Batch> batches) {
    }

    /**
     * The traffic.
     *
     * @param events      events in all (good and bad), spread evenly over the accounts
     * @param accounts    how many accounts
     * @param badShare    the share of event slots holding a bad event (0–1)
     * @param repostShare the share of batches posted twice (a third of them by two clients at once)
     * @param seed        of the random choices (tokens are random whatever the seed)
     * @param now         the wall clock at the start: every good event's occurredAt lies in the hour before it
     */
    static List<Account> generate(int events, int accounts, double badShare, double repostShare, long seed, Instant now) {
        Random rnd = new Random(seed);
        java.security.SecureRandom tokens = new java.security.SecureRandom();
        List<Account> out = new ArrayList<>(accounts);
        int perAccount = events / accounts;
        for (int a = 0; a < accounts; a++) {
            int quota = perAccount + (a < events % accounts ? 1 : 0);
            String name = String.format("soak-%05d", a);
            byte[] raw = new byte[24];
            tokens.nextBytes(raw);
            String token = "es_soak_" + Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
            List<Item> items = new AccountHistory(name, rnd, now.minus(Duration.ofSeconds(3L * quota + 600))).items(quota, badShare);
            List<Batch> batches = new ArrayList<>();
            for (int i = 0; i < items.size(); ) {
                int size = Math.min(items.size() - i, 1 + rnd.nextInt(20));
                double r = rnd.nextDouble();
                Repost repost = r < repostShare / 3 ? Repost.CONCURRENT : r < repostShare ? Repost.AFTER : Repost.NONE;
                batches.add(new Batch(name, List.copyOf(items.subList(i, i + size)), repost));
                i += size;
            }
            out.add(new Account(name, token, batches));
        }
        return out;
    }

    /** One account's events, in order: the good sessions and the bad events among them. */
    private static final class AccountHistory {
        private final String account;
        private final Random rnd;
        private final String computer;
        private Instant t;
        private int runs;
        private int bad;
        private final List<Item> out = new ArrayList<>();
        // the session being built
        private String root;
        private String lastRun;
        private int chainLength;
        private String agentSession;
        private long contextUsed;
        /** A run of this account whose DONE was emitted (bad reports follow it), or null. */
        private String doneRun;
        private String doneRunSession;
        private String doneRunAgentSession;

        AccountHistory(String account, Random rnd, Instant start) {
            this.account = account;
            this.rnd = rnd;
            this.computer = "pc-" + account;
            this.t = start;
        }

        List<Item> items(int quota, double badShare) {
            List<ObjectNode> pendingRun = new ArrayList<>();
            String pendingRunId = null;
            while (out.size() < quota) {
                if (rnd.nextDouble() < badShare) {
                    bad();
                    continue;
                }
                if (pendingRun.isEmpty()) {
                    pendingRunId = nextRun(pendingRun);
                }
                ObjectNode e = pendingRun.remove(0);
                add(e, Kind.GOOD, "", pendingRunId, root);
                if (pendingRun.isEmpty()) {
                    doneRun = pendingRunId;
                    doneRunSession = root;
                    doneRunAgentSession = agentSession;
                }
            }
            return out;
        }

        /** Fills {@code events} with the next run's events (claim, working, engine events, done); returns its id. */
        private String nextRun(List<ObjectNode> events) {
            String runId = account + "-run-" + runs++;
            String parent = null;
            if (root != null && chainLength < 3 && rnd.nextDouble() < 0.6) {
                parent = lastRun;
                chainLength++;
            } else {
                root = runId;
                chainLength = 1;
                agentSession = UUID.nameUUIDFromBytes((account + "/" + runId).getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString();
                contextUsed = 0;
            }
            lastRun = runId;
            events.add(claim(runId, parent, "Task " + runId));
            events.add(status(runId, "WORKING"));
            for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
                contextUsed += 1_000 + rnd.nextInt(9_000);
                events.add(engine(runId, agentSession, N.numberNode(contextUsed)));
            }
            ObjectNode done = status(runId, "DONE");
            ((ObjectNode) done.get("payload")).put("reportSummary", "done " + runId)
                    .put("tokens", 1_000 + rnd.nextInt(500_000)).put("durationMs", 1_000 + rnd.nextInt(3_600_000))
                    .putArray("filesChanged").add("src/F" + rnd.nextInt(50) + ".java");
            events.add(done);
            return runId;
        }

        /** One bad event of a random kind and variant. */
        private void bad() {
            int b = bad++;
            String freshRun = account + "-bad-" + b;
            boolean afterDone = doneRun != null;
            switch (rnd.nextInt(3)) {
                case 0 -> { // malformed
                    switch (rnd.nextInt(afterDone ? 5 : 3)) {
                        case 0 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("occurredAt", "yesterday");
                            addBadClaim(e, Kind.MALFORMED, "occurredAt not a time", freshRun);
                        }
                        case 1 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("eventId", e.path("eventId").asText() + "\u0000");
                            addBadClaim(e, Kind.MALFORMED, "NUL in the eventId", freshRun);
                        }
                        case 2 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("payload", "not an object");
                            addBadClaim(e, Kind.MALFORMED, "payload not an object", freshRun);
                        }
                        case 3 -> {
                            ObjectNode e = marked(status(doneRun, "FLYING"));
                            add(e, Kind.MALFORMED, "unknown status", doneRun, doneRunSession);
                        }
                        default -> add(engine(doneRun, doneRunAgentSession, N.textNode("lots")), Kind.MALFORMED,
                                "contextUsed not a number", doneRun, doneRunSession);
                    }
                }
                case 1 -> { // oversized
                    if (afterDone && rnd.nextBoolean()) {
                        ObjectNode e = marked(status(doneRun, "DONE"));
                        var files = ((ObjectNode) e.get("payload")).putArray("filesChanged");
                        for (int i = 0; i < 50_000; i++) {
                            files.add("src/f" + i);
                        }
                        add(e, Kind.OVERSIZED, "filesChanged of 50,000 entries", doneRun, doneRunSession);
                    } else {
                        ObjectNode e = claim(freshRun, null, null);
                        String title = "refused " + e.path("eventId").asText() + " ";
                        ((ObjectNode) e.get("payload").get("task")).put("title", title + "x".repeat(300_000 - title.length()));
                        addBadClaim(e, Kind.OVERSIZED, "title of 300,000 characters", freshRun);
                    }
                }
                default -> { // out of range
                    switch (rnd.nextInt(afterDone ? 6 : 3)) {
                        case 0 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("occurredAt", "+1000000000-01-01T00:00:00Z");
                            addBadClaim(e, Kind.OUT_OF_RANGE, "occurredAt in year +1000000000", freshRun);
                        }
                        case 1 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("occurredAt", "+292278994-01-01T00:00:00Z");
                            addBadClaim(e, Kind.OUT_OF_RANGE, "occurredAt in year 292278994", freshRun);
                        }
                        case 2 -> {
                            ObjectNode e = claim(freshRun, null, null);
                            e.put("occurredAt", "0001-01-01T00:00:00Z");
                            addBadClaim(e, Kind.OUT_OF_RANGE, "occurredAt in year 0001", freshRun);
                        }
                        case 3 -> {
                            ObjectNode e = marked(status(doneRun, "DONE"));
                            ((ObjectNode) e.get("payload")).put("tokens", -5);
                            add(e, Kind.OUT_OF_RANGE, "negative tokens", doneRun, doneRunSession);
                        }
                        case 4 -> {
                            ObjectNode e = marked(status(doneRun, "DONE"));
                            ((ObjectNode) e.get("payload")).put("durationMs", -1);
                            add(e, Kind.OUT_OF_RANGE, "negative durationMs", doneRun, doneRunSession);
                        }
                        default -> add(engine(doneRun, doneRunAgentSession, N.numberNode(-1_000L - b)), Kind.OUT_OF_RANGE,
                                "negative contextUsed", doneRun, doneRunSession);
                    }
                }
            }
        }

        private void addBadClaim(ObjectNode e, Kind kind, String variant, String freshRun) {
            if (e.path("payload").path("task").isObject()) {
                String title = e.path("payload").path("task").path("title").asText();
                if (!title.startsWith("refused ")) {
                    ((ObjectNode) e.get("payload").get("task")).put("title", "refused " + e.path("eventId").asText());
                }
            }
            add(e, kind, variant, freshRun, freshRun);
        }

        /** A report whose summary names its own eventId ({@code refused <eventId>}), to be found if it shows. */
        private static ObjectNode marked(ObjectNode statusEvent) {
            ((ObjectNode) statusEvent.get("payload")).put("reportSummary", "refused " + statusEvent.path("eventId").asText());
            return statusEvent;
        }

        private void add(ObjectNode e, Kind kind, String variant, String runId, String sessionId) {
            out.add(new Item(e.path("eventId").asText(), account, e.path("type").asText(), kind, variant, runId, sessionId, e));
        }

        private ObjectNode envelope(String type) {
            t = t.plusMillis(500 + rnd.nextInt(2_500));
            ObjectNode e = N.objectNode();
            e.put("eventId", UUID.randomUUID().toString());
            e.put("type", type);
            e.put("account", account);
            e.put("space", "local:" + computer);
            e.put("occurredAt", t.toString());
            e.put("source", "computer:" + computer);
            return e;
        }

        private ObjectNode claim(String runId, String parent, String title) {
            ObjectNode e = envelope("RunClaimed");
            ObjectNode p = e.putObject("payload");
            p.put("runId", runId).put("taskId", "task-" + (parent == null ? runId : root)).put("computerId", computer)
                    .put("agent", "claude-code").put("model", "claude-sonnet-4-5").put("thinking", "default")
                    .put("contextWindow", 200_000).put("fast", false).put("folder", "/home/" + account + "/projects/p" + (runs % 3))
                    .put("folderKind", "PROJECT");
            p.putObject("project").put("id", "proj-" + (runs % 3)).put("name", "Project " + (runs % 3));
            p.put("continueFromJobId", parent).put("kind", "TASK_RUN").putNull("sourceRef").put("newSession", false).put("retry", false);
            ObjectNode task = p.putObject("task");
            task.put("title", title == null ? "refused " + e.path("eventId").asText() : title)
                    .put("description", "Soak task of " + account).putArray("labels").add("soak");
            task.put("page", "").put("instructions", "").putNull("deliverable").putNull("meeting").putNull("parentPage")
                    .putArray("linkedTaskIds");
            return e;
        }

        private ObjectNode status(String runId, String status) {
            ObjectNode e = envelope("RunStatusChanged");
            e.putObject("payload").put("runId", runId).put("status", status);
            return e;
        }

        private ObjectNode engine(String runId, String agentSessionId, com.fasterxml.jackson.databind.JsonNode used) {
            ObjectNode e = envelope("EngineEvent");
            ObjectNode p = e.putObject("payload");
            p.put("runId", runId).put("agentSessionId", agentSessionId);
            p.set("contextUsed", used);
            p.put("contextSize", 200_000);
            return e;
        }
    }
}
