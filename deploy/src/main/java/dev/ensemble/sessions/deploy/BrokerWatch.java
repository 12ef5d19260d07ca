package dev.ensemble.sessions.deploy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Watches the embedded broker after {@code up} is ready: once Kafka has tried to end the JVM ({@link LocalKafka#failure()}:
 * a fatal fault, e.g. its log folder's disk full, which makes it shut itself down), every service is stuck without it
 * while the API still answered, so {@code up} is told once ({@link #line}) and stops. Checked every {@code every} on a
 * daemon thread of its own; {@link #close} ends it.
 */
final class BrokerWatch implements AutoCloseable {
    private final Thread thread;

    /**
     * @param failure   the broker's failure, empty while it works
     * @param every     how often it is looked at
     * @param onFailure called once with the failure, on the watch's thread
     */
    BrokerWatch(Supplier<Optional<String>> failure, Duration every, Consumer<String> onFailure) {
        thread = new Thread(() -> {
            try {
                while (true) {
                    Optional<String> failed = failure.get();
                    if (failed.isPresent()) {
                        onFailure.accept(failed.get());
                        return;
                    }
                    Thread.sleep(every.toMillis());
                }
            } catch (InterruptedException e) {
                // closed
            }
        }, "ensemble-broker-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** The line {@code up} prints before it stops: what Kafka said, and where to look. */
    static String line(String failure, Path dataDir) {
        return "error: the embedded Kafka broker stopped working (" + failure + "); is the disk of " + dataDir
                + " full? Stopping everything: start 'up' again once it is fixed (the data stays).";
    }

    @Override
    public void close() {
        thread.interrupt();
    }
}
