package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the body of {@code POST /api/events} is read: JSON Lines line by line (a line that is not JSON refused alone), a
 * broken value written over several lines refused whole (a 400 naming where), never partly taken as lines.
 */
class EventsBodyTest {
    private static final String A = "{\"eventId\":\"a\",\"type\":\"ComputerStatus\"}";
    private static final String B = "{\"eventId\":\"b\",\"type\":\"ComputerStatus\"}";

    @Test
    void aLineOfPlainTextInJsonLinesIsRefusedAloneAsJsonOrAsNdjson() {
        for (boolean declared : new boolean[]{false, true}) {
            JsonNode body = Gateway.eventsBody(A + "\nnot json\n" + B + "\n", declared);
            assertThat(body.size()).isEqualTo(3);
            assertThat(body.get(0).get("eventId").asText()).isEqualTo("a");
            assertThat(body.get(1)).isInstanceOf(Gateway.UnreadableLine.class);
            assertThat(body.get(2).get("eventId").asText()).isEqualTo("b");
        }
    }

    @Test
    void aBrokenPrettyPrintedEventAfterAWholeOneIsOneBrokenBodyNotLines() {
        String body = A + "\n{\n  \"eventId\": \"b\",\n  \"type\": oops\n}\n";
        assertThatThrownBy(() -> Gateway.eventsBody(body, false)).isInstanceOf(ApiError.class)
                .satisfies(e -> assertThat(((ApiError) e).status()).isEqualTo(400));
    }

    @Test
    void aBatchObjectFollowedByTextIsA400NotAnEventOfItsOwn() {
        String body = "{\"events\":[" + A + "," + B + "]}\ntrailing words";
        assertThatThrownBy(() -> Gateway.eventsBody(body, false)).isInstanceOf(ApiError.class)
                .satisfies(e -> assertThat(((ApiError) e).status()).isEqualTo(400));
    }

    @Test
    void wholeValuesStayAsTheyWere() {
        JsonNode pretty = Gateway.eventsBody("{\n  \"eventId\": \"a\",\n  \"type\": \"ComputerStatus\"\n}\n", false);
        assertThat(pretty.get("eventId").asText()).isEqualTo("a");
        assertThat(Gateway.eventsBody("{\"events\":[" + A + "," + B + "]}", false).get("events").size()).isEqualTo(2);
        assertThat(Gateway.eventsBody("[" + A + ",\n" + B + "]", false).size()).isEqualTo(2);
        JsonNode lines = Gateway.eventsBody(A + "\n" + B, false);
        assertThat(lines.isArray()).isTrue();
        assertThat(lines.size()).isEqualTo(2);
    }
}
