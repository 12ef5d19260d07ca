package dev.ensemble.sessions.gateway;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** Browser sign-in (issue 19): one-time login links, cookie sessions that expire when idle, the CSRF check. */
class BrowserLoginsTest {
    private static final Principal ANA = new Principal("ana", "person", "ana");

    /** A clock that stands still until moved. */
    static final class Hands extends Clock {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-01T10:00:00Z"));

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }

        void move(Duration d) {
            now.updateAndGet(i -> i.plus(d));
        }
    }

    @Test
    void aLoginLinkWorksOnceAndGivesTheTokensPrincipal() {
        BrowserLogins logins = new BrowserLogins(new Hands());
        String code = logins.issueLink("es_token", ANA);
        BrowserLogins.Redeemed r = logins.redeem(code).orElseThrow();
        assertThat(r.session().principal()).isEqualTo(ANA);
        assertThat(r.session().bearerToken()).isEqualTo("es_token");
        assertThat(r.cookie()).isNotEqualTo(code).hasSizeGreaterThan(40);
        assertThat(r.session().csrf()).isNotEqualTo(r.cookie()).hasSizeGreaterThan(40);
        assertThat(logins.redeem(code)).as("a second use").isEmpty();
        assertThat(logins.redeem("made-up")).isEmpty();
        assertThat(logins.redeem(null)).isEmpty();
        assertThat(logins.session(r.cookie())).contains(r.session());
        assertThat(logins.session(code)).as("the code is no cookie").isEmpty();
        logins.end(r.cookie());
        assertThat(logins.session(r.cookie())).as("signed out").isEmpty();
    }

    @Test
    void aLinkExpiresAfterADayAndASessionAfterAWeekIdle() {
        Hands clock = new Hands();
        BrowserLogins logins = new BrowserLogins(clock);
        String late = logins.issueLink("t", ANA);
        String code = logins.issueLink("t", ANA);
        clock.move(BrowserLogins.LINK_TTL);
        String cookie = logins.redeem(code).orElseThrow().cookie(); // at the last instant it works
        clock.move(Duration.ofMillis(1));
        assertThat(logins.redeem(late)).isEmpty();
        clock.move(BrowserLogins.IDLE_TTL.minusMillis(1));
        assertThat(logins.session(cookie)).as("used at the last instant").isPresent();
        clock.move(BrowserLogins.IDLE_TTL.plusMillis(1));
        assertThat(logins.session(cookie)).isEmpty();
    }

    @Test
    void aStateChangingRequestNeedsTheCsrfTokenAndThePagesOrigin() {
        BrowserLogins logins = new BrowserLogins(new Hands());
        BrowserLogins.BrowserSession s = logins.redeem(logins.issueLink("t", ANA)).orElseThrow().session();
        String host = "localhost:8080";
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf(), "http://localhost:8080", host, "same-origin")).isNull();
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf(), null, host, null)).as("a client that sends neither header").isNull();
        assertThat(BrowserLogins.csrfRefusal(s, null, "http://localhost:8080", host, "same-origin")).contains("CSRF token");
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf() + "x", null, host, null)).contains("CSRF token");
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf(), "http://evil.example", host, null)).contains("http://evil.example");
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf(), "http://localhost:8081", host, null)).contains("origin");
        assertThat(BrowserLogins.csrfRefusal(s, s.csrf(), null, host, "cross-site")).contains("cross-site");
    }
}
