package dev.ensemble.sessions.agent.assistant;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per chat on this computer (guide §5 "Turns of one chat run one at a time"; §6 a chat's session is dropped
 * "after any turn of that chat still running there has ended"). A turn holds its chat's lock from before it decides
 * its session until its entry is stored; a drop takes the same lock, so it never runs during a turn of that chat and
 * the next turn never sees a half-dropped chat. Locks are fair: whoever waited first goes first.
 */
public final class ChatLocks {
    private final ConcurrentHashMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();

    /** A held lock; {@link #close()} releases it. */
    public final class Held implements AutoCloseable {
        private final ReentrantLock lock;

        private Held(ReentrantLock lock) {
            this.lock = lock;
        }

        @Override
        public void close() {
            lock.unlock();
        }
    }

    private ReentrantLock of(String key) {
        return locks.computeIfAbsent(key, k -> new ReentrantLock(true));
    }

    /** Waits for the chat's lock (a turn). */
    public Held hold(String key) {
        ReentrantLock l = of(key);
        l.lock();
        return new Held(l);
    }

    /**
     * Waits at most {@code wait} for the chat's lock; null when a turn of the chat still holds it then.
     *
     * @throws InterruptedException when interrupted while waiting
     */
    public Held tryHold(String key, Duration wait) throws InterruptedException {
        ReentrantLock l = of(key);
        return l.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS) ? new Held(l) : null;
    }

    /** Whether the calling thread holds the chat's lock (a turn's own thread, between its hold and close). */
    public boolean heldByCurrentThread(String key) {
        ReentrantLock l = locks.get(key);
        return l != null && l.isHeldByCurrentThread();
    }

    /** Whether a turn (or a drop) of the chat holds its lock now. */
    public boolean held(String key) {
        ReentrantLock l = locks.get(key);
        return l != null && l.isLocked();
    }
}
