package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.ComputerId;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.KafkaEventSink;
import dev.ensemble.sessions.agent.StoreImporter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions import DIR...}: imports agent stores into the running system (the one {@code up}
 * started with the same data folder). A folder is recognised as Claude Code's when it is a {@code .claude}
 * folder or a {@code projects} folder of one, and as Codex's when it is a {@code .codex} folder or a
 * {@code sessions} folder of one. Importing the same folder again sends only what changed, and a folder the
 * running system already imports (its own import state, only read) only what that import has not read.
 */
@Command(name = "import", mixinStandardHelpOptions = true, description = "Import agent stores into a running system.")
final class ImportCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "DIR", description = "~/.claude, ~/.claude/projects, ~/.codex or ~/.codex/sessions folders (or copies of them)")
    List<Path> dirs;

    @picocli.CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @Option(names = "--account", description = "the account to import for (default: the user name)")
    String account;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (account != null) {
            CommandChecks.requireAccount(spec, "--account", account);
        }
        DataDir data = DataDir.of(system.dataDir);
        List<Path> claude = new ArrayList<>();
        List<Path> codex = new ArrayList<>();
        for (Path d : dirs) {
            if (d.toString().isBlank()) { // '' would be the current folder
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "DIR is empty: name an agent store's folder");
            }
            Path dir = d.toAbsolutePath().normalize();
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException(dir + " is not a folder");
            }
            String name = dir.getFileName().toString();
            if (name.equals(".claude") || Files.isDirectory(dir.resolve("projects")) && !Files.isDirectory(dir.resolve("sessions"))) {
                claude.add(dir.resolve("projects"));
            } else if (name.equals("projects")) {
                claude.add(dir);
            } else if (name.equals(".codex") || Files.isDirectory(dir.resolve("sessions"))) {
                codex.add(dir.resolve("sessions"));
            } else if (name.equals("sessions")) {
                codex.add(dir);
            } else {
                throw new IllegalArgumentException(dir + " is neither a Claude Code folder (.claude or its projects/) nor a Codex one"
                        + " (.codex or its sessions/), the two 'import' reads (by those names); 'up' imports every agent's store"
                        + " under your home itself, and each agent's environment variable points it elsewhere (computer-agent/README.md)");
            }
        }
        DataDir.Cluster kafka = data.runningCluster(); // after the folders: a wrong folder is said first
        String who = account != null ? account : System.getProperty("user.name", "local");
        ImportConfig config = new ImportConfig(who, ComputerId.readOrCreate(data.computerId()), Clock.systemUTC(),
                data.importState("import-state-cli.json"));
        try (KafkaEventSink sink = new KafkaEventSink(kafka.bootstrapServers(), kafka.clientProperties())) {
            // what the running system's own import (up's computer agent) read already is not read and sent again
            new StoreImporter(config, new ImportProgressBar(System.out)).knowing(data.importState("import-state.json"))
                    .importAll(claude, codex, sink); // prints its summary line
            sink.flush();
        }
        return 0;
    }
}
