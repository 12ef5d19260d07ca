package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The local system's data folder (default {@code ~/.ensemble-sessions}, where {@code ~} is {@code $HOME}):
 * {@code kafka/} (the broker's log), {@code state/} (the services' stores), {@code token} (the local
 * person's bearer token), {@code tokens.json} (hashes of every token; both owner-only), {@code computer-id},
 * {@code import-state.json}, and {@code endpoints.json} (where the running system listens).
 */
record DataDir(Path root) {
    static final ObjectMapper JSON = new ObjectMapper();

    /** {@code $HOME} (the environment's, which a user may point elsewhere), else Java's user.home. */
    static Path home() {
        String h = System.getenv("HOME");
        return Path.of(h != null && !h.isBlank() ? h : System.getProperty("user.home"));
    }

    static Path defaultRoot() {
        return home().resolve(".ensemble-sessions");
    }

    Path state(String service) {
        return root.resolve("state").resolve(service);
    }

    Path token() {
        return root.resolve("token");
    }

    Path tokens() {
        return root.resolve("tokens.json");
    }

    Path computerId() {
        return root.resolve("computer-id");
    }

    Path importState(String name) {
        return root.resolve(name);
    }

    Path endpoints() {
        return root.resolve("endpoints.json");
    }

    /**
     * Writes a file only its owner can read (where the file system supports it); the permissions are set before the
     * content is written, so the content is never readable by others.
     */
    static void writePrivate(Path file, String content) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                var ownerOnly = PosixFilePermissions.fromString("rw-------");
                if (Files.exists(file)) {
                    Files.setPosixFilePermissions(file, ownerOnly);
                } else {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(ownerOnly));
                }
            } // else not a POSIX file system: the folder's own permissions apply
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** Records where the running system listens, for {@code import} and other commands. */
    void writeEndpoints(String http, String bootstrapServers) {
        writePrivate(endpoints(), JSON.createObjectNode().put("http", http).put("bootstrapServers", bootstrapServers).toPrettyString());
    }

    /** The running system's endpoints. */
    JsonNode readEndpoints() {
        try {
            return JSON.readTree(endpoints().toFile());
        } catch (IOException e) {
            throw new IllegalStateException("no running system found in " + root + " (" + endpoints()
                    + " is missing or unreadable): start it with 'deploy/ensemble-sessions up'", e);
        }
    }
}
