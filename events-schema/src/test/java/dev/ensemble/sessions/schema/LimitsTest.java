package dev.ensemble.sessions.schema;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the intake accepts ({@link Limits}): each limit and rule at its boundary, and the message naming the field. */
class LimitsTest {
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-30T00:00:00Z"), ZoneOffset.UTC);

    /** A valid RunClaimed (eventId e1) in the JSON form, changed by {@code change}. */
    static ObjectNode claim(Consumer<ObjectNode> change) {
        ObjectNode e = EventJson.mapper().createObjectNode().put("eventId", "e1").put("type", "RunClaimed").put("account", "acct-a")
                .put("space", "local:pc").put("occurredAt", "2026-11-02T09:00:00Z").put("source", "computer:pc");
        ObjectNode p = e.putObject("payload").put("runId", "r1").put("computerId", "pc").put("agent", "codex");
        p.putObject("task").put("title", "Fix the flaky test");
        change.accept(e);
        return e;
    }

    static ObjectNode task(ObjectNode e) {
        return (ObjectNode) e.get("payload").get("task");
    }

    static ObjectNode payload(ObjectNode e) {
        return (ObjectNode) e.get("payload");
    }

    static ObjectNode event(String type, String payloadJson) throws Exception {
        return claim(e -> {
        }).put("type", type).set("payload", EventJson.mapper().readTree(payloadJson));
    }

    static Event parse(ObjectNode json) {
        return EventJson.fromJson(json, CLOCK);
    }

    static void refused(ObjectNode json, String message) {
        assertThatThrownBy(() -> parse(json)).isInstanceOf(InvalidEventException.class).isNotInstanceOf(LimitExceededException.class)
                .hasMessage(message);
    }

    static void tooLarge(ObjectNode json, String message, long limit) {
        assertThatThrownBy(() -> parse(json)).isInstanceOf(LimitExceededException.class).hasMessage(message)
                .satisfies(x -> assertThat(((LimitExceededException) x).limit()).isEqualTo(limit));
    }

    @Test
    void textsAreAtMostTheirLimit() {
        tooLarge(claim(e -> task(e).put("title", "t".repeat(300_000))), "RunClaimed e1: payload.task.title: 300000 characters; at most 4096", 4096);
        assertThat(((RunClaimed) parse(claim(e -> task(e).put("title", "t".repeat(4096)))).getPayload()).getTask().getTitle()).hasSize(4096);
        tooLarge(claim(e -> task(e).put("description", "d".repeat(32_769))),
                "RunClaimed e1: payload.task.description: 32769 characters; at most 32768", 32_768);
        assertThat(parse(claim(e -> task(e).put("description", "d".repeat(32_768))))).isNotNull();
        tooLarge(claim(e -> task(e).putArray("labels").add("ok").add("l".repeat(4097))),
                "RunClaimed e1: payload.task.labels[1]: 4097 characters; at most 4096", 4096);
        tooLarge(claim(e -> payload(e).put("runId", "r".repeat(257))), "RunClaimed e1: payload.runId: 257 characters; at most 256", 256);
        assertThat(parse(claim(e -> payload(e).put("runId", "r".repeat(256))))).isNotNull();
    }

    @Test
    void listsAndMapsHoldAtMostTheirLimit() throws Exception {
        tooLarge(claim(e -> {
            var labels = task(e).putArray("labels");
            for (int i = 0; i < 2001; i++) labels.add("l" + i);
        }), "RunClaimed e1: payload.task.labels: 2001 entries; at most 2000", 2000);
        assertThat(parse(claim(e -> {
            var labels = task(e).putArray("labels");
            for (int i = 0; i < 2000; i++) labels.add("l" + i);
        }))).isNotNull();
        ObjectNode computer = event("ComputerStatus", "{\"computerId\":\"pc\",\"online\":true}");
        ObjectNode caps = payload(computer).putObject("capabilities");
        for (int i = 0; i < 2001; i++) caps.put("c" + i, 1);
        tooLarge(computer, "ComputerStatus e1: payload.capabilities: 2001 entries; at most 2000", 2000);
    }

    @Test
    void idsAreOfPrintableCharacters() {
        refused(claim(e -> e.put("eventId", "e\u00001")), "RunClaimed e\u00001: eventId: holds U+0000 (NULL) at index 1; an id is of printable characters");
        refused(claim(e -> e.put("account", "acct\ta")), "RunClaimed e1: account: holds U+0009 (CHARACTER TABULATION) at index 4; an id is of printable characters");
        refused(claim(e -> payload(e).put("runId", "r\u200b1")), "RunClaimed e1: payload.runId: holds U+200B (ZERO WIDTH SPACE) at index 1; an id is of printable characters");
        refused(claim(e -> payload(e).put("agent", "codex\u202e")), "RunClaimed e1: payload.agent: holds U+202E (RIGHT-TO-LEFT OVERRIDE) at index 5; an id is of printable characters");
        refused(claim(e -> task(e).putArray("linkedTaskIds").add("t\u007f")),
                "RunClaimed e1: payload.task.linkedTaskIds[0]: holds U+007F (DELETE) at index 1; an id is of printable characters");
        // any other language is printable, in ids as in texts; a text may hold tabs and line breaks
        assertThat(parse(claim(e -> payload(e).put("runId", "é-ü-日本-😀")))).isNotNull();
        assertThat(parse(claim(e -> task(e).put("title", "a\tb\nc 😀")))).isNotNull();
    }

    @Test
    void textsAreWellFormedUnicode() {
        refused(claim(e -> task(e).put("title", "half \ud83d of an emoji")),
                "RunClaimed e1: payload.task.title: holds a lone surrogate (U+D83D) at index 5: not well-formed Unicode text");
    }

    @Test
    void timesAreFrom2000UpTo2100() {
        for (String t : new String[]{"0001-01-01T00:00:00Z", "+292278994-08-17T07:12:55.807Z", "+1000000000-01-01T00:00:00Z",
                "1999-12-31T23:59:59.999Z", "2100-01-01T00:00:00Z"}) {
            refused(claim(e -> e.put("occurredAt", t)), "RunClaimed e1: occurredAt: " + Instant.parse(t)
                    + " is outside the times an event may name: from 2000-01-01T00:00:00Z up to 2100-01-01T00:00:00Z");
        }
        assertThat(parse(claim(e -> e.put("occurredAt", "2000-01-01T00:00:00Z"))).getOccurredAt()).isEqualTo(Limits.EARLIEST);
        assertThat(parse(claim(e -> e.put("occurredAt", "2099-12-31T23:59:59.999Z")))).isNotNull();
        refused(claim(e -> e.put("recordedAt", "3000-01-01T00:00:00Z")),
                "RunClaimed e1: recordedAt: 3000-01-01T00:00:00Z is outside the times an event may name: from 2000-01-01T00:00:00Z up to 2100-01-01T00:00:00Z");
        refused(claim(e -> payload(e).put("nextRunAt", "2200-01-01T00:00:00Z")),
                "RunClaimed e1: payload.nextRunAt: 2200-01-01T00:00:00Z is outside the times an event may name: from 2000-01-01T00:00:00Z up to 2100-01-01T00:00:00Z");
    }

    @Test
    void countsAreNotNegativeAndNumbersFinite() throws Exception {
        refused(event("RunStatusChanged", "{\"runId\":\"r1\",\"status\":\"DONE\",\"tokens\":-1}"),
                "RunStatusChanged e1: payload.tokens: -1 is negative; a count, size or duration is 0 or more");
        refused(event("RunStatusChanged", "{\"runId\":\"r1\",\"status\":\"DONE\",\"durationMs\":-5000}"),
                "RunStatusChanged e1: payload.durationMs: -5000 is negative; a count, size or duration is 0 or more");
        refused(event("EngineEvent", "{\"runId\":\"r1\",\"agentSessionId\":\"s1\",\"contextUsed\":-1}"),
                "EngineEvent e1: payload.contextUsed: -1 is negative; a count, size or duration is 0 or more");
        refused(event("ComputerStatus", "{\"computerId\":\"pc\",\"online\":true,\"capabilities\":{\"sessionDelete\":-1}}"),
                "ComputerStatus e1: payload.capabilities.sessionDelete: -1 is negative; a count, size or duration is 0 or more");
        assertThat(parse(event("RunStatusChanged", "{\"runId\":\"r1\",\"status\":\"DONE\",\"tokens\":0,\"durationMs\":0}"))).isNotNull();
        refused(event("SessionChoiceRecorded", "{\"runId\":\"r1\",\"agent\":\"codex\",\"computerId\":\"pc\",\"decision\":\"NEW\","
                        + "\"band\":\"NONE\",\"reason\":\"x\",\"configVersion\":\"1\",\"configHash\":\"h\",\"score\":1e999}"),
                "SessionChoiceRecorded e1: payload.score: Infinity is not a finite number");
    }

    @Test
    void theWholeEventIsAtMostItsEncodedLimit() {
        Event e = parse(claim(x -> x.put("eventId", "big")));
        Limits.checkEncodedSize(e, Limits.MAX_EVENT_BYTES);
        assertThatThrownBy(() -> Limits.checkEncodedSize(e, Limits.MAX_EVENT_BYTES + 1)).isInstanceOf(LimitExceededException.class)
                .hasMessage("RunClaimed big: event: encoded, it is 262145 bytes; at most 262144 (shorten its texts or lists)");
    }
}
