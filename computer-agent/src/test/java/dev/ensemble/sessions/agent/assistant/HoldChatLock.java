package dev.ensemble.sessions.agent.assistant;

import java.nio.file.Path;

/** Test support: another process holding a chat's lock ({@code <state dir> <key>}) until its standard input ends. */
public final class HoldChatLock {
    private HoldChatLock() {
    }

    public static void main(String[] args) throws Exception {
        try (ChatLocks.Held held = new ChatLocks(Path.of(args[0])).hold(args[1])) {
            System.out.println("held");
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the test closes our input
            }
        }
    }
}
