package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Guide §4 "Tuning": one versioned config, defaults in code, partial override file, checked, re-read, hashed. */
class ConfigTest {
    static final SessionChoiceConfig D = SessionChoiceConfig.defaults();

    @Test
    void defaultsAreTheGuidesNumbers() {
        assertThat(ConfigLoader.validate(D)).isEmpty();
        assertThat(D.weights()).isEqualTo(new SessionChoiceConfig.Weights(10, 3, 3, 2, 3, 6, 6, 1, -1, 1, -2, -2));
        assertThat(D.bands()).isEqualTo(new SessionChoiceConfig.Bands(6, 3));
        assertThat(D.size()).isEqualTo(new SessionChoiceConfig.Size(0.40, 0.70, 8, 15));
        assertThat(D.limits().maxAgeDays()).isEqualTo(30);
        assertThat(D.limits().candidates()).isEqualTo(20);
        assertThat(D.limits().corpusTasks()).isEqualTo(2000);
        assertThat(D.limits().anchorMaxDocShare()).isEqualTo(0.20);
        assertThat(D.limits().topicMinShared()).isEqualTo(2);
        assertThat(D.limits().minCorpus()).isEqualTo(50);
        assertThat(D.limits().timeBudgetMs()).isEqualTo(3000);
        assertThat(D.limits().corpusTtlMinutes()).isEqualTo(60);
        assertThat(D.warmMinutes()).isEqualTo(60);
        assertThat(D.text().fieldWeights()).isEqualTo(new SessionChoiceConfig.FieldWeights(3, 2, 1, 1, 1, 1));
        assertThat(D.text().phraseWeight()).isEqualTo(1.5);
        assertThat(D.text().commonFiles()).contains("package.json", "readme.md", "index.ts", "pom.xml", "build.gradle", ".gitignore", "license", "makefile", "dockerfile");
        assertThat(D.enabled()).isTrue();
    }

    @Test
    void aFileWithOnlySomeFieldsIsDeepMergedOverTheDefaults() throws Exception {
        SessionChoiceConfig c = ConfigLoader.merge(D, "{\"version\": \"2026-12-01.1\", \"weights\": {\"topic\": 8}, \"bands\": {\"confident\": 7}}");
        assertThat(c.version()).isEqualTo("2026-12-01.1");
        assertThat(c.weights().topic()).isEqualTo(8);
        assertThat(c.weights().link()).isEqualTo(10);
        assertThat(c.bands()).isEqualTo(new SessionChoiceConfig.Bands(7, 3));
        assertThat(c.size()).isEqualTo(D.size());
        assertThat(c.text()).isEqualTo(D.text());
        assertThat(c.hash()).hasSize(64).isNotEqualTo(D.hash());
        assertThat(ConfigLoader.merge(D, "{}").hash()).isEqualTo(D.hash());
        SessionChoiceConfig lists = ConfigLoader.merge(D, "{\"text\": {\"extraStopwords\": [\"foo\"]}}");
        assertThat(lists.text().extraStopwords()).containsExactly("foo");
        assertThat(lists.text().followUp()).isEqualTo(D.text().followUp());
    }

    @Test
    void invalidDocumentsAreRefusedWithTheReason() {
        record Case(String rule, String json, String reason) {
        }
        List<Case> cases = List.of(
                new Case("not JSON", "{weights", "not valid JSON"),
                new Case("not an object", "[1]", "must be a JSON object"),
                new Case("unknown field", "{\"weights\": {\"linkk\": 3}}", "unknown field weights.linkk"),
                new Case("wrong type", "{\"weights\": {\"link\": \"ten\"}}", "weights.link: must be a number (got \"ten\")"),
                new Case("object replaced by scalar", "{\"bands\": 3}", "bands must be an object"),
                new Case("bands.unsure ≤ bands.confident", "{\"bands\": {\"unsure\": 7}}", "bands.unsure must be ≤ bands.confident"),
                new Case("0 ≤ soft ≤ hard ≤ 1", "{\"size\": {\"soft\": 0.8}}", "0 ≤ soft ≤ hard ≤ 1"),
                new Case("hard ≤ 1", "{\"size\": {\"hard\": 1.5}}", "0 ≤ soft ≤ hard ≤ 1"),
                new Case("positive limits", "{\"limits\": {\"candidates\": 0}}", "limits.candidates must be positive"),
                new Case("positive time budget", "{\"limits\": {\"timeBudgetMs\": -1}}", "limits.timeBudgetMs must be positive"),
                new Case("share in (0, 1]", "{\"limits\": {\"anchorMaxDocShare\": 2}}", "anchorMaxDocShare"),
                new Case("valid patterns", "{\"text\": {\"followUp\": [\"(\"]}}", "not a valid regular expression"),
                new Case("empty version", "{\"version\": \"\"}", "version must be a non-empty string"));
        for (Case c : cases) {
            assertThatThrownBy(() -> ConfigLoader.merge(D, c.json())).as(c.rule())
                    .isInstanceOf(ConfigLoader.InvalidConfigException.class).hasMessageContaining(c.reason());
        }
    }

    static final class MutableClock extends Clock {
        Instant now = Instant.parse("2026-03-01T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void watcherRereadsAChangedFileWithinTheIntervalAndFallsBackToDefaultsWhenInvalid(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("choice.json");
        Files.writeString(f, "{\"version\": \"v1\", \"weights\": {\"topic\": 8}}");
        MutableClock clock = new MutableClock();
        List<String> log = new ArrayList<>();
        ConfigWatcher w = new ConfigWatcher(f, clock, Duration.ofSeconds(30), log::add);
        assertThat(w.current().version()).isEqualTo("v1");
        assertThat(w.current().weights().topic()).isEqualTo(8);

        Files.writeString(f, "{\"version\": \"v2\", \"weights\": {\"topic\": 9}}");
        Files.setLastModifiedTime(f, FileTime.from(Instant.parse("2026-03-01T00:00:10Z")));
        clock.now = clock.now.plusSeconds(29);
        assertThat(w.current().version()).as("not looked at again before the interval").isEqualTo("v1");
        clock.now = clock.now.plusSeconds(1);
        assertThat(w.current().version()).as("re-read within a minute").isEqualTo("v2");

        Files.writeString(f, "{\"version\": \"v3\", \"bands\": {\"unsure\": 99}}");
        Files.setLastModifiedTime(f, FileTime.from(Instant.parse("2026-03-01T00:00:20Z")));
        clock.now = clock.now.plusSeconds(30);
        assertThat(w.current()).as("invalid: the defaults apply").isEqualTo(SessionChoiceConfig.defaults());
        assertThat(w.lastProblem()).contains("bands.unsure must be ≤ bands.confident");
        assertThat(log.get(log.size() - 1)).contains("is invalid, the defaults apply").contains("bands.unsure");

        Files.delete(f);
        clock.now = clock.now.plusSeconds(30);
        assertThat(w.current()).isEqualTo(SessionChoiceConfig.defaults());
        assertThat(w.lastProblem()).as("a file named but absent is a problem to report").isEqualTo("no such file");
    }

    @Test
    void aLoadAndARefusalGoToTheirOwnLines() throws Exception {
        Path f = Files.createTempFile("choice-config", ".json");
        try {
            Files.writeString(f, "{\"version\": \"v1\"}");
            MutableClock clock = new MutableClock();
            List<String> loaded = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            ConfigWatcher w = new ConfigWatcher(f, clock, Duration.ofSeconds(30), loaded::add, refused::add);
            assertThat(w.current().version()).isEqualTo("v1");
            assertThat(loaded).singleElement().asString().contains("loaded: version v1");
            assertThat(refused).isEmpty();

            Files.writeString(f, "{\"version\": \"v2\", \"bands\": {\"unsure\": 99}}");
            Files.setLastModifiedTime(f, FileTime.from(Instant.parse("2026-03-01T00:00:20Z")));
            clock.now = clock.now.plusSeconds(30);
            assertThat(w.current()).isEqualTo(SessionChoiceConfig.defaults());
            assertThat(refused).singleElement().asString().contains("is invalid, the defaults apply");
            assertThat(loaded).hasSize(1);

            Files.delete(f); // a file named but absent (a typo in the variable, say) is a warning too
            clock.now = clock.now.plusSeconds(30);
            assertThat(w.current()).isEqualTo(SessionChoiceConfig.defaults());
            assertThat(refused).hasSize(2).last().asString().contains("is absent: the defaults apply");
            assertThat(loaded).hasSize(1);

            Files.createDirectory(f); // a folder where the file was named: said as such, once
            clock.now = clock.now.plusSeconds(30);
            assertThat(w.current()).isEqualTo(SessionChoiceConfig.defaults());
            assertThat(w.lastProblem()).isEqualTo("it is a folder, not a file");
            assertThat(refused).hasSize(3).last().asString().contains("is a folder, not a file: the defaults apply");
            clock.now = clock.now.plusSeconds(30);
            w.current();
            assertThat(refused).as("not said again while nothing changes").hasSize(3);
        } finally {
            if (Files.isDirectory(f)) Files.delete(f);
            Files.deleteIfExists(f);
        }
    }

    @Test
    void aFileNamedButAbsentFromTheStartIsSaidOnce(@TempDir Path dir) {
        MutableClock clock = new MutableClock();
        List<String> loaded = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        ConfigWatcher w = new ConfigWatcher(dir.resolve("typo.json"), clock, Duration.ofSeconds(30), loaded::add, refused::add);
        assertThat(w.current()).isEqualTo(SessionChoiceConfig.defaults());
        assertThat(refused).singleElement().asString().contains("typo.json is absent: the defaults apply");
        clock.now = clock.now.plusSeconds(30);
        w.current();
        assertThat(refused).as("not said again while nothing changes").hasSize(1);
        assertThat(loaded).isEmpty();
    }

    @Test
    void noFileMeansDefaults() {
        ConfigWatcher w = new ConfigWatcher(null, Clock.systemUTC(), Duration.ofSeconds(30), s -> { });
        assertThat(w.current()).isSameAs(SessionChoiceConfig.defaults());
    }

    @Test
    void versionAndHashGoOnEveryDecision() throws Exception {
        SessionChoiceConfig c = ConfigLoader.merge(D, "{\"version\": \"2026-12-01.1\"}");
        Decision d = Fx.decide(Fx.run(Fx.facts("x")), Fx.corpus(10), c, Fx.session("s1", 5, Fx.task("t1", Fx.facts("y"))));
        assertThat(d.configVersion()).isEqualTo("2026-12-01.1");
        assertThat(d.configHash()).isEqualTo(c.hash()).isEqualTo(ConfigLoader.hash(c));
    }

    @Test
    void aFileThatNamesNoVersionIsLabelledByItsNameNotAsTheBuiltInConfig(@TempDir Path dir) throws Exception {
        Path unnamed = Files.writeString(dir.resolve("choice.json"), "{\"limits\": {\"maxAgeDays\": 3650}}");
        SessionChoiceConfig c = ConfigLoader.readFile(unnamed);
        assertThat(c.version()).isEqualTo("choice.json");
        assertThat(c.limits().maxAgeDays()).isEqualTo(3650);
        assertThat(c.hash()).isNotEqualTo(SessionChoiceConfig.defaults().hash());

        Path named = Files.writeString(dir.resolve("named.json"), "{\"version\": \"team-3\", \"limits\": {\"maxAgeDays\": 3650}}");
        assertThat(ConfigLoader.readFile(named).version()).isEqualTo("team-3");
    }
}
