package dev.ensemble.sessions.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ContractJsonTest {
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-30T00:00:00Z"), ZoneOffset.UTC);

    static List<String> contractLines() throws Exception {
        Path p = SharedData.require("contract/events-example.jsonl");
        return Files.readAllLines(p).stream().filter(l -> !l.isBlank()).toList();
    }

    @Test
    void everyContractEventParsesAsItIsAndRoundTrips() throws Exception {
        List<String> lines = contractLines();
        assertThat(lines).hasSizeGreaterThanOrEqualTo(10);
        for (String line : lines) {
            Event e = EventJson.parse(line, CLOCK);
            ObjectNode back = EventJson.toJson(e);
            // every field the contract wrote comes back with the same value
            assertSubset(EventJson.mapper().readTree(line), back, "");
            // and the JSON we write parses to the same event
            assertThat(EventJson.fromJson(back, CLOCK)).isEqualTo(e);
            // and through the binary serde
            AvroSerde<Event> serde = AvroSerde.of(Event.class);
            assertThat(serde.decode(serde.encode(e))).isEqualTo(e);
        }
    }

    /**
     * {@link EventContent#fingerprint}: the same for an event as parsed, as read back from the log and with another
     * recordedAt; another for every contract event changed in any other field.
     */
    @Test
    void anEventsContentFingerprintIsTheSameThroughTheLogAndDiffersForAnotherEvent() throws Exception {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (String line : contractLines()) {
            Event e = EventJson.parse(line, CLOCK);
            long f = EventContent.fingerprint(e);
            assertThat(EventContent.fingerprint(serde.decode(serde.encode(e)))).as(line).isEqualTo(f);
            Event later = Event.newBuilder(e).setRecordedAt(e.getRecordedAt().plusSeconds(60)).build();
            assertThat(EventContent.fingerprint(later)).as("recordedAt is the log's, not the event's").isEqualTo(f);
            assertThat(seen.add(f)).as("each contract event its own: " + line).isTrue();
            Event otherSource = Event.newBuilder(e).setSource(e.getSource() + "-2").build();
            assertThat(EventContent.fingerprint(otherSource)).isNotEqualTo(f);
            Event otherTime = Event.newBuilder(e).setOccurredAt(e.getOccurredAt().plusMillis(1)).build();
            assertThat(EventContent.fingerprint(otherTime)).isNotEqualTo(f);
            ObjectNode changed = (ObjectNode) EventJson.mapper().readTree(line);
            ObjectNode payload = (ObjectNode) changed.get("payload");
            String firstText = null;
            for (var it = payload.fields(); it.hasNext(); ) {
                var field = it.next();
                if (field.getValue().isTextual()) {
                    firstText = field.getKey();
                    break;
                }
            }
            if (firstText != null) {
                payload.put(firstText, payload.get(firstText).asText() + "x");
                assertThat(EventContent.fingerprint(EventJson.fromJson(changed, CLOCK))).as("payload." + firstText + " changed").isNotEqualTo(f);
            }
        }
    }

    /** The fields the schema lacks that an event's JSON carried, as {@link EventJson#fromJson(JsonNode, Clock, List)} names them. */
    private static List<String> ignored(JsonNode node) {
        List<String> out = new java.util.ArrayList<>();
        EventJson.fromJson(node, CLOCK, out);
        return out;
    }

    @Test
    void theContractsEventsHaveNoFieldTheSchemaLacksAndAMisspeltOneIsNamed() throws Exception {
        for (String line : contractLines()) {
            assertThat(ignored(EventJson.mapper().readTree(line))).as(line).isEmpty();
        }
        List<String> lines = contractLines();
        ObjectNode report = (ObjectNode) EventJson.mapper().readTree(lines.get(4)); // a RunStatusChanged
        assertThat(report.path("type").asText()).isEqualTo("RunStatusChanged");
        ObjectNode payload = (ObjectNode) report.get("payload");
        payload.set("reportSumary", payload.remove("reportSummary"));
        report.put("ocurredAt", "2026-11-02T09:41:00Z");
        assertThat(ignored(report)).as("still an event: the field is optional").containsExactly("ocurredAt", "payload.reportSumary");
        ObjectNode claim = (ObjectNode) EventJson.mapper().readTree(lines.get(1)); // a RunClaimed with a task
        ((ObjectNode) claim.get("payload").get("task")).put("titel", "x");
        assertThat(ignored(claim)).containsExactly("payload.task.titel");
    }

    @Test
    void contractFieldsLandInTheRightPlaces() throws Exception {
        List<String> lines = contractLines();
        Event claimed = EventJson.parse(lines.get(1), CLOCK);
        assertThat(claimed.getPayload()).isInstanceOf(RunClaimed.class);
        RunClaimed rc = (RunClaimed) claimed.getPayload();
        assertThat(rc.getRunId()).isEqualTo("job-101");
        assertThat(rc.getKind()).isEqualTo(RunKind.TASK_RUN);
        assertThat(rc.getTask().getTitle()).isEqualTo("Build the ranking API");
        assertThat(rc.getTask().getLabels()).containsExactly("api", "backend");
        assertThat(rc.getProject().getName()).isEqualTo("Ranking");
        assertThat(claimed.getOccurredAt()).isEqualTo(Instant.parse("2026-11-02T09:00:05Z"));
        assertThat(claimed.getRecordedAt()).isEqualTo(CLOCK.instant());
        EngineEvent engine = (EngineEvent) EventJson.parse(lines.get(3), CLOCK).getPayload();
        assertThat(engine.getContextUsed()).isEqualTo(18000L);
        SessionDeletionRequested del = (SessionDeletionRequested) EventJson.parse(lines.get(9), CLOCK).getPayload();
        assertThat(del.getRunIds()).containsExactly("job-101", "job-102");
    }

    @Test
    void aTypeThatIsNotAStringIsSaidSoAndShownShort() {
        String huge = "{\"k\":\"" + "x".repeat(100_000) + "\"}";
        for (String type : java.util.List.of("7", huge)) {
            assertThatThrownBy(() -> EventJson.parse("{\"eventId\":\"e1\",\"type\":" + type + ",\"account\":\"a\",\"payload\":{}}", CLOCK))
                    .isInstanceOf(InvalidEventException.class)
                    .hasMessageContaining("must be the event type's name (a string), not " + type.substring(0, Math.min(type.length(), 40)))
                    .hasMessageNotContaining("missing")
                    .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(2_000));
        }
    }

    @Test
    void unknownTypeNamesTheEvent() {
        assertThatThrownBy(() -> EventJson.parse("{\"eventId\":\"e1\",\"type\":\"RunExploded\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"x\",\"payload\":{}}", CLOCK))
                .isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("RunExploded e1")
                .hasMessageContaining("unknown event type")
                .hasMessageContaining("RunClaimed");
    }

    @Test
    void missingRequiredFieldNamesEventAndField() {
        String json = "{\"eventId\":\"e2\",\"type\":\"RunClaimed\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"x\","
                + "\"payload\":{\"runId\":\"r1\",\"computerId\":\"c\",\"agent\":\"codex\",\"task\":{\"labels\":[]}}}";
        assertThatThrownBy(() -> EventJson.parse(json, CLOCK))
                .isInstanceOf(InvalidEventException.class)
                .hasMessage("RunClaimed e2: payload.task.title: required field is missing");
    }

    @Test
    void illTypedFieldNamesEventAndField() {
        String json = "{\"eventId\":\"e3\",\"type\":\"EngineEvent\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"x\","
                + "\"payload\":{\"runId\":\"r1\",\"agentSessionId\":\"s1\",\"contextUsed\":\"lots\"}}";
        assertThatThrownBy(() -> EventJson.parse(json, CLOCK))
                .isInstanceOf(InvalidEventException.class)
                .hasMessage("EngineEvent e3: payload.contextUsed: expected a whole number, got string");
        String badTime = json.replace("\"2026-11-02T09:00:00Z\"", "\"yesterday\"").replace("\"lots\"", "1");
        assertThatThrownBy(() -> EventJson.parse(badTime, CLOCK))
                .hasMessageContaining("EngineEvent e3: occurredAt: 'yesterday' is not an ISO-8601 instant");
        String seconds = json.replace("\"2026-11-02T09:00:00Z\"", "1793610000").replace("\"lots\"", "1");
        assertThatThrownBy(() -> EventJson.parse(seconds, CLOCK))
                .hasMessageContaining("EngineEvent e3: occurredAt: 1793610000 is not epoch milliseconds of this century (seconds?)");
        String millis = json.replace("\"2026-11-02T09:00:00Z\"", "1793610000000").replace("\"lots\"", "1");
        assertThat(EventJson.parse(millis, CLOCK).getOccurredAt()).isEqualTo(java.time.Instant.ofEpochMilli(1793610000000L));
        String badEnum = "{\"eventId\":\"e4\",\"type\":\"RunStatusChanged\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"x\","
                + "\"payload\":{\"runId\":\"r1\",\"status\":\"SLEEPING\"}}";
        assertThatThrownBy(() -> EventJson.parse(badEnum, CLOCK))
                .hasMessageContaining("RunStatusChanged e4: payload.status: 'SLEEPING' is not one of [QUEUED, WORKING");
    }

    @Test
    void blankIdsAreRejected() {
        assertRefused("e5", "RunStatusChanged", "a", "{\"runId\":\" \",\"status\":\"DONE\"}", "RunStatusChanged e5: payload.runId: must not be blank");
        assertRefused("e6\\nx", "RunStatusChanged", "a", "{\"runId\":\"r1\",\"status\":\"DONE\"}",
                "RunStatusChanged e6\nx: eventId: must not contain a line break");
        assertRefused("e7", "EngineEvent", "a", "{\"runId\":\"r1\",\"agentSessionId\":\"\\t\"}",
                "EngineEvent e7: payload.agentSessionId: must not be blank");
        assertRefused("e8", "RunStatusChanged", "  ", "{\"runId\":\"r1\",\"status\":\"DONE\"}", "RunStatusChanged e8: account: must not be blank");
        assertThatThrownBy(() -> EventJson.parse("[1]", CLOCK)).hasMessageContaining("must be a JSON object");
        assertThatThrownBy(() -> EventJson.parse("{nope", CLOCK)).hasMessageContaining("not valid JSON");
    }

    @Test
    void aRunThatContinuesItselfIsRefusedNamingTheField() {
        String json = "{\"eventId\":\"e9\",\"type\":\"RunClaimed\",\"account\":\"a\",\"space\":\"s\",\"occurredAt\":\"2026-11-02T09:00:00Z\","
                + "\"source\":\"x\",\"payload\":{\"runId\":\"r1\",\"computerId\":\"c\",\"agent\":\"codex\",\"continueFromJobId\":\"r1\","
                + "\"task\":{\"title\":\"t\"}}}";
        assertThatThrownBy(() -> EventJson.parse(json, CLOCK))
                .isInstanceOf(InvalidEventException.class)
                .hasMessageStartingWith("RunClaimed e9: payload.continueFromJobId: a run cannot continue itself")
                .satisfies(e -> assertThat(((InvalidEventException) e).field()).isEqualTo("payload.continueFromJobId"));
        // continuing another run is taken
        assertThat(EventJson.parse(json.replace("\"continueFromJobId\":\"r1\"", "\"continueFromJobId\":\"r0\""), CLOCK)
                .getPayload()).isNotNull();
    }

    /** An event (eventId and payload as JSON text) that {@link EventJson#parse} refuses with {@code message}. */
    private static void assertRefused(String eventId, String type, String account, String payload, String message) {
        String json = "{\"eventId\":\"" + eventId + "\",\"type\":\"" + type + "\",\"account\":\"" + account + "\",\"space\":\"s\","
                + "\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"x\",\"payload\":" + payload + "}";
        assertThatThrownBy(() -> EventJson.parse(json, CLOCK)).hasMessage(message);
    }

    private static void assertSubset(JsonNode expected, JsonNode actual, String path) {
        if (expected.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = expected.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                assertThat(actual.has(e.getKey())).as("field %s%s is written back", path, e.getKey()).isTrue();
                assertSubset(e.getValue(), actual.get(e.getKey()), path + e.getKey() + ".");
            }
        } else if (expected.isNumber()) {
            assertThat(actual.isNumber() && actual.decimalValue().compareTo(expected.decimalValue()) == 0)
                    .as("number %s: %s written back as %s", path, expected, actual).isTrue();
        } else {
            assertThat(actual).as("value of %s", path).isEqualTo(expected);
        }
    }
}
