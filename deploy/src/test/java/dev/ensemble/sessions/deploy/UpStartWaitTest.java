package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.gateway.Gateway;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How {@code up} waits for its services ({@link UpCommand#awaitServices}): as long as they are starting, saying what it
 * waits for; at once out when one fails. The states are scripted here; the real restart after {@code kill -9} is
 * {@link SoakTest}'s.
 */
class UpStartWaitTest {
    private static final Gateway.StartState STARTING = new Gateway.StartState("starting", KafkaStreams.State.REBALANCING, false);
    private static final Gateway.StartState READY = new Gateway.StartState("ready", KafkaStreams.State.RUNNING, true);

    @Test
    void aSlowStartIsWaitedForAndSaysWhatItWaitsForUntilEveryServiceIsReady() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        AtomicInteger looks = new AtomicInteger();
        // the gateway is ready only at the 8th look (about 0.7 s), far beyond the 0.2 s between notes
        UpCommand.awaitServices(() -> looks.incrementAndGet() < 8 ? STARTING : READY, () -> KafkaStreams.State.RUNNING,
                Duration.ofSeconds(30), Duration.ofMillis(200), new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(looks.get()).isEqualTo(8);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("still starting after ")
                .contains("waiting for the gateway's read side (Kafka Streams REBALANCING, the event log being read)")
                .doesNotContain("choice service");
    }

    @Test
    void readyServicesAreNotWaitedForNorNoted() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        UpCommand.awaitServices(() -> READY, () -> KafkaStreams.State.RUNNING, Duration.ofSeconds(30), Duration.ZERO,
                new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(out.size()).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aServiceThatFailsWhileStartingEndsTheWaitAtOnceNamingIt() {
        assertThatThrownBy(() -> UpCommand.awaitServices(() -> STARTING, () -> KafkaStreams.State.ERROR, Duration.ofMinutes(10),
                Duration.ofMinutes(1), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("stopped while starting")
                .hasMessageContaining("the choice service (Kafka Streams ERROR)");
        assertThatThrownBy(() -> UpCommand.awaitServices(() -> new Gateway.StartState("unavailable", KafkaStreams.State.NOT_RUNNING, true),
                () -> KafkaStreams.State.RUNNING, Duration.ofMinutes(10), Duration.ofMinutes(1),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .hasMessage("stopped while starting: the gateway's read side (Kafka Streams NOT_RUNNING)");
    }

    @Test
    void aStartThatNeverEndsGivesUpAfterItsTimeNamingWhatItWaitedFor() {
        assertThatThrownBy(() -> UpCommand.awaitServices(() -> READY, () -> KafkaStreams.State.REBALANCING, Duration.ofSeconds(1),
                Duration.ofMinutes(1), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .hasMessage("not ready within 1 s: waiting for the choice service (Kafka Streams REBALANCING)");
    }
}
