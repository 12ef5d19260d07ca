package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ensemble.sessions.projector.ChainFixture.claimed;
import static dev.ensemble.sessions.projector.ChainFixture.done;
import static dev.ensemble.sessions.projector.ChainFixture.engine;
import static dev.ensemble.sessions.projector.ChainFixture.status;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What each event writes, through the projector's real topology: a status report writes its run's record
 * ({@link RunProgress}) and its session's fill, never the session's stored {@link SessionView}; the published view is
 * assembled from the three ({@link SessionAssembly}). And a data folder written before runs had a progress of their own
 * (run records without one, fills without run counts) keeps working: its runs' status comes from the stored view.
 */
class RunStateShapeTest {
    private static final AvroSerde<SessionView> VIEWS = AvroSerde.of(SessionView.class);
    private static final String KEY = "acct-ana/job-1";

    @Test
    void aStatusReportWritesTheRunsRecordAndTheFillNotTheStoredView() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "t", 0), engine("job-1", "s1", 10L, 100L, 0));
            KeyValueStore<String, SessionView> views = f.driver.getKeyValueStore(StoreNames.SESSION_CHAINS);
            KeyValueStore<String, SessionFill> fills = f.driver.getKeyValueStore(StoreNames.SESSION_FILLS);
            KeyValueStore<String, RunRecord> runs = f.driver.getKeyValueStore(StoreNames.RUNS);
            byte[] storedBefore = VIEWS.encode(views.get(KEY));
            SessionFill fillBefore = fills.get(KEY);
            assertThat(runs.get(KEY).progress().status()).isEqualTo("WORKING");

            f.given(status("job-1", RunStatus.WAITING, 1), done("job-1", "all green", List.of("a.ts", "b.ts"), 2));

            assertThat(VIEWS.encode(views.get(KEY))).as("the stored view's bytes").isEqualTo(storedBefore);
            RunProgress p = runs.get(KEY).progress();
            assertThat(p.status()).isEqualTo("DONE");
            assertThat(p.endedAt()).isEqualTo(ChainFixture.at(2));
            assertThat(p.reportSummary()).isEqualTo("all green");
            assertThat(p.filesChanged()).containsExactly("a.ts", "b.ts");
            SessionFill fillAfter = fills.get(KEY);
            assertThat(fillAfter.changes()).isEqualTo(fillBefore.changes() + 2);
            assertThat(fillAfter.working() + fillAfter.waiting() + fillAfter.queued()).isZero();
            assertThat(fillAfter.lastActiveAt()).isEqualTo(ChainFixture.at(2));

            SessionView published = f.session("job-1");
            assertThat(published.getStatus()).isEqualTo(SessionStatus.IDLE);
            assertThat(published.getRuns().get(0).getStatus()).isEqualTo("DONE");
            assertThat(published.getLatestReportSummary()).isEqualTo("all green");
            assertThat(published.getFilesChanged()).containsExactly("a.ts", "b.ts");
            assertThat(published.getTasks().get(0).getReport()).isEqualTo("all green");
            assertThat(published.getSequence()).isEqualTo(views.get(KEY).getSequence() + fillAfter.changes());
            assertThat(f.stored(KEY).toString()).isEqualTo(published.toString());
        }
    }

    @Test
    void filesChangedFollowTheChainsOrderNotTheReportsArrival() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "t", 0), claimed("job-2", "job-1", "t2", 1),
                    done("job-2", "second", List.of("b.ts"), 3), done("job-1", "first", List.of("a.ts"), 2));
            SessionView s = f.session("job-1");
            assertThat(s.getFilesChanged()).containsExactly("a.ts", "b.ts");
            assertThat(s.getLatestReportSummary()).isEqualTo("second");
        }
    }

    @Test
    void aNewerEndReportWithoutSummaryLeavesNoReportOfThatRun() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "t", 0), done("job-1", "ok", List.of(), 1),
                    ChainFixture.event(dev.ensemble.sessions.events.RunStatusChanged.newBuilder().setRunId("job-1")
                            .setStatus(RunStatus.FAILED).build(), ChainFixture.at(2)));
            SessionView s = f.session("job-1");
            assertThat(s.getRuns().get(0).getStatus()).isEqualTo("FAILED");
            assertThat(s.getRuns().get(0).getReportSummary()).isNull();
            assertThat(s.getTasks().get(0).getReport()).as("no run's end holds a summary").isNull();
        }
    }

    @Test
    void aDataFolderFromBeforeRunsHadAProgressKeepsItsRunsStatus() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "t", 0), status("job-1", RunStatus.WAITING, 1));
            KeyValueStore<String, SessionView> views = f.driver.getKeyValueStore(StoreNames.SESSION_CHAINS);
            KeyValueStore<String, SessionFill> fills = f.driver.getKeyValueStore(StoreNames.SESSION_FILLS);
            KeyValueStore<String, RunRecord> runs = f.driver.getKeyValueStore(StoreNames.RUNS);
            // as the code before left it: the run's status in the stored view, no progress in its record, a fill
            // without run counts
            SessionView stored = views.get(KEY);
            stored.getRuns().get(0).setStatus("WAITING");
            stored.getRuns().get(0).setReportSummary(null);
            views.put(KEY, stored);
            RunRecord r = runs.get(KEY);
            r.setProgress(null);
            runs.put(KEY, r);
            SessionFill old = fills.get(KEY);
            fills.put(KEY, new SessionFill(old.agentSessionId(), old.agentSessionAt(), old.contextUsed(), old.contextSize(), old.model(),
                    old.lastActiveAt(), old.changes(), SessionFill.NOT_COUNTED, SessionFill.NOT_COUNTED, SessionFill.NOT_COUNTED));
            assertThat(f.stored(KEY).getStatus()).isEqualTo(SessionStatus.WAITING);

            f.given(claimed("job-2", "job-1", "t2", 2));
            assertThat(f.session("job-1").getRuns().get(1).getStatus()).as("the waiting run from before is counted").isEqualTo("QUEUED");
            f.given(done("job-1", "ok", List.of("a.ts"), 3));
            SessionView s = f.session("job-1");
            assertThat(s.getRuns().get(0).getStatus()).isEqualTo("DONE");
            assertThat(s.getStatus()).isEqualTo(SessionStatus.QUEUED);
            assertThat(s.getFilesChanged()).containsExactly("a.ts");
            assertThat(fills.get(KEY).queued()).isEqualTo(1);
        }
    }
}
