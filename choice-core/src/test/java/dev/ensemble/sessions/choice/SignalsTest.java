package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Guide §4 "Signals" and "Score": each signal and its part (weight × signal). */
class SignalsTest {
    static TaskFacts withLinks(String title, String description, String... linked) {
        return new TaskFacts(title, description, List.of(), null, null, null, null, null, List.of(linked));
    }

    @Test
    void link_theTaskNamesATaskOfTheSession() {
        record Case(String rule, TaskFacts facts) {
        }
        List<Case> cases = List.of(
                new Case("a dependency / @mention (linkedTaskIds)", withLinks("Wire it up", null, "t1")),
                new Case("a link in its text (ensemble://task/<id>)", withLinks("Wire it up", "after ensemble://task/t1")),
                new Case("a link in its text (/tasks/<id>)", withLinks("Wire it up", "after https://app/tasks/t1")),
                new Case("a link in the run's instructions", new TaskFacts("Wire it up", null, List.of(), null, "see /tasks/t1", null, null, null, List.of())));
        for (Case c : cases) {
            Decision d = decide(run(c.facts()), session("s1", 600, task("t0", facts("Other")), task("t1", facts("Build the ranking API"))));
            ScoredCandidate s = only(d);
            assertThat(s.signals().link()).as(c.rule()).isTrue();
            assertThat(s.signals().linkedTitle()).as(c.rule()).isEqualTo("Build the ranking API");
            assertThat(s.parts()).as(c.rule()).containsEntry(Scorer.LINK, 10.0);
            assertThat(d.decision()).as(c.rule()).isEqualTo(Decision.Choice.CONTINUE);
            assertThat(d.reason()).as(c.rule()).isEqualTo("Continued the agent's session: it mentions “Build the ranking API”");
        }
    }

    @Test
    void deliverableMeetingParentPage_theSameOneAsATaskOfTheSession() {
        TaskFacts mine = new TaskFacts("Write copy", null, List.of(), null, null, "del-1", "meet-1", "page-1", List.of());
        TaskFacts theirs = new TaskFacts("Draft", null, List.of(), null, null, "del-1", "meet-1", "page-1", List.of());
        ScoredCandidate s = only(decide(run(mine), session("s1", 600, task("t1", theirs))));
        assertThat(s.signals().deliverable()).isTrue();
        assertThat(s.signals().meeting()).isTrue();
        assertThat(s.signals().parentPage()).isTrue();
        assertThat(s.parts()).containsEntry(Scorer.DELIVERABLE, 3.0).containsEntry(Scorer.MEETING, 3.0).containsEntry(Scorer.PARENT_PAGE, 2.0);
        TaskFacts other = new TaskFacts("Draft", null, List.of(), null, null, "del-2", "meet-2", "page-2", List.of());
        ScoredCandidate none = only(decide(run(mine), session("s1", 600, task("t1", other))));
        assertThat(none.parts()).doesNotContainKeys(Scorer.DELIVERABLE, Scorer.MEETING, Scorer.PARENT_PAGE);
    }

    @Test
    void anchors_3PerAnchorUpTo6() {
        record Case(String rule, String text, int anchors, double part) {
        }
        List<Case> cases = List.of(
                new Case("one shared anchor", "Fix KAFKA-42", 1, 3),
                new Case("two shared anchors", "Fix KAFKA-42 in SessionStore", 2, 6),
                new Case("three shared anchors, capped at 6", "Fix KAFKA-42 in SessionStore via rankResults", 3, 6));
        for (Case c : cases) {
            ScoredCandidate s = only(decide(run(facts(c.text())),
                    session("s1", 600, task("t1", facts("KAFKA-42: SessionStore and rankResults")))));
            assertThat(s.signals().anchors()).as(c.rule()).isEqualTo(c.anchors());
            assertThat(s.parts().get(Scorer.ANCHORS)).as(c.rule()).isEqualTo(c.part());
        }
    }

    @Test
    void anchors_issueKeysWeighWeightsIssueKey_byDefaultTheAnchorWeight() {
        record Case(String rule, double issueKey, String text, double part) {
        }
        List<Case> cases = List.of(
                new Case("default: a key weighs as an anchor", 3, "Fix KAFKA-42", 3),
                new Case("default: a pull-request number too", 3, "Fix after #77", 3),
                new Case("issueKey 6: a key alone", 6, "Fix KAFKA-42", 6),
                new Case("issueKey 6: a pull-request number alone", 6, "Fix after #77", 6),
                new Case("issueKey 6: a code name stays 3", 6, "Fix SessionStore", 3),
                new Case("issueKey 6: key and code name, capped at anchorMax", 6, "Fix KAFKA-42 in SessionStore", 6));
        for (Case c : cases) {
            SessionChoiceConfig cfg = CFG.withWeights(CFG.weights().withIssueKey(c.issueKey()));
            ScoredCandidate s = only(decide(run(facts(c.text())), corpus(100), cfg,
                    session("s1", 600, task("t1", facts("KAFKA-42 (#77): SessionStore")))));
            assertThat(s.parts().get(Scorer.ANCHORS)).as(c.rule()).isEqualTo(c.part());
        }
        assertThat(CFG.weights().issueKey()).isEqualTo(CFG.weights().anchor());
        ScoredCandidate s = only(decide(run(facts("Fix KAFKA-42 after #77 for CVE-2024-1234 in SessionStore")),
                session("s1", 600, task("t1", facts("KAFKA-42 #77 CVE-2024-1234 SessionStore"), List.of("src/Ranking.java")))));
        assertThat(s.signals().anchors()).isEqualTo(4);
        assertThat(s.signals().issueKeys()).as("issue-kind anchors only").isEqualTo(3);
    }

    @Test
    void anchors_onlyAnchorsOfTheIssueKindWeighIssueKey() throws Exception {
        SessionChoiceConfig keys6 = CFG.withWeights(CFG.weights().withIssueKey(6));
        // the signals say how many shared anchors are keys: an anchor shown as KAFKA-42 that is not of the issue kind
        // weighs as any anchor
        Signals notAKey = new Signals(false, false, false, false, 1, List.of("KAFKA-42"), 0, 0, List.of(), false, false,
                false, null, 1, null);
        assertThat(Scorer.score("s1", NOW, notAKey, keys6).parts().get(Scorer.ANCHORS)).isEqualTo(3.0);
        Signals aKey = new Signals(false, false, false, false, 1, List.of("KAFKA-42"), 1, 0, List.of(), false, false,
                false, null, 1, null);
        assertThat(Scorer.score("s1", NOW, aKey, keys6).parts().get(Scorer.ANCHORS)).isEqualTo(6.0);

        // a record keeps anchors as shown; scored again under word lists whose notIssueKeys has the prefix, the shared
        // KAFKA-42 is no key there (it stays an anchor: anchors are taken as stored)
        Decision d = decide(run(facts("Fix KAFKA-42")), corpus(100), keys6, session("s1", 600, task("t1", facts("KAFKA-42 start"))));
        assertThat(only(d).parts().get(Scorer.ANCHORS)).isEqualTo(6.0);
        dev.ensemble.sessions.events.SessionChoiceRecorded rec = ChoiceRecords.toEvent(d);
        assertThat(Scorer.rescore(ChoiceRecords.storedCandidates(rec, keys6.text()), keys6).best().parts().get(Scorer.ANCHORS))
                .isEqualTo(6.0);
        SessionChoiceConfig kafkaIsNoKey = ConfigLoader.merge(keys6, "{\"text\": {\"notIssueKeys\": [\"KAFKA\"]}}");
        Scorer.Ranking again = Scorer.rescore(ChoiceRecords.storedCandidates(rec, kafkaIsNoKey.text()), kafkaIsNoKey);
        assertThat(again.best().signals().issueKeys()).isZero();
        assertThat(again.best().parts().get(Scorer.ANCHORS)).isEqualTo(3.0);
    }

    @Test
    void anchors_aFolderIsNoAnchor() {
        // two dependency bumps in the same folder share the folder only: no anchor (it was path:lang/java)
        ScoredCandidate s = only(decide(run(facts("Bump jackson from 2.1 to 2.2 in /lang/java")),
                session("s1", 600, task("t1", facts("Bump slf4j from 1.7 to 1.8 in /lang/java"), List.of("lang/java/pom.xml")))));
        assertThat(s.signals().anchorsShared()).isEmpty();
    }

    @Test
    void automated_aTitleMatchingTextAutomatedStartsNewWithoutScoring() {
        SessionChoiceConfig rec = ConfigLoader.recommended();
        S earlier = session("s1", 10, task("t1", facts("Bump jackson from 2.1 to 2.2 in /lang/java")));
        record Case(String rule, SessionChoiceConfig cfg, String title, Decision.Choice choice, String note) {
        }
        List<Case> cases = List.of(
                new Case("defaults: no automated patterns, it is scored", CFG, "Bump jackson from 2.2 to 2.3 in /lang/java", Decision.Choice.CONTINUE, null),
                new Case("recommended: a dependency bump", rec, "Bump jackson from 2.2 to 2.3 in /lang/java", Decision.Choice.NEW, Decision.AUTOMATED),
                new Case("recommended: a release commit", rec, "[maven-release-plugin] prepare release nifi-1.2.0", Decision.Choice.NEW, Decision.AUTOMATED),
                new Case("recommended: a person's task is scored", rec, "Fix the jackson 2.2 bump in lang/java", null, null));
        for (Case c : cases) {
            Decision d = decide(run(facts(c.title())), corpus(100), c.cfg(), earlier);
            if (c.choice() != null) assertThat(d.decision()).as(c.rule()).isEqualTo(c.choice());
            assertThat(d.note()).as(c.rule()).isEqualTo(c.note());
            assertThat(d.candidates()).as(c.rule()).hasSize(c.note() == null ? 1 : 0);
        }
    }

    @Test
    void anchors_theSessionSideIncludesTheFilesItsRunsChanged_aPathCountsOnce() {
        TaskFacts mine = facts("Speed up core/src/main/scala/kafka/server/KafkaApis.scala");
        ScoredCandidate s = only(decide(run(mine), session("s1", 600,
                task("t1", facts("Refactor request handling"), List.of("core/src/main/scala/kafka/server/KafkaApis.scala")))));
        assertThat(s.signals().anchorsShared()).containsExactly("core/src/main/scala/kafka/server/KafkaApis.scala");
        assertThat(s.signals().anchors()).isEqualTo(1);
        // naming only the class still meets the changed file, once
        ScoredCandidate byName = only(decide(run(facts("Speed up KafkaApis")), session("s1", 600,
                task("t1", facts("Refactor request handling"), List.of("core/src/main/scala/kafka/server/KafkaApis.scala")))));
        assertThat(byName.signals().anchorsShared()).containsExactly("KafkaApis");
    }

    @Test
    void anchors_filesEveryRepositoryHasDoNotCount() {
        ScoredCandidate s = only(decide(run(facts("Bump package.json and README.md")), session("s1", 600,
                task("t1", facts("x"), List.of("package.json", "README.md", "src/index.ts")))));
        assertThat(s.signals().anchors()).isZero();
    }

    @Test
    void anchors_inMoreThanAnchorMaxDocShareOfThePersonsTasksDoNotCount() {
        // 100 tasks: an anchor in 20 of them (20%) counts, in 21 (over 20%) does not
        for (int[] c : new int[][]{{20, 1}, {21, 0}}) {
            CorpusStats corpus = new CorpusStats(ACCOUNT, COMPUTER, 2000);
            for (int i = 0; i < 100; i++) {
                corpus.add(new TextAnalysis.CorpusDoc("f" + i, Set.of("zz" + i), i < c[0] ? Set.of("issue:KAFKA-42") : Set.of()));
            }
            ScoredCandidate s = only(decide(run(facts("Fix KAFKA-42")), corpus, CFG, session("s1", 600, task("t1", facts("KAFKA-42 start")))));
            assertThat(s.signals().anchors()).as("anchor in %d of 100 tasks", c[0]).isEqualTo(c[1]);
        }
    }

    @Test
    void anchors_sharedWithMoreThanHalfOfTheCandidatesDoNotCount() {
        TaskFacts mine = facts("Fix KAFKA-42 and SessionStore");
        // 4 candidates: KAFKA-42 in 3 (> half) does not count; SessionStore in 2 (= half) counts
        Decision d = decide(run(mine),
                session("s1", 10, task("t1", facts("KAFKA-42 SessionStore"))),
                session("s2", 20, task("t2", facts("KAFKA-42 SessionStore"))),
                session("s3", 30, task("t3", facts("KAFKA-42"))),
                session("s4", 40, task("t4", facts("unrelated"))));
        assertThat(of(d, "s1").signals().anchorsShared()).containsExactly("SessionStore");
        assertThat(of(d, "s3").signals().anchors()).isZero();
    }

    @Test
    void topic_cosineOfTfIdfVectors_onlyWithTopicMinSharedUncommonTerms() {
        // two shared uncommon words: counts; one: does not
        ScoredCandidate two = only(decide(run(facts("Ranking latency dashboard")), session("s1", 600, task("t1", facts("Ranking latency")))));
        assertThat(two.signals().topic()).isGreaterThan(0.5);
        assertThat(two.signals().topicTerms()).containsExactlyInAnyOrder("ranking", "latency");
        assertThat(two.parts().get(Scorer.TOPIC)).isCloseTo(6 * two.signals().topic(), within(1e-12));
        ScoredCandidate one = only(decide(run(facts("Ranking dashboard")), session("s1", 600, task("t1", facts("Ranking latency")))));
        assertThat(one.signals().topic()).isZero();
        // identical text: cosine 1
        ScoredCandidate same = only(decide(run(facts("Ranking latency dashboard")), session("s1", 600, task("t1", facts("Ranking latency dashboard")))));
        assertThat(same.signals().topic()).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void topic_aWordInMoreThanTopicCommonShareOfTasksIsCommon() {
        CorpusStats corpus = new CorpusStats(ACCOUNT, COMPUTER, 2000);
        for (int i = 0; i < 100; i++) corpus.add(new TextAnalysis.CorpusDoc("f" + i, i < 30 ? Set.of("rank") : Set.of("zz" + i), Set.of()));
        ScoredCandidate s = only(decide(run(facts("Ranking latency")), corpus, CFG, session("s1", 600, task("t1", facts("Ranking latency")))));
        assertThat(s.signals().topic()).as("rank is common (30%%), so only one uncommon shared term").isZero();
    }

    @Test
    void topic_countsProportionallyLessBelowMinCorpus() {
        ScoredCandidate full = only(decide(run(facts("Ranking latency dashboard")), corpus(50), CFG,
                session("s1", 600, task("t1", facts("Ranking latency dashboard")))));
        ScoredCandidate half = only(decide(run(facts("Ranking latency dashboard")), corpus(25), CFG,
                session("s1", 600, task("t1", facts("Ranking latency dashboard")))));
        assertThat(full.signals().topic()).isCloseTo(1.0, within(1e-9));
        assertThat(half.signals().topic()).isCloseTo(0.5, within(1e-9));
        ScoredCandidate empty = only(decide(run(facts("Ranking latency dashboard")), corpus(0), CFG,
                session("s1", 600, task("t1", facts("Ranking latency dashboard")))));
        assertThat(empty.signals().topic()).isZero();
    }

    @Test
    void followUpPlus1_newWorkMinus1OnlyWhenNoLinkOrAnchorTiesIt() {
        ScoredCandidate fu = only(decide(run(facts("Follow-up: tidy the dashboard")), session("s1", 600, task("t1", facts("x")))));
        assertThat(fu.signals().followUp()).isTrue();
        assertThat(fu.parts()).containsEntry(Scorer.FOLLOW_UP, 1.0);
        ScoredCandidate nw = only(decide(run(facts("Add a billing page")), session("s1", 600, task("t1", facts("x")))));
        assertThat(nw.signals().newWork()).isTrue();
        assertThat(nw.parts()).containsEntry(Scorer.NEW_WORK, -1.0);
        ScoredCandidate tied = only(decide(run(facts("Add a billing page for KAFKA-7")), session("s1", 600, task("t1", facts("KAFKA-7")))));
        assertThat(tied.signals().newWork()).isTrue();
        assertThat(tied.parts()).doesNotContainKey(Scorer.NEW_WORK);
        ScoredCandidate linked = only(decide(run(withLinks("Add a billing page", null, "t1")), session("s1", 600, task("t1", facts("x")))));
        assertThat(linked.parts()).doesNotContainKey(Scorer.NEW_WORK);
    }

    @Test
    void warm_activeInTheLastWarmMinutes() {
        assertThat(only(decide(run(facts("x")), session("s1", 60, task("t1", facts("y"))))).parts()).containsEntry(Scorer.WARM, 1.0);
        S justOver = session("s1", 60, task("t1", facts("y")));
        justOver.last = justOver.last.minusMillis(1);
        assertThat(only(decide(run(facts("x")), justOver)).signals().warm()).isFalse();
    }

    @Test
    void fillAndChainLength() {
        record Case(String rule, Double fill, int tasks, Double fillPart, Double chainPart) {
        }
        List<Case> cases = List.of(
                new Case("fill 40% is not more than size.soft", 0.40, 1, null, null),
                new Case("fill over size.soft: -2", 0.41, 1, -2.0, null),
                new Case("known fill: chain length does not count", 0.10, 30, null, null),
                new Case("unknown fill, 8 tasks", null, 8, null, null),
                new Case("unknown fill, over size.longChainTasks: -2", null, 9, null, -2.0));
        for (Case c : cases) {
            ScoredCandidate s = only(decide(run(facts("x")), session("s1", 600, task("t1", facts("y"))).fill(c.fill()).tasks(c.tasks())));
            assertThat(s.parts().get(Scorer.FILL)).as(c.rule()).isEqualTo(c.fillPart());
            assertThat(s.parts().get(Scorer.CHAIN)).as(c.rule()).isEqualTo(c.chainPart());
            assertThat(s.signals().fill()).as(c.rule()).isEqualTo(c.fill());
            assertThat(s.signals().tasks()).as(c.rule()).isEqualTo(c.tasks());
        }
    }
}
