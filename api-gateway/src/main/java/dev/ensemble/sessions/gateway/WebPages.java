package dev.ensemble.sessions.gateway;

import io.javalin.Javalin;
import io.javalin.http.Context;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The web page of issue 19, served by the gateway without a build step: static HTML, CSS and a small script from
 * {@code /web/} on the class path; the script reads the JSON API with the browser's sign-in cookie
 * ({@link BrowserLogins}) and writes every text of a session with {@code textContent} (prompts are untrusted).
 * <ul>
 *   <li>{@code GET /}: the session list for a browser (a request whose {@code Accept} names {@code text/html});
 *   the JSON index for any other client (curl, scripts).</li>
 *   <li>{@code GET /session?id=ID}: one session's page.</li>
 *   <li>{@code GET /login?token=CODE}: redeems a one-time login code; sets the {@value BrowserLogins#COOKIE} cookie
 *   ({@code HttpOnly; SameSite=Strict; Path=/}) and goes to {@code /} (303); an unknown, used or expired code is a 401
 *   page saying how to get a new one.</li>
 *   <li>{@code POST /logout}: ends the browser session (the CSRF token in {@value BrowserLogins#CSRF_HEADER}); 303 to
 *   {@code /}.</li>
 *   <li>{@code GET /web/FILE}: the page's script and style sheet.</li>
 * </ul>
 * A page asked for without a valid cookie is the sign-in page (401). Pages are sent with a Content-Security-Policy
 * that allows only the gateway's own scripts, styles and connections.
 */
final class WebPages {
    /** The scripts and styles served under {@code /web/}, with their content types. */
    private static final Map<String, String> ASSETS = Map.of(
            "app.css", "text/css; charset=utf-8",
            "common.js", "text/javascript; charset=utf-8",
            "list.js", "text/javascript; charset=utf-8",
            "session.js", "text/javascript; charset=utf-8");
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
            + " base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

    private final BrowserLogins logins;
    private final io.javalin.http.Handler jsonIndex;

    WebPages(BrowserLogins logins, io.javalin.http.Handler jsonIndex) {
        this.logins = logins;
        this.jsonIndex = jsonIndex;
    }

    void register(Javalin app) {
        app.get("/", ctx -> {
            if (wantsHtml(ctx)) {
                page(ctx, "list.html");
            } else {
                jsonIndex.handle(ctx);
            }
        });
        app.get("/session", ctx -> page(ctx, "session.html"));
        app.get("/login", this::login);
        app.post("/logout", this::logout);
        app.get("/web/{file}", ctx -> {
            String file = ctx.pathParam("file");
            String type = ASSETS.get(file);
            if (type == null) {
                throw ApiError.notFound("no such file: /web/" + file);
            }
            ctx.header("X-Content-Type-Options", "nosniff").header("Cache-Control", "no-cache")
                    .contentType(type).result(resource(file));
        });
    }

    /** Whether a request is a browser's asking for a page ({@code Accept} names {@code text/html}). */
    static boolean wantsHtml(Context ctx) {
        String accept = ctx.header("Accept");
        return accept != null && accept.contains("text/html");
    }

    /** The browser session of a request's cookie. */
    Optional<BrowserLogins.BrowserSession> session(Context ctx) {
        return logins.session(ctx.cookie(BrowserLogins.COOKIE));
    }

    private void page(Context ctx, String name) throws IOException {
        secure(ctx);
        Optional<BrowserLogins.BrowserSession> s = session(ctx);
        if (s.isEmpty()) {
            ctx.status(401).html(resource("signin.html"));
            return;
        }
        // the CSRF token (base64url: nothing to escape) and the account (escaped) go into the page
        ctx.html(resource(name).replace("{{csrf}}", s.get().csrf())
                .replace("{{account}}", escape(s.get().principal().account())));
    }

    private void login(Context ctx) throws IOException {
        secure(ctx);
        Optional<BrowserLogins.Redeemed> r = logins.redeem(ctx.queryParam("token"));
        if (r.isEmpty()) {
            ctx.status(401).html(resource("signin.html"));
            return;
        }
        ctx.header("Set-Cookie", BrowserLogins.COOKIE + "=" + r.get().cookie() + "; Path=/; HttpOnly; SameSite=Strict");
        ctx.status(303).header("Location", "/");
    }

    private void logout(Context ctx) {
        Optional<BrowserLogins.BrowserSession> s = session(ctx);
        if (s.isPresent()) {
            String refusal = BrowserLogins.csrfRefusal(s.get(), ctx.header(BrowserLogins.CSRF_HEADER), ctx.header("Origin"),
                    ctx.header("Host"), ctx.header("Sec-Fetch-Site"));
            if (refusal != null) {
                throw new ApiError(403, "csrf", refusal);
            }
            logins.end(ctx.cookie(BrowserLogins.COOKIE));
        }
        ctx.header("Set-Cookie", BrowserLogins.COOKIE + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
        ctx.status(303).header("Location", "/");
    }

    /** Headers every page gets: only the gateway's own scripts, never framed, no referrer (a login link holds a code). */
    private static void secure(Context ctx) {
        ctx.header("Content-Security-Policy", CSP).header("X-Content-Type-Options", "nosniff")
                .header("Referrer-Policy", "no-referrer").header("Cache-Control", "no-store");
    }

    /** Text made safe for HTML element content and quoted attribute values. */
    static String escape(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = WebPages.class.getResourceAsStream("/web/" + name)) {
            if (in == null) {
                throw new IOException("the gateway's jar lacks /web/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
