package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/** Test support: agent stores laid out in a temporary home, a settable clock, a sink that keeps what it gets. */
final class Stores {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    static final String ACCOUNT = "ana";
    static final String COMPUTER = "laptop-0a1b2c3d";

    final Path home;
    final Path claude;
    final Path codex;
    final Path stateFile;
    final SettableClock clock = new SettableClock(NOW);

    private Stores(Path home) {
        this.home = home;
        this.claude = home.resolve(".claude/projects");
        this.codex = home.resolve(".codex/sessions");
        this.stateFile = home.resolve(".ensemble/import-state.json");
    }

    /** An empty home under {@code tmp}. */
    static Stores empty(Path tmp) {
        Stores s = new Stores(tmp);
        try {
            Files.createDirectories(s.claude);
            Files.createDirectories(s.codex);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return s;
    }

    /** A home holding every fixture, each file last modified a minute before {@link #NOW} (not idle). */
    static Stores withFixtures(Path tmp) {
        Stores s = empty(tmp);
        copyTree(fixtures().resolve("claude"), s.claude);
        copyTree(fixtures().resolve("codex"), s.codex);
        s.touchAll(NOW.minus(Duration.ofMinutes(1)));
        return s;
    }

    static Path fixtures() {
        try {
            return Path.of(Objects.requireNonNull(Stores.class.getResource("/fixtures")).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static void copyTree(Path from, Path to) {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                Files.createDirectories(target.getParent());
                Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sets every file's modification time. */
    void touchAll(Instant at) {
        try (Stream<Path> files = Files.walk(home)) {
            for (Path f : files.filter(Files::isRegularFile).filter(p -> !p.toString().endsWith("import-state.json")).toList()) {
                Files.setLastModifiedTime(f, FileTime.from(at));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void touch(Path file, Instant at) {
        try {
            Files.setLastModifiedTime(file, FileTime.from(at));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    ImportConfig config() {
        return new ImportConfig(ACCOUNT, COMPUTER, clock, stateFile);
    }

    StoreImporter importer() {
        return new StoreImporter(config());
    }

    /** Imports both stores into a fresh list. */
    Imported importAll(StoreImporter importer) {
        ListSink sink = new ListSink();
        ImportSummary summary = importer.importAll(List.of(claude), List.of(codex), sink);
        return new Imported(summary, sink.events);
    }

    /** Every agent's store under this home, as the agents lay them out. */
    AgentStores agentStores() {
        return AgentStores.underHome(home);
    }

    /** Imports every agent's store under this home into a fresh list. */
    Imported importStores(StoreImporter importer) {
        ListSink sink = new ListSink();
        ImportSummary summary = importer.importStores(agentStores(), sink);
        return new Imported(summary, sink.events);
    }

    /**
     * Copies the shared agent stores ({@code ../shared/data/agent-stores}) into this home as on a computer:
     * {@code .claude}, {@code .codex}, {@code .gemini}, {@code .copilot}, {@code .local/share/opencode}, {@code .qwen},
     * {@code .cursor}.
     */
    void copyAgentStores(Path data) {
        copyTree(data.resolve("claude"), home.resolve(".claude"));
        copyTree(data.resolve("codex"), home.resolve(".codex"));
        copyTree(data.resolve("gemini"), home.resolve(".gemini"));
        copyTree(data.resolve("copilot"), home.resolve(".copilot"));
        copyTree(data.resolve("opencode"), home.resolve(".local/share/opencode"));
        copyTree(data.resolve("qwen"), home.resolve(".qwen"));
        copyTree(data.resolve("cursor"), home.resolve(".cursor"));
    }

    Path claudeFile(String folder, String name) {
        return claude.resolve(folder).resolve(name);
    }

    /** Keeps every event. */
    static final class ListSink implements EventSink {
        final List<Event> events = new ArrayList<>();
        int flushes;

        @Override
        public void accept(Event e) {
            events.add(e);
        }

        @Override
        public void flush() {
            flushes++;
        }
    }

    /** The outcome of one import, with views of its events. */
    record Imported(ImportSummary summary, List<Event> events) {
        List<RunClaimed> claims() {
            return payloads(RunClaimed.class);
        }

        List<RunClaimed> claims(String agentSessionId) {
            return claims().stream().filter(c -> agentSessionId.equals(c.getAgentSessionId())).toList();
        }

        List<EngineEvent> engine(String agentSessionId) {
            return payloads(EngineEvent.class).stream().filter(e -> agentSessionId.equals(e.getAgentSessionId())).toList();
        }

        List<RunStatusChanged> statuses(String runId) {
            return payloads(RunStatusChanged.class).stream().filter(s -> runId.equals(s.getRunId())).toList();
        }

        RunStatusChanged done(String runId) {
            List<RunStatusChanged> done = statuses(runId).stream().filter(s -> s.getStatus() == RunStatus.DONE).toList();
            if (done.size() != 1) {
                throw new AssertionError("expected one DONE of " + runId + ", got " + done);
            }
            return done.get(0);
        }

        /** The events whose payload is {@code payload}. */
        Event eventOf(Object payload) {
            return events.stream().filter(e -> e.getPayload() == payload).findFirst().orElseThrow();
        }

        List<String> ids() {
            return events.stream().map(Event::getEventId).toList();
        }

        <T> List<T> payloads(Class<T> type) {
            return events.stream().map(Event::getPayload).filter(type::isInstance).map(type::cast).toList();
        }
    }

    /** A clock the test moves. */
    static final class SettableClock extends Clock {
        private volatile Instant now;

        SettableClock(Instant now) {
            this.now = now;
        }

        void set(Instant at) {
            now = at;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
