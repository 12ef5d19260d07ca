package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.agent.StoreImporter;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Events per active person per hour (docs/scaling.md), measured on the real transcripts of
 * {@code ../shared/data/agent-stores} (the real ones per its PROVENANCE.txt: Claude Code, Codex, Gemini CLI, Copilot
 * CLI; the synthetic OpenCode, Qwen Code and Cursor samples left out): the computer agent's importer turns them into
 * the events it would append, and the rate is events ÷ active hours, where the active time is the sum of the gaps
 * between a person's consecutive events that are at most 30 minutes ({@link StoreImporter#IDLE}: a longer gap is a
 * pause). Also the busiest clock hour and the events' mean size in the log's encoding. Printed as {@code [activity] ...}; run with
 * {@code mvn -B -o -pl deploy -am verify -Dtest=ActivityRateTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class ActivityRateTest {
    /** A person's activity: events, active time (gaps up to {@code pause}), the busiest clock hour. */
    record Activity(int events, Duration active, int busiestHour) {
        double perActiveHour() {
            return events / (active.toMillis() / 3_600_000.0);
        }
    }

    static Activity activity(List<Instant> times, Duration pause) {
        List<Instant> sorted = times.stream().sorted().toList();
        long activeMs = 0;
        for (int i = 1; i < sorted.size(); i++) {
            long gap = sorted.get(i).toEpochMilli() - sorted.get(i - 1).toEpochMilli();
            if (gap <= pause.toMillis()) activeMs += gap;
        }
        Map<Instant, Integer> byHour = new TreeMap<>();
        sorted.forEach(t -> byHour.merge(t.truncatedTo(ChronoUnit.HOURS), 1, Integer::sum));
        return new Activity(sorted.size(), Duration.ofMillis(activeMs), byHour.values().stream().max(Comparator.naturalOrder()).orElse(0));
    }

    @Test
    void activeTimeCountsOnlyGapsUpToThePause() {
        Instant t = Instant.parse("2026-03-01T10:00:00Z");
        // 3 events 10 min apart, a 2 h pause, 2 events 5 min apart: 25 active minutes, 5 events
        Activity a = activity(List.of(t, t.plusSeconds(600), t.plusSeconds(1200), t.plusSeconds(1200 + 7200),
                t.plusSeconds(1200 + 7200 + 300)), Duration.ofMinutes(30));
        assertThat(a.events()).isEqualTo(5);
        assertThat(a.active()).isEqualTo(Duration.ofMinutes(25));
        assertThat(a.perActiveHour()).isEqualTo(12.0);
        assertThat(a.busiestHour()).isEqualTo(3);
    }

    @Test
    void eventsPerActivePersonPerHourOfTheRealTranscripts(@TempDir Path dir) {
        Path data = SharedData.require("data/agent-stores");
        AgentStores real = new AgentStores(List.of(data.resolve("claude/projects")), List.of(data.resolve("codex/sessions")),
                List.of(data.resolve("gemini")), List.of(data.resolve("copilot")), List.of(), List.of(), List.of());
        List<Event> events = new ArrayList<>();
        new StoreImporter(new ImportConfig("ana", "laptop-rate", Clock.systemUTC(), dir.resolve("import-state.json")))
                .importStores(real, events::add);
        assertThat(events).as("events imported from the real transcripts").hasSizeGreaterThan(100);

        Map<String, Integer> byType = new TreeMap<>();
        events.forEach(e -> byType.merge(EventTypes.typeOf(e), 1, Integer::sum));
        Activity all = activity(events.stream().map(Event::getOccurredAt).toList(), StoreImporter.IDLE);
        long bytes = 0;
        try (var serializer = Topics.EVENTS.valueSerde().serializer()) {
            for (Event e : events) bytes += serializer.serialize(Topics.EVENTS.name(), e).length;
        }
        System.out.printf("[activity] %d events from the real transcripts: %s; %.0f bytes each on average (the log's encoding)%n",
                all.events(), byType, (double) bytes / all.events());
        System.out.printf("[activity] all: %d events over %.2f active hours: %.0f events per active person per hour (busiest clock hour %d)%n",
                all.events(), all.active().toMillis() / 3_600_000.0, all.perActiveHour(), all.busiestHour());
        assertThat(all.active()).as("active time").isPositive();
        assertThat(all.busiestHour()).isLessThanOrEqualTo(all.events());
        assertThat(byType.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(all.events());
    }
}
