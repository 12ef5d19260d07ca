package dev.ensemble.sessions.deploy;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The life of the services one command ({@code up}, {@code run <service>}) runs in this JVM: the parts it started
 * ({@link #started}) stop in reverse order however it ends.
 * <ul>
 *   <li>Ctrl-C or SIGTERM once {@link #serveUntilStopped ready}: the command's own thread stops them and it exits 0;</li>
 *   <li>the same while starting: the starting thread is interrupted and stops at its next step ({@link #started}), the
 *       parts it started stop newest first, so no service outlives the broker it uses, and the command ends with 128 +
 *       the signal's number (130, 143: {@link #stoppedWhileStarting}); a start that does not come to a step within
 *       {@link #STOP_WHILE_STARTING_WAIT}, or a second signal, ends the JVM (its hook stopping what had started, or
 *       waiting for the stop under way);</li>
 *   <li>any other shutdown (SIGHUP, {@code System.exit}): the hook stops them too;</li>
 *   <li>a failed start: {@link #startFailed} stops them and the command ends with its error.</li>
 * </ul>
 */
final class ServiceLifetime {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceLifetime.class);

    /** How long a signal while starting waits for the start to stop at a step before the JVM ends anyway. */
    static final java.time.Duration STOP_WHILE_STARTING_WAIT = java.time.Duration.ofSeconds(30);

    /** Thrown on the starting thread by {@link #started} once a stop was asked while it was starting. */
    static final class StopWhileStarting extends RuntimeException {
        StopWhileStarting() {
            super("stopped while starting", null, false, false);
        }
    }

    private final List<AutoCloseable> running = new ArrayList<>(); // guarded by this
    private final CountDownLatch stopAsked = new CountDownLatch(1);
    /** Set by the first {@link #stop}: the lines are printed once. */
    private final AtomicBoolean stopping = new AtomicBoolean();
    /** The command's exit code once stopped: 0, or {@link #stopBecause}'s. */
    private volatile int exitCode;
    private final AtomicBoolean ready = new AtomicBoolean();
    /** The exit code once a stop was asked while starting (128 + a signal's number, or {@link #stopBecause}'s), else 0. */
    private final java.util.concurrent.atomic.AtomicInteger stopWhileStarting = new java.util.concurrent.atomic.AtomicInteger();
    private final Thread starting = Thread.currentThread();
    /** The JVM's end if the start does not stop in time after a signal ({@link #STOP_WHILE_STARTING_WAIT}), or null. */
    private volatile Thread exitIfStuck;
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
            } else if (stopWhileStarting.compareAndSet(0, 128 + number)) {
                Thread exit = new Thread(() -> {
                    try {
                        Thread.sleep(STOP_WHILE_STARTING_WAIT.toMillis());
                    } catch (InterruptedException e) {
                        return;
                    }
                    System.exit(128 + number); // the start did not come to a step: the hook stops what started
                }, "ensemble-stop-while-starting");
                exit.setDaemon(true);
                exitIfStuck = exit; // before the interrupt: the stop that follows it cancels this
                exit.start();
                starting.interrupt(); // a wait of the start ends; its next step throws StopWhileStarting
            } else {
                new Thread(() -> System.exit(128 + number), "ensemble-stop-now").start(); // a second signal
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "ensemble-shutdown"));
    }

    /**
     * Records a part as started (call it as soon as the part runs, or just before it starts), in the order of starting;
     * a step of the start.
     *
     * @return {@code part}
     * @throws StopWhileStarting when a signal asked to stop while starting (the part is recorded, so it stops too)
     */
    synchronized <T extends AutoCloseable> T started(T part) {
        running.add(part);
        if (stopWhileStarting.get() != 0) {
            throw new StopWhileStarting();
        }
        return part;
    }

    /**
     * Stops the services because a part they all need failed (the embedded broker): prints {@code line}; once ready,
     * makes {@link #serveUntilStopped} stop them and return {@code exitCode}; while starting, stops the start at its
     * next step as a signal does, and the command ends with {@code exitCode} ({@link #stoppedWhileStarting}). The first
     * such call counts.
     */
    synchronized void stopBecause(String line, int exitCode) {
        if (this.exitCode != 0 || stopAsked.getCount() == 0 || stopWhileStarting.get() != 0) {
            return;
        }
        System.out.println(line);
        this.exitCode = exitCode;
        if (ready.get()) {
            stopAsked.countDown();
        } else if (stopWhileStarting.compareAndSet(0, exitCode)) {
            starting.interrupt();
        }
    }

    /** Whether a signal asked to stop while starting: the start's failure is that stop, not an error. */
    boolean stoppingWhileStarting() {
        return stopWhileStarting.get() != 0;
    }

    /**
     * After a signal (or {@link #stopBecause}) while starting ended the start: prints the stopping line, stops what had
     * started newest first and clears the thread's interrupt.
     *
     * @return the command's exit code, 128 + the signal's number (or {@link #stopBecause}'s)
     */
    int stoppedWhileStarting() {
        Thread.interrupted();
        Thread exit = exitIfStuck;
        if (exit != null) {
            exit.interrupt(); // the start did stop: its parts stop here, however long that takes
        }
        stop();
        return stopWhileStarting.get();
    }

    /** After a failed start: stops what had started, without the stopping lines (the command ends with its error). */
    void startFailed() {
        stopping.set(true);
        closeAll();
    }

    /**
     * Marks the services ready, waits for Ctrl-C or SIGTERM (or {@link #stopBecause}), then stops them on this thread.
     *
     * @return the command's exit code: 0, or {@link #stopBecause}'s
     */
    int serveUntilStopped() throws InterruptedException {
        ready.set(true);
        try {
            if (!stoppingWhileStarting()) { // a signal just before ready counts as one while starting
                stopAsked.await();
            }
        } catch (InterruptedException e) {
            if (!stoppingWhileStarting()) {
                throw e;
            }
        }
        if (stoppingWhileStarting()) {
            return stoppedWhileStarting();
        }
        stop();
        return exitCode;
    }

    /**
     * Prints the stopping line, closes the started parts newest first (one that fails is logged), prints the stopped line.
     * Called by the command's thread and by the shutdown hook, which stays installed: a second caller (the hook at the
     * JVM's exit, or after a second signal) waits for the first one's close and finds nothing left.
     */
    private void stop() {
        boolean first = stopping.compareAndSet(false, true);
        if (first) {
            System.out.println(stoppingLine);
        }
        closeAll();
        if (first && stoppedLine != null) {
            System.out.println(stoppedLine);
        }
    }

    private synchronized void closeAll() {
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
