package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.ImportSummary.Skip;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The importer's meters: files read and skipped, transcripts, events, failures and lag (docs/operations.md "Metrics"). */
class ImportMetricsTest {
    /** A clock the test moves. */
    static final class Moving extends Clock {
        Instant now = Instant.parse("2026-11-02T09:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    static ImportSummary summary(int claudeRead, int claudeTranscripts, int events) {
        return new ImportSummary(1, 2, 3, events, claudeRead, List.of(
                new Skip(Path.of("a.jsonl"), "unchanged"),
                new Skip(Path.of("b.jsonl"), "not a transcript"),
                new Skip(Path.of("c.jsonl"), "malformed line 3: Unexpected end-of-input")), 0, 0, List.of(
                new ImportSummary.Store("claude-code", Path.of("/c"), true, claudeTranscripts, claudeRead, 1, 2, 0, null),
                new ImportSummary.Store("codex", Path.of("/x"), true, 4, 0, 0, 0, 0, null)));
    }

    @Test
    void eachImportAddsItsFilesAndEventsAndTheLagGrowsUntilTheNextGoodImport() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        Moving clock = new Moving();
        ImportMetrics m = new ImportMetrics(r, clock);
        assertThat(r.get(ImportMetrics.LAG).gauge().value()).as("before the first import").isNaN();

        Instant first = clock.now;
        clock.now = first.plusSeconds(2);
        m.imported(first, summary(3, 6, 40));
        clock.now = first.plusSeconds(5);
        m.imported(first.plusSeconds(4), summary(1, 7, 5));
        assertThat(r.get(ImportMetrics.FILES_READ).tags("agent", "claude-code").counter().count()).isEqualTo(4.0);
        assertThat(r.get(ImportMetrics.FILES_READ).tags("agent", "codex").counter().count()).isZero();
        assertThat(r.get(ImportMetrics.TRANSCRIPTS).tags("agent", "claude-code").gauge().value()).as("the newest import's").isEqualTo(7.0);
        assertThat(r.get(ImportMetrics.FILES_SKIPPED).tags("kind", "not a transcript").gauge().value())
                .as("the newest import's, not a sum over polls").isEqualTo(1.0);
        assertThat(r.find(ImportMetrics.FILES_SKIPPED).tags("kind", "unchanged").gauge()).as("unchanged is not a skip").isNull();
        assertThat(r.get(ImportMetrics.LINES_SKIPPED).counter().count()).isEqualTo(2.0);
        assertThat(r.get(ImportMetrics.EVENTS).counter().count()).isEqualTo(45.0);
        assertThat(r.get(ImportMetrics.LAG).gauge().value()).as("since the newest good import started").isEqualTo(1.0);

        m.failed();
        clock.now = clock.now.plus(Duration.ofMinutes(1));
        assertThat(r.get(ImportMetrics.FAILURES).counter().count()).isEqualTo(1.0);
        assertThat(r.get(ImportMetrics.LAG).gauge().value()).as("a failed import does not reset it").isEqualTo(61.0);

        m.imported(clock.now, new ImportSummary(0, 0, 0, 0, 0, List.of()));
        assertThat(r.get(ImportMetrics.FILES_SKIPPED).tags("kind", "not a transcript").gauge().value())
                .as("none left out by the newest import").isZero();
    }

    @Test
    void anImportOfTheFilesAWatchSawChangeCountsButLeavesTheGaugesOfTheLastWholeImport() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        Moving clock = new Moving();
        ImportMetrics m = new ImportMetrics(r, clock);
        Instant whole = clock.now;
        m.imported(whole, summary(3, 6, 40));

        clock.now = whole.plusSeconds(10);
        ImportSummary changed = new ImportSummary(1, 1, 0, 2, 1, List.of(), 0, 0, List.of(
                new ImportSummary.Store("claude-code", Path.of("/c"), true, 1, 1, 1, 1, 0, null)));
        m.imported(clock.now, changed, false);

        assertThat(r.get(ImportMetrics.FILES_READ).tags("agent", "claude-code").counter().count()).isEqualTo(4.0);
        assertThat(r.get(ImportMetrics.EVENTS).counter().count()).isEqualTo(42.0);
        assertThat(r.get(ImportMetrics.TRANSCRIPTS).tags("agent", "claude-code").gauge().value())
                .as("the whole import's, not the one file looked at").isEqualTo(6.0);
        assertThat(r.get(ImportMetrics.FILES_SKIPPED).tags("kind", "not a transcript").gauge().value()).isEqualTo(1.0);
        assertThat(r.get(ImportMetrics.LAG).gauge().value()).as("since the whole import").isEqualTo(10.0);
    }
}
