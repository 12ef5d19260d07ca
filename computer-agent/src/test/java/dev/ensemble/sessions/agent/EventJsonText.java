package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/** JSON text helpers for tests that write transcript lines. */
final class EventJsonText {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private EventJsonText() {
    }

    /** {@code s} as a JSON string literal. */
    static String quote(String s) {
        try {
            return MAPPER.writeValueAsString(s);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
