package dev.ensemble.sessions.agent.assistant;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** A chat's lock is kept only while someone holds or waits for it, and one chat never has two locks at once. */
class ChatLocksTest {
    @Test
    void aChatsLockIsRemovedOnceNoOneHoldsOrWaitsForIt() throws Exception {
        ChatLocks locks = new ChatLocks();
        for (int i = 0; i < 1000; i++) {
            try (ChatLocks.Held h = locks.hold("chat-" + i)) {
                assertThat(locks.held("chat-" + i)).isTrue();
            }
        }
        assertThat(locks.size()).as("a thousand chats, each used once").isZero();

        try (ChatLocks.Held outer = locks.hold("c"); ChatLocks.Held inner = locks.hold("c")) {
            assertThat(locks.heldByCurrentThread("c")).isTrue();
        }
        assertThat(locks.size()).as("held twice by one thread, released twice").isZero();

        ExecutorService other = Executors.newSingleThreadExecutor();
        try (ChatLocks.Held h = locks.hold("busy")) {
            Future<ChatLocks.Held> waited = other.submit(() -> locks.tryHold("busy", Duration.ofMillis(50)));
            assertThat(waited.get(10, TimeUnit.SECONDS)).as("gave up").isNull();
            assertThat(locks.size()).as("the holder's lock stays").isEqualTo(1);
        } finally {
            other.shutdownNow();
        }
        assertThat(locks.size()).isZero();
        assertThat(locks.held("busy")).isFalse();
    }

    @Test
    void manyThreadsOnFewChatsNeverHoldOneChatTwiceAndLeaveNoLock() throws Exception {
        ChatLocks locks = new ChatLocks();
        AtomicInteger[] inside = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        try {
            for (int t = 0; t < 8; t++) {
                pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 2000; i++) {
                        int chat = i % 3;
                        try (ChatLocks.Held h = locks.hold("chat-" + chat)) {
                            if (inside[chat].incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            inside[chat].decrementAndGet();
                        }
                    }
                    return null;
                });
            }
            start.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps).hasValue(0);
        assertThat(locks.size()).isZero();
    }
}
