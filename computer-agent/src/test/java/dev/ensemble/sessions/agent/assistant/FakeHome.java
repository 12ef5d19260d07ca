package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.AgentStores;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Test support: a temporary HOME laid out as on a computer, the computer agent's state folder in it, and listings. */
final class FakeHome {
    final Path home;
    final Path state;

    FakeHome(Path home) {
        this.home = home;
        this.state = home.resolve(".ensemble/computer-agent");
    }

    AgentStores stores() {
        return AgentStores.underHome(home);
    }

    Path claudeProjects() {
        return home.resolve(".claude/projects");
    }

    Path copilotState() {
        return home.resolve(".copilot/session-state");
    }

    /** Copies the shared agent stores into this home as the agents lay them out (.claude, .copilot, ...). */
    void copyAgentStores(Path data) {
        copyTree(data.resolve("claude"), home.resolve(".claude"));
        copyTree(data.resolve("codex"), home.resolve(".codex"));
        copyTree(data.resolve("copilot"), home.resolve(".copilot"));
    }

    static void copyTree(Path from, Path to) {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                Files.createDirectories(target.getParent());
                Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
                target.toFile().setWritable(true);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void append(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every file and folder under the home, relative to it. */
    Set<String> listing() {
        try (Stream<Path> all = Files.walk(home)) {
            return new TreeSet<>(all.map(p -> home.relativize(p).toString()).filter(s -> !s.isEmpty()).toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Set<String> minus(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }
}
