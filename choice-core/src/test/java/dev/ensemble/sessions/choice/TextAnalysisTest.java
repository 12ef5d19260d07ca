package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Guide §4 "topic": lower-cased, common words dropped, Porter stems, phrases 1.5×, title 3×, labels 2×, rest 1×. */
class TextAnalysisTest {
    final TextAnalysis ta = TextAnalysis.forConfig(SessionChoiceConfig.defaults().text());

    @Test
    void rankingRankedRanksAllStemToRank() {
        assertThat(ta.stems("Ranking ranked RANKS")).containsExactly("rank", "rank", "rank");
    }

    @Test
    void englishStopWordsExtraStopwordsNumbersAndSingleLettersAreDropped() {
        assertThat(ta.stems("the API is for a ranking of 42 results x")).containsExactly("api", "rank", "result");
        assertThat(ta.stems("we should also please fix it")).containsExactly("fix"); // extraStopwords: we, should, also, please
    }

    @Test
    void extraStopwordsFromConfigAreDropped() {
        SessionChoiceConfig.Text t = SessionChoiceConfig.defaults().text();
        SessionChoiceConfig.Text more = new SessionChoiceConfig.Text(List.of("ranking"), t.followUp(), t.newWork(),
                t.followUpLabels(), t.commonFiles(), t.notIssueKeys(), t.fieldWeights(), t.phraseWeight());
        assertThat(TextAnalysis.forConfig(more).stems("ranking api")).containsExactly("api");
    }

    @Test
    void neighbouringTermsAfterStopWordRemovalFormPhrasesWeighted1_5() {
        // "ranking of results": "of" is removed, so "rank" and "result" are neighbours
        Map<String, Double> c = ta.counts(TaskFacts.of("", "ranking of results", List.of()), null).asMap();
        assertThat(c).containsEntry("rank", 1.0).containsEntry("result", 1.0).containsEntry("rank result", 1.5);
    }

    @Test
    void titleCounts3xLabels2xDescriptionPageReportsInstructions1x() {
        TaskFacts f = new TaskFacts("ranking", "ranking", List.of("ranking"), "ranking", "ranking", null, null, null, List.of());
        assertThat(ta.counts(f, "ranking").count("rank")).isCloseTo(3 + 2 + 1 + 1 + 1 + 1, within(1e-12));
        assertThat(ta.counts(TaskFacts.of("Build ranking", null, List.of()), null).count("build rank")).isCloseTo(4.5, within(1e-12));
    }

    @Test
    void corpusDocTakesTitleLabelsAndTheFirstPartOfDescriptionAndPage() {
        String desc = "alpha " + "x".repeat(2000) + " omega";
        TextAnalysis.CorpusDoc d = ta.corpusDoc("t1", new TaskFacts("Ranking", desc, List.of("backend"), null,
                "instructionword", null, null, null, List.of()), List.of("src/Rank.java"), 1000);
        assertThat(d.terms()).contains("rank", "backend", "alpha").doesNotContain("omega", "instructionword");
        assertThat(d.anchors()).contains("path:src/Rank.java", "file:Rank.java");
    }

    @Test
    void filesAddedToAnAnalysedDocEqualTheDocAnalysedWithThem() {
        Path history = SharedData.path("data/kafka-history/tasks.jsonl");
        Assumptions.assumeTrue(Files.exists(history), "skipped: " + history + " is absent (../shared/data)");
        List<ChoiceEvaluation.HistoryTask> tasks = ChoiceEvaluation.read(history, 0);
        int compared = 0;
        for (ChoiceEvaluation.HistoryTask h : tasks.subList(0, 3000)) {
            TaskFacts f = TaskFacts.of(h.title(), h.description(), h.labels());
            TextAnalysis.CorpusDoc claimed = ta.corpusDoc(h.id(), f, List.of(), 1000);
            TextAnalysis.CorpusDoc direct = ta.corpusDoc(h.id(), f, h.files(), 1000);
            assertThat(ta.withFiles(claimed, h.files())).as(h.id()).isEqualTo(direct);
            if (!h.files().isEmpty()) compared++;
        }
        assertThat(compared).as("tasks with changed files").isGreaterThan(1000);
    }

    @Test
    void followUpAndNewWorkPatternsAndLabels() {
        record Case(String rule, TaskFacts facts, boolean followUp, boolean newWork) {
        }
        List<Case> cases = List.of(
                new Case("followUp: follow-up in the title", TaskFacts.of("Follow-up to the ranking API", null, List.of()), true, false),
                new Case("followUp: continue", TaskFacts.of("Continue the migration", null, List.of()), true, false),
                new Case("followUp: part 2", TaskFacts.of("Ranking API, part 2", null, List.of()), true, false),
                new Case("followUpLabels: follow-up label", TaskFacts.of("Tidy ranking", null, List.of("Follow-up")), true, false),
                new Case("newWork: Add at the start", TaskFacts.of("Add a billing page", null, List.of()), false, true),
                new Case("newWork: new feature", TaskFacts.of("Billing: new feature for invoices", null, List.of()), false, true),
                new Case("neither", TaskFacts.of("Fix flaky ranking test", null, List.of()), false, false));
        for (Case c : cases) {
            assertThat(ta.isFollowUp(c.facts())).as(c.rule()).isEqualTo(c.followUp());
            assertThat(ta.isNewWork(c.facts())).as(c.rule()).isEqualTo(c.newWork());
        }
    }

    @Test
    void linksInTextAndLinkedTaskIdsAreCollected() {
        TaskFacts f = new TaskFacts("t", "see ensemble://task/abc and /tasks/def", List.of(), "https://x.io/tasks/ghi", null,
                null, null, null, List.of("jkl"));
        assertThat(ta.ofNewTask(f).links()).containsExactlyInAnyOrder("abc", "def", "ghi", "jkl");
    }
}
