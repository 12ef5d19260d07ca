package dev.ensemble.sessions.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An env file as docker-compose's {@code env_file} reads it: {@code NAME=VALUE} lines, blank lines and lines starting
 * with {@code #} skipped; no quotes, no interpolation (the files of deploy/compose use neither).
 */
final class EnvFile {
    private EnvFile() {
    }

    /** The variables of {@code file}, in file order. */
    static Map<String, String> read(Path file) {
        try {
            Map<String, String> out = new LinkedHashMap<>();
            for (String line : Files.readAllLines(file)) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                int eq = l.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException(file + ": not NAME=VALUE: " + line);
                }
                out.put(l.substring(0, eq).strip(), l.substring(eq + 1).strip());
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
