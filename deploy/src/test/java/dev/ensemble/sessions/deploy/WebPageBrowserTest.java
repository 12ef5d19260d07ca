package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.Cookie;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The web page (issue 19) in a real browser: Debian's {@code chromium} driven headless through its
 * {@code chromium-driver} by Selenium, against a running {@code up} (a JVM of its own: embedded broker, every service)
 * that imported the Claude Code and Codex stores of {@code ../shared/data/agent-stores} (PROVENANCE.txt: five Claude
 * Code sessions and one Codex session) from a home laid out as on a computer. Signs in with the login link {@code up}
 * prints, then uses the page as a person does: the list, the search, a session's page, an event posted meanwhile, the
 * delete button; and checks that the cookie is HttpOnly and SameSite=Strict and that a state-changing request made with
 * it but without the page's CSRF token (or from another origin) is refused. Screenshots go to {@code target/}
 * ({@code web-list.png}, {@code web-session.png}, {@code web-session-choice.png}).
 * Skipped, saying so, without the shared data or without chromium and chromedriver ({@code .ci/run} installs them).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class WebPageBrowserTest {
    static final String CHROMIUM = System.getenv().getOrDefault("CHROME_BIN", "/usr/bin/chromium");
    static final String CHROMEDRIVER = System.getenv().getOrDefault("CHROMEDRIVER", "/usr/bin/chromedriver");
    /** The Claude Code session of {@code claude/projects/-tmp-private}: prompts "create hello.py, md and js", "update py
     * with one liner comment", "delete js". */
    static final String HELLO = "claude-code:" + ChooseCommandTest.HELLO;
    static final String CODEX = ChooseCommandTest.CODEX;
    static final Pattern LOGIN = Pattern.compile("Web page: (http://\\S+/login\\?token=\\S+)");

    private Path dir;
    private Process up;
    private Path log;
    private String base;
    private Path data;
    private String token;
    private String loginUrl;
    private WebDriver driver;
    private WebDriverWait wait;
    private final HttpClient http = HttpClient.newHttpClient();
    private String liveSession;

    /** Why the tests are skipped (said by each), or null. */
    private String missing;

    @BeforeAll
    void start() throws Exception {
        Path stores = SharedData.path("data/agent-stores");
        if (!Files.isDirectory(stores)) {
            missing = "skipped: " + stores + " is absent (the shared data folder ../shared/data/agent-stores is read in place)";
        } else if (!Files.isExecutable(Path.of(CHROMIUM)) || !Files.isExecutable(Path.of(CHROMEDRIVER))) {
            missing = "skipped: no chromium at " + CHROMIUM + " or no chromedriver at " + CHROMEDRIVER
                    + " (apt-get install chromium chromium-driver; or set CHROME_BIN and CHROMEDRIVER)";
        }
        if (missing != null) {
            System.out.println("WebPageBrowserTest " + missing);
            return;
        }
        dir = Files.createTempDirectory("web-page-test");
        Path home = dir.resolve("home");
        ChooseCommandTest.copy(stores.resolve("claude"), home.resolve(".claude"));
        ChooseCommandTest.copy(stores.resolve("codex"), home.resolve(".codex"));
        ChooseCommandTest.touchAll(home, Instant.now().minus(Duration.ofHours(2))); // idle for 2 hours: every turn is over
        data = dir.resolve("data");
        log = dir.resolve("up.log");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                "-cp", System.getProperty("java.class.path"), EnsembleSessions.class.getName(), "up", "--data-dir", data.toString(),
                "--port", "0", "--kafka-port", "0", "--poll-seconds", "3600", "--account", "acct-web")
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("HOME", home.toString());
        // the transcripts are from 2025-12 and 2026: the guide's 30 days of activity would leave them out of a choice
        Path config = dir.resolve("choice-config.json");
        Files.writeString(config, "{\"version\": \"web-test-1\", \"limits\": {\"maxAgeDays\": 3650}}");
        pb.environment().put("ENSEMBLE_SESSION_CHOICE_CONFIG", config.toString());
        pb.environment().remove("CLAUDE_CONFIG_DIR");
        pb.environment().remove("CODEX_HOME");
        up = pb.start();
        long until = System.currentTimeMillis() + 240_000;
        while (!Files.readString(log).contains(UpProcess.READY)) {
            assertThat(up.isAlive()).as("up ended before it was ready:%n%s", Files.readString(log)).isTrue();
            assertThat(System.currentTimeMillis()).as("up was not ready in time:%n%s", Files.readString(log)).isLessThan(until);
            Thread.sleep(200);
        }
        Matcher m = LOGIN.matcher(Files.readString(log));
        assertThat(m.find()).as("up prints a login link:%n%s", Files.readString(log)).isTrue();
        loginUrl = m.group(1);
        base = DataDir.JSON.readTree(data.resolve("endpoints.json").toFile()).path("http").asText();
        assertThat(loginUrl).startsWith(base + "/login?token=");
        token = Files.readString(data.resolve("token")).strip();
        awaitSixSessions();

        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,900",
                "--lang=en-US");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER))
                .usingAnyFreePort().build();
        driver = new ChromeDriver(service, options);
        wait = new WebDriverWait(driver, Duration.ofSeconds(60));
    }

    @org.junit.jupiter.api.BeforeEach
    void skipWhenMissing() {
        Assumptions.assumeTrue(missing == null, missing);
    }

    @AfterAll
    void stop() throws Exception {
        if (driver != null) {
            driver.quit();
        }
        if (up != null) {
            up.destroy();
            if (!up.waitFor(60, TimeUnit.SECONDS)) {
                up.destroyForcibly();
            }
        }
    }

    /** The imported sessions have reached the read side: all six listed, the Claude Code one with its three runs. */
    private void awaitSixSessions() throws Exception {
        long until = System.currentTimeMillis() + 180_000;
        String last = "";
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = api("/api/agent/sessions?limit=50");
            last = r.body();
            if (r.statusCode() == 200) {
                JsonNode list = DataDir.JSON.readTree(r.body()).path("sessions");
                boolean hello = false;
                for (JsonNode s : list) {
                    hello |= s.path("id").asText().equals(HELLO) && s.path("runs").asInt() == 3 && s.path("status").asText().equals("idle");
                }
                if (list.size() == 6 && hello) {
                    return;
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("the six sessions were not imported in time: " + last);
    }

    private HttpResponse<String> api(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The ids of the sessions the list shows, read in one go (live updates redraw the rows at any time). */
    @SuppressWarnings("unchecked")
    private List<String> rowIds() {
        return (List<String>) ((JavascriptExecutor) driver).executeScript(
                "return Array.from(document.querySelectorAll('#sessions tbody tr[data-id]')).map(r => r.dataset.id)");
    }

    private void screenshot(String name) throws Exception {
        File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
        Path target = Path.of("target", name);
        Files.createDirectories(target.getParent());
        Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The login link signs the browser in with an HttpOnly, SameSite=Strict cookie, once; without it a page asks to sign in. */
    @Test
    @Order(1)
    void theLoginLinkSetsAStrictHttpOnlyCookieOnce() throws Exception {
        driver.get(base + "/");
        assertThat(driver.findElement(By.tagName("h2")).getText()).isEqualTo("Sign in");
        driver.get(loginUrl);
        wait.until(ExpectedConditions.urlToBe(base + "/"));
        Cookie c = driver.manage().getCookieNamed("ensemble_session");
        assertThat(c).as("the sign-in cookie").isNotNull();
        assertThat(c.isHttpOnly()).isTrue();
        assertThat(c.getSameSite()).isEqualTo("Strict");
        assertThat(c.getPath()).isEqualTo("/");
        assertThat(((JavascriptExecutor) driver).executeScript("return document.cookie")).as("scripts cannot read it").isEqualTo("");

        // the link works once
        HttpResponse<String> again = http.send(HttpRequest.newBuilder(URI.create(loginUrl)).header("Accept", "text/html").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(again.statusCode()).isEqualTo(401);
        assertThat(again.headers().firstValue("Set-Cookie")).isEmpty();
        // a client that does not ask for HTML still gets the JSON index at /
        HttpResponse<String> index = http.send(HttpRequest.newBuilder(URI.create(base + "/")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(DataDir.JSON.readTree(index.body()).path("sessions").asText()).isEqualTo("/api/agent/sessions");
    }

    /** The list shows the six imported sessions, each with its agent, folder, prompts, status, fill and runs. */
    @Test
    @Order(2)
    void theListShowsTheSixImportedSessions() throws Exception {
        driver.get(base + "/");
        wait.until(d -> rowIds().size() == 6);
        assertThat(rowIds()).contains(HELLO, CODEX).hasSize(6);
        WebElement hello = driver.findElement(By.cssSelector("#sessions tr[data-id='" + HELLO + "']"));
        List<String> cells = hello.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
        assertThat(cells.get(0)).isEqualTo("claude-code:4c2ddfdc");
        assertThat(cells.get(1)).isEqualTo("claude-code");
        assertThat(cells.get(4)).isEqualTo("/tmp/private");
        assertThat(cells.get(5)).isEqualTo("create hello.py, md and js");
        assertThat(cells.get(6)).isEqualTo("delete js");
        assertThat(cells.get(7)).isEqualTo("idle");
        assertThat(cells.get(8)).matches("\\d+%");
        assertThat(cells.get(9)).isEqualTo("yes");
        assertThat(cells.get(10)).isEqualTo("3");
        assertThat(driver.findElement(By.id("count")).getText()).isEqualTo("6 sessions");
        wait.until(ExpectedConditions.textToBe(By.id("live"), "live"));
        screenshot("web-list.png");
    }

    /** The search box finds a session by a word of one of its later prompts ("update py with one liner comment"). */
    @Test
    @Order(3)
    void theSearchFindsASessionByAWordOfALaterPrompt() {
        driver.get(base + "/");
        wait.until(d -> rowIds().size() == 6);
        WebElement q = driver.findElement(By.id("q"));
        q.sendKeys("liner");
        q.submit();
        wait.until(ExpectedConditions.urlContains("q=liner"));
        wait.until(d -> rowIds().equals(List.of(HELLO)));
        assertThat(driver.findElement(By.id("q")).getAttribute("value")).isEqualTo("liner");
        assertThat(driver.findElement(By.id("count")).getText()).isEqualTo("1 session");
        // the matched passage under the row, the match itself marked
        WebElement match = driver.findElement(By.cssSelector("tr.snippet mark"));
        assertThat(match.getText()).isEqualToIgnoringCase("liner");
        assertThat(driver.findElement(By.cssSelector("tr.snippet")).getText()).contains("one liner comment").doesNotContain("[[");

        // the filters: by agent, and a status none has
        new org.openqa.selenium.support.ui.Select(driver.findElement(By.id("agent"))).selectByValue("codex");
        driver.findElement(By.id("q")).clear();
        driver.findElement(By.cssSelector("#filters button[type=submit]")).click();
        wait.until(ExpectedConditions.urlContains("agent=codex"));
        wait.until(d -> rowIds().equals(List.of(CODEX)));
        driver.get(base + "/?status=gone");
        wait.until(ExpectedConditions.textToBe(By.id("count"), "No sessions match."));
        assertThat(rowIds()).isEmpty();
    }

    /** A session's page: its facts, its three runs with their prompts, the fill over time, and the resume command. */
    @Test
    @Order(4)
    void aSessionsPageShowsItsRunsAndFill() throws Exception {
        driver.get(base + "/");
        wait.until(d -> rowIds().size() == 6);
        driver.findElement(By.cssSelector("#sessions tr[data-id='" + HELLO + "'] a")).click();
        wait.until(ExpectedConditions.urlContains("/session?id="));
        wait.until(d -> d.findElements(By.cssSelector("#runs tbody tr")).size() == 3);
        List<String> prompts = driver.findElements(By.cssSelector("#runs tbody tr td.prompt")).stream().map(WebElement::getText).toList();
        assertThat(prompts).containsExactly("create hello.py, md and js", "update py with one liner comment", "delete js");
        assertThat(driver.findElement(By.cssSelector("#runs tbody tr")).getText()).contains("done").contains("/tmp/private/hello.py");
        wait.until(d -> !d.findElements(By.cssSelector("#fill-chart circle")).isEmpty());
        assertThat(driver.findElements(By.cssSelector("#fill-chart circle")).size()).as("one point per usage report").isGreaterThan(1);
        assertThat(driver.findElement(By.id("facts")).getText()).contains("/tmp/private").contains("of 200,000 tokens");
        assertThat(driver.findElement(By.id("resume-command")).getText())
                .isEqualTo("cd /tmp/private && claude --resume " + ChooseCommandTest.HELLO);
        assertThat(driver.findElement(By.id("choice")).getText()).contains("No session-choice decision is recorded");
        wait.until(d -> !d.findElements(By.id("audit-none")).isEmpty());
        org.openqa.selenium.Dimension size = driver.manage().window().getSize();
        driver.manage().window().setSize(new org.openqa.selenium.Dimension(1400, 1500)); // the whole page in the picture
        screenshot("web-session.png");
        driver.manage().window().setSize(size);
    }

    /**
     * An event posted while the list is open shows without a reload: a new run's session appears, its task title (with
     * markup in it) shown as text.
     */
    @Test
    @Order(5)
    void aPostedEventAppearsLive() throws Exception {
        driver.get(base + "/");
        wait.until(d -> rowIds().size() == 6);
        wait.until(ExpectedConditions.textToBe(By.id("live"), "live"));
        JavascriptExecutor js = (JavascriptExecutor) driver;
        js.executeScript("window.notReloaded = true");
        String run = "run-live-" + UUID.randomUUID();
        String title = "Live from the test <img src=x onerror=\"window.injected=1\"> <b>bold?</b>";
        String event = DataDir.JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "RunClaimed")
                .put("account", "acct-web").put("space", "local:web-test-pc").put("occurredAt", Instant.now().toString())
                .put("source", "computer:web-test-pc").set("payload", DataDir.JSON.createObjectNode().put("runId", run)
                        .put("taskId", "task-live").put("computerId", "web-test-pc").put("agent", "codex").put("kind", "TASK_RUN")
                        .put("folder", "/work/live").set("task", DataDir.JSON.createObjectNode().put("title", title)))
                .toString();
        HttpResponse<String> posted = http.send(HttpRequest.newBuilder(URI.create(base + "/api/events"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(event)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
        wait.until(d -> rowIds().contains(run));
        assertThat(js.executeScript("return window.notReloaded")).as("the page was not reloaded").isEqualTo(true);
        WebElement first = driver.findElement(By.cssSelector("#sessions tr[data-id='" + run + "'] td.first"));
        assertThat(first.getText()).isEqualTo(title);
        assertThat(first.findElements(By.cssSelector("img, b"))).as("prompts are text, never markup").isEmpty();
        assertThat(js.executeScript("return window.injected === undefined")).isEqualTo(true);
        liveSession = run;
    }

    /**
     * Delete asks for confirmation first (cancelling sends nothing); confirmed, a computer that never reported its status
     * is a 409 that names it to connect.
     */
    @Test
    @Order(6)
    void deleteAsksForConfirmation() throws Exception {
        Assumptions.assumeTrue(liveSession != null, "needs the session posted by aPostedEventAppearsLive");
        driver.get(base + "/session?id=" + URLEncoder.encode(liveSession, StandardCharsets.UTF_8));
        wait.until(d -> d.findElements(By.cssSelector("#runs tbody tr")).size() == 1);
        driver.findElement(By.id("delete")).click();
        WebElement dialog = driver.findElement(By.id("confirm"));
        wait.until(d -> dialog.getAttribute("open") != null);
        assertThat(driver.findElement(By.id("confirm-text")).getText()).startsWith("Delete session " + liveSession + " from its agent on web-test-pc?");
        driver.findElement(By.id("confirm-cancel")).click();
        wait.until(d -> dialog.getAttribute("open") == null);
        assertThat(driver.findElement(By.id("delete-result")).isDisplayed()).isFalse();
        assertThat(DataDir.JSON.readTree(api("/api/audit/deletions?sessionId=" + liveSession).body()).path("deletions")).isEmpty();

        driver.findElement(By.id("delete")).click();
        wait.until(d -> dialog.getAttribute("open") != null);
        driver.findElement(By.id("confirm-delete")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("delete-result")));
        assertThat(driver.findElement(By.id("delete-result")).getText()).startsWith("Connect computer web-test-pc, then delete again: ");
    }

    /**
     * A session-choice decision that continued the session shows on its page with its explanation: decision, band,
     * score, reason and each candidate's score, parts and signals ({@code choose} asks with a task worded like its later
     * prompts; the record goes to the session it continued).
     */
    @Test
    @Order(8)
    void theChoiceDecisionThatContinuedASessionShowsWithItsExplanation() throws Exception {
        JsonNode decision = null;
        long until = System.currentTimeMillis() + 120_000;
        while (System.currentTimeMillis() < until) { // until the choice service's views have caught up
            decision = ChooseCommandTest.json(ChooseCommandTest.choose(ChooseCommandTest.LATER, "--data-dir", data.toString(),
                    "--agent", "claude-code", "--json"));
            if (decision.path("decision").asText().equals("CONTINUE") && decision.path("configVersion").asText().equals("web-test-1")) {
                break;
            }
            Thread.sleep(1000);
        }
        assertThat(decision.path("decision").asText()).as(String.valueOf(decision)).isEqualTo("CONTINUE");
        assertThat(decision.path("sessionId").asText()).isEqualTo(HELLO);
        driver.get(base + "/session?id=" + URLEncoder.encode(HELLO, StandardCharsets.UTF_8));
        wait.until(d -> !d.findElements(By.cssSelector("#choice .decision")).isEmpty());
        WebElement shown = driver.findElements(By.cssSelector("#choice .decision")).get(0);
        assertThat(shown.findElement(By.className("head")).getText()).startsWith("CONTINUE  band CONFIDENT, score ".replace("  ", " "));
        assertThat(shown.getText()).contains(decision.path("reason").asText()).contains("config web-test-1");
        WebElement first = shown.findElement(By.cssSelector("table.candidates tbody tr"));
        assertThat(first.getText()).contains("(this session)").contains("hello.py").contains("topic ");
        ((JavascriptExecutor) driver).executeScript("document.getElementById('choice').scrollIntoView()");
        screenshot("web-session-choice.png");
    }

    /**
     * The cookie reads the API; a state-changing request made with it is refused (403 csrf) without the page's CSRF
     * token, and with it from another origin; with both it reaches the endpoint (here a 409: the computer is not there).
     */
    @Test
    @Order(7)
    void aRequestWithTheCookieButWithoutTheCsrfTokenIsRefused() throws Exception {
        driver.get(base + "/");
        wait.until(d -> !rowIds().isEmpty());
        String cookie = "ensemble_session=" + driver.manage().getCookieNamed("ensemble_session").getValue();
        String csrf = (String) ((JavascriptExecutor) driver).executeScript("return document.querySelector('meta[name=csrf-token]').content");
        HttpResponse<String> me = http.send(HttpRequest.newBuilder(URI.create(base + "/api/me")).header("Cookie", cookie).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(me.statusCode()).isEqualTo(200);
        assertThat(DataDir.JSON.readTree(me.body()).path("account").asText()).isEqualTo("acct-web");

        URI delete = URI.create(base + "/api/agent/sessions/" + URLEncoder.encode(HELLO, StandardCharsets.UTF_8));
        HttpResponse<String> noToken = http.send(HttpRequest.newBuilder(delete).header("Cookie", cookie).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(noToken.statusCode()).isEqualTo(403);
        assertThat(DataDir.JSON.readTree(noToken.body()).path("error").asText()).isEqualTo("csrf");
        HttpResponse<String> otherOrigin = http.send(HttpRequest.newBuilder(delete).header("Cookie", cookie).header("X-CSRF-Token", csrf)
                .header("Origin", "http://evil.example").DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(otherOrigin.statusCode()).isEqualTo(403);
        assertThat(otherOrigin.body()).contains("http://evil.example");
        HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(delete).header("Cookie", cookie).header("X-CSRF-Token", csrf + "x")
                .DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(wrong.statusCode()).isEqualTo(403);
        assertThat(DataDir.JSON.readTree(api("/api/audit/deletions?sessionId=" + URLEncoder.encode(HELLO, StandardCharsets.UTF_8)).body())
                .path("deletions")).as("nothing was asked for").isEmpty();

        URI post = URI.create(base + "/api/events");
        HttpResponse<String> posted = http.send(HttpRequest.newBuilder(post).header("Cookie", cookie).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("[]")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(posted.statusCode()).isEqualTo(403);
    }
}
