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
 *
 * <p>A chat's lock is kept only while someone holds it or waits for it: each holder and waiter is counted, inside the
 * map's atomic {@code compute} for the key, and the lock is removed when the count comes back to 0 (after the unlock,
 * or when a wait gives up). Everyone who uses the chat at once shares the same lock, so removing it never lets two
 * threads hold two locks of one chat.
 */
public final class ChatLocks {
    private final ConcurrentHashMap<String, Counted> locks = new ConcurrentHashMap<>();

    /** A chat's lock and how many hold or wait for it; {@code users} changes only inside the map's compute. */
    private static final class Counted {
        final ReentrantLock lock = new ReentrantLock(true);
        int users;
    }

    /** A held lock; {@link #close()} releases it (once). */
    public final class Held implements AutoCloseable {
        private final String key;
        private final Counted counted;
        private boolean closed;

        private Held(String key, Counted counted) {
            this.key = key;
            this.counted = counted;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            counted.lock.unlock();
            release(key);
        }
    }

    /** The chat's lock, counting one more user (made when none holds or waits for it). */
    private Counted use(String key) {
        return locks.compute(key, (k, c) -> {
            Counted out = c == null ? new Counted() : c;
            out.users++;
            return out;
        });
    }

    /** One user less; the lock is removed when none is left. */
    private void release(String key) {
        locks.computeIfPresent(key, (k, c) -> --c.users == 0 ? null : c);
    }

    /** Waits for the chat's lock (a turn). */
    public Held hold(String key) {
        Counted c = use(key);
        try {
            c.lock.lock();
        } catch (RuntimeException | Error e) {
            release(key);
            throw e;
        }
        return new Held(key, c);
    }

    /**
     * Waits at most {@code wait} for the chat's lock; null when a turn of the chat still holds it then.
     *
     * @throws InterruptedException when interrupted while waiting
     */
    public Held tryHold(String key, Duration wait) throws InterruptedException {
        Counted c = use(key);
        boolean got = false;
        try {
            got = c.lock.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS);
        } finally {
            if (!got) {
                release(key);
            }
        }
        return got ? new Held(key, c) : null;
    }

    /** Whether the calling thread holds the chat's lock (a turn's own thread, between its hold and close). */
    public boolean heldByCurrentThread(String key) {
        Counted c = locks.get(key);
        return c != null && c.lock.isHeldByCurrentThread();
    }

    /** Whether a turn (or a drop) of the chat holds its lock now. */
    public boolean held(String key) {
        Counted c = locks.get(key);
        return c != null && c.lock.isLocked();
    }

    /** How many chats' locks are kept now (held or waited for). */
    int size() {
        return locks.size();
    }
}
