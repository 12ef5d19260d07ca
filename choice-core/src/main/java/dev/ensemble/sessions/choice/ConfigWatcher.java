package dev.ensemble.sessions.choice;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The effective {@link SessionChoiceConfig} from the file named by {@code ENSEMBLE_SESSION_CHOICE_CONFIG} (guide §4
 * "Tuning": checked, read again within a minute of a change; an invalid file is logged and the defaults apply).
 * <p>
 * {@link #current()} looks at the file's modification time and size at most once per {@code interval} (default
 * 30 s, so a change is picked up within a minute), measured on the injected clock, and re-reads it when either
 * changed. No file named, or the file gone: the defaults. Thread-safe.
 */
public final class ConfigWatcher {
    /** Default polling interval. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    private final Path file;
    private final Clock clock;
    private final Duration interval;
    private final Consumer<String> loaded;
    private final Consumer<String> refused;

    private Instant lastCheck;
    private FileTime seenMtime;
    private long seenSize = -1;
    private boolean looked;
    private boolean seenExists;
    private boolean seenFolder;
    private SessionChoiceConfig current = SessionChoiceConfig.defaults();
    private String lastProblem;

    /**
     * @param file     the override file, or null for the defaults only
     * @param clock    time source for the polling interval
     * @param interval how often to look at the file; positive
     * @param log      receives one line per load and per invalid file, with the reason
     */
    public ConfigWatcher(Path file, Clock clock, Duration interval, Consumer<String> log) {
        this(file, clock, interval, log, log);
    }

    /**
     * @param loaded  receives one line per file read
     * @param refused receives one line per file that is absent, cannot be read or is invalid, with the reason (the
     *                defaults apply)
     */
    public ConfigWatcher(Path file, Clock clock, Duration interval, Consumer<String> loaded, Consumer<String> refused) {
        if (interval.isNegative() || interval.isZero()) throw new IllegalArgumentException("interval must be positive");
        this.file = file;
        this.clock = Objects.requireNonNull(clock);
        this.interval = interval;
        this.loaded = Objects.requireNonNull(loaded);
        this.refused = Objects.requireNonNull(refused);
        check(clock.instant());
    }

    /**
     * A watcher of the file named by {@code ENSEMBLE_SESSION_CHOICE_CONFIG} (none when unset or blank); loads and refusals go
     * to their own lines (e.g. a log's INFO and WARN).
     */
    public static ConfigWatcher fromEnvironment(Clock clock, Consumer<String> loaded, Consumer<String> refused) {
        String name = System.getenv(ConfigLoader.ENV);
        return new ConfigWatcher(name == null || name.isBlank() ? null : Path.of(name), clock, DEFAULT_INTERVAL, loaded, refused);
    }

    /** The effective config, re-read first if the interval has passed and the file changed. */
    public synchronized SessionChoiceConfig current() {
        Instant now = clock.instant();
        if (!now.isBefore(lastCheck.plus(interval))) {
            check(now);
        }
        return current;
    }

    /** The reason the file was last refused (absent, unreadable or invalid), or null when it was read (or none is named). */
    public synchronized String lastProblem() {
        return lastProblem;
    }

    private void check(Instant now) {
        lastCheck = now;
        if (file == null) return;
        boolean exists = Files.isRegularFile(file);
        boolean folder = !exists && Files.isDirectory(file);
        FileTime mtime = null;
        long size = -1;
        String unreadable = null;
        if (exists) {
            try {
                mtime = Files.getLastModifiedTime(file);
                size = Files.size(file);
            } catch (IOException e) {
                unreadable = e.toString();
            }
        }
        if (looked && exists == seenExists && folder == seenFolder && Objects.equals(mtime, seenMtime) && size == seenSize
                && unreadable == null) {
            return;
        }
        looked = true; // the first look always reports: a file named but absent from the start is said too
        seenExists = exists;
        seenFolder = folder;
        seenMtime = mtime;
        seenSize = size;
        if (!exists || unreadable != null) {
            current = SessionChoiceConfig.defaults();
            lastProblem = exists ? "cannot read it: " + unreadable : folder ? "it is a folder, not a file" : "no such file";
            refused.accept("session-choice config " + file + (exists ? " cannot be read (" + unreadable + ")"
                    : folder ? " is a folder, not a file" : " is absent") + ": the defaults apply (" + current.version() + ")");
            return;
        }
        try {
            current = ConfigLoader.readFile(file);
            lastProblem = null;
            loaded.accept("session-choice config " + file + " loaded: version " + current.version() + ", hash " + current.hash());
        } catch (ConfigLoader.InvalidConfigException e) {
            current = SessionChoiceConfig.defaults();
            lastProblem = e.getMessage();
            refused.accept("session-choice config " + file + " is invalid, the defaults apply: " + e.getMessage());
        }
    }
}
