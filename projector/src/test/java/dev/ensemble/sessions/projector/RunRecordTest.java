package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.views.RunFacts;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A run's record ({@link RunRecord}) through its store encoding: every field back as it was, absent ones too. */
class RunRecordTest {
    private static RunRecord roundTrip(RunRecord r) {
        return RunRecord.SERDE.deserializer().deserialize("t", RunRecord.SERDE.serializer().serialize("t", r));
    }

    @Test
    void aRunOfEventIdsAloneComesBackWithoutSessionOrFacts() {
        RunRecord r = new RunRecord();
        r.eventIds().append("0b4f3c1e-2a51-4c3e-9d5f-000000000001");
        r.eventIds().append("not-a-uuid");
        RunRecord back = roundTrip(r);
        assertThat(back.sessionId()).isNull();
        assertThat(back.facts()).isNull();
        assertThat(back.eventIds().ids()).containsExactly("0b4f3c1e-2a51-4c3e-9d5f-000000000001", "not-a-uuid");
    }

    @Test
    void aClaimedRunComesBackWithItsSessionAndFacts() {
        RunRecord r = new RunRecord();
        r.eventIds().append("e-1");
        r.setSessionId("sess-é");
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setTaskId(null).setSourceRef("node:plan-1").setKind("TASK_RUN")
                .setKeepDays(14).setNextRunAt(Instant.ofEpochMilli(1_700_000_000_123L)).setClaimedAt(Instant.ofEpochMilli(1_700_000_000_000L))
                .setAgentSessionIds(new ArrayList<>(List.of("a-1", "a-2"))).build());
        RunRecord back = roundTrip(r);
        assertThat(back.sessionId()).isEqualTo("sess-é");
        assertThat(back.facts()).isEqualTo(r.facts());
        assertThat(back.eventIds().contains("e-1")).isTrue();

        r.facts().setKeepDays(null);
        r.facts().setNextRunAt(null);
        assertThat(roundTrip(r).facts()).isEqualTo(r.facts());
    }

    @Test
    void partsNotAskedForAreWrittenBackAsTheyWereRead() {
        RunRecord r = new RunRecord();
        r.eventIds().append("0b4f3c1e-2a51-4c3e-9d5f-000000000001");
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setKind("TASK_RUN").setClaimedAt(Instant.ofEpochMilli(1_700_000_000_000L))
                .setAgentSessionIds(new ArrayList<>(List.of("a-1"))).build());
        RunFacts facts = r.facts();

        RunRecord read = roundTrip(r); // neither the eventIds nor the facts asked for
        read.setSessionId("sess-1");
        RunRecord back = roundTrip(read);
        assertThat(back.sessionId()).isEqualTo("sess-1");
        assertThat(back.facts()).isEqualTo(facts);
        assertThat(back.eventIds().ids()).containsExactly("0b4f3c1e-2a51-4c3e-9d5f-000000000001");

        RunRecord idsOnly = roundTrip(back); // the eventIds changed, the facts not asked for
        idsOnly.eventIds().append("e-2");
        RunRecord again = roundTrip(idsOnly);
        assertThat(again.eventIds().ids()).containsExactly("0b4f3c1e-2a51-4c3e-9d5f-000000000001", "e-2");
        assertThat(again.facts()).isEqualTo(facts);
        assertThat(again.sessionId()).isEqualTo("sess-1");

        RunRecord factsChanged = roundTrip(again); // the facts changed in place, the eventIds not asked for
        factsChanged.facts().setAgentSessionIds(new ArrayList<>(List.of("a-1", "a-2")));
        RunRecord last = roundTrip(factsChanged);
        assertThat(last.facts().getAgentSessionIds()).containsExactly("a-1", "a-2");
        assertThat(last.eventIds().ids()).containsExactly("0b4f3c1e-2a51-4c3e-9d5f-000000000001", "e-2");
    }

    @Test
    void anUntouchedRecordIsWrittenBackByteForByteAndAChangedSessionKeepsTheOtherPartsBytes() {
        RunRecord r = new RunRecord();
        r.eventIds().append("0b4f3c1e-2a51-4c3e-9d5f-000000000001");
        r.eventIds().append("not-a-uuid");
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setKind("TASK_RUN").setClaimedAt(Instant.ofEpochMilli(1_700_000_000_000L))
                .setAgentSessionIds(new ArrayList<>(List.of("a-1"))).build());
        byte[] bytes = RunRecord.SERDE.serializer().serialize("t", r);
        RunRecord read = RunRecord.SERDE.deserializer().deserialize("t", bytes);
        assertThat(RunRecord.SERDE.serializer().serialize("t", read)).isEqualTo(bytes);

        r.setSessionId("sess-1");
        read.setSessionId("sess-1");
        assertThat(RunRecord.SERDE.serializer().serialize("t", read)).isEqualTo(RunRecord.SERDE.serializer().serialize("t", r));
    }

    @Test
    void factsSetToNoneOnARecordReadBackAreGone() {
        RunRecord r = new RunRecord();
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setKind("TASK_RUN").setClaimedAt(Instant.ofEpochMilli(1L))
                .setAgentSessionIds(new ArrayList<>()).build());
        RunRecord read = roundTrip(r);
        read.setFacts(null);
        assertThat(roundTrip(read).facts()).isNull();
    }

    @Test
    void aRecordWhoseFactsAreCutShortFailsWhenItIsRead() {
        RunRecord r = new RunRecord();
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setKind("TASK_RUN").setClaimedAt(Instant.ofEpochMilli(1L))
                .setAgentSessionIds(new ArrayList<>(List.of("a-1"))).build());
        byte[] bytes = RunRecord.SERDE.serializer().serialize("t", r);
        for (int cut : new int[]{1, 3, 12}) {
            byte[] shorter = java.util.Arrays.copyOf(bytes, bytes.length - cut);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> RunRecord.SERDE.deserializer().deserialize("t", shorter))
                    .as("cut by " + cut).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("run record");
        }
        byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 2);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RunRecord.SERDE.deserializer().deserialize("t", longer))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("run record");
    }

    @Test
    void aRunsProgressComesBackAndPartsNotAskedForAreWrittenAsTheyWereRead() {
        RunRecord r = new RunRecord();
        r.eventIds().append("e-1");
        r.setSessionId("sess-1");
        r.setFacts(RunFacts.newBuilder().setRunId("run-1").setKind("TASK_RUN").setClaimedAt(Instant.ofEpochMilli(1_700_000_000_000L))
                .setAgentSessionIds(new ArrayList<>(List.of("a-1"))).build());
        RunProgress p = RunProgress.claimed("WORKING").withStartedAt(Instant.ofEpochMilli(1_700_000_001_000L))
                .ended("DONE", Instant.ofEpochMilli(1_700_000_002_000L), "ok é", 12L, null, List.of("a.ts", "b.ts"));
        r.setProgress(p);
        RunRecord back = roundTrip(r);
        assertThat(back.progress()).isEqualTo(p);
        // the chains change the progress alone: the eventIds and facts, never decoded, come back the same
        back.setProgress(p.withStatus("FAILED"));
        RunRecord again = roundTrip(back);
        assertThat(again.progress().status()).isEqualTo("FAILED");
        assertThat(again.facts()).isEqualTo(r.facts());
        assertThat(again.eventIds().ids()).containsExactly("e-1");
        assertThat(again.sessionId()).isEqualTo("sess-1");
    }

    @Test
    void aRunsFilesKeepTheNewestWithinTheirBoundCountingTheRest() {
        List<String> files = new ArrayList<>();
        for (int i = 0; i < ViewBounds.FILES + 5; i++) {
            files.add("f" + i);
        }
        RunProgress p = RunProgress.claimed("WORKING").ended("DONE", Instant.EPOCH, null, null, null, files);
        assertThat(p.filesChanged()).hasSize(ViewBounds.FILES).startsWith("f5").endsWith("f" + (ViewBounds.FILES + 4));
        assertThat(p.filesOmitted()).isEqualTo(5);
        assertThat(roundTrip(withProgress(p)).progress()).isEqualTo(p);
    }

    @Test
    void aRecordWrittenBeforeRunsHadAProgressIsRead() {
        // version 1: flags (1: session, 2: facts), the session id, the eventIds after their length, the facts
        AppliedEvents.RunEventIds held = new AppliedEvents.RunEventIds();
        held.append("e-1");
        byte[] ids = AppliedEvents.RunEventIds.SERDE.serializer().serialize(null, held);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1 + 1 + 4 + 6 + 4 + ids.length);
        b.put((byte) 1).put((byte) 1).putInt(6).put("sess-1".getBytes(java.nio.charset.StandardCharsets.UTF_8)).putInt(ids.length).put(ids);
        RunRecord r = RunRecord.SERDE.deserializer().deserialize("t", b.array());
        assertThat(r.sessionId()).isEqualTo("sess-1");
        assertThat(r.eventIds().ids()).containsExactly("e-1");
        assertThat(r.facts()).isNull();
        assertThat(r.progress()).isNull();
        assertThat(roundTrip(r).eventIds().ids()).containsExactly("e-1");
    }

    @Test
    void aFillWrittenBeforeItCountedRunsIsReadAsNotCounted() {
        SessionFill f = new SessionFill("s1", Instant.ofEpochMilli(5), 10L, 100L, "m", Instant.ofEpochMilli(6), 3, 1, 0, 2);
        byte[] now = SessionFill.SERDE.serializer().serialize("t", f);
        assertThat(SessionFill.SERDE.deserializer().deserialize("t", now)).isEqualTo(f);
        byte[] before = java.util.Arrays.copyOf(now, now.length - 12);
        before[0] = 1;
        SessionFill old = SessionFill.SERDE.deserializer().deserialize("t", before);
        assertThat(old.isCounted()).isFalse();
        assertThat(old.changes()).isEqualTo(3);
        assertThat(old.agentSessionId()).isEqualTo("s1");
    }

    private static RunRecord withProgress(RunProgress p) {
        RunRecord r = new RunRecord();
        r.setProgress(p);
        return r;
    }
}
