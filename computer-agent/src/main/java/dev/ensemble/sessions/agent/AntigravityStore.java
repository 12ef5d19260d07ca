package dev.ensemble.sessions.agent;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Antigravity (Google's agent IDE) keeps each conversation in {@code ~/.gemini/antigravity/conversations/<id>.pb}
 * (with {@code brain/<id>/} artifacts beside). The {@code .pb} files are encrypted (AES, with a key the app keeps to
 * itself; no public format), so they are not read: the store is named with that reason in the import's summary,
 * and its sessions are not imported nor deleted here.
 */
final class AntigravityStore {
    static final String AGENT = "antigravity";

    private AntigravityStore() {
    }

    /** The number of conversations ({@code conversations/*.pb}) under {@code root}; 0 when none. */
    static int conversations(Path root) throws IOException {
        Path dir = root.resolve("conversations");
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.pb")) {
            for (Path p : ds) {
                if (Files.isRegularFile(p)) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Why a store holding {@code n} conversations is not read. */
    static String notRead(int n) {
        return n + (n == 1 ? " conversation" : " conversations") + " not read: Antigravity encrypts them"
                + " (conversations/*.pb, AES with a key only the app holds; no public format)";
    }
}
