package dev.ensemble.sessions.gateway;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Browser sign-in for the web page (issue 19): a one-time login link, as Jupyter prints one, turns into a browser
 * session held in an {@code HttpOnly; SameSite=Strict} cookie; the API keeps its bearer tokens.
 * <ul>
 *   <li>{@link #issueLink(String, Principal)}: a one-time code for a bearer token the gateway accepts ({@code up} prints
 *   {@code http://localhost:8080/login?token=<code>}); it works once, within {@link #LINK_TTL}.</li>
 *   <li>{@link #redeem(String)}: the code's browser session (its cookie value and its CSRF token), or empty when the
 *   code is unknown, used or expired.</li>
 *   <li>{@link #session(String)}: the browser session of a cookie value. Every state-changing request made with the
 *   cookie must send the session's CSRF token in {@value #CSRF_HEADER} and come from the page's own origin
 *   ({@link #csrfRefusal}).</li>
 * </ul>
 * Sessions live in this gateway instance's memory (a restart signs every browser out; {@code up} prints a new link);
 * each keeps the bearer token it was made from, which a request forwarded to the instance holding the account carries.
 * Only SHA-256 hashes of codes and cookie values are kept. Thread-safe.
 */
public final class BrowserLogins {
    /** The cookie that holds a browser session. */
    public static final String COOKIE = "ensemble_session";
    /** The request header that carries a browser session's CSRF token. */
    public static final String CSRF_HEADER = "X-CSRF-Token";
    /** How long a login link works when unused. */
    public static final Duration LINK_TTL = Duration.ofHours(24);
    /** How long a browser session lasts without a request. */
    public static final Duration IDLE_TTL = Duration.ofDays(7);
    /** The most login links and browser sessions kept at once (the oldest go first). */
    static final int MAX_KEPT = 1000;

    /** A signed-in browser: who it acts as, the bearer token it stands for, its CSRF token. */
    public record BrowserSession(Principal principal, String bearerToken, String csrf) {
    }

    /** What a redeemed link gives: the cookie value to set, and the session it stands for. */
    public record Redeemed(String cookie, BrowserSession session) {
    }

    private record Pending(Principal principal, String bearerToken, Instant expires) {
    }

    private static final class Held {
        final BrowserSession session;
        volatile Instant lastUsed;

        Held(BrowserSession session, Instant lastUsed) {
            this.session = session;
            this.lastUsed = lastUsed;
        }
    }

    private final Clock clock;
    private final Map<String, Pending> links = new ConcurrentHashMap<>();
    private final Map<String, Held> sessions = new ConcurrentHashMap<>();

    public BrowserLogins(Clock clock) {
        this.clock = clock;
    }

    /**
     * A new one-time login code for {@code bearerToken}, which authenticates as {@code principal}; the link is
     * {@code <base>/login?token=<code>}.
     */
    public String issueLink(String bearerToken, Principal principal) {
        String code = random();
        trim(links);
        links.put(Tokens.hash(code), new Pending(principal, bearerToken, clock.instant().plus(LINK_TTL)));
        return code;
    }

    /** The browser session a one-time code opens; the code is gone afterwards. Empty when unknown, used or expired. */
    public Optional<Redeemed> redeem(String code) {
        if (code == null || code.isBlank()) {
            return Optional.empty();
        }
        Pending p = links.remove(Tokens.hash(code.trim()));
        if (p == null || clock.instant().isAfter(p.expires())) {
            return Optional.empty();
        }
        String cookie = random();
        BrowserSession s = new BrowserSession(p.principal(), p.bearerToken(), random());
        trim(sessions);
        sessions.put(Tokens.hash(cookie), new Held(s, clock.instant()));
        return Optional.of(new Redeemed(cookie, s));
    }

    /** The browser session of a cookie value; empty when unknown or idle for longer than {@link #IDLE_TTL}. */
    public Optional<BrowserSession> session(String cookie) {
        if (cookie == null || cookie.isBlank()) {
            return Optional.empty();
        }
        String key = Tokens.hash(cookie);
        Held h = sessions.get(key);
        if (h == null) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        if (now.isAfter(h.lastUsed.plus(IDLE_TTL))) {
            sessions.remove(key);
            return Optional.empty();
        }
        h.lastUsed = now;
        return Optional.of(h.session);
    }

    /** Ends the browser session of a cookie value (signing out). */
    public void end(String cookie) {
        if (cookie != null) {
            sessions.remove(Tokens.hash(cookie));
        }
    }

    /**
     * Why a state-changing request made with a browser session's cookie is refused, or null when it may go on: it must
     * send the session's CSRF token in {@value #CSRF_HEADER}; an {@code Origin} header, when sent, must be the page's own
     * ({@code http(s)://<Host>}); a {@code Sec-Fetch-Site} header, when sent, must say {@code same-origin}.
     *
     * @param csrfHeader    the request's {@value #CSRF_HEADER}, or null
     * @param origin        the request's {@code Origin}, or null
     * @param host          the request's {@code Host}
     * @param secFetchSite  the request's {@code Sec-Fetch-Site}, or null
     */
    public static String csrfRefusal(BrowserSession s, String csrfHeader, String origin, String host, String secFetchSite) {
        if (csrfHeader == null || !MessageDigest.isEqual(csrfHeader.getBytes(StandardCharsets.UTF_8),
                s.csrf().getBytes(StandardCharsets.UTF_8))) {
            return "a request made with the browser's sign-in must send its page's CSRF token in " + CSRF_HEADER;
        }
        if (origin != null && !origin.equals("http://" + host) && !origin.equals("https://" + host)) {
            return "a request made with the browser's sign-in must come from this page's origin, not " + origin;
        }
        if (secFetchSite != null && !secFetchSite.equals("same-origin")) {
            return "a request made with the browser's sign-in must come from this page (Sec-Fetch-Site " + secFetchSite + ")";
        }
        return null;
    }

    /** Keeps a map below {@link #MAX_KEPT} by dropping entries (the oldest are not tracked: any will do past the cap). */
    private static void trim(Map<String, ?> m) {
        if (m.size() < MAX_KEPT) {
            return;
        }
        Iterator<String> it = m.keySet().iterator();
        while (m.size() >= MAX_KEPT && it.hasNext()) {
            it.next();
            it.remove();
        }
    }

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /** 256 random bits, base64url. */
    private static String random() {
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    }
}
