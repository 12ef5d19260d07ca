package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.FolderKind;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Codex CLI rollouts, over the fixtures under {@code fixtures/codex}. */
class CodexImportTest {
    static final String X = "0195aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"; // two prompts, the second turn still open
    static final String Y = "0195bbbb-bbbb-7ccc-8ddd-ffffffffffff"; // a sub-agent's thread
    static final String CWD = "/Users/ana/repos/flags";

    @TempDir
    Path tmp;
    Stores stores;

    @BeforeEach
    void setUp() {
        stores = Stores.withFixtures(tmp);
    }

    private Imported importCodex() {
        Stores.ListSink sink = new Stores.ListSink();
        ImportSummary summary = stores.importer().importCodex(stores.codex, sink);
        return new Imported(summary, sink.events);
    }

    @Test
    void userMessagesCodexWroteItselfAreNotPromptsAndRunIdsCountPrompts() {
        List<RunClaimed> claims = importCodex().claims(X);

        // user_instructions, the AGENTS.md instructions, environment_context and the developer message are not prompts
        assertThat(claims).extracting(c -> c.getTask().getTitle())
                .containsExactly("Rename the --fast flag to --quick", "Now run the tests");
        assertThat(claims).extracting(RunClaimed::getRunId).containsExactly("codex:" + X, "codex:" + X + ":2");
        assertThat(claims).extracting(RunClaimed::getContinueFromJobId).containsExactly(null, "codex:" + X);
        assertThat(claims).extracting(RunClaimed::getModel).containsExactly("gpt-5-codex", "gpt-5.1-codex");
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("codex");
            assertThat(c.getAgentSessionId()).isEqualTo(X);
            assertThat(c.getFolder()).isEqualTo(CWD);
            assertThat(c.getFolderKind()).isEqualTo(FolderKind.LOCAL);
            assertThat(c.getKind()).isEqualTo(RunKind.TERMINAL_CHAT);
            assertThat(c.getContextWindow()).isEqualTo(272_000L);
            assertThat(c.getContinuesSessionOf()).isNull();
        });
    }

    @Test
    void fillIsTheLastTokenUsageInputOverTheModelContextWindowNotTheCumulativeTotal() {
        List<EngineEvent> engine = importCodex().engine(X);

        // one per token_count with info; the one with "info": null gives none
        assertThat(engine).extracting(EngineEvent::getContextUsed).containsExactly(12_000L, 15_000L, 16_000L);
        assertThat(engine).extracting(EngineEvent::getContextSize).containsOnly(272_000L);
        assertThat(engine).extracting(EngineEvent::getRunId)
                .containsExactly("codex:" + X, "codex:" + X, "codex:" + X + ":2");
        assertThat(engine).extracting(EngineEvent::getModel).containsExactly("gpt-5-codex", "gpt-5-codex", "gpt-5.1-codex");
    }

    @Test
    void taskCompleteEndsTheTurnWithFilesFromApplyPatchTokensAndDuration() {
        Imported got = importCodex();
        RunStatusChanged done = got.done("codex:" + X);

        assertThat(done.getReportSummary()).isEqualTo("Renamed the flag in src/flags.ts and documented it.");
        assertThat(done.getFilesChanged()).containsExactly(CWD + "/src/flags.ts", CWD + "/docs/flags.md",
                "/Users/ana/repos/flags/old.txt");
        assertThat(done.getTokens()).isEqualTo(12_000L + 300 + 15_000 + 500);
        assertThat(done.getDurationMs()).isEqualTo(7_298L); // 10:00:02.002 prompt to 10:00:09.300 task_complete
        assertThat(got.eventOf(done).getOccurredAt()).isEqualTo(Instant.parse("2026-03-01T10:00:09.300Z"));
        assertThat(got.eventOf(done).getEventId())
                .isEqualTo(UUID.nameUUIDFromBytes(("codex/" + X + "/1/done").getBytes(StandardCharsets.UTF_8)).toString());
    }

    @Test
    void anOpenTurnStaysWorkingUntilTheFileIsIdleFor30Minutes() {
        StoreImporter importer = stores.importer();
        Stores.ListSink first = new Stores.ListSink();
        importer.importCodex(stores.codex, first);
        Imported got = new Imported(null, first.events);

        assertThat(got.statuses("codex:" + X + ":2")).extracting(RunStatusChanged::getStatus).containsExactly(RunStatus.WORKING);

        stores.clock.advance(Duration.ofMinutes(31));
        Stores.ListSink second = new Stores.ListSink();
        importer.importCodex(stores.codex, second);
        RunStatusChanged done = new Imported(null, second.events).done("codex:" + X + ":2");
        assertThat(second.events).hasSize(1);
        assertThat(done.getTokens()).isEqualTo(16_100L);
        assertThat(done.getDurationMs()).isEqualTo(3_998L);
        assertThat(done.getReportSummary()).isNull();
    }

    @Test
    void aSubAgentRolloutIsNotASession() {
        Imported got = importCodex();

        assertThat(got.claims(Y)).isEmpty();
        assertThat(got.engine(Y)).isEmpty();
        assertThat(got.summary().skippedFiles()).filteredOn(s -> s.reason().equals("sub-agent transcript"))
                .extracting(s -> s.file().getFileName().toString()).singleElement().asString().contains(Y);
    }

    @Test
    void applyPatchPathsAreReadFromEveryFileHeader() {
        assertThat(CodexParser.patchPaths("""
                *** Begin Patch
                *** Add File: a/new.txt
                +hi
                *** Update File: b/old.txt
                *** Move to: b/renamed.txt
                @@
                -x
                +y
                *** Delete File: c/gone.txt
                *** Update File: a/new.txt
                *** End Patch
                """)).containsExactly("a/new.txt", "b/old.txt", "b/renamed.txt", "c/gone.txt");
        assertThat(CodexParser.patchPaths("not a patch")).isEmpty();
    }
}
