package dev.ensemble.sessions.gateway;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Clock;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The gateway's {@code application.server}: the {@code host:port} other instances forward to, checked when given. */
class ApplicationServerTest {
    private static Gateway gateway() {
        return new Gateway(new Gateway.Settings("127.0.0.1:1", "0.0.0.0", 8080, Path.of("unused"), 1, Tokens.inMemory(),
                Clock.systemUTC()));
    }

    @Test
    void onlyHostAndPortAreTaken() {
        assertThatCode(() -> gateway().withApplicationServer("gateway-0.gateway.ensemble.svc:8080")).doesNotThrowAnyException();
        assertThatCode(() -> gateway().withApplicationServer("10.0.0.7:8080")).doesNotThrowAnyException();
        for (String bad : new String[]{"gateway-0", "gateway-0:", ":8080", "http://gateway-0:8080/", "gateway-0:80a"}) {
            assertThatThrownBy(() -> gateway().withApplicationServer(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("application.server must be host:port, not " + bad);
        }
    }
}
