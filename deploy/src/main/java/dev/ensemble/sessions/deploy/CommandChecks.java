package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The checks of a command's option values that picocli cannot make itself: each refuses a value as a usage error (exit
 * code 2, the message and where the command's help is printed: {@code EnsembleSessions.commandLine}), naming the option
 * and the value given.
 */
final class CommandChecks {
    private CommandChecks() {
    }

    /** Refuses with {@code message} unless {@code ok}. */
    static void require(CommandSpec spec, boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    /** Refuses an integer option below {@code min}: "OPTION must be MIN or more, not VALUE". */
    static void requireAtLeast(CommandSpec spec, String option, long value, long min) {
        require(spec, value >= min, option + " must be " + min + " or more, not " + value);
    }

    /** Refuses a share outside 0–1: "OPTION must be from 0 to 1, not VALUE". */
    static void requireShare(CommandSpec spec, String option, double value) {
        requireShare(spec, option, value, 1);
    }

    /** Refuses a share outside 0–{@code max}: "OPTION must be from 0 to MAX, not VALUE". */
    static void requireShare(CommandSpec spec, String option, double value, double max) {
        require(spec, value >= 0 && value <= max, option + " must be from 0 to " + number(max) + ", not " + value);
    }

    /**
     * Refuses an account its events could not carry (blank, a '/', a control character, over 256 characters: the event
     * log's own rules for an account, {@link dev.ensemble.sessions.schema.EventJson.Validation} and
     * {@link dev.ensemble.sessions.schema.Limits}): "OPTION 'VALUE' cannot be an account: PROBLEM".
     */
    static void requireAccount(CommandSpec spec, String option, String account) {
        if (!account.isBlank() && !account.equals(account.strip())) { // '  bob  ' would be another account than 'bob'
            throw new ParameterException(spec.commandLine(), option + " '" + account + "' cannot be an account: it begins or ends with a space");
        }
        dev.ensemble.sessions.events.Event probe = dev.ensemble.sessions.events.Event.newBuilder().setEventId("account-check")
                .setAccount(account).setSpace("local:check").setSource("computer:check")
                .setOccurredAt(java.time.Instant.parse("2026-01-01T00:00:00Z")).setRecordedAt(java.time.Instant.parse("2026-01-01T00:00:00Z"))
                .setPayload(new dev.ensemble.sessions.events.ComputerStatus("check", true, java.util.Map.of())).build();
        try {
            dev.ensemble.sessions.schema.EventJson.Validation.check(probe);
            dev.ensemble.sessions.schema.Limits.check(probe);
        } catch (dev.ensemble.sessions.schema.InvalidEventException e) {
            throw new ParameterException(spec.commandLine(), option + " '" + account + "' cannot be an account: " + e.problem());
        }
    }

    /** Refuses a port option outside 0–65535 (0: any free port). */
    static void requirePort(CommandSpec spec, String option, int port) {
        require(spec, port >= 0 && port <= 65535, option + " must be a port from 0 to 65535 (0: any free one), not " + port);
    }

    /** Refuses a negative {@code --completed-window-days}. */
    static void requireWindow(CommandSpec spec, int days) {
        requireAtLeast(spec, "--completed-window-days", days, 0);
    }

    /**
     * Refuses an output file option ({@code --report}, {@code --out}) that cannot be written, before the command does its
     * work: "cannot write the report to FILE: its folder DIR does not exist" (or is not a folder, or is not writable;
     * or FILE is a folder, or is not writable).
     */
    static void requireWritableFile(CommandSpec spec, String option, String what, Path file) {
        Path absolute = file.toAbsolutePath().normalize();
        Path folder = absolute.getParent();
        String cannot = option + ": cannot write the " + what + " to " + file + ": ";
        require(spec, !Files.isDirectory(absolute), cannot + "it is a folder; give a file's path");
        if (folder != null) {
            require(spec, Files.exists(folder), cannot + "its folder " + folder + " does not exist");
            require(spec, Files.isDirectory(folder), cannot + folder + " is not a folder");
            require(spec, Files.isWritable(folder) || Files.isWritable(absolute), cannot + "its folder " + folder + " is not writable");
        }
        require(spec, !Files.exists(absolute) || Files.isWritable(absolute), cannot + "it is not writable");
    }

    /**
     * The session-choice config in {@code file} (the fields to change, merged over the defaults); a file that is missing,
     * a folder, unreadable or not a valid config is refused with one line naming it and the reason, e.g.
     * "FILE: not valid JSON at line 1, column 9: unexpected end of input".
     */
    static SessionChoiceConfig readConfig(Path file) {
        try {
            return ConfigLoader.readFile(file);
        } catch (ConfigLoader.InvalidConfigException e) {
            String m = e.getMessage();
            throw new IllegalArgumentException(m.contains(file.toString()) ? m : file + ": " + m, e);
        }
    }

    /** 1 as "1", 0.5 as "0.5". */
    private static String number(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }
}
