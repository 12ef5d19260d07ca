package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.events.ChoiceBand;
import dev.ensemble.sessions.events.ChoiceDecision;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.schema.AvroSerde;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 "Records": a decision becomes a SessionChoiceRecorded event that the project's serde writes and reads. */
class ChoiceRecordsTest {
    @Test
    void aDecisionMapsToSessionChoiceRecordedAndRoundTripsThroughTheEventSerde() {
        TaskFacts mine = new TaskFacts("Wire the ranking API", "see KAFKA-42", List.of(), null, null, null, null, null, List.of("t1"));
        Decision d = decide(run(mine),
                session("s1", 10, task("t1", facts("Build the ranking API", "KAFKA-42"))).fill(0.3),
                session("s2", 900, task("t2", facts("Billing"))));
        SessionChoiceRecorded rec = ChoiceRecords.toEvent(d);
        assertThat(rec.getDecision()).isEqualTo(ChoiceDecision.CONTINUE);
        assertThat(rec.getBand()).isEqualTo(ChoiceBand.CONFIDENT);
        assertThat(rec.getSessionId()).isEqualTo("s1");
        assertThat(rec.getReason()).startsWith("Continued the agent's session: it mentions “Build the ranking API”");
        assertThat(rec.getCandidates()).hasSize(2);
        assertThat(rec.getCandidates().get(0).getSignals().getLink()).isTrue();
        assertThat(rec.getCandidates().get(0).getSignals().getFill()).isEqualTo(0.3);
        assertThat(rec.getCandidates().get(0).getSignals().getAnchorsShared()).containsExactly("KAFKA-42");
        assertThat(rec.getCandidates().get(0).getSignals().getLinkedTitle()).isEqualTo("Build the ranking API");

        Event e = Event.newBuilder().setEventId("e-1").setAccount(ACCOUNT).setSpace(SPACE).setOccurredAt(NOW)
                .setRecordedAt(NOW).setSource("computer:" + COMPUTER).setPayload(rec).build();
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        Event back = serde.decode(serde.encode(e));
        assertThat(back.getPayload()).isEqualTo(rec);
        Scorer.Ranking again = Scorer.rescore(ChoiceRecords.storedCandidates((SessionChoiceRecorded) back.getPayload(), CFG.text()), CFG);
        assertThat(again.chosen().sessionId()).isEqualTo("s1");
        assertThat(again.candidates()).isEqualTo(d.candidates());
    }

    @Test
    void aNewSessionWithoutCandidatesMapsToBandNone() {
        Decision d = decide(run(facts("x")));
        SessionChoiceRecorded rec = ChoiceRecords.toEvent(d);
        assertThat(rec.getDecision()).isEqualTo(ChoiceDecision.NEW);
        assertThat(rec.getBand()).isEqualTo(ChoiceBand.NONE);
        assertThat(rec.getSessionId()).isNull();
        assertThat(rec.getScore()).isNull();
        assertThat(rec.getCandidates()).isEmpty();
    }
}
