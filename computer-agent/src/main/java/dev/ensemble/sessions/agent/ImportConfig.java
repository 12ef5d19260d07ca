package dev.ensemble.sessions.agent;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;

/**
 * Who and where the imported events are for.
 *
 * @param account    the account every event is keyed by (DESIGN.md section 3); locally the person's login
 * @param computerId this computer's stable id: the events' {@code space} is {@code local:<computerId>} and their
 *                   {@code source} {@code computer:<computerId>}
 * @param clock      the importer's clock: each event's {@code recordedAt}, and "now" for the 30-minute idle
 *                   rule that closes an open run
 * @param stateFile  the JSON file where the importer keeps how far it read each transcript (created on first
 *                   save, with its parent folders)
 */
public record ImportConfig(String account, String computerId, Clock clock, Path stateFile) {
    public ImportConfig {
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(computerId, "computerId");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(stateFile, "stateFile");
        if (account.isBlank()) {
            throw new IllegalArgumentException("account must not be blank");
        }
        if (computerId.isBlank()) {
            throw new IllegalArgumentException("computerId must not be blank");
        }
    }

    /**
     * The defaults for this computer: the local person ({@code System.getProperty("user.name")}), the computer id
     * kept in {@code computerIdFile} (created once, see {@link ComputerId#readOrCreate}), the system UTC clock.
     *
     * @throws java.io.UncheckedIOException when the computer id file can be neither read nor created
     */
    public static ImportConfig defaults(Path computerIdFile, Path stateFile) {
        return new ImportConfig(System.getProperty("user.name"), ComputerId.readOrCreate(computerIdFile),
                Clock.systemUTC(), stateFile);
    }
}
