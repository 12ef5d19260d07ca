package dev.ensemble.sessions.schema;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class LogProducersTest {
    @Test
    void acksIdempotenceAndOneRequestInFlightAlwaysWinOverOverrides() {
        Map<String, Object> p = LogProducers.config("h:1", "me", Map.of("acks", "1", "enable.idempotence", false,
                "max.in.flight.requests.per.connection", 5, "linger.ms", 7, "client.id", "theirs"));
        assertThat(p).containsEntry("bootstrap.servers", "h:1").containsEntry("acks", "all")
                .containsEntry("enable.idempotence", true).containsEntry("max.in.flight.requests.per.connection", 1)
                .containsEntry("linger.ms", 7).containsEntry("client.id", "theirs");
        assertThat(LogProducers.config("h:1", "me", Map.of())).containsEntry("client.id", "me");
    }
}
