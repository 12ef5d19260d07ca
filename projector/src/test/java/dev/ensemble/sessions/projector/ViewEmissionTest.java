package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ensemble.sessions.projector.ChainFixture.claimed;
import static dev.ensemble.sessions.projector.ChainFixture.engine;
import static dev.ensemble.sessions.projector.ChainFixture.status;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The views of changed sessions are forwarded once per {@link Projector#VIEW_EMIT_INTERVAL}, each with the
 * session's newest state (the store always holds every change at once).
 */
class ViewEmissionTest {
    @Test
    void severalChangesOfOneSessionWithinAnIntervalArePublishedOnceWithTheNewestState() {
        try (ChainFixture f = new ChainFixture()) {
            for (var e : List.of(claimed("job-1", null, "Rank the results", 0), status("job-1", RunStatus.WORKING, 1),
                    engine("job-1", "agent-a", 20_000L, 200_000L, 2), engine("job-1", "agent-a", 50_000L, 200_000L, 3))) {
                f.events.pipeInput(e.getAccount(), e);
            }
            assertThat(f.views.readKeyValuesToList()).as("nothing is forwarded before the interval has passed").isEmpty();
            assertThat(f.stored("acct-ana/job-1").getFill()).as("the store has every change at once").isEqualTo(0.25);

            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            var out = f.views.readKeyValuesToList();
            assertThat(out).hasSize(1);
            SessionView v = out.get(0).value;
            assertThat(out.get(0).key).isEqualTo("acct-ana/job-1");
            assertThat(v.getFill()).isEqualTo(0.25);
            assertThat(v.getAgentSessionId()).isEqualTo("agent-a");

            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            assertThat(f.views.readKeyValuesToList()).as("an unchanged session is not published again").isEmpty();
        }
    }

    @Test
    void eachChangedSessionOfAnIntervalIsPublished() {
        try (ChainFixture f = new ChainFixture()) {
            for (var e : List.of(claimed("job-1", null, "one", 0), claimed("job-2", null, "two", 0), claimed("job-3", "job-1", "three", 1))) {
                f.events.pipeInput(e.getAccount(), e);
            }
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            var out = f.views.readKeyValuesToList();
            assertThat(out).extracting(kv -> kv.key).containsExactlyInAnyOrder("acct-ana/job-1", "acct-ana/job-2");
            assertThat(out).filteredOn(kv -> kv.key.equals("acct-ana/job-1")).singleElement()
                    .satisfies(kv -> assertThat(kv.value.getRuns()).hasSize(2));
        }
    }

    /** Pipes {@code n} engine events of job-1 (claimed first, once) whose records were appended {@code appendedAgo} ago. */
    private static void backlog(ChainFixture f, int n, java.time.Duration appendedAgo, long used) {
        java.time.Instant appended = java.time.Instant.now().minus(appendedAgo);
        if (f.stored("acct-ana/job-1") == null) {
            var c = claimed("job-1", null, "Rank the results", 0);
            f.events.pipeInput(c.getAccount(), c, appended);
        }
        for (int i = 0; i < n; i++) {
            var e = engine("job-1", "agent-a", used + i, 200_000L, 1);
            f.events.pipeInput(e.getAccount(), e, appended);
        }
    }

    @Test
    void whileWorkingThroughABacklogTheViewsArePublishedWhenTheInputPausesNotEveryTick() {
        try (ChainFixture f = new ChainFixture()) {
            backlog(f, CatchUp.BUSY_RECORDS, java.time.Duration.ofHours(1), 1_000L);
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            assertThat(f.views.readKeyValuesToList()).as("records appended an hour ago still flowing: deferred").isEmpty();
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            var out = f.views.readKeyValuesToList();
            assertThat(out).as("no record since the last tick: published, once, with the newest state").hasSize(1);
            assertThat(out.get(0).value.getContextUsed()).isEqualTo(1_000L + CatchUp.BUSY_RECORDS - 1);
        }
    }

    @Test
    void recordsAppendedJustNowArePublishedEveryTickHoweverMany() {
        try (ChainFixture f = new ChainFixture()) {
            backlog(f, 2 * CatchUp.BUSY_RECORDS, java.time.Duration.ZERO, 1_000L);
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            assertThat(f.views.readKeyValuesToList()).as("not behind the log: no deferral").hasSize(1);
        }
    }

    @Test
    void aSessionChangedAgainBeforeItsPublicationKeepsOneMarkAndIsPublishedWithItsNewestChangesTime() {
        try (ChainFixture f = new ChainFixture()) {
            java.time.Instant first = java.time.Instant.now().minusSeconds(5);
            var c = claimed("job-1", null, "Rank the results", 0);
            f.events.pipeInput(c.getAccount(), c, first);
            org.apache.kafka.streams.state.KeyValueStore<String, Long> pending = f.driver.getKeyValueStore(StoreNames.PENDING_VIEWS);
            assertThat(pending.get("acct-ana/job-1")).isEqualTo(first.toEpochMilli());
            for (int i = 1; i <= 3; i++) {
                var e = engine("job-1", "agent-a", 10_000L * i, 200_000L, i);
                f.events.pipeInput(e.getAccount(), e, first.plusMillis(i));
            }
            assertThat(pending.get("acct-ana/job-1")).as("the store's one mark, written by the first change").isEqualTo(first.toEpochMilli());
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            var out = f.views.readRecordsToList();
            assertThat(out).hasSize(1);
            assertThat(out.get(0).timestamp()).as("the view's time: its newest change's").isEqualTo(first.plusMillis(3).toEpochMilli());
            assertThat(out.get(0).value().getContextUsed()).isEqualTo(30_000L);
            assertThat(pending.get("acct-ana/job-1")).isNull();

            var again = engine("job-1", "agent-a", 40_000L, 200_000L, 4);
            f.events.pipeInput(again.getAccount(), again, first.plusMillis(10));
            assertThat(pending.get("acct-ana/job-1")).as("published, so a change marks it in the store again")
                    .isEqualTo(first.plusMillis(10).toEpochMilli());
        }
    }

    /**
     * A task started again (after a crash or an aborted transaction, its stores restored) finds the marks of its store:
     * a session marked before is published, and a change of it before then does not mark it a second time.
     */
    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void aTaskStartedAgainPublishesTheMarksItsStoreHolds() {
        var context = new org.apache.kafka.streams.processor.api.MockProcessorContext<String, SessionView>();
        for (Projector.StoreSpec spec : Projector.STORES) {
            if (spec.processors().contains(Projector.SESSION_CHAINS)) {
                org.apache.kafka.streams.state.KeyValueStore store = (org.apache.kafka.streams.state.KeyValueStore) org.apache.kafka.streams.state.Stores.keyValueStoreBuilder(
                        org.apache.kafka.streams.state.Stores.inMemoryKeyValueStore(spec.name()),
                        org.apache.kafka.common.serialization.Serdes.String(), (org.apache.kafka.common.serialization.Serde) spec.serde())
                        .withLoggingDisabled().build();
                store.init(context.getStateStoreContext(), store);
                context.addStateStore(store);
            }
        }
        long t0 = java.time.Instant.now().toEpochMilli();
        SessionChainProcessor before = new SessionChainProcessor();
        before.init(context);
        var c = claimed("job-1", null, "Rank the results", 0);
        before.process(new org.apache.kafka.streams.processor.api.Record<>(c.getAccount(), c, t0));
        var pending = (org.apache.kafka.streams.state.KeyValueStore<String, Long>) context.getStateStore(StoreNames.PENDING_VIEWS);
        assertThat(pending.get("acct-ana/job-1")).isEqualTo(t0);

        SessionChainProcessor after = new SessionChainProcessor(); // the task started again over the same stores
        after.init(context);
        var e = engine("job-1", "agent-a", 30_000L, 200_000L, 1);
        after.process(new org.apache.kafka.streams.processor.api.Record<>(e.getAccount(), e, t0 + 5));
        assertThat(pending.get("acct-ana/job-1")).as("marked already: not written again").isEqualTo(t0);
        context.setCurrentSystemTimeMs(t0 + 100);
        context.scheduledPunctuators().get(context.scheduledPunctuators().size() - 1).getPunctuator().punctuate(t0 + 100);
        var out = context.forwarded().stream().filter(f -> f.childName().orElse("").equals(Projector.SESSIONS_VIEW_SINK)).toList();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).record().timestamp()).isEqualTo(t0 + 5);
        assertThat(out.get(0).record().value().getContextUsed()).isEqualTo(30_000L);
        assertThat(pending.get("acct-ana/job-1")).isNull();
    }

    @Test
    void thePendingMarksAreAChangeloggedStoreSoACommittedChangeIsPublishedAfterACrash() {
        var store = Projector.buildTopology().describe().subtopologies().stream()
                .flatMap(s -> s.nodes().stream())
                .filter(n -> n instanceof org.apache.kafka.streams.TopologyDescription.Processor)
                .flatMap(n -> ((org.apache.kafka.streams.TopologyDescription.Processor) n).stores().stream())
                .filter(StoreNames.PENDING_VIEWS::equals).findFirst();
        assertThat(store).isPresent();
        try (ChainFixture f = new ChainFixture()) {
            var e = claimed("job-1", null, "one", 0);
            f.events.pipeInput(e.getAccount(), e);
            org.apache.kafka.streams.state.KeyValueStore<String, Long> pending = f.driver.getKeyValueStore(StoreNames.PENDING_VIEWS);
            assertThat(pending.get("acct-ana/job-1")).as("the change is marked in the store").isNotNull();
            f.driver.advanceWallClockTime(Projector.VIEW_EMIT_INTERVAL);
            assertThat(pending.get("acct-ana/job-1")).as("and unmarked once published").isNull();
            assertThat(f.driver.producedTopicNames()).as("the marks are written to a changelog, restored after a crash")
                    .contains("test-projector-" + StoreNames.PENDING_VIEWS + "-changelog");
        }
    }
}
