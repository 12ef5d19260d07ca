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
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path tmp;

    @Test
    void aTurnInAnotherProcessHoldsTheChatUntilItEnds() throws Exception {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process other = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), HoldChatLock.class.getName(),
                tmp.toString(), "chat-1").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(other.getInputStream()));
            assertThat(out.readLine()).as("the other process holds chat-1").isEqualTo("held");
            ChatLocks locks = new ChatLocks(tmp);
            assertThat(locks.tryHold("chat-1", Duration.ofMillis(300))).as("held by the other process").isNull();
            assertThat(locks.size()).isZero();
            try (ChatLocks.Held h = locks.tryHold("chat-2", Duration.ofMillis(300))) {
                assertThat(h).as("another chat is free").isNotNull();
            }
            other.getOutputStream().close(); // the other turn ends
            try (ChatLocks.Held h = locks.tryHold("chat-1", Duration.ofSeconds(20))) {
                assertThat(h).as("free once the other process let go").isNotNull();
                try (ChatLocks.Held inner = locks.hold("chat-1")) {
                    assertThat(locks.heldByCurrentThread("chat-1")).as("held twice by one thread: one lock file").isTrue();
                }
                ChatLocks second = new ChatLocks(tmp);
                assertThat(second.tryHold("chat-1", Duration.ofMillis(100))).as("still held after the inner hold closed").isNull();
            }
            assertThat(other.waitFor(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            other.destroy();
        }
    }

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
