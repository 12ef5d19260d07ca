package dev.ensemble.sessions.deploy;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The life of the services one command ({@code up}, {@code run <service>}) runs in this JVM: the parts it started, in
 * {@link #running()}, stop in reverse order however it ends.
 * <ul>
 *   <li>Ctrl-C or SIGTERM once {@link #serveUntilStopped ready}: the command's own thread stops them and it exits 0;</li>
 *   <li>the same while starting: the JVM exits with 128 + the signal's number (130, 143), its shutdown hook stopping
 *       what had started;</li>
 *   <li>any other shutdown (SIGHUP, {@code System.exit}): the hook stops them too;</li>
 *   <li>a failed start: {@link #startFailed} stops them and the command ends with its error.</li>
 * </ul>
 */
final class ServiceLifetime {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceLifetime.class);

    private final List<AutoCloseable> running = new ArrayList<>();
    private final CountDownLatch stopAsked = new CountDownLatch(1);
    private final AtomicBoolean ready = new AtomicBoolean();
    private final Thread hook;
    private final String stoppingLine;
    private final String stoppedLine;

    /**
     * Installs the signal handlers and the shutdown hook.
     *
     * @param stoppingLine printed when the services start to stop, however they are stopped
     * @param stoppedLine  printed once they have stopped (null: nothing)
     */
    ServiceLifetime(String stoppingLine, String stoppedLine) {
        this.stoppingLine = stoppingLine;
        this.stoppedLine = stoppedLine;
        StopSignals.install((name, number) -> {
            if (ready.get()) {
                stopAsked.countDown();
            } else {
                new Thread(() -> System.exit(128 + number), "ensemble-stop-while-starting").start();
            }
        });
        hook = new Thread(this::stop, "ensemble-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** The started parts, in the order they started: add each as soon as it has started. */
    List<AutoCloseable> running() {
        return running;
    }

    /** After a failed start: stops what had started (no hook left to do it again). */
    void startFailed() {
        Runtime.getRuntime().removeShutdownHook(hook);
        closeAll();
    }

    /**
     * Marks the services ready, waits for Ctrl-C or SIGTERM, then stops them on this thread.
     *
     * @return 0, the command's exit code
     */
    int serveUntilStopped() throws InterruptedException {
        ready.set(true);
        stopAsked.await();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            return 0; // the JVM is shutting down already: the hook stops everything
        }
        stop();
        return 0;
    }

    /** Prints the stopping line, closes the started parts newest first (one that fails is logged), prints the stopped line. */
    private void stop() {
        System.out.println(stoppingLine);
        closeAll();
        if (stoppedLine != null) {
            System.out.println(stoppedLine);
        }
    }

    private void closeAll() {
        for (int i = running.size() - 1; i >= 0; i--) {
            AutoCloseable c = running.get(i);
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("stopping {} failed: {}", c.getClass().getSimpleName(), e.toString());
            }
        }
        running.clear();
    }
}
