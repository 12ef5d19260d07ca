package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 "anchors" (anchorsOf): file paths, code names, issue and pull-request numbers, web addresses. */
class AnchorsTest {
    final Anchors anchors = new Anchors(SessionChoiceConfig.defaults().text());

    Set<String> of(String text) {
        Set<String> s = new TreeSet<>();
        anchors.ofText(text, s);
        return s;
    }

    @Test
    void tableOfAnchorKinds() {
        record Case(String rule, String text, List<String> contains, List<String> absent) {
        }
        List<Case> cases = List.of(
                new Case("file path", "edit apps/hub-api/src/workspace/score.ts now",
                        List.of("path:apps/hub-api/src/workspace/score.ts", "file:score.ts"), List.of()),
                new Case("file name alone", "see SessionStore.java", List.of("file:SessionStore.java", "name:SessionStore"), List.of()),
                new Case("camelCase", "call rankResults here", List.of("name:rankResults"), List.of()),
                new Case("snake_case", "the auth_session table", List.of("name:auth_session"), List.of()),
                new Case("PascalCase", "the SessionStore class", List.of("name:SessionStore"), List.of("name:The")),
                new Case("pull request number", "fixes #123.", List.of("issue:#123"), List.of()),
                new Case("issue key", "KAFKA-42 and ABC-7", List.of("issue:KAFKA-42", "issue:ABC-7"), List.of()),
                new Case("not an issue key: UTF-8, SHA-256", "UTF-8 and SHA-256", List.of(), List.of("issue:UTF-8", "issue:SHA-256")),
                new Case("web address", "see https://example.com/docs/api.", List.of("url:https://example.com/docs/api"), List.of("path:example.com/docs/api")),
                new Case("a package abbreviation is not a file", "with o.a.k.c requests", List.of(), List.of("file:o.a.k.c")),
                new Case("qualified names give their code name", "kafka.server.KafkaApis and ProducerTest.testSendWithDeadBroker()",
                        List.of("name:KafkaApis", "name:ProducerTest", "name:testSendWithDeadBroker"), List.of()),
                new Case("plain words are not anchors", "Kafka rank and/or results", List.of(), List.of("name:Kafka", "path:and/or")),
                new Case("ensemble links are the link signal's", "ensemble://task/abc /tasks/def", List.of(), List.of("url:ensemble://task/abc")),
                new Case("common files: package.json, README.md, index.ts, pom.xml", "package.json README.md src/index.ts clients/pom.xml",
                        List.of(), List.of("file:package.json", "file:README.md", "path:src/index.ts", "file:index.ts", "path:clients/pom.xml")));
        for (Case c : cases) {
            Set<String> got = of(c.text());
            if (!c.contains().isEmpty()) assertThat(got).as(c.rule()).containsAll(c.contains());
            if (!c.absent().isEmpty()) assertThat(got).as(c.rule()).doesNotContainAnyElementsOf(c.absent());
        }
    }

    @Test
    void foldersAndCTypeNamesAreNotAnchors() {
        record Case(String rule, String text, List<String> contains, List<String> absent) {
        }
        List<Case> cases = List.of(
                new Case("a folder in a text (no file name)", "Bump serde from 1.0.1 to 1.0.2 in /lang/rust",
                        List.of(), List.of("path:lang/rust", "path:/lang/rust")),
                new Case("a deeper folder", "moved to src/main/java/org/apache", List.of(), List.of("path:src/main/java/org/apache")),
                new Case("a folder with a trailing slash", "under lang/java/avro/", List.of(), List.of("path:lang/java/avro", "path:lang/java/avro/")),
                new Case("a file path still counts", "edit lang/rust/src/schema.rs", List.of("path:lang/rust/src/schema.rs", "file:schema.rs"), List.of()),
                new Case("C type names (size_t, uint8_t, int64_t)", "use size_t and uint8_t not int64_t",
                        List.of(), List.of("name:size_t", "name:uint8_t", "name:int64_t")),
                new Case("snake_case names still count", "the avro_schema table", List.of("name:avro_schema"), List.of()));
        for (Case c : cases) {
            Set<String> got = of(c.text());
            if (!c.contains().isEmpty()) assertThat(got).as(c.rule()).containsAll(c.contains());
            if (!c.absent().isEmpty()) assertThat(got).as(c.rule()).doesNotContainAnyElementsOf(c.absent());
        }
    }

    @Test
    void changedFoldersAreNotFileAnchors() {
        Set<String> s = new HashSet<>();
        anchors.ofFiles(List.of("lang/rust", "lang/rust/src/lib2.rs", "lang/java/", "share/schemas/x.avsc"), s);
        assertThat(s).containsExactlyInAnyOrder("path:lang/rust/src/lib2.rs", "file:lib2.rs", "path:share/schemas/x.avsc", "file:x.avsc");
    }

    @Test
    void filesChangedAreAnchorsAndCommonFilesAreNot() {
        Set<String> s = new HashSet<>();
        anchors.ofFiles(List.of("core/src/main/scala/kafka/server/KafkaApis.scala", "build.gradle", "Makefile", "docs/LICENSE"), s);
        assertThat(s).containsExactlyInAnyOrder("path:core/src/main/scala/kafka/server/KafkaApis.scala", "file:KafkaApis.scala", "name:KafkaApis");
    }

    @Test
    void aFileSharedByItsPathIsNotCountedAgainByItsName() {
        Set<String> shared = new HashSet<>(Set.of("path:src/auth/SessionStore.java", "file:SessionStore.java", "name:SessionStore", "issue:#5"));
        Anchors.dedupeFiles(shared);
        assertThat(shared).containsExactlyInAnyOrder("path:src/auth/SessionStore.java", "issue:#5");
        Set<String> byName = new HashSet<>(Set.of("file:SessionStore.java", "name:SessionStore"));
        Anchors.dedupeFiles(byName);
        assertThat(byName).containsExactly("file:SessionStore.java");
    }

    @Test
    void anAnchorAsShownIsAnIssueKeyOnlyWhenTheseWordListsReadItAsOneWhole() throws Exception {
        for (String key : List.of("KAFKA-42", "#77", "CVE-2024-1234")) assertThat(anchors.isIssueKey(key)).as(key).isTrue();
        for (String other : List.of("UTF-8", "SessionStore", "src/KAFKA-42.java", "KAFKA-42.md", "https://example.com/KAFKA-42", ""))
            assertThat(anchors.isIssueKey(other)).as(other).isFalse();
        Anchors kafkaIsNoKey = new Anchors(ConfigLoader.merge(SessionChoiceConfig.defaults(), "{\"text\": {\"notIssueKeys\": [\"KAFKA\"]}}").text());
        assertThat(kafkaIsNoKey.isIssueKey("KAFKA-42")).isFalse();
        assertThat(kafkaIsNoKey.isIssueKey("#77")).isTrue();
    }
}
