package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.schema.Keys;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.streams.StreamsDefaults;
import dev.ensemble.sessions.views.RetirementView;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static dev.ensemble.sessions.cleanup.Views.ACCOUNT;
import static dev.ensemble.sessions.cleanup.Views.T0;
import static dev.ensemble.sessions.cleanup.Views.inUse;
import static dev.ensemble.sessions.cleanup.Views.retired;
import static org.assertj.core.api.Assertions.assertThat;

/** The sweeps through the cleanup service's real topology, the wall clock driven by the test. */
class SweepTopologyTest {
    static final Instant START = T0.plus(Duration.ofDays(30));

    static final class Fixture implements AutoCloseable {
        final TopologyTestDriver driver;
        final TestInputTopic<String, RetirementView> views;
        final TestInputTopic<String, CleanupCommand> commands;
        final TestOutputTopic<String, Event> requests;
        final io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

        Fixture(CleanupConfig config) throws Exception {
            driver = new TopologyTestDriver(CleanupTopology.build(config), dev.ensemble.sessions.streams.ServiceMeters.withRegistry(
                    StreamsDefaults.properties("test-cleanup", "dummy:9092", Files.createTempDirectory("ttd"), 1, Map.of()), meters), START);
            views = driver.createInputTopic(Topics.RETIREMENT_VIEW.name(), Topics.RETIREMENT_VIEW.keySerde().serializer(),
                    Topics.RETIREMENT_VIEW.valueSerde().serializer());
            commands = driver.createInputTopic(Topics.CLEANUP_COMMANDS.name(), Topics.CLEANUP_COMMANDS.keySerde().serializer(),
                    Topics.CLEANUP_COMMANDS.valueSerde().serializer());
            requests = driver.createOutputTopic(Topics.EVENTS.name(), Topics.EVENTS.keySerde().deserializer(),
                    Topics.EVENTS.valueSerde().deserializer());
        }

        void view(RetirementView v) {
            views.pipeInput(Keys.of(v.getAccount(), v.getSessionId()), v);
        }

        List<SessionDeletionRequested> sweep() {
            driver.advanceWallClockTime(Duration.ofMinutes(15));
            return read();
        }

        List<SessionDeletionRequested> read() {
            return requests.readValuesToList().stream().map(e -> (SessionDeletionRequested) e.getPayload()).toList();
        }

        Long dueAt(String sessionId) {
            KeyValueStore<String, Long> s = driver.getKeyValueStore(CleanupTopology.SCHEDULE);
            return s.get(Keys.of(ACCOUNT, sessionId));
        }

        @Override
        public void close() {
            driver.close();
        }
    }

    @Test
    void sixtyOneDueSessionsAreLookedAtSixtyThenOneEarliestDueFirst() throws Exception {
        try (Fixture f = new Fixture(CleanupConfig.defaults())) {
            for (int i = 0; i < 61; i++) {
                f.view(inUse(String.format("s%02d", i), T0.plusSeconds(i)));
            }
            assertThat(f.sweep()).isEmpty();
            Instant firstSweep = START.plus(Duration.ofMinutes(15));
            assertThat(f.dueAt("s00")).as("looked at: six hours later").isEqualTo(firstSweep.plus(Duration.ofHours(6)).toEpochMilli());
            assertThat(f.dueAt("s59")).isEqualTo(firstSweep.plus(Duration.ofHours(6)).toEpochMilli());
            assertThat(f.dueAt("s60")).as("the latest due waits for the next sweep")
                    .isEqualTo(T0.plusSeconds(60).plus(Duration.ofHours(6)).toEpochMilli());
            f.sweep();
            assertThat(f.dueAt("s60")).isEqualTo(firstSweep.plus(Duration.ofMinutes(15)).plus(Duration.ofHours(6)).toEpochMilli());
        }
    }

    @Test
    void twentyOneDeletableSessionsAreAskedForTwentyThenOne() throws Exception {
        try (Fixture f = new Fixture(CleanupConfig.defaults())) {
            for (int i = 0; i < 21; i++) {
                f.view(retired(String.format("s%02d", i), T0.plusSeconds(i)));
            }
            List<SessionDeletionRequested> first = f.sweep();
            assertThat(first).hasSize(20);
            assertThat(first).extracting(SessionDeletionRequested::getSessionId).doesNotContain("s20");
            assertThat(first.get(0).getRequestedBy().name()).isEqualTo("system");
            assertThat(first.get(0).getReason()).isEqualTo("retired");
            assertThat(first.get(0).getRunIds()).containsExactly("s00");
            assertThat(f.sweep()).extracting(SessionDeletionRequested::getSessionId).containsExactly("s20");
            assertThat(f.sweep()).as("nothing is asked for twice within the hour").isEmpty();
            assertThat(f.meters.get(SweepProcessor.REQUESTS).tags("reason", "retired").counter().count())
                    .as("the requests counted for GET /metrics").isEqualTo(21.0);
        }
    }

    @Test
    void aSessionIsLookedAtWhenItsViewSaysAndANewViewReschedulesIt() throws Exception {
        try (Fixture f = new Fixture(CleanupConfig.defaults())) {
            f.view(inUse("s", START));
            assertThat(f.sweep()).isEmpty();
            assertThat(f.dueAt("s")).as("not due yet: not looked at").isEqualTo(START.plus(Duration.ofHours(6)).toEpochMilli());
            RetirementView ready = retired("s", START.plus(Duration.ofMinutes(20)));
            ready.setSequence(2);
            f.view(ready);
            assertThat(f.sweep()).extracting(SessionDeletionRequested::getSessionId).containsExactly("s");
            RetirementView deleted = Views.base("s", START).setSequence(3).setState("DELETED").setDeleted(true).build();
            f.view(deleted);
            assertThat(f.dueAt("s")).isNull();
        }
    }

    @Test
    void anOperatorsCommandSweepsAtOnce() throws Exception {
        try (Fixture f = new Fixture(CleanupConfig.defaults())) {
            f.view(retired("s", T0));
            f.commands.pipeInput(ACCOUNT, CleanupCommand.newBuilder().setCommandId("c1").setAccount(ACCOUNT).setRequestedBy("admin:ana")
                    .setRequestedAt(START).build());
            assertThat(f.read()).extracting(SessionDeletionRequested::getSessionId).containsExactly("s");
            f.view(retired("t", T0));
            f.commands.pipeInput("*", CleanupCommand.newBuilder().setCommandId("c2").setAccount(null).setRequestedBy("admin:ana")
                    .setRequestedAt(START).build());
            assertThat(f.read()).extracting(SessionDeletionRequested::getSessionId).containsExactly("t");
        }
    }

    @Test
    void orchestrationCleanSessionsOffTurnsTheSweepsOff() throws Exception {
        CleanupConfig off = CleanupConfig.from(Map.of(CleanupConfig.CLEAN_SESSIONS, "false"));
        assertThat(off.cleanSessions()).isFalse();
        assertThat(CleanupConfig.defaults().cleanSessions()).as("on by default").isTrue();
        try (Fixture f = new Fixture(off)) {
            f.view(retired("s", T0));
            assertThat(f.sweep()).isEmpty();
            f.commands.pipeInput(ACCOUNT, CleanupCommand.newBuilder().setCommandId("c1").setAccount(ACCOUNT).setRequestedBy("admin:ana")
                    .setRequestedAt(START).build());
            assertThat(f.read()).isEmpty();
        }
    }

    @Test
    void theSweepIntervalIsConfigurable() throws Exception {
        CleanupConfig every5 = CleanupConfig.from(Map.of(CleanupConfig.SWEEP_INTERVAL, "PT5M"));
        try (Fixture f = new Fixture(every5)) {
            f.view(retired("s", T0));
            f.driver.advanceWallClockTime(Duration.ofMinutes(5));
            assertThat(f.read()).hasSize(1);
        }
    }
}
