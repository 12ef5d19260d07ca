package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The session index on its own (no broker): analysis, snippets, filters and the cursor's snapshot. Over HTTP with the
 * read side on a real broker: {@code SessionSearchHttpTest}.
 */
class SessionIndexTest {
    static final Instant T0 = Instant.parse("2026-11-02T09:00:00Z");
    @TempDir
    Path dir;
    SessionIndex index;

    @BeforeEach
    void open() {
        index = new SessionIndex(dir.resolve("0_0"));
    }

    @AfterEach
    void close() {
        index.close();
    }

    static SessionView view(String account, String id, int minute, String... prompts) {
        List<RunView> runs = new ArrayList<>();
        for (int i = 0; i < prompts.length; i++) {
            runs.add(RunView.newBuilder().setRunId(id + "-r" + i).setTaskId("task-" + id + "-" + i).setTitle(prompts[i])
                    .setComputerId("laptop").setStatus("DONE").setClaimedAt(T0).build());
        }
        return SessionView.newBuilder().setSessionId(id).setAccount(account).setSpace("local:laptop").setSequence(1L)
                .setAgent("claude-code").setComputerId("laptop").setComputerIds(new ArrayList<>(List.of("laptop")))
                .setFolder("/a").setFolders(new ArrayList<>(List.of("/a", "/work/billing-service"))).setKind("TERMINAL_CHAT")
                .setStatus(SessionStatus.IDLE).setFilesChanged(new ArrayList<>(List.of("src/main/Invoice.java")))
                .setCreatedAt(T0).setLastActiveAt(T0.plusSeconds(60L * minute)).setRuns(runs).setTasks(new ArrayList<>())
                .setFirstTaskTitle(prompts.length == 0 ? null : prompts[0]).build();
    }

    void put(SessionView v) {
        index.put(SessionIndex.key(v), v);
    }

    SessionIndex.Page page(String q, int limit, String cursor) throws Exception {
        return index.page("ana", new SessionQuery(q, null, null, null, null, null, limit, cursor));
    }

    static List<String> ids(SessionIndex.Page p) {
        return p.hits().stream().map(h -> h.summary().get("id").asText()).toList();
    }

    @Test
    void wordsAreStemmedPhrasesKeepTheirOrderAndTheSnippetMarksTheMatch() throws Exception {
        put(view("ana", "s1", 1, "Fix the flaky test", "The checkout runs slowly when the cart is large"));
        put(view("ana", "s2", 2, "Write the release notes", "large cart"));
        put(view("bo", "s3", 3, "The checkout runs slowly"));

        SessionIndex.Page running = page("running", 10, null);
        assertThat(ids(running)).containsExactly("s1");
        SessionIndex.Hit hit = running.hits().get(0);
        assertThat(hit.snippet()).isEqualTo("The checkout [[runs]] slowly when the cart is large");
        assertThat(hit.snippetField()).isEqualTo("prompt");

        assertThat(ids(page("\"cart is large\"", 10, null))).containsExactly("s1");
        assertThat(ids(page("\"large cart\"", 10, null))).containsExactly("s2");
        assertThat(ids(page("large cart", 10, null))).as("every word, any order").containsExactlyInAnyOrder("s1", "s2");
        assertThat(ids(page("\"test the checkout\"", 10, null))).as("a phrase never spans two prompts").isEmpty();
        assertThat(ids(page("checkout -flaky", 10, null))).isEmpty();
        // folders and files split at every non-letter; the second folder counts
        assertThat(ids(page("billing", 10, null))).containsExactlyInAnyOrder("s1", "s2");
        SessionIndex.Hit file = page("invoice", 10, null).hits().get(0);
        assertThat(file.snippet()).isEqualTo("src/main/[[Invoice]].java");
        assertThat(file.snippetField()).isEqualTo("file");
        // an id's start, for 'show' with a short id
        assertThat(ids(page("s", 10, null))).containsExactlyInAnyOrder("s1", "s2");
        put(view("ana", "claude-code:4c2ddfdc-b619", 4, "Hello"));
        assertThat(ids(page("claude-code:4c2ddfdc", 10, null))).as("a '-' inside the word").containsExactly("claude-code:4c2ddfdc-b619");
        assertThat(ids(page("nothing-like-this", 10, null))).isEmpty();
    }

    /**
     * A search worded like a prompt finds it: stop words are dropped in every field (before, "the" stayed a required
     * word that only a folder or file could match); a text of more clauses than Lucene allows is a 400 naming q, also
     * when the parse itself reaches the limit; fuzzy terms are not operators (each one expands over the index's terms).
     */
    @Test
    void aSearchWordedLikeThePromptFindsItAndCostlyQueriesAreRefusedOrPlain() throws Exception {
        put(view("ana", "s1", 1, "Build the ranking API"));
        put(view("ana", "s2", 2, "Rank the widgets"));
        assertThat(ids(page("Build the ranking API", 10, null))).containsExactly("s1");
        assertThat(ids(page("the ranking and the API", 10, null))).containsExactly("s1");
        String words = String.join(" ", java.util.Collections.nCopies(1025, "x"));
        assertThatThrownBy(() -> page(words, 10, null)).isInstanceOf(ApiError.class)
                .satisfies(e -> assertThat(((ApiError) e).status()).isEqualTo(400))
                .satisfies(e -> assertThat(((ApiError) e).details().get("field")).isEqualTo("q"));
        java.util.concurrent.atomic.AtomicBoolean expands = new java.util.concurrent.atomic.AtomicBoolean();
        SessionIndex.textQuery("rankin~2 widget~1").visit(new org.apache.lucene.search.QueryVisitor() {
            @Override
            public void consumeTermsMatching(org.apache.lucene.search.Query query, String field,
                                             java.util.function.Supplier<org.apache.lucene.util.automaton.ByteRunAutomaton> automaton) {
                expands.set(true); // a fuzzy (or other multi-term) query
            }

            @Override
            public org.apache.lucene.search.QueryVisitor getSubVisitor(org.apache.lucene.search.BooleanClause.Occur occur,
                                                                      org.apache.lucene.search.Query parent) {
                return this;
            }
        });
        assertThat(expands).as("no term of the query expands over the index's terms").isFalse();
        assertThat(ids(page("rankin~2", 10, null))).as("no fuzzy match of 'ranking'").isEmpty();
        assertThat(ids(page("ranking~", 10, null))).as("the word itself still matches, stemmed").containsExactlyInAnyOrder("s1", "s2");
    }

    /**
     * A word longer than any id is not also looked up as an id's start (Lucene's prefix automaton refuses about 1,000
     * bytes: it was a 500); a long word searched by its start ({@code word*}) is a 400 naming q.
     */
    @Test
    void aVeryLongWordIsSearchedAsTextAndALongPrefixIsA400NamingQ() throws Exception {
        put(view("ana", "s1", 1, "Build the ranking API"));
        String word = "x".repeat(1_001);
        assertThat(ids(page(word, 10, null))).isEmpty();
        assertThat(ids(page("ranking " + word.substring(0, 300), 10, null))).isEmpty();
        assertThatThrownBy(() -> page(word + "*", 10, null)).isInstanceOf(ApiError.class)
                .satisfies(e -> assertThat(((ApiError) e).status()).isEqualTo(400))
                .satisfies(e -> assertThat(((ApiError) e).details().get("field")).isEqualTo("q"))
                .hasMessageContaining("too long to search by its start");
        assertThat(ids(page("rank*", 10, null))).as("a short prefix still works").containsExactly("s1");
    }

    /** A search is ordered by relevance, not by last activity: the session that says the word most comes first. */
    @Test
    void aSearchIsOrderedByRelevanceTheListByLastActivity() throws Exception {
        put(view("ana", "s1", 1, "Speed up the checkout", "The checkout runs in half the time; the checkout is done"));
        put(view("ana", "s2", 2, "Review the checkout copy and the pricing page and the cart layout"));
        put(view("ana", "s3", 3, "Unrelated"));
        assertThat(ids(page("checkout", 10, null))).containsExactly("s1", "s2");
        assertThat(ids(page(null, 10, null))).containsExactly("s3", "s2", "s1");
    }

    @Test
    void aSnippetIsCutAroundItsMatchAndTheTextsOwnMarksAreNotMarks() throws Exception {
        String longPrompt = "word ".repeat(100) + "the [[wiki]] needle " + "tail ".repeat(100);
        put(view("ana", "s1", 1, longPrompt));
        String snippet = page("needle", 10, null).hits().get(0).snippet();
        assertThat(snippet).startsWith("…").endsWith("…").contains("the [ [wiki] ] [[needle]] tail");
        assertThat(snippet.length()).isLessThan(SessionIndex.SNIPPET_BEFORE + SessionIndex.SNIPPET_AFTER + 10);
    }

    @Test
    void pagesFollowTheFirstPagesSnapshotSoNoSessionComesTwiceOrIsLeftOut() throws Exception {
        for (int i = 0; i < 25; i++) {
            put(view("ana", "s" + i, i, "prompt " + i));
        }
        SessionIndex.Page first = page(null, 10, null);
        assertThat(ids(first)).startsWith("s24", "s23");
        // meanwhile s3 (on a later page) becomes the newest and s20 (on this one) changes too; a new session starts
        put(view("ana", "s3", 100, "prompt 3 again"));
        put(view("ana", "s20", 101, "prompt 20 again"));
        put(view("ana", "s99", 102, "new"));
        List<String> seen = new ArrayList<>(ids(first));
        String next = first.next();
        while (next != null) {
            SessionIndex.Page p = page(null, 10, next);
            seen.addAll(ids(p));
            next = p.next();
        }
        assertThat(seen).hasSize(25).doesNotHaveDuplicates().doesNotContain("s99");
        assertThat(new HashSet<>(seen)).isEqualTo(Set.copyOf(java.util.stream.IntStream.range(0, 25).mapToObj(i -> "s" + i).toList()));
        // a new first page sees the changes
        assertThat(ids(page(null, 3, null))).containsExactly("s99", "s20", "s3");
    }

    @Test
    void aCursorOfAnotherIndexContinuesAfterTheSamePlace() throws Exception {
        for (int i = 0; i < 5; i++) {
            put(view("ana", "s" + i, i, "prompt"));
        }
        String next = page(null, 2, null).next();
        index.close();
        index = new SessionIndex(dir.resolve("0_0")); // as after a restart: filled again from the store
        for (int i = 0; i < 5; i++) {
            put(view("ana", "s" + i, i, "prompt"));
        }
        SessionIndex.Page rest = page(null, 10, next);
        assertThat(ids(rest)).containsExactly("s2", "s1", "s0");
        assertThat(rest.next()).isNull();
    }

    @Test
    void aBadCursorOrOneOfAnotherSearchIsRefusedNamingTheField() throws Exception {
        for (int i = 0; i < 3; i++) {
            put(view("ana", "s" + i, i, "prompt"));
        }
        String next = page(null, 1, null).next();
        ApiError other = catchThrowableOfType(() -> page("prompt", 1, next), ApiError.class);
        assertThat(other.status()).isEqualTo(400);
        assertThat(other.details()).containsEntry("field", "cursor");
        assertThat(other.getMessage()).contains("another search");
        ApiError junk = catchThrowableOfType(() -> page(null, 1, "not-a-cursor"), ApiError.class);
        assertThat(junk.details()).containsEntry("field", "cursor");
    }

    @Test
    void filtersNarrowTheListAndADeletedSessionIsRemovedFromTheIndex() throws Exception {
        SessionView a = view("ana", "s1", 1, "one");
        SessionView b = view("ana", "s2", 2, "two");
        b.setAgent("codex");
        b.setComputerIds(new ArrayList<>(List.of("laptop", "desk")));
        b.setStatus(SessionStatus.WORKING);
        SessionView c = view("ana", "s3", 3, "three");
        c.setDeleted(true);
        c.setGone(true);
        put(a);
        put(b);
        put(c);
        assertThat(ids(index.page("ana", new SessionQuery(null, "Codex", null, null, null, null, 10, null)))).containsExactly("s2");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, "desk", null, null, null, 10, null)))).containsExactly("s2");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, null, "task-s1-0", null, null, 10, null)))).containsExactly("s1");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, null, null, "working", null, 10, null)))).containsExactly("s2");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, null, null, "gone", null, 10, null)))).containsExactly("s3");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, null, null, null, false, 10, null)))).containsExactly("s2", "s1");
        assertThat(ids(index.page("ana", new SessionQuery(null, null, null, null, null, true, 10, null)))).containsExactly("s3");
        index.delete(SessionIndex.key(b));
        assertThat(ids(page(null, 10, null))).containsExactly("s3", "s1");
        ObjectNode summary = page(null, 10, null).hits().get(0).summary();
        assertThat(summary.get("status").asText()).isEqualTo("gone");
        assertThat(summary.get("deleted").asBoolean()).isTrue();
    }
}
