package dev.ensemble.sessions.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

/** This computer's stable id: {@code <hostname>-<8 random hex digits>}, made once and kept in a file. */
public final class ComputerId {
    private static final SecureRandom RANDOM = new SecureRandom();

    private ComputerId() {
    }

    /**
     * The id kept in {@code file}; when the file is missing or blank, a new id is made, written there
     * (atomically, creating parent folders) and returned. Later calls return the same id.
     *
     * @throws UncheckedIOException when the file can be neither read nor written
     */
    public static String readOrCreate(Path file) {
        try {
            if (Files.exists(file)) {
                String id = Files.readString(file, StandardCharsets.UTF_8).trim();
                if (!id.isEmpty()) {
                    return id;
                }
            }
            String id = create(hostname());
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Path tmp = Files.createTempFile(parent, ".computer-id", ".tmp");
            Files.writeString(tmp, id + "\n", StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            return id;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the computer id file " + file + ": " + e.getMessage(), e);
        }
    }

    /** A new id for {@code hostname}: its lower-case letters, digits, dots and dashes, then 8 random hex digits. */
    static String create(String hostname) {
        String host = hostname == null ? "" : hostname.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]+", "-")
                .replaceAll("^-+|-+$", "");
        if (host.isEmpty()) {
            host = "computer";
        }
        byte[] b = new byte[4];
        RANDOM.nextBytes(b);
        return host + "-" + HexFormat.of().formatHex(b);
    }

    /** The host name: {@code HOSTNAME} or {@code COMPUTERNAME} when set, else the local address's name, else null. */
    private static String hostname() {
        for (String var : new String[] {"HOSTNAME", "COMPUTERNAME"}) {
            String env = System.getenv(var);
            if (env != null && !env.isBlank()) {
                return env;
            }
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException | SecurityException e) {
            return null; // create() names it "computer"
        }
    }
}
