package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.Topics;
import dev.ensemble.sessions.choice.ChoiceConfigEvents;
import dev.ensemble.sessions.choice.ConfigLoader;
import dev.ensemble.sessions.choice.CorpusStats;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.views.CorpusView;
import org.apache.kafka.streams.TestOutputTopic;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.ensemble.sessions.projector.ChainFixture.T0;
import static dev.ensemble.sessions.projector.ChainFixture.claimed;
import static dev.ensemble.sessions.projector.ChainFixture.done;
import static org.assertj.core.api.Assertions.assertThat;

/** The rarity table of the session choice (guide §4), per account and computer, through the real topology. */
class CorpusStatisticsTest {

    static Map<String, CorpusView> read(ChainFixture f) {
        f.driver.advanceWallClockTime(Duration.ofSeconds(2));
        TestOutputTopic<String, CorpusView> out = f.driver.createOutputTopic(Topics.CORPUS_VIEW.name(),
                Topics.CORPUS_VIEW.keySerde().deserializer(), Topics.CORPUS_VIEW.valueSerde().deserializer());
        Map<String, CorpusView> latest = new HashMap<>();
        out.readKeyValuesToList().forEach(kv -> latest.put(kv.key, kv.value));
        return latest;
    }

    static CorpusStats stats(CorpusView v) {
        ByteBuffer b = v.getStats().duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return CorpusStats.fromBytes(bytes);
    }

    @Test
    void eachClaimedTaskIsAnalysedOnceAndCountedPerAccountAndComputer() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "Build the ranking API", 0),
                    claimed("job-2", null, "Rank results by recency", 1),
                    claimed("job-3", null, "Fix the login page", 2));
            Map<String, CorpusView> views = read(f);
            assertThat(views).containsOnlyKeys("acct-ana/laptop");
            CorpusView v = views.get("acct-ana/laptop");
            assertThat(v.getTasks()).isEqualTo(3);
            CorpusStats s = stats(v);
            assertThat(s.n()).isEqualTo(3);
            assertThat(s.termDf("rank")).as("ranking and rank stem alike").isEqualTo(2);
            assertThat(s.termDf("login")).isEqualTo(1);
        }
    }

    @Test
    void aTaskClaimedAgainIsNotCountedTwiceAndItsReportedFilesBecomeAnchors() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "Build the ranking API", 0));
            int anchorsBefore = stats(read(f).get("acct-ana/laptop")).distinctAnchors();
            f.given(done("job-1", "ok", List.of("src/search/RankResults.java"), 1));
            CorpusStats s = stats(read(f).get("acct-ana/laptop"));
            assertThat(s.n()).as("the report re-analyses the task, it does not add one").isEqualTo(1);
            assertThat(s.distinctAnchors()).as("the changed file is an anchor now").isGreaterThan(anchorsBefore);
            assertThat(read(f)).as("nothing changed, nothing is published again").isEmpty();
        }
    }

    @Test
    void aChangedTableIsMarkedInAChangeloggedStoreUntilItIsPublished() {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "Build the ranking API", 0));
            org.apache.kafka.streams.state.KeyValueStore<String, Long> pending = f.driver.getKeyValueStore(StoreNames.PENDING_CORPUS);
            assertThat(pending.get("acct-ana/laptop")).as("marked with the change, before the once-a-second publication").isEqualTo(1L);
            assertThat(read(f)).containsOnlyKeys("acct-ana/laptop");
            assertThat(pending.get("acct-ana/laptop")).as("unmarked once published").isNull();
            assertThat(read(f)).as("an unchanged table is not published again").isEmpty();
            assertThat(f.driver.producedTopicNames()).contains("test-projector-" + StoreNames.PENDING_CORPUS + "-changelog");
        }
    }

    /** The documents of {@code account/computer}'s table in the store, by key. */
    private static List<String> storedDocs(ChainFixture f, String table) {
        List<String> keys = new java.util.ArrayList<>();
        org.apache.kafka.streams.state.KeyValueStore<String, String> docs = f.driver.getKeyValueStore(StoreNames.CORPUS_DOCS);
        try (var it = docs.prefixScan(table + "/", new org.apache.kafka.common.serialization.StringSerializer())) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        return keys;
    }

    @Test
    void aTableLoadedAgainFromTheStoreReplacesATasksDocumentAndDropsWhatFallsOutOfAShrunkWindow() throws Exception {
        try (ChainFixture f = new ChainFixture()) {
            f.given(claimed("job-1", null, "Build the ranking API", 0),
                    claimed("job-2", null, "Rank results by recency", 1),
                    claimed("job-3", null, "Fix the login page", 2));
            assertThat(storedDocs(f, "acct-ana/laptop")).hasSize(3);
            // a config change drops the tables in memory: the next change loads the table from its stored documents
            f.given(ChoiceConfigEvents.changed(SessionChoiceConfig.defaults(), T0.plusSeconds(180)));
            f.given(done("job-1", "ok", List.of("src/search/RankResults.java"), 4));
            assertThat(stats(read(f).get("acct-ana/laptop")).n()).isEqualTo(3);
            assertThat(storedDocs(f, "acct-ana/laptop")).as("job-1's older document is deleted, not kept beside its new one")
                    .hasSize(3).doesNotContain(CorpusProcessor.docKey("acct-ana/laptop", 1));

            f.given(ChoiceConfigEvents.changed(ConfigLoader.merge(SessionChoiceConfig.defaults(), "{\"limits\":{\"corpusTasks\":2}}"),
                    T0.plusSeconds(300)));
            f.given(claimed("job-4", null, "Cache the ranking", 6));
            assertThat(stats(read(f).get("acct-ana/laptop")).n()).isEqualTo(2);
            assertThat(storedDocs(f, "acct-ana/laptop")).as("the documents beyond the shrunk window are deleted from the store")
                    .hasSize(2);
        }
    }
}
