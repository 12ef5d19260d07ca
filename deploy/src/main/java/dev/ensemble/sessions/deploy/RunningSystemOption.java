package dev.ensemble.sessions.deploy;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The {@code --data-dir} option of the commands that talk to a running system ({@code choose}, {@code import},
 * {@code login}, {@code sessions}, {@code show}): the data folder {@code up} keeps, whose {@code endpoints.json} and
 * tokens name the system's API and brokers. A picocli mixin, so the option is declared once.
 */
final class RunningSystemOption {
    @Option(names = "--data-dir", description = "the running system's data folder (default ~/.ensemble-sessions)")
    Path dataDir;
}
