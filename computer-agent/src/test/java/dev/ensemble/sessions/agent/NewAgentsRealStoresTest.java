package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The files of every agent in {@code ../shared/data/agent-stores} (PROVENANCE.txt: Gemini CLI and Copilot CLI real,
 * OpenCode, Qwen Code and Cursor synthetic from their publishers' fixtures), laid out in a temporary home as on a
 * computer. Skipped when the shared data is absent.
 */
class NewAgentsRealStoresTest {
    static final String GEMINI_OLD = "37b7abef-713d-4522-85f0-8ff15a4e6d17";
    static final String GEMINI_NEW = "887ba529-0020-4f9f-9736-7e45d03b5b32";
    static final String COPILOT = "07c40cd0-ff51-4d6e-bdcd-ac2f90877203";
    static final String QWEN_1 = "019f0000-0000-7000-8000-000000000001";
    static final String QWEN_4 = "019f0000-0000-7000-8000-000000000004";
    static final String CURSOR = "a1b2c3d4-e5f6-7890-abcd-ef1234567890";

    @TempDir
    Path tmp;
    Stores stores;

    @BeforeEach
    void setUp() {
        Path data = SharedData.require("data/agent-stores");
        stores = Stores.empty(tmp);
        stores.copyAgentStores(data);
        stores.touchAll(Stores.NOW.minus(Duration.ofMinutes(1)));
    }

    @Test
    void everyAgentsSessionsAreImportedWithTheirAgentFolderRunsFirstPromptAndFill() {
        Imported got = stores.importStores(stores.importer());

        // Gemini CLI, old single-JSON format: 5 prompts; the folder is only a hash no known path has (scrubbed): the
        // folder is where its tools wrote (a relative file_path, the absolute path in the tool's result)
        List<RunClaimed> gemini = got.claims(GEMINI_OLD);
        assertThat(gemini).extracting(c -> c.getTask().getTitle())
                .containsExactly("show tools", "expore repository and figure out issues. focus on adaptability and security",
                        "create hello.md file", "add 5 lines of random text", "remove 2 and 3 line");
        assertThat(gemini).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("gemini-cli");
            assertThat(c.getFolder()).isEqualTo("/Users/user/repos/EPMCDME/codemie-ai/codemie-code");
        });
        assertThat(gemini.get(0).getRunId()).isEqualTo("gemini-cli:" + GEMINI_OLD);
        assertThat(gemini.get(1).getModel()).isEqualTo("gemini-3-pro");
        EngineEvent lastGemini = last(got.engine(GEMINI_OLD));
        assertThat(lastGemini.getContextUsed()).isEqualTo(11_451L);
        assertThat(lastGemini.getContextSize()).isEqualTo(1_048_576L);

        // Gemini CLI, JSONL format: the folder from projects.json (slug "playground")
        List<RunClaimed> gem2 = got.claims(GEMINI_NEW);
        assertThat(gem2).singleElement().satisfies(c -> {
            assertThat(c.getTask().getTitle()).isEqualTo("hi");
            assertThat(c.getFolder()).isEqualTo("/home/core/playground");
            assertThat(c.getModel()).isEqualTo("gemini-3-flash-preview");
        });
        assertThat(last(got.engine(GEMINI_NEW)).getContextUsed()).isEqualTo(5_428L);

        // Copilot CLI: 7 prompts (two autopilot nudges with empty content are not), Windows folder, fill unknown
        List<RunClaimed> copilot = got.claims(COPILOT);
        assertThat(copilot).hasSize(7);
        assertThat(copilot).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("copilot");
            assertThat(c.getFolder()).isEqualTo("D:\\Source\\GitHub\\agent-engram");
        });
        assertThat(copilot.get(0).getTask().getTitle()).startsWith("Using @.context\\backlog.md Break down Feature 007");
        assertThat(copilot.get(0).getModel()).isEqualTo("claude-opus-4.6");
        assertThat(last(copilot).getModel()).isEqualTo("claude-sonnet-4.6");
        assertThat(got.engine(COPILOT)).singleElement().satisfies(e -> {
            assertThat(e.getContextUsed()).isNull();
            assertThat(e.getContextSize()).isNull();
        });

        // OpenCode database: ses_main001 (2 prompts), ses_err001 (1); ses_sub001 is a child (sub-agent); ses_empty has none
        assertThat(got.claims("ses_main001")).extracting(c -> c.getTask().getTitle())
                .containsExactly("Add JWT authentication to the login endpoint", "Now add unit tests for the JWT auth");
        assertThat(got.claims("ses_main001").get(0).getFolder()).isEqualTo("/Users/test/src/my-project");
        assertThat(got.claims("ses_main001").get(0).getAgent()).isEqualTo("opencode");
        assertThat(got.claims("ses_sub001")).isEmpty();
        assertThat(got.claims("ses_empty")).isEmpty();
        assertThat(got.claims("ses_err001")).singleElement().satisfies(c -> assertThat(c.getTask().getTitle()).isEqualTo("Deploy to production"));
        // tokens {input, output} without cache: 1200 of a Claude model's 200,000
        assertThat(got.engine("ses_main001")).extracting(EngineEvent::getContextUsed).containsExactly(500L, 1_200L);
        assertThat(got.engine("ses_main001")).extracting(EngineEvent::getContextSize).containsOnly(200_000L);
        // OpenCode's older storage/ layout
        assertThat(got.claims("s_stage0_small")).singleElement().satisfies(c -> {
            assertThat(c.getTask().getTitle()).isEqualTo("Hello");
            assertThat(c.getFolder()).isEqualTo("/tmp/repo");
            assertThat(c.getModel()).isEqualTo("gpt-4o-mini");
        });

        // Qwen Code: one prompt without the hook part; the notification is no prompt
        assertThat(got.claims(QWEN_1)).singleElement().satisfies(c -> {
            assertThat(c.getAgent()).isEqualTo("qwen-code");
            assertThat(c.getTask().getTitle()).isEqualTo("Inspect the synthetic fixture.");
            assertThat(c.getTask().getDescription()).doesNotContain("qwen:");
            assertThat(c.getFolder()).isEqualTo("/tmp/as-qwen-fixture/project");
        });
        // a prompt, then one typed mid-turn; three folders, the first first; usage 12 tokens of an unknown window
        List<RunClaimed> qwen4 = got.claims(QWEN_4);
        assertThat(qwen4).extracting(c -> c.getTask().getTitle())
                .containsExactly("Begin the active-chain fixture.", "Continue from the rewound branch.");
        assertThat(qwen4.get(0).getFolder()).isEqualTo("/tmp/as-qwen-fixture/old-project");
        assertThat(qwen4.get(1).getFolders()).containsExactly("/tmp/as-qwen-fixture/old-project", "/tmp/as-qwen-fixture/new-project");
        assertThat(last(got.engine(QWEN_4))).satisfies(e -> {
            assertThat(e.getContextUsed()).isEqualTo(12L);
            assertThat(e.getContextSize()).isNull();
        });

        // Cursor: two prompts unwrapped from <user_query>; folder /tmp checked against the chat's md5; model from store.db
        List<RunClaimed> cursor = got.claims(CURSOR);
        assertThat(cursor).extracting(c -> c.getTask().getTitle()).containsExactly("run ls command", "now show me the git status");
        assertThat(cursor).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("cursor");
            assertThat(c.getFolder()).isEqualTo("/tmp");
            assertThat(c.getModel()).isEqualTo("claude-4-sonnet");
        });
        assertThat(got.engine(CURSOR)).singleElement().satisfies(e -> assertThat(e.getContextUsed()).isNull());
        assertThat(got.claims("b7e3c1d2-4f5a-4b6c-8d9e-0a1b2c3d4e5f")).isEmpty();

        // the summary names every store and what it imported from each
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("Gemini CLI (").contains("2 sessions, imported 2 (6 new runs)"));
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("GitHub Copilot CLI (").contains("1 session, imported 1 (7 new runs)"));
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("OpenCode (").contains("4 sessions, imported 3 (4 new runs)"));
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("Qwen Code (").contains("2 sessions, imported 2 (3 new runs)"));
        assertThat(got.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("Cursor (").contains("1 session, imported 1 (2 new runs)"));
        assertThat(got.summary().storeLines()).hasSize(12); // and Grok Build, Antigravity, Mistral Vibe, Kimi Code (two homes): not found
    }

    @Test
    void theProgressBarAndTheSummaryCountTheSameFiles() {
        int[] started = new int[1];
        int[] each = new int[1];
        StoreImporter importer = new StoreImporter(stores.config(), new ImportProgress() {
            @Override
            public void onStart(int files, long bytes) {
                started[0] = files;
            }

            @Override
            public void onFile(Path file, long bytes) {
                each[0]++;
            }
        });

        ImportSummary summary = stores.importStores(importer).summary();

        // OpenCode's session without messages is read and left out: one of the files read, and one skipped
        assertThat(summary.skippedFilesByKind()).containsEntry("no messages yet", 1L);
        assertThat(summary.filesRead()).isEqualTo(started[0]).isEqualTo(each[0]);
        assertThat(summary.toString()).isEqualTo("imported 15 sessions, 65 runs, 264 engine events from 16 files; 4 files skipped "
                + "(1 no messages yet, 3 sub-agent transcript)");
        assertThat(started[0]).isEqualTo(16);
    }

    @Test
    void importingAgainSendsNothingAndFromScratchTheSameIds() {
        Imported first = stores.importStores(stores.importer());
        Imported again = stores.importStores(stores.importer());
        assertThat(again.events()).isEmpty();
        java.nio.file.Files.exists(stores.stateFile);
        try {
            java.nio.file.Files.delete(stores.stateFile);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Imported scratch = stores.importStores(stores.importer());
        assertThat(scratch.ids()).containsExactlyInAnyOrderElementsOf(first.ids());
    }

    @Test
    void anOpenCodeStorageSessionRightUnderSessionIsReadFromItsStore() throws Exception {
        Path session = stores.home.resolve(".local/share/opencode/storage/session");
        Path file = Files.move(session.resolve("proj_test/ses_s_stage0_small.json"), session.resolve("ses_s_stage0_small.json"));
        Stores.touch(file, Stores.NOW.minus(Duration.ofMinutes(1)));

        Imported got = stores.importStores(stores.importer());

        assertThat(got.claims("s_stage0_small")).singleElement().satisfies(c -> {
            assertThat(c.getTask().getTitle()).isEqualTo("Hello");
            assertThat(c.getFolder()).isEqualTo("/tmp/repo");
        });
    }

    static <T> T last(List<T> l) {
        assertThat(l).isNotEmpty();
        return l.get(l.size() - 1);
    }
}
