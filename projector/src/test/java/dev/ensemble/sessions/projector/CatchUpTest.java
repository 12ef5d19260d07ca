package dev.ensemble.sessions.projector;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The publication pacing of {@link CatchUp}, tick by tick (times in ms). */
class CatchUpTest {
    private static final long NOW = 1_800_000_000_000L;
    private static final long OLD = NOW - 3_600_000L;

    private static void process(CatchUp c, int n, long timestamp) {
        for (int i = 0; i < n; i++) {
            c.processed(timestamp);
        }
    }

    @Test
    void dueAtEveryTickUnlessBusyBehindAndStillFlowing() {
        CatchUp c = new CatchUp();
        assertThat(c.due(NOW)).as("nothing processed").isTrue();
        process(c, CatchUp.BUSY_RECORDS - 1, OLD);
        assertThat(c.due(NOW + 100)).as("fewer than BUSY_RECORDS since the last publication").isTrue();
        process(c, CatchUp.BUSY_RECORDS, OLD);
        assertThat(c.due(NOW + 200)).as("busy, behind, flowing: deferred").isFalse();
        assertThat(c.due(NOW + 300)).as("no record since the last tick: the input paused").isTrue();
        process(c, CatchUp.BUSY_RECORDS, NOW + 400 - CatchUp.BEHIND.toMillis() + 1);
        assertThat(c.due(NOW + 400)).as("the newest record is recent: not behind").isTrue();
    }

    @Test
    void aPublicationCutShortByItsBudgetGoesOnAtTheNextTicksEvenWhileBehind() {
        var marks = PendingMarksTest.marks(3);
        CatchUp c = new CatchUp(java.time.Duration.ZERO); // one mark per tick
        java.util.List<String> published = new java.util.ArrayList<>();
        c.publish(NOW, marks, (k, v) -> published.add(k));
        assertThat(published).containsExactly("k000");
        process(c, CatchUp.BUSY_RECORDS, OLD); // behind and flowing: a new publication would be deferred
        c.publish(NOW + 100, marks, (k, v) -> published.add(k));
        c.publish(NOW + 200, marks, (k, v) -> published.add(k));
        assertThat(published).as("the publication under way is not deferred").containsExactly("k000", "k001", "k002");
        marks.put("k003", 3L);
        process(c, CatchUp.BUSY_RECORDS, OLD);
        c.publish(NOW + 300, marks, (k, v) -> published.add(k));
        assertThat(published).as("once done, a new one is paced again").hasSize(3);
    }

    @Test
    void deferredAtMostHalfOfTheLag() {
        CatchUp c = new CatchUp();
        assertThat(c.due(NOW)).isTrue();
        long t = NOW;
        for (int tick = 1; tick <= 100; tick++) {
            t += 100;
            process(c, CatchUp.BUSY_RECORDS, t - 4_000); // appended 4 s before each tick
            if (c.due(t)) {
                assertThat(t - NOW).as("published after half of the 4 s lag").isEqualTo(2_000);
                return;
            }
        }
        throw new AssertionError("never published");
    }

    @Test
    void neverDeferredLongerThanMaxDefer() {
        CatchUp c = new CatchUp();
        assertThat(c.due(NOW)).isTrue();
        long t = NOW;
        int due = 0;
        long ticks = 2 * CatchUp.MAX_DEFER.toMillis() / 100;
        for (int tick = 0; tick < ticks; tick++) {
            t += 100;
            process(c, CatchUp.BUSY_RECORDS, OLD);
            if (c.due(t)) {
                due++;
                assertThat(t - NOW).as("first publication after MAX_DEFER").isGreaterThanOrEqualTo(CatchUp.MAX_DEFER.toMillis());
            }
        }
        assertThat(due).isEqualTo(2);
    }
}
