package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.assistant.TurnRules;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 *
 * <p>Across processes ({@link #ChatLocks(Path)}): the computer agent and an agent launcher's {@code assistant-turn}
 * command are two processes on one state folder, so the holder also takes an OS file lock on
 * {@code <state>/assistant-locks/<chat folder name>.lock} ({@link FileChannel#tryLock}), once, when it first takes the
 * chat's lock on its thread, and releases it with its last {@link Held#close()}. A process that dies releases it. The
 * lock files are left in place (empty; taking a lock on a file someone might be deleting would race).
 */
public final class ChatLocks {
    /** The folder of the chats' lock files in the state folder. */
    public static final String LOCK_FOLDER = "assistant-locks";
    private final ConcurrentHashMap<String, Counted> locks = new ConcurrentHashMap<>();
    /** The folder of the chats' OS lock files, or null: locks in this process only. */
    private final Path lockFolder;

    /** Locks within this process only. */
    public ChatLocks() {
        this.lockFolder = null;
    }

    /** Locks shared with the other processes of the state folder {@code stateDir}: see the class comment. */
    public ChatLocks(Path stateDir) {
        this.lockFolder = stateDir.toAbsolutePath().normalize().resolve(LOCK_FOLDER);
    }

    /** A chat's lock and how many hold or wait for it; {@code users} changes only inside the map's compute. */
    private static final class Counted {
        final ReentrantLock lock = new ReentrantLock(true);
        int users;
    }

    /** A held lock; {@link #close()} releases it (once). */
    public final class Held implements AutoCloseable {
        private final String key;
        private final Counted counted;
        private final FileChannel file;
        private boolean closed;

        private Held(String key, Counted counted, FileChannel file) {
            this.key = key;
            this.counted = counted;
            this.file = file;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            if (file != null) {
                try {
                    file.close(); // releases the OS lock
                } catch (IOException ignored) {
                    // closing the channel releases the lock whatever it reports
                }
            }
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

    /**
     * Waits for the chat's lock (a turn), and the other processes' (its lock file) when shared.
     *
     * @throws UncheckedIOException when the lock file cannot be made or locked
     */
    public Held hold(String key) {
        Counted c = use(key);
        try {
            c.lock.lock();
        } catch (RuntimeException | Error e) {
            release(key);
            throw e;
        }
        try {
            return new Held(key, c, fileLock(key, c, 0, true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.lock.unlock();
            release(key);
            throw new IllegalStateException("interrupted while waiting for chat " + key + "'s lock file", e);
        } catch (RuntimeException | Error e) {
            c.lock.unlock();
            release(key);
            throw e;
        }
    }

    /**
     * The OS lock on the chat's lock file, taken when the thread's hold of the in-process lock is its first (an inner
     * hold shares the outer one's); null when not shared or an inner hold. Waits until {@code deadline} (nano time), or
     * for ever;
     * null then too, with {@code c}'s lock to be released by the caller, when it could not be had.
     */
    private FileChannel fileLock(String key, Counted c, long deadline, boolean forever) throws InterruptedException {
        if (lockFolder == null || c.lock.getHoldCount() > 1) {
            return null;
        }
        Path f = lockFolder.resolve(TurnRules.chatFolderName(key) + ".lock");
        FileChannel ch;
        try {
            Files.createDirectories(lockFolder);
            ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open chat " + key + "'s lock file " + f, e);
        }
        try {
            while (true) {
                FileLock l;
                try {
                    l = ch.tryLock();
                } catch (OverlappingFileLockException sameProcess) {
                    l = null; // another ChatLocks of this process holds it
                }
                if (l != null) {
                    return ch;
                }
                if (!forever && System.nanoTime() - deadline >= 0) {
                    ch.close();
                    return null;
                }
                Thread.sleep(20);
            }
        } catch (IOException e) {
            closeQuietly(ch);
            throw new UncheckedIOException("cannot lock chat " + key + "'s lock file " + f, e);
        } catch (InterruptedException | RuntimeException | Error e) {
            closeQuietly(ch);
            throw e;
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // it releases what it held whatever it reports
        }
    }

    /**
     * Waits at most {@code wait} for the chat's lock; null when a turn of the chat still holds it then.
     *
     * @throws InterruptedException when interrupted while waiting
     */
    public Held tryHold(String key, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        Counted c = use(key);
        boolean got = false;
        try {
            got = c.lock.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS);
        } finally {
            if (!got) {
                release(key);
            }
        }
        if (!got) {
            return null;
        }
        FileChannel file;
        try {
            file = fileLock(key, c, deadline, false);
        } catch (InterruptedException | RuntimeException | Error e) {
            c.lock.unlock();
            release(key);
            throw e;
        }
        if (file == null && lockFolder != null && c.lock.getHoldCount() == 1) {
            c.lock.unlock(); // another process's turn holds the chat
            release(key);
            return null;
        }
        return new Held(key, c, file);
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
