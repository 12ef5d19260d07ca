package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.deploy.SoakWorkload.Account;
import dev.ensemble.sessions.deploy.SoakWorkload.Batch;
import dev.ensemble.sessions.deploy.SoakWorkload.Item;
import dev.ensemble.sessions.deploy.SoakWorkload.Kind;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.gateway.Principal;
import dev.ensemble.sessions.gateway.Tokens;
import dev.ensemble.sessions.schema.Topics;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak (issue 14, docs/reliability.md "Soak"): a real {@code up} in a process of its own ({@link UpProcess}) takes
 * the {@link SoakWorkload} from concurrent HTTP clients on loopback, one person token per account; about halfway it is
 * killed with SIGKILL and started again on the same data folder while the clients keep retrying (connection refused, 503:
 * wait and post the same batch again, which is safe as posting is idempotent by eventId). A ledger keeps every event's
 * answer. Then it checks, per account, once the views have settled (bounded wait):
 * <ul>
 *   <li>every event answered {@code accepted} is reflected in that account's views ({@code GET /api/agent/sessions} and
 *       {@code /{id}} with its runList, with the account's own token): its run in its session, a run's latest reported
 *       status and report, a session's latest engine event's context use;</li>
 *   <li>nothing of an event answered {@code rejected} shows (its run, its marked report or its context use) and it is
 *       not in the log;</li>
 *   <li>every account's views kept flowing: sampled accepted runs are polled for from the moment their post was answered
 *       until their session shows them (the delay, per account);</li>
 *   <li>the log {@code sessions.events}, read whole with a consumer, holds every accepted event and no eventId twice.</li>
 * </ul>
 */
final class Soak {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LISTED = 12;

    /**
     * Settings.
     *
     * @param events         events to post (good and bad)
     * @param accounts       accounts they spread over
     * @param badShare       the share of bad events (malformed, oversized, out of range), 0–1
     * @param repostShare    the share of batches posted a second time (a third of them by two clients at once)
     * @param killAt         the share of events answered when {@code up} is killed (0–1); a negative value: no kill
     * @param clients        concurrent HTTP clients
     * @param probeShare     the share of accepted runs whose view delay is measured (each account's first one always)
     * @param workDir        the data folder and {@code up}'s logs go here
     * @param upJavaOptions  options of {@code up}'s JVM
     * @param settleTimeout  how long the views may take to settle after the last answer
     * @param timeout        the longest the posting may take in all (then the soak fails)
     * @param seed           of the traffic's random choices
     */
    record Settings(int events, int accounts, double badShare, double repostShare, double killAt, int clients,
                    double probeShare, Path workDir, List<String> upJavaOptions, Duration settleTimeout, Duration timeout, long seed) {
    }

    /** Bad events sent, accepted and rejected, per variant. */
    record Variant(Kind kind, String variant, int sent, int accepted, int rejected, int errored, Set<String> answers) {
    }

    /** What the soak found; {@link #passed()} when every check held. */
    record Result(int events, int accounts, int posts, int batchesPostedAgain, int batchesPostedConcurrently,
                  int accepted, int acceptedAsDuplicate, Map<Kind, Integer> sentByKind, Map<Kind, Integer> rejectedByKind,
                  List<Variant> variants, int goodRejected, int errored, int unanswered, int conflictingAnswers,
                  long requestsRetried, int killAtEvents, double killAtSeconds, double restartSeconds,
                  double answersResumedSeconds, int viewsChecked, int missing, String missingBreakdown, int accountsWithMissing, int accountsChecked, int leakedInViews, int leakedInLog,
                  int acceptedNotInLog, int erroredInLog, int probes, int probesNeverSeen, int accountsProbed,
                  int accountsFlowing, long accountMaxDelayP50Ms, long delayP50Ms, long delayP99Ms, long delayMaxMs, long delayMaxOutsideRestartMs,
                  String slowestAccount, long logRecords, int duplicatesInLog, int duplicatedEventIds, int undecodable,
                  double settleSeconds, String behindAtTheEnd, double seconds, List<String> problems) {
        /** True when every check held: nothing missing, nothing leaked, every answer definite, no duplicate, views flowing. */
        boolean passed() {
            return missing == 0 && leakedInViews == 0 && leakedInLog == 0 && acceptedNotInLog == 0 && duplicatesInLog == 0
                    && errored == 0 && unanswered == 0 && goodRejected == 0 && conflictingAnswers == 0 && probesNeverSeen == 0
                    && undecodable == 0 && accountsFlowing == accountsProbed && restartSeconds >= 0;
        }
    }

    private final Settings s;
    private final PrintStream out;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, Entry> ledger = new ConcurrentHashMap<>();
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger posts = new AtomicInteger();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicBoolean killAsked = new AtomicBoolean();
    private final CountDownLatch killNow = new CountDownLatch(1);
    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());
    private volatile String url;
    private volatile long killedAtMillis = Long.MAX_VALUE;
    private volatile long readyAgainAtMillis = Long.MAX_VALUE;
    private final AtomicLong firstAnswerAfterKill = new AtomicLong(Long.MAX_VALUE);
    private volatile long deadline;
    /** Why {@code up} did not start again after the kill (never null once it failed): the posting ends then (nothing answers any more). */
    private volatile String restartFailure;

    /** One event's answers. */
    private static final class Entry {
        final Item item;
        String answer; // accepted, rejected, errored (a 5xx), or null (none yet)
        String reason;
        String error; // the answer's error code (invalid, too_large, …), if any
        int status;
        long answeredAt;
        boolean duplicate;
        boolean conflicting;

        Entry(Item item) {
            this.item = item;
        }
    }

    private Soak(Settings s, PrintStream out) {
        this.s = s;
        this.out = out;
    }

    /** Runs the soak; {@code out} gets its progress. */
    static Result run(Settings s, PrintStream out) throws Exception {
        return new Soak(s, out).run();
    }

    private Result run() throws Exception {
        long t0 = System.currentTimeMillis();
        List<Account> accounts = SoakWorkload.generate(s.events(), s.accounts(), s.badShare(), s.repostShare(), s.seed(), Instant.now());
        for (Account a : accounts) {
            for (Batch b : a.batches()) {
                for (Item i : b.items()) {
                    ledger.put(i.eventId(), new Entry(i));
                }
            }
        }
        ExecutorService clients = Executors.newFixedThreadPool(s.clients(), named("soak-client"));
        ExecutorService second = Executors.newCachedThreadPool(named("soak-client-again"));
        ScheduledExecutorService probing = Executors.newScheduledThreadPool(4, named("soak-probe"));
        Probes probes = new Probes(probing);
        accounts.forEach(a -> probes.token(a.name(), a.token()));
        DataDir data = DataDir.of(s.workDir().resolve("data"));
        data.createPrivate();
        Map<String, Principal> people = new HashMap<>();
        for (Account a : accounts) {
            people.put(a.token(), new Principal(a.name(), "person", "person-" + a.name()));
        }
        Tokens.load(data.tokens()).registerAll(people); // up loads the token file at start: one person token per account
        int port = freePort();
        url = "http://127.0.0.1:" + port;
        UpProcess up = new UpProcess(data.root(), port, s.upJavaOptions(), s.workDir());
        Thread hook = new Thread(up::killNow, "soak-stop-up");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            out.printf("starting up on %s (data in %s) …%n", url, data.root());
            up.start();
            up.awaitReady(Duration.ofMinutes(8));
            out.printf("posting %,d events over %,d accounts (%d clients) …%n", s.events(), s.accounts(), s.clients());
            long postStart = System.currentTimeMillis();
            deadline = postStart + s.timeout().toMillis();
            int killThreshold = s.killAt() < 0 ? Integer.MAX_VALUE : (int) Math.max(1, Math.round(s.events() * s.killAt()));
            AtomicInteger killEvents = new AtomicInteger(-1);
            long[] killTimes = new long[2];
            Thread killer = new Thread(() -> {
                try {
                    killNow.await();
                    if (killThreshold == Integer.MAX_VALUE) {
                        return; // no kill asked for
                    }
                    killEvents.set(answered.get());
                    up.kill();
                    killedAtMillis = System.currentTimeMillis();
                    killTimes[0] = killedAtMillis - postStart;
                    out.printf("killed up (kill -9 of process) at %,d events answered; starting it again …%n", killEvents.get());
                    up.start();
                    up.awaitReady(Duration.ofMinutes(8));
                    readyAgainAtMillis = System.currentTimeMillis();
                    killTimes[1] = readyAgainAtMillis - killedAtMillis;
                    out.printf("up is ready again after %.1f s%n", killTimes[1] / 1000.0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) { // nothing answers any more: the posting ends with this reason
                    out.println("up did not start again: " + e.getMessage()); // with the end of its output
                    restartFailure = firstLine(e);
                    problems.add("restart: " + restartFailure);
                }
            }, "soak-killer");
            killer.setDaemon(true); // never what keeps the JVM running
            killer.start();
            long lastAnswer;
            try {
                List<Future<?>> running = new ArrayList<>();
                for (int c = 0; c < s.clients(); c++) {
                    List<Account> mine = new ArrayList<>();
                    for (int a = c; a < accounts.size(); a += s.clients()) {
                        mine.add(accounts.get(a));
                    }
                    running.add(clients.submit(() -> client(mine, killThreshold, second, probes)));
                }
                long lastProgress = 0;
                for (Future<?> f : running) {
                    while (true) {
                        try {
                            f.get(5, TimeUnit.SECONDS);
                            break;
                        } catch (java.util.concurrent.TimeoutException e) {
                            if (System.currentTimeMillis() - lastProgress > 15_000) {
                                lastProgress = System.currentTimeMillis();
                                out.printf("  %,d of %,d events answered%n", answered.get(), s.events());
                            }
                        }
                    }
                }
                lastAnswer = System.currentTimeMillis();
                killNow.countDown(); // no kill asked for (or its share never reached): the killer ends
                killer.join();
            } finally {
                killer.interrupt(); // the posting failed: the killer (waiting for its moment, or restarting up) ends
            }
            out.printf("all %,d events answered in %.1f s; waiting for the views to settle …%n", answered.get(), (lastAnswer - postStart) / 1000.0);
            Map<String, AccountCheck> checks = settle(accounts, data);
            double settleSeconds = (System.currentTimeMillis() - lastAnswer) / 1000.0;
            String behind = behind(data);
            probes.finish(lastAnswer + s.settleTimeout().toMillis());
            out.println("reading the log …");
            LogCount log = readLog(data, accounts.stream().map(Account::name).collect(java.util.stream.Collectors.toSet()));
            return result(accounts, checks, probes, log, killEvents.get(), restartFailure != null ? new long[]{killTimes[0], -1000} : killTimes, settleSeconds, behind, (System.currentTimeMillis() - t0) / 1000.0);
        } finally {
            clients.shutdownNow();
            second.shutdownNow();
            probing.shutdownNow();
            up.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook kills it
            }
        }
    }

    /** The first line of a failure's message, or the failure itself when it has no message. */
    static String firstLine(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.toString() : message.lines().findFirst().orElse("");
    }

    // ---- posting ----

    private void client(List<Account> mine, int killThreshold, ExecutorService second, Probes probes) {
        int[] next = new int[mine.size()];
        boolean more = true;
        try {
            while (more) {
                more = false;
                for (int a = 0; a < mine.size(); a++) {
                    Account acct = mine.get(a);
                    if (next[a] >= acct.batches().size()) {
                        continue;
                    }
                    more = true;
                    Batch b = acct.batches().get(next[a]++);
                    if (b.repost() == SoakWorkload.Repost.CONCURRENT) {
                        Future<?> other = second.submit(() -> {
                            post(acct, b.items(), probes);
                            return null;
                        });
                        post(acct, b.items(), probes);
                        other.get();
                    } else {
                        post(acct, b.items(), probes);
                        if (b.repost() == SoakWorkload.Repost.AFTER) {
                            post(acct, b.items(), probes);
                        }
                    }
                    if (answered.get() >= killThreshold && !killAsked.getAndSet(true)) {
                        killNow.countDown();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Posts events of one account until each has a definite answer: a network failure or a 503 is waited out and the same
     * events posted again; a request refused as a whole (e.g. 413) or failed (5xx) is posted again one event at a time so
     * that each gets its own answer.
     */
    private void post(Account acct, List<Item> items, Probes probes) throws InterruptedException {
        List<Item> todo = items;
        while (true) {
            if (restartFailure != null) {
                throw new IllegalStateException("up did not start again after the kill; " + answered.get() + " of "
                        + s.events() + " events answered: " + restartFailure);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the posting took longer than " + s.timeout().toSeconds() + " s; "
                        + answered.get() + " of " + s.events() + " events answered");
            }
            String body = JSON.createArrayNode().addAll(todo.stream().map(Item::json).toList()).toString();
            HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/api/events"))
                    .header("Authorization", "Bearer " + acct.token()).header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
            HttpResponse<String> resp;
            try {
                posts.incrementAndGet();
                resp = http.send(req, HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) { // up is gone (killed) or not listening yet: the same events again
                retried.incrementAndGet();
                Thread.sleep(250);
                continue;
            }
            long now = System.currentTimeMillis();
            JsonNode answer = parse(resp.body());
            if (resp.statusCode() == 503) {
                retried.incrementAndGet();
                Thread.sleep(resp.headers().firstValue("Retry-After").map(v -> retryAfterMillis(v)).orElse(500L));
                continue;
            }
            if (answer != null && answer.path("results").isArray()) {
                List<Item> again = new ArrayList<>();
                for (JsonNode r : answer.path("results")) {
                    Item item = todo.get(r.path("index").asInt());
                    String reason = r.path("reason").asText("");
                    if (r.path("status").asText().equals("rejected")
                            && (r.path("error").asText().equals("unavailable") || reason.contains("post it again"))) {
                        again.add(item); // the log did not take it
                    } else {
                        record(item, r.path("status").asText(), r.path("error").asText(null), reason, resp.statusCode(), now,
                                r.path("duplicate").asBoolean(), probes);
                    }
                }
                if (answer.path("results").size() != todo.size()) {
                    problems.add("a batch of " + todo.size() + " events was answered with " + answer.path("results").size() + " results");
                }
                if (again.isEmpty()) {
                    return;
                }
                retried.incrementAndGet();
                Thread.sleep(250);
                todo = again;
                continue;
            }
            if (resp.statusCode() >= 500) {
                problems.add("a request answered " + resp.statusCode() + " as a whole: a batch of " + todo.size() + " events of account "
                        + acct.name() + " (" + todo.stream().map(i -> i.kind() == Kind.GOOD ? i.type() : i.type() + " " + i.kind().label
                        + ": " + i.variant()).distinct().collect(java.util.stream.Collectors.joining(", ")) + "): "
                        + shorten(answer != null && answer.has("message") ? answer.path("message").asText() : resp.body()));
            }
            if (todo.size() > 1) { // refused or failed as a whole: each event on its own
                for (Item i : todo) {
                    post(acct, List.of(i), probes);
                }
                return;
            }
            String message = answer != null && answer.has("message") ? answer.path("message").asText()
                    : resp.body().substring(0, Math.min(200, resp.body().length()));
            record(todo.get(0), resp.statusCode() >= 500 ? "errored" : "rejected", answer == null ? null : answer.path("error").asText(null),
                    message, resp.statusCode(), now, false, probes);
            return;
        }
    }

    private static long retryAfterMillis(String v) {
        try {
            return Math.max(100, Math.min(5_000, Long.parseLong(v.trim()) * 1000));
        } catch (NumberFormatException e) {
            return 500;
        }
    }

    private void record(Item item, String answer, String error, String reason, int status, long at, boolean duplicate, Probes probes) {
        Entry e = ledger.get(item.eventId());
        boolean first;
        synchronized (e) {
            first = e.answer == null;
            if (first) {
                e.answer = answer;
                e.reason = reason;
                e.error = error;
                e.status = status;
                e.answeredAt = at;
                e.duplicate = duplicate;
            } else if (!e.answer.equals(answer)) {
                e.conflicting = true;
                problems.add("eventId " + printable(item.eventId()) + " (" + item.type() + ", " + item.kind().label
                        + ") answered " + e.answer + " then " + answer + " (" + reason + ")");
            }
        }
        if (at > killedAtMillis) {
            firstAnswerAfterKill.accumulateAndGet(at, Math::min);
        }
        if (first) {
            answered.incrementAndGet();
            if (answer.equals("accepted") && item.kind() == Kind.GOOD && item.type().equals("RunClaimed")) {
                probes.maybeProbe(item, at);
            }
        }
    }

    // ---- view delay ----

    /**
     * Polls the sessions of sampled accepted runs (every 250 ms) until they show them: one probe per account at a time, at
     * most {@link #MAX_PENDING} at once (half of them kept for accounts not sampled yet), so that the polling neither
     * loads {@code up} nor lags behind.
     */
    private final class Probes {
        static final int MAX_PENDING = 64;
        private final ScheduledExecutorService pool;
        private final Set<String> probing = ConcurrentHashMap.newKeySet();
        private final Set<String> probed = ConcurrentHashMap.newKeySet();
        private final Map<String, Long> maxByAccount = new ConcurrentHashMap<>();
        private final List<long[]> delays = Collections.synchronizedList(new ArrayList<>()); // {delay, outside restart 0/1}
        private final Map<String, Item> pending = new ConcurrentHashMap<>();
        private final Map<String, String> tokens = new ConcurrentHashMap<>();
        private volatile long giveUpAt = Long.MAX_VALUE;

        Probes(ScheduledExecutorService pool) {
            this.pool = pool;
        }

        void maybeProbe(Item claim, long answeredAt) {
            String acct = claim.account();
            boolean firstOfAccount = !probed.contains(acct);
            if (!firstOfAccount && (ThreadLocalRandom.current().nextDouble() >= s.probeShare() || probing.size() >= MAX_PENDING / 2)) {
                return;
            }
            if (probing.size() >= MAX_PENDING || !probing.add(acct)) {
                return;
            }
            probed.add(acct);
            pending.put(acct, claim);
            pool.schedule(() -> poll(claim, answeredAt), 100, TimeUnit.MILLISECONDS);
        }

        void token(String account, String token) {
            tokens.put(account, token);
        }

        private void poll(Item claim, long answeredAt) {
            boolean seen = false;
            try {
                JsonNode session = get("/api/agent/sessions/" + claim.sessionId(), tokens.get(claim.account()));
                if (session != null) {
                    for (JsonNode r : session.path("runList")) {
                        seen |= r.path("id").asText().equals(claim.runId());
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not there yet, or up is restarting
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = System.currentTimeMillis();
            if (seen) {
                long delay = now - answeredAt;
                boolean spansRestart = answeredAt <= readyAgainAtMillis && now >= killedAtMillis;
                delays.add(new long[]{delay, spansRestart ? 0 : 1});
                maxByAccount.merge(claim.account(), delay, Math::max);
                pending.remove(claim.account());
                probing.remove(claim.account());
            } else if (now < giveUpAt) {
                pool.schedule(() -> poll(claim, answeredAt), 250, TimeUnit.MILLISECONDS);
            }
        }

        /** Waits until every probe is seen or {@code until} passes; those left are never seen. */
        void finish(long until) throws InterruptedException {
            while (!pending.isEmpty() && System.currentTimeMillis() < until) {
                Thread.sleep(200);
            }
            giveUpAt = 0;
        }
    }

    // ---- the views ----

    /** What one account's views show: each run (its session and fields) and each session's context use. */
    private record AccountView(Map<String, JsonNode> runs, Map<String, String> sessionOfRun, Map<String, JsonNode> sessions) {
    }

    /** One account's check: how many accepted events it checked, what is missing and what leaked (each with its event). */
    private record AccountCheck(int checked, List<Finding> missing, List<Finding> leaked) {
    }

    /** Something wrong about one event. */
    private record Finding(Item item, String text) {
    }

    /** Checks every account until its views match (or the settle time is over); returns the last check of each. */
    private Map<String, AccountCheck> settle(List<Account> accounts, DataDir data) throws InterruptedException {
        Map<String, AccountCheck> last = new ConcurrentHashMap<>();
        List<Account> pending = new ArrayList<>(accounts);
        long until = System.currentTimeMillis() + s.settleTimeout().toMillis();
        ExecutorService pool = Executors.newFixedThreadPool(4, named("soak-check"));
        long lastProgress = System.currentTimeMillis();
        try {
            while (true) {
                List<Future<Account>> round = new ArrayList<>();
                for (Account a : pending) {
                    round.add(pool.submit(() -> {
                        try {
                            AccountCheck c = check(a, view(a));
                            last.put(a.name(), c);
                            return c.missing().isEmpty() && c.leaked().isEmpty() ? null : a;
                        } catch (IOException | RuntimeException e) {
                            problems.add("views unreadable: account " + a.name() + ": " + e.getMessage());
                            last.putIfAbsent(a.name(), new AccountCheck(0, List.of(), List.of()));
                            return a;
                        }
                    }));
                }
                List<Account> still = new ArrayList<>();
                for (Future<Account> f : round) {
                    try {
                        Account a = f.get();
                        if (a != null) {
                            still.add(a);
                        }
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new IllegalStateException(e.getCause());
                    }
                }
                pending = still;
                if (pending.isEmpty() || System.currentTimeMillis() > until) {
                    return last;
                }
                if (System.currentTimeMillis() - lastProgress > 15_000) {
                    lastProgress = System.currentTimeMillis();
                    out.printf("  %,d accounts' views still differ from what was accepted; %s%n", pending.size(), behind(data));
                }
                Thread.sleep(1000);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private AccountView view(Account a) throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            JsonNode list = get("/api/agent/sessions?limit=" + dev.ensemble.sessions.gateway.Gateway.MAX_LIMIT, a.token());
            if (list == null) {
                if (attempt > 20) {
                    throw new IOException("GET /api/agent/sessions kept failing");
                }
                Thread.sleep(500);
                continue;
            }
            if (list.path("sessions").size() >= dev.ensemble.sessions.gateway.Gateway.MAX_LIMIT) {
                throw new IllegalStateException("account " + a.name() + " has " + dev.ensemble.sessions.gateway.Gateway.MAX_LIMIT
                        + " sessions or more: give the soak fewer events per account");
            }
            Map<String, JsonNode> runs = new HashMap<>();
            Map<String, String> sessionOfRun = new HashMap<>();
            Map<String, JsonNode> sessions = new HashMap<>();
            for (JsonNode summary : list.path("sessions")) {
                String id = summary.path("id").asText();
                JsonNode detail = get("/api/agent/sessions/" + java.net.URLEncoder.encode(id, java.nio.charset.StandardCharsets.UTF_8)
                        .replace("+", "%20"), a.token());
                if (detail == null) {
                    throw new IOException("GET /api/agent/sessions/" + id + " failed");
                }
                sessions.put(id, detail);
                for (JsonNode r : detail.path("runList")) {
                    runs.put(r.path("id").asText(), r);
                    sessionOfRun.put(r.path("id").asText(), id);
                }
            }
            return new AccountView(runs, sessionOfRun, sessions);
        }
    }

    /** A GET's JSON answer when it is 200; null otherwise (404, 503, …). */
    private JsonNode get(String path, String token) throws IOException, InterruptedException {
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create(url + path)).header("Authorization", "Bearer " + token)
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        return resp.statusCode() == 200 ? parse(resp.body()) : null;
    }

    /**
     * Checks one account's views against its ledger. Expected (from its accepted events, in posting order, which is
     * their occurredAt order): each accepted claim's run in its session; each run's latest accepted status report
     * (status, report, tokens, duration); each session's latest accepted engine event's context use. Events an
     * expected one supersedes count as reflected with it. Leaked: a rejected claim's run or title, a rejected report's
     * marker, a rejected engine event's context use.
     */
    private AccountCheck check(Account a, AccountView v) {
        List<Item> accepted = new ArrayList<>();
        List<Item> rejected = new ArrayList<>();
        for (Batch b : a.batches()) {
            for (Item i : b.items()) {
                Entry e = ledger.get(i.eventId());
                if ("accepted".equals(e.answer)) {
                    accepted.add(i);
                } else if ("rejected".equals(e.answer) || "errored".equals(e.answer)) {
                    rejected.add(i);
                }
            }
        }
        Map<String, Item> claims = new LinkedHashMap<>();
        Map<String, Item> lastStatus = new LinkedHashMap<>();
        Map<String, Item> lastEngine = new LinkedHashMap<>();
        for (Item i : accepted) {
            switch (i.type()) {
                case "RunClaimed" -> claims.putIfAbsent(i.runId(), i);
                case "RunStatusChanged" -> lastStatus.put(i.runId(), i);
                case "EngineEvent" -> lastEngine.put(i.sessionId(), i);
                default -> { }
            }
        }
        List<Finding> missing = new ArrayList<>();
        for (Item c : claims.values()) {
            String in = v.sessionOfRun().get(c.runId());
            if (in == null) {
                missing.add(new Finding(c, describe(c) + ": run " + c.runId() + " is in no session (expected in " + c.sessionId() + ")"));
            } else if (!in.equals(c.sessionId())) {
                missing.add(new Finding(c, describe(c) + ": run " + c.runId() + " is in session " + in + ", not " + c.sessionId()));
            }
        }
        for (Item st : lastStatus.values()) {
            if (!claims.containsKey(st.runId())) {
                continue; // its run's claim was refused: parked, invisible, as it should be
            }
            JsonNode run = v.runs().get(st.runId());
            if (run == null) {
                continue; // counted with the claim
            }
            JsonNode p = st.json().path("payload");
            List<String> wrong = new ArrayList<>();
            if (!run.path("status").asText().equals(st.status())) {
                wrong.add("status " + run.path("status").asText() + " (expected " + st.status() + ")");
            }
            if (p.has("reportSummary") && !p.path("reportSummary").asText().equals(run.path("reportSummary").asText())) {
                wrong.add("report '" + shorten(run.path("reportSummary").asText()) + "' (expected '" + shorten(p.path("reportSummary").asText()) + "')");
            }
            for (String f : List.of("tokens", "durationMs")) {
                if (p.has(f) && p.path(f).asLong() != run.path(f).asLong()) {
                    wrong.add(f + " " + run.path(f) + " (expected " + p.path(f) + ")");
                }
            }
            if (!wrong.isEmpty()) {
                missing.add(new Finding(st, describe(st) + ": run " + st.runId() + " shows " + String.join(", ", wrong)));
            }
        }
        for (Item en : lastEngine.values()) {
            if (!claims.containsKey(en.runId())) {
                continue;
            }
            JsonNode session = v.sessions().get(en.sessionId());
            if (session == null) {
                continue; // counted with the claim
            }
            JsonNode used = en.json().path("payload").path("contextUsed");
            if (!used.isNumber() || session.path("contextUsed").asLong() != used.asLong()) {
                missing.add(new Finding(en, describe(en) + ": session " + en.sessionId() + " shows contextUsed " + session.path("contextUsed")
                        + " (expected " + used + ")"));
            }
        }
        List<Finding> leaked = new ArrayList<>();
        Set<Long> acceptedUse = new java.util.HashSet<>();
        accepted.stream().filter(i -> i.type().equals("EngineEvent")).forEach(i -> acceptedUse.add(i.json().path("payload").path("contextUsed").asLong()));
        for (Item r : rejected) {
            String marker = "refused " + r.eventId();
            switch (r.type()) {
                case "RunClaimed" -> {
                    boolean runShows = r.runId() != null && v.runs().containsKey(r.runId()) && !claims.containsKey(r.runId());
                    boolean titleShows = v.runs().values().stream().anyMatch(run -> run.path("title").asText().startsWith(marker));
                    if (runShows || titleShows) {
                        leaked.add(new Finding(r, describe(r) + ": its run " + r.runId() + " shows in session " + v.sessionOfRun().get(r.runId())));
                    }
                }
                case "RunStatusChanged" -> {
                    if (v.runs().values().stream().anyMatch(run -> run.path("reportSummary").asText().startsWith(marker))) {
                        leaked.add(new Finding(r, describe(r) + ": its report shows on run " + r.runId()));
                    }
                }
                case "EngineEvent" -> {
                    JsonNode used = r.json().path("payload").path("contextUsed");
                    if (used.isNumber() && !acceptedUse.contains(used.asLong())
                            && v.sessions().values().stream().anyMatch(se -> se.path("contextUsed").isNumber() && se.path("contextUsed").asLong() == used.asLong())) {
                        leaked.add(new Finding(r, describe(r) + ": its contextUsed " + used + " shows in session " + r.sessionId()));
                    }
                }
                default -> { }
            }
        }
        return new AccountCheck(accepted.size(), missing, leaked);
    }

    /** An event as named in the findings: type, kind, eventId, account, and when it was answered relative to the kill. */
    private String describe(Item i) {
        Entry e = ledger.get(i.eventId());
        String when = when(i);
        return i.type() + " " + printable(i.eventId()) + " (" + i.kind().label + (i.variant().isEmpty() ? "" : ": " + i.variant())
                + ", account " + i.account() + ", " + e.answer + (e.duplicate ? " as a duplicate" : "") + ", " + when + ")";
    }

    /** When an event was first answered, relative to the kill and the restart. */
    private String when(Item i) {
        Entry e = ledger.get(i.eventId());
        return e.answeredAt == 0 ? "never answered" : e.answeredAt < killedAtMillis ? "answered before the kill"
                : e.answeredAt < readyAgainAtMillis ? "answered while up restarted" : "answered after the restart";
    }

    /**
     * Where the views' two steps stand: how many records of {@code sessions.events} the projector has still to process, and
     * how many of {@code sessions.view.sessions} the gateway's read side has still to read (their consumer groups'
     * committed offsets against the topics' last stable offsets); "unknown" when the offsets cannot be read.
     */
    private String behind(DataDir data) {
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(data.runningCluster().clientConfig())) {
            return String.format("the projector is %,d records of %s behind, the gateway's read side %,d records of %s",
                    lag(admin, dev.ensemble.sessions.projector.Projector.APPLICATION_ID, Topics.EVENTS.name()), Topics.EVENTS.name(),
                    lag(admin, dev.ensemble.sessions.gateway.SessionReads.APPLICATION_ID, Topics.SESSIONS_VIEW.name()), Topics.SESSIONS_VIEW.name());
        } catch (Exception e) {
            return "how far the projector and the gateway are behind is unknown (" + firstLine(e) + ")";
        }
    }

    /** Records of {@code topic} after consumer group {@code group}'s committed offsets, summed over its partitions. */
    static long lag(org.apache.kafka.clients.admin.Admin admin, String group, String topic) throws Exception {
        List<TopicPartition> parts = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions()
                .stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> earliest = new HashMap<>();
        parts.forEach(p -> {
            latest.put(p, org.apache.kafka.clients.admin.OffsetSpec.latest());
            earliest.put(p, org.apache.kafka.clients.admin.OffsetSpec.earliest());
        });
        var committedOnly = new org.apache.kafka.clients.admin.ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED);
        var end = admin.listOffsets(latest, committedOnly).all().get(30, TimeUnit.SECONDS);
        var begin = admin.listOffsets(earliest).all().get(30, TimeUnit.SECONDS);
        var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        long lag = 0;
        for (TopicPartition p : parts) {
            var at = committed.get(p);
            lag += Math.max(0, end.get(p).offset() - (at == null ? begin.get(p).offset() : at.offset()));
        }
        return lag;
    }

    // ---- the log ----

    /**
     * Per (account, eventId): how many times the log holds it, for the records keyed by the soak's accounts (others, e.g.
     * the system's own records on every partition, are left out); how many of those were read and did not decode.
     */
    private record LogCount(Map<String, Integer> counts, long records, int undecodable) {
    }

    private LogCount readLog(DataDir data, Set<String> accounts) {
        Map<String, Object> config = data.runningCluster().clientConfig();
        config.put("isolation.level", "read_committed");
        config.put("enable.auto.commit", false);
        config.put("max.poll.records", 5_000);
        Map<String, Integer> counts = new HashMap<>();
        long records = 0;
        int undecodable = 0;
        var decoder = Topics.EVENTS.valueSerde().deserializer();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(Topics.EVENTS.name(), Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts, Duration.ofSeconds(30));
            long until = System.currentTimeMillis() + 300_000;
            while (parts.stream().anyMatch(p -> c.position(p, Duration.ofSeconds(30)) < end.get(p))) {
                if (System.currentTimeMillis() > until) {
                    throw new IllegalStateException("the log was not read within 5 minutes");
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    if (r.key() == null || !accounts.contains(new String(r.key(), java.nio.charset.StandardCharsets.UTF_8))) {
                        continue;
                    }
                    records++;
                    try {
                        Event e = decoder.deserialize(r.topic(), r.value());
                        counts.merge(e.getAccount() + "\n" + e.getEventId(), 1, Integer::sum);
                    } catch (RuntimeException ex) {
                        undecodable++;
                    }
                }
            }
        }
        return new LogCount(counts, records, undecodable);
    }

    // ---- the result ----

    private Result result(List<Account> accounts, Map<String, AccountCheck> checks, Probes probes, LogCount log, int killEvents,
                          long[] killTimes, double settleSeconds, String behind, double seconds) {
        Map<Kind, Integer> sent = new EnumMap<>(Kind.class);
        Map<Kind, Integer> rejectedByKind = new EnumMap<>(Kind.class);
        Map<String, int[]> variants = new TreeMap<>();
        Map<String, Set<String>> variantStatuses = new HashMap<>();
        int accepted = 0, asDuplicate = 0, goodRejected = 0, errored = 0, unanswered = 0, conflicting = 0;
        int leakedInLog = 0, acceptedNotInLog = 0, erroredInLog = 0, posted2 = 0, posted2c = 0;
        for (Account a : accounts) {
            for (Batch b : a.batches()) {
                posted2 += b.repost() == SoakWorkload.Repost.AFTER ? 1 : 0;
                posted2c += b.repost() == SoakWorkload.Repost.CONCURRENT ? 1 : 0;
            }
        }
        for (Entry e : ledger.values()) {
            Item i = e.item;
            sent.merge(i.kind(), 1, Integer::sum);
            int inLog = log.counts().getOrDefault(i.account() + "\n" + i.eventId(), 0);
            conflicting += e.conflicting ? 1 : 0;
            if (i.kind() != Kind.GOOD) {
                String key = i.kind().ordinal() + "\n" + i.variant();
                int[] v = variants.computeIfAbsent(key, k -> new int[4]);
                v[0]++;
                v[1] += "accepted".equals(e.answer) ? 1 : 0;
                v[2] += "rejected".equals(e.answer) ? 1 : 0;
                v[3] += "errored".equals(e.answer) ? 1 : 0;
                variantStatuses.computeIfAbsent(key, k -> new java.util.TreeSet<>()).add(e.status + " " + (e.error != null ? e.error : e.answer));
            }
            if (e.answer == null) {
                unanswered++;
                problems.add("never answered: " + describe(i));
            } else if (e.answer.equals("accepted")) {
                accepted++;
                asDuplicate += e.duplicate ? 1 : 0;
                if (inLog == 0) {
                    acceptedNotInLog++;
                    problems.add("accepted but not in the log: " + describe(i));
                }
            } else if (e.answer.equals("rejected")) {
                rejectedByKind.merge(i.kind(), 1, Integer::sum);
                if (i.kind() == Kind.GOOD) {
                    goodRejected++;
                    problems.add("a good event rejected: " + describe(i) + ": " + e.status + " " + e.reason);
                }
                if (inLog > 0) {
                    leakedInLog++;
                    problems.add("rejected but in the log: " + describe(i) + ": " + e.reason);
                }
            } else {
                errored++;
                problems.add("answered " + e.status + ": " + describe(i) + ": " + e.reason);
                if (inLog > 0) {
                    erroredInLog++;
                    problems.add("answered " + e.status + " but in the log: " + describe(i));
                }
            }
        }
        int duplicates = 0, duplicatedIds = 0;
        for (Map.Entry<String, Integer> c : log.counts().entrySet()) {
            if (c.getValue() > 1) {
                duplicates += c.getValue() - 1;
                duplicatedIds++;
                String[] k = c.getKey().split("\n", 2);
                Entry e = ledger.get(k[1]);
                problems.add("in the log " + c.getValue() + " times: " + (e != null ? describe(e.item) : "eventId " + printable(k[1]) + " of " + k[0]));
            }
        }
        if (log.undecodable() > 0) {
            problems.add("records of the log that do not decode: " + log.undecodable() + " in " + Topics.EVENTS.name());
        }
        int viewsChecked = 0, missing = 0, accountsWithMissing = 0, leaked = 0;
        Map<String, Integer> missingByType = new TreeMap<>();
        Map<String, Integer> missingByWhen = new LinkedHashMap<>();
        for (AccountCheck c : checks.values()) {
            viewsChecked += c.checked();
            missing += c.missing().size();
            accountsWithMissing += c.missing().isEmpty() ? 0 : 1;
            leaked += c.leaked().size();
            for (Finding f : c.missing()) {
                problems.add("missing from the views: " + f.text());
                missingByType.merge(f.item().type(), 1, Integer::sum);
                missingByWhen.merge(when(f.item()), 1, Integer::sum);
            }
            c.leaked().forEach(f -> problems.add("leaked into the views: " + f.text()));
        }
        List<long[]> ds;
        synchronized (probes.delays) {
            ds = new ArrayList<>(probes.delays);
        }
        long[] all = ds.stream().mapToLong(d -> d[0]).sorted().toArray();
        long outside = ds.stream().filter(d -> d[1] == 1).mapToLong(d -> d[0]).max().orElse(-1);
        String slowest = probes.maxByAccount.entrySet().stream().max(Map.Entry.comparingByValue())
                .map(e -> e.getKey() + " (" + e.getValue() + " ms)").orElse("-");
        int neverSeen = probes.pending.size();
        probes.pending.values().forEach(p -> problems.add("a sampled run never showed in its session: " + describe(p)));
        int flowing = (int) probes.probed.stream().filter(a -> !probes.pending.containsKey(a)).count();
        long[] accountMax = probes.maxByAccount.values().stream().mapToLong(Long::longValue).sorted().toArray();
        List<Variant> vs = new ArrayList<>();
        variants.forEach((k, v) -> {
            String[] parts = k.split("\n", 2);
            vs.add(new Variant(Kind.values()[Integer.parseInt(parts[0])], parts[1], v[0], v[1], v[2], v[3], variantStatuses.get(k)));
        });
        return new Result(s.events(), accounts.size(), posts.get(), posted2, posted2c, accepted, asDuplicate, sent, rejectedByKind, vs,
                goodRejected, errored, unanswered, conflicting, retried.get(), killEvents, killTimes[0] / 1000.0, killTimes[1] / 1000.0,
                firstAnswerAfterKill.get() == Long.MAX_VALUE ? -1 : (firstAnswerAfterKill.get() - killedAtMillis) / 1000.0,
                viewsChecked, missing, missing == 0 ? "" : "by event: " + join(missingByType) + "; by when answered: " + join(missingByWhen), accountsWithMissing, checks.size(), leaked, leakedInLog, acceptedNotInLog, erroredInLog,
                all.length + neverSeen, neverSeen, probes.probed.size(), flowing, pct(accountMax, 0.50), pct(all, 0.50), pct(all, 0.99),
                all.length == 0 ? 0 : all[all.length - 1], outside, slowest, log.records(), duplicates, duplicatedIds,
                log.undecodable(), settleSeconds, behind, seconds, List.copyOf(problems));
    }

    /** The result as a Markdown table, with the findings (at most a dozen of each) under it. */
    static String table(Result r) {
        StringBuilder sb = new StringBuilder();
        sb.append("| measure | value |\n|---|---|\n");
        row(sb, "events sent", String.format("%,d over %,d accounts in %,d requests (%,d batches posted again after their answer, %,d by two clients at once)",
                r.events(), r.accounts(), r.posts(), r.batchesPostedAgain(), r.batchesPostedConcurrently()));
        row(sb, "bad events sent", kinds(r.sentByKind(), true));
        row(sb, "answered accepted", String.format("%,d (%,d of them as a duplicate of an earlier post)", r.accepted(), r.acceptedAsDuplicate()));
        row(sb, "answered rejected, by kind", kinds(r.rejectedByKind(), false) + (r.goodRejected() > 0 ? String.format("; good events rejected: %,d", r.goodRejected()) : ""));
        row(sb, "answered neither (5xx) / never answered", String.format("%,d / %,d", r.errored(), r.unanswered()));
        row(sb, "kill -9 of `up`", r.killAtEvents() < 0 ? "none" : String.format("at %,d events answered (%.0f%%), %.1f s into the posting",
                r.killAtEvents(), 100.0 * r.killAtEvents() / r.events(), r.killAtSeconds()));
        row(sb, "restart took", r.killAtEvents() < 0 ? "-" : (r.restartSeconds() < 0 ? "`up` did not say it was ready within 8 minutes"
                : String.format("%.1f s from the kill until `up` was ready again", r.restartSeconds()))
                + String.format(" (posts answered again after %.1f s)", r.answersResumedSeconds()));
        row(sb, "requests posted again (connection refused or reset, 503, \"post it again\")", String.format("%,d", r.requestsRetried()));
        row(sb, "views checked", String.format("%,d accepted events in %,d accounts, %.1f s after the last answer (then %s)",
                r.viewsChecked(), r.accountsChecked(), r.settleSeconds(), r.behindAtTheEnd()));
        row(sb, "missing from the views", String.format("%,d (accounts with something missing: %,d)%s", r.missing(), r.accountsWithMissing(),
                r.missingBreakdown().isEmpty() ? "" : "; " + r.missingBreakdown()));
        row(sb, "leaked from refused events", String.format("%,d in the views, %,d in the log", r.leakedInViews(), r.leakedInLog()));
        row(sb, "accepted but not in the log", String.format("%,d", r.acceptedNotInLog()));
        row(sb, "view delay (from the answer to the run in its session)", String.format(
                "%,d sampled runs: p50 %.1f s, p99 %.1f s, max %.1f s (max of those not spanning the restart: %s); slowest account %s",
                r.probes(), r.delayP50Ms() / 1000.0, r.delayP99Ms() / 1000.0, r.delayMaxMs() / 1000.0,
                r.delayMaxOutsideRestartMs() < 0 ? "none such" : String.format("%.1f s", r.delayMaxOutsideRestartMs() / 1000.0), r.slowestAccount()));
        row(sb, "accounts whose views kept flowing", String.format("%,d of the %,d accounts sampled (of %,d; runs never shown: %,d); an account's max delay: median %.1f s",
                r.accountsFlowing(), r.accountsProbed(), r.accounts(), r.probesNeverSeen(), r.accountMaxDelayP50Ms() / 1000.0));
        row(sb, "duplicates in the log", String.format("%,d (eventIds appended more than once: %,d; %,d records of the accounts read; undecodable: %,d)",
                r.duplicatesInLog(), r.duplicatedEventIds(), r.logRecords(), r.undecodable()));
        row(sb, "verdict", r.passed() ? "every check held" : "FAILED (findings below)");
        sb.append('\n');
        sb.append("| bad event | kind | sent | accepted | rejected | 5xx | answers (HTTP status, error) |\n|---|---|---:|---:|---:|---:|---|\n");
        for (Variant v : r.variants()) {
            sb.append(String.format("| %s | %s | %,d | %,d | %,d | %,d | %s |%n", v.variant(), v.kind().label, v.sent(), v.accepted(),
                    v.rejected(), v.errored(), String.join(", ", v.answers())));
        }
        if (!r.problems().isEmpty()) {
            sb.append("\nFindings (").append(r.problems().size()).append("; the first of each sort):\n\n");
            Map<String, List<String>> bySort = new LinkedHashMap<>();
            for (String p : r.problems()) {
                int colon = p.indexOf(':');
                bySort.computeIfAbsent(colon > 0 ? p.substring(0, colon) : p, k -> new ArrayList<>()).add(p);
            }
            bySort.forEach((sort, list) -> {
                sb.append(String.format("- %s: %,d%n", sort, list.size()));
                list.stream().limit(LISTED).forEach(p -> sb.append("  - ").append(p.replace("|", "\\|")).append('\n'));
            });
        }
        return sb.toString();
    }

    private static String kinds(Map<Kind, Integer> m, boolean withTotal) {
        int bad = 0;
        List<String> parts = new ArrayList<>();
        for (Kind k : Kind.values()) {
            if (k != Kind.GOOD) {
                int n = m.getOrDefault(k, 0);
                bad += n;
                parts.add(String.format("%s %,d", k.label, n));
            }
        }
        return String.format("%,d: ", bad) + String.join(", ", parts);
    }

    private static String join(Map<String, Integer> counts) {
        return counts.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(java.util.stream.Collectors.joining(", "));
    }

    private static void row(StringBuilder sb, String measure, String value) {
        sb.append("| ").append(measure).append(" | ").append(value.replace("|", "\\|")).append(" |\n");
    }

    // ---- helpers ----

    private static long pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static JsonNode parse(String body) {
        try {
            return body == null || body.isEmpty() ? null : JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    private static String printable(String s) {
        return s.replace("\u0000", "\\u0000");
    }

    private static String shorten(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "…";
    }

    static int freePort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    private static java.util.concurrent.ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
