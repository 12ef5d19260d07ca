package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Guide §4 "topic"/"Cost", DESIGN §4: N and document frequencies over the last limits.corpusTasks tasks, sliding. */
class CorpusStatsTest {
    static TextAnalysis.CorpusDoc doc(String id, Set<String> terms, Set<String> anchors) {
        return new TextAnalysis.CorpusDoc(id, terms, anchors);
    }

    @Test
    void countsNAndDocumentFrequencies() {
        CorpusStats c = new CorpusStats("a", "c", 10);
        c.add(doc("t1", Set.of("rank", "api", "rank api"), Set.of("issue:#1")));
        c.add(doc("t2", Set.of("rank"), Set.of("issue:#1", "name:SessionStore")));
        assertThat(c.n()).isEqualTo(2);
        assertThat(c.termDf("rank")).isEqualTo(2);
        assertThat(c.termDf("rank api")).isEqualTo(1);
        assertThat(c.termDf("absent")).isZero();
        assertThat(c.anchorDf("issue:#1")).isEqualTo(2);
        // term weight's idf = ln((N+1)/(df+1))
        assertThat(c.idf("api")).isCloseTo(Math.log(3.0 / 2.0), within(1e-12));
        assertThat(c.idf("rank")).isCloseTo(0, within(1e-12));
    }

    @Test
    void aTaskLeavingTheWindowIsSubtracted() {
        CorpusStats c = new CorpusStats("a", "c", 2);
        assertThat(c.add(doc("t1", Set.of("old"), Set.of("issue:#1")))).isNull();
        assertThat(c.add(doc("t2", Set.of("mid"), Set.of()))).isNull();
        assertThat(c.add(doc("t3", Set.of("new"), Set.of()))).isEqualTo("t1");
        assertThat(c.n()).isEqualTo(2);
        assertThat(c.termDf("old")).isZero();
        assertThat(c.anchorDf("issue:#1")).isZero();
        assertThat(c.distinctTerms()).isEqualTo(2);
        assertThat(c.taskIds()).containsExactly("t2", "t3");
    }

    @Test
    void aTaskAddedAgainReplacesItsEarlierEntry() {
        CorpusStats c = new CorpusStats("a", "c", 5);
        c.add(doc("t1", Set.of("x"), Set.of()));
        c.add(doc("t2", Set.of("y"), Set.of()));
        c.add(doc("t1", Set.of("z"), Set.of()));
        assertThat(c.n()).isEqualTo(2);
        assertThat(c.termDf("x")).isZero();
        assertThat(c.termDf("z")).isEqualTo(1);
        assertThat(c.taskIds()).containsExactly("t2", "t1");
    }

    @Test
    void compactFormRoundTripsAndIsDeterministic() {
        CorpusStats a = new CorpusStats("acct", "comp", 3), b = new CorpusStats("acct", "comp", 3);
        for (CorpusStats c : new CorpusStats[]{a, b}) {
            c.add(doc("t1", Set.of("rank", "api", "rank api"), Set.of("issue:#1")));
            c.add(doc("t2", Set.of("b", "c"), Set.of("path:a/b.java")));
            c.add(doc("t3", Set.of("rank"), Set.of()));
            c.add(doc("t4", Set.of("api"), Set.of("issue:#1")));
        }
        byte[] bytes = a.toBytes();
        assertThat(bytes).isEqualTo(b.toBytes());
        CorpusStats back = CorpusStats.fromBytes(bytes);
        assertThat(back.sameAs(a)).isTrue();
        assertThat(back.n()).isEqualTo(3);
        assertThat(back.termDf("api")).isEqualTo(1);
        assertThat(back.termDf("rank")).isEqualTo(1);
        assertThat(back.anchorDf("issue:#1")).isEqualTo(1);
        assertThat(back.account()).isEqualTo("acct");
        assertThat(back.capacity()).isEqualTo(3);
        assertThatThrownBy(() -> CorpusStats.fromBytes(new byte[]{1, 2, 3})).isInstanceOf(IllegalArgumentException.class);
    }
}
