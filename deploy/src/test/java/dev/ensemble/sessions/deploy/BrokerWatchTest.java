package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link BrokerWatch}: a broker that failed is told once, with the line {@code up} prints before it stops. */
class BrokerWatchTest {
    @Test
    void aFailureIsToldOnceAndAWorkingBrokerNever() throws Exception {
        AtomicInteger looks = new AtomicInteger();
        List<String> told = new CopyOnWriteArrayList<>();
        try (BrokerWatch watch = new BrokerWatch(() -> looks.incrementAndGet() < 3 ? Optional.empty()
                : Optional.of("Kafka tried to halt the JVM with status 1"), Duration.ofMillis(10), told::add)) {
            long until = System.currentTimeMillis() + 10_000;
            while (told.isEmpty() && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
            Thread.sleep(100);
            assertThat(told).containsExactly("Kafka tried to halt the JVM with status 1");
            assertThat(looks.get()).as("no look after the failure").isEqualTo(3);
        }

        List<String> none = new CopyOnWriteArrayList<>();
        try (BrokerWatch watch = new BrokerWatch(Optional::empty, Duration.ofMillis(10), none::add)) {
            Thread.sleep(100);
        }
        assertThat(none).isEmpty();

        assertThat(BrokerWatch.line("Kafka tried to halt the JVM with status 1", Path.of("/home/ana/.ensemble-sessions")))
                .isEqualTo("error: the embedded Kafka broker stopped working (Kafka tried to halt the JVM with status 1); is the disk"
                        + " of /home/ana/.ensemble-sessions full? Stopping everything: start 'up' again once it is fixed (the data stays).");
    }
}
