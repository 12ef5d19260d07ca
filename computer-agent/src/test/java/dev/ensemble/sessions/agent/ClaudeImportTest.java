package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.FolderKind;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Claude Code transcripts, one rule of the importer per test, over the fixtures under {@code fixtures/claude}. */
class ClaudeImportTest {
    static final String A = "aaaaaaaa-1111-4111-8111-000000000001"; // two prompts, lossy folder -home-ana-my-app
    static final String B = "bbbbbbbb-1111-4111-8111-000000000002"; // sub-agents
    static final String D = "dddddddd-1111-4111-8111-000000000004"; // starts with summary lines, resumes A
    static final String E = "eeeeeeee-1111-4111-8111-000000000005"; // no usage, cwd /home/ana/my/app
    static final String F = "ffffffff-1111-4111-8111-000000000006"; // 1M window
    static final String G = "99999999-1111-4111-8111-000000000007"; // a malformed line
    static final String H = "12345678-1111-4111-8111-000000000008"; // slash commands

    @TempDir
    Path tmp;
    Stores stores;

    @BeforeEach
    void setUp() {
        stores = Stores.withFixtures(tmp);
    }

    private Imported importOnce() {
        return stores.importAll(stores.importer());
    }

    @Test
    void eachRealPromptIsARunContinuingThePreviousOne() {
        List<RunClaimed> claims = importOnce().claims(A);

        assertThat(claims).extracting(RunClaimed::getRunId)
                .containsExactly("claude-code:" + A, "claude-code:" + A + ":a-p2");
        assertThat(claims).extracting(RunClaimed::getContinueFromJobId).containsExactly(null, "claude-code:" + A);
        assertThat(claims).allSatisfy(c -> {
            assertThat(c.getAgent()).isEqualTo("claude-code");
            assertThat(c.getAgentSessionId()).isEqualTo(A);
            assertThat(c.getComputerId()).isEqualTo(Stores.COMPUTER);
            assertThat(c.getTaskId()).isNull();
            assertThat(c.getKind()).isEqualTo(RunKind.TERMINAL_CHAT);
            assertThat(c.getFolderKind()).isEqualTo(FolderKind.LOCAL);
            assertThat(c.getModel()).isEqualTo("claude-sonnet-4-5-20250929");
            assertThat(c.getContextWindow()).isEqualTo(200_000L);
        });
    }

    @Test
    void eachClaimIsFollowedByWorkingAtThePromptTime() {
        Imported got = importOnce();
        for (RunClaimed c : got.claims(A)) {
            Event claim = got.eventOf(c);
            Event next = got.events().get(got.events().indexOf(claim) + 1);
            assertThat(next.getPayload()).isInstanceOfSatisfying(RunStatusChanged.class, s -> {
                assertThat(s.getRunId()).isEqualTo(c.getRunId());
                assertThat(s.getStatus()).isEqualTo(RunStatus.WORKING);
            });
            assertThat(next.getOccurredAt()).isEqualTo(claim.getOccurredAt());
        }
        assertThat(got.eventOf(got.claims(A).get(0)).getOccurredAt()).isEqualTo(Instant.parse("2026-02-01T09:01:00Z"));
    }

    @Test
    void metaLinesLocalCommandsToolResultsInterruptionsAndCompactionSummariesAreNotPrompts() {
        // the fixture has a caveat (isMeta), /clear with its <local-command-stdout>, tool results, an
        // "[Request interrupted by user]" marker and a compaction summary besides its two prompts
        assertThat(importOnce().claims(A)).extracting(c -> c.getTask().getTitle())
                .allSatisfy(t -> assertThat(t).doesNotContain("Caveat", "command", "interrupted", "continued"))
                .hasSize(2)
                .last().isEqualTo("Now add a test for it");
    }

    @Test
    void aSlashCommandTheAgentAnswersIsAPromptButALocalCommandIsNot() {
        Imported got = importOnce();

        // "/review the auth module" is followed by its expanded text (meta) and a reply; "/model" only by its output
        assertThat(got.claims(H)).extracting(RunClaimed::getRunId)
                .containsExactly("claude-code:" + H, "claude-code:" + H + ":h-p2");
        assertThat(got.claims(H).get(0).getTask().getTitle()).isEqualTo("/review the auth module");
        assertThat(got.eventOf(got.claims(H).get(0)).getOccurredAt()).isEqualTo(Instant.parse("2026-02-08T10:00:00Z"));
        assertThat(got.claims(H).get(1).getModel()).isEqualTo("claude-opus-4-1-20250805");
        // the local command after the first turn's end_turn does not reopen it
        assertThat(got.done("claude-code:" + H).getDurationMs()).isEqualTo(9_000L);
    }

    @Test
    void titleIsTheFirstNonEmptyLineShortenedTo120AndDescriptionTheWholePromptTrimmed() {
        RunClaimed first = importOnce().claims(A).get(0);

        assertThat(first.getTask().getTitle()).hasSize(120).startsWith("Fix the login bug xxx").endsWith("x…");
        assertThat(first.getTask().getDescription())
                .startsWith("Fix the login bug ").endsWith("The form rejects valid passwords.");
    }

    @Test
    void descriptionIsCutAt4000Characters() throws Exception {
        String prompt = "Refactor everything\n" + "z".repeat(5000);
        writeLines(stores.claudeFile("-home-ana-long", "12121212-0000-4000-8000-000000000012.jsonl"),
                "{\"type\":\"user\",\"sessionId\":\"12121212-0000-4000-8000-000000000012\",\"cwd\":\"/home/ana/long\","
                        + "\"uuid\":\"l-p1\",\"timestamp\":\"2026-02-06T10:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":"
                        + EventJsonText.quote(prompt) + "}}");

        RunClaimed claim = importOnce().claims("12121212-0000-4000-8000-000000000012").get(0);

        assertThat(claim.getTask().getTitle()).isEqualTo("Refactor everything");
        assertThat(claim.getTask().getDescription()).hasSize(4000).isEqualTo(prompt.substring(0, 4000));
    }

    @Test
    void oneReplyWrittenAsSeveralLinesWithTheSameMessageIdCountsOnce() {
        Imported got = importOnce();

        // msg_A1 and msg_A4 are each written as several lines with the same usage
        assertThat(got.engine(A)).hasSize(5);
        // run 1: msg_A1 + msg_A2: every input token read (cache reads and writes too) plus output tokens
        assertThat(got.done("claude-code:" + A).getTokens()).isEqualTo(40_475L);
        // run 2: msg_A3 + msg_A4 + msg_A5, likewise with their cache tokens
        assertThat(got.done("claude-code:" + A + ":a-p2").getTokens()).isEqualTo(72_353L);
    }

    @Test
    void fillIsInputPlusCacheReadPlusCacheCreationOverTheModelWindow() {
        Imported got = importOnce();
        EngineEvent second = got.engine(A).get(1);

        assertThat(second.getRunId()).isEqualTo("claude-code:" + A);
        assertThat(second.getContextUsed()).isEqualTo(5L + 20_000 + 300);
        assertThat(second.getContextSize()).isEqualTo(200_000L);
        assertThat(second.getModel()).isEqualTo("claude-sonnet-4-5-20250929");
        assertThat(got.engine(A).get(4).getRunId()).isEqualTo("claude-code:" + A + ":a-p2");
        assertThat(got.engine(A).get(4).getContextUsed()).isEqualTo(6L + 1000 + 30_000);
    }

    @Test
    void modelIdSaying1mHasAMillionTokenWindowAndSyntheticRepliesAreNotReplies() {
        Imported got = importOnce();
        List<EngineEvent> engine = got.engine(F);

        assertThat(got.claims(F).get(0).getContextWindow()).isEqualTo(1_000_000L);
        assertThat(engine.get(0).getContextUsed()).isEqualTo(10L + 300_000 + 50_000);
        assertThat(engine.get(0).getContextSize()).isEqualTo(1_000_000L);
        // a plain Claude model id holds 200,000, but a reply that used 250,110 can only have run in the 1M window
        assertThat(got.claims(F).get(1).getContextWindow()).isEqualTo(200_000L);
        assertThat(engine.get(1).getContextUsed()).isEqualTo(250_110L);
        assertThat(engine.get(1).getContextSize()).isEqualTo(1_000_000L);
        // the third reply is Claude Code's own "<synthetic>" error message: no engine event, no model
        assertThat(engine).hasSize(2);
        assertThat(got.claims(F).get(2).getModel()).isEqualTo("claude-opus-4-1-20250805");
    }

    @Test
    void doneCarriesReportSummaryFilesChangedTokensAndDuration() {
        Imported got = importOnce();
        RunStatusChanged first = got.done("claude-code:" + A);
        RunStatusChanged second = got.done("claude-code:" + A + ":a-p2");

        assertThat(first.getReportSummary()).isEqualTo("Fixed the bug. All tests pass.");
        assertThat(first.getFilesChanged()).containsExactly("/home/ana/my-app/src/login.ts");
        assertThat(first.getDurationMs()).isEqualTo(30_000L); // 09:01:00 prompt to 09:01:30 last reply
        assertThat(got.eventOf(first).getOccurredAt()).isEqualTo(Instant.parse("2026-02-01T09:01:30Z"));

        assertThat(second.getReportSummary()).hasSize(200).startsWith("Added the test; yyy").endsWith("…");
        assertThat(second.getFilesChanged()).containsExactly("/home/ana/my-app/test/login.test.ts",
                "/home/ana/my-app/src/login.ts", "/home/ana/my-app/nb.ipynb");
        assertThat(second.getDurationMs()).isEqualTo(40_000L);
    }

    @Test
    void subAgentTranscriptsAreNeverSessionsAndSidechainLinesAreLeftOut() {
        Imported got = importOnce();

        // the sub-agents share B's session id; had they been sessions, B would have more than one first run
        assertThat(got.claims()).filteredOn(c -> c.getContinueFromJobId() == null)
                .extracting(RunClaimed::getAgentSessionId)
                .containsExactlyInAnyOrder(A, B, D, E, F, G, H, CodexImportTest.X);
        assertThat(got.claims(B)).singleElement().satisfies(c -> assertThat(c.getTask().getTitle()).isEqualTo("Explore the repo"));
        assertThat(got.engine(B)).extracting(EngineEvent::getContextUsed).containsExactly(15_003L, 15_503L);
        assertThat(got.done("claude-code:" + B).getFilesChanged()).isEmpty();
        assertThat(got.done("claude-code:" + B).getTokens()).isEqualTo(30_616L);
        assertThat(got.summary().skippedFiles())
                .filteredOn(s -> s.reason().equals("sub-agent transcript") && s.file().startsWith(stores.claude))
                .extracting(s -> stores.claude.relativize(s.file()).toString())
                .containsExactlyInAnyOrder("-tmp-work/agent-1234abcd.jsonl", "-tmp-work/" + B + "/subagents/agent-5678ef01.jsonl");
    }

    @Test
    void folderIsTheCwdInsideTheLinesNotTheLossyFolderName() {
        Imported got = importOnce();

        // both live in projects/-home-ana-my-app
        assertThat(got.claims(A).get(0).getFolder()).isEqualTo("/home/ana/my-app");
        assertThat(got.claims(E).get(0).getFolder()).isEqualTo("/home/ana/my/app");
    }

    @Test
    void sessionWhoseFirstLineIsNotAUserLineIsFoundByTheSessionIdInsideTheLines() {
        // resumed-copy.jsonl starts with two summary lines, a snapshot and a system line
        assertThat(importOnce().claims(D)).singleElement().satisfies(c -> {
            assertThat(c.getRunId()).isEqualTo("claude-code:" + D);
            assertThat(c.getTask().getTitle()).isEqualTo("Carry on with the login work");
        });
    }

    @Test
    void summaryLeafInAnotherSessionOfTheSameFolderMeansTheFirstRunContinuesIt() {
        Imported got = importOnce();

        // D's first summary points nowhere, its second at a reply of A
        assertThat(got.claims(D).get(0).getContinuesSessionOf()).isEqualTo(A);
        // E's summary points nowhere
        assertThat(got.claims(E).get(0).getContinuesSessionOf()).isNull();
        assertThat(got.claims(A)).extracting(RunClaimed::getContinuesSessionOf).containsOnlyNulls();
    }

    @Test
    void transcriptWithoutUsageHasUnknownFillNotZero() {
        stores.touchAll(Stores.NOW.minus(Duration.ofHours(2))); // idle: E's only turn closes
        Imported got = importOnce();

        assertThat(got.engine(E)).singleElement().satisfies(e -> {
            assertThat(e.getRunId()).isEqualTo("claude-code:" + E);
            assertThat(e.getContextUsed()).isNull();
            assertThat(e.getContextSize()).isNull();
        });
        assertThat(got.done("claude-code:" + E).getTokens()).isNull();
        assertThat(got.done("claude-code:" + E).getReportSummary()).isEqualTo("There are two files.");
    }

    @Test
    void turnEndsAtEndTurnOrTheNextPromptAndOtherwiseStaysWorkingUntilIdleFor30Minutes() {
        StoreImporter importer = stores.importer();
        Imported first = stores.importAll(importer);

        // F: run 1 and 2 end with end_turn; run 3's last reply is not an end_turn, the file was written a minute ago
        assertThat(first.done("claude-code:" + F).getStatus()).isEqualTo(RunStatus.DONE);
        assertThat(first.done("claude-code:" + F + ":f-p2").getStatus()).isEqualTo(RunStatus.DONE);
        assertThat(first.statuses("claude-code:" + F + ":f-p3")).extracting(RunStatusChanged::getStatus)
                .containsExactly(RunStatus.WORKING);

        stores.clock.advance(Duration.ofMinutes(28)); // 29 minutes since the last write
        assertThat(stores.importAll(importer).events()).isEmpty();

        stores.clock.advance(Duration.ofMinutes(2)); // 31 minutes: the open runs of unchanged files close
        Imported later = stores.importAll(importer);
        RunStatusChanged done = later.done("claude-code:" + F + ":f-p3");
        assertThat(done.getReportSummary()).isEqualTo("API Error: overloaded");
        assertThat(done.getDurationMs()).isEqualTo(5_000L);
        assertThat(later.eventOf(done).getEventId())
                .isEqualTo(UUID.nameUUIDFromBytes(("claude-code/" + F + "/f-p3/done").getBytes(StandardCharsets.UTF_8)).toString());
        assertThat(later.summary().runs()).isZero();
        // 7 Claude sessions, the file that is not a transcript, the Codex session and the Codex sub-agent
        assertThat(later.summary().skippedFilesByKind()).containsEntry("unchanged", 10L);
    }

    @Test
    void anOpenRunOfAStoreNoLongerLookedAtIsClosedByThe30MinuteRuleAndItsTranscriptIsNotTakenForGone() throws Exception {
        stores.importAll(stores.importer());

        // the same data folder (import state) used under another home: the first home's stores are not looked at
        Path otherHome = Files.createDirectories(tmp.resolve("other-home"));
        StoreImporter elsewhere = stores.importer();
        stores.clock.advance(Duration.ofMinutes(28)); // 29 minutes since F's last write
        Stores.ListSink sink = new Stores.ListSink();
        elsewhere.importStores(AgentStores.underHome(otherHome), sink);
        assertThat(sink.events).isEmpty();

        stores.clock.advance(Duration.ofMinutes(2)); // 31 minutes: the open run can only be closed by the rule
        Imported later = importElsewhere(elsewhere, otherHome);
        RunStatusChanged done = later.done("claude-code:" + F + ":f-p3");
        assertThat(done.getReportSummary()).isEqualTo("API Error: overloaded");
        assertThat(later.eventOf(done).getEventId())
                .isEqualTo(UUID.nameUUIDFromBytes(("claude-code/" + F + "/f-p3/done").getBytes(StandardCharsets.UTF_8)).toString());
        // closes only (a run's last figures may come with its close): no run claimed, nothing counted as imported
        assertThat(later.summary().idleClosed())
                .isEqualTo(later.events().stream().filter(e -> e.getPayload() instanceof RunStatusChanged).count());
        assertThat(later.claims()).isEmpty();
        assertThat(later.summary().sessions()).isZero();
        assertThat(later.events().stream().filter(e -> e.getPayload() instanceof RunStatusChanged)
                .map(e -> ((RunStatusChanged) e.getPayload()).getRunId()).toList())
                .contains("claude-code:" + F + ":f-p3").doesNotHaveDuplicates();
        // nothing is said to be gone: that store was not looked at
        assertThat(later.summary().gone()).isZero();

        // once closed, never again; back home, nothing changed: nothing new, the transcripts still known
        assertThat(importElsewhere(elsewhere, otherHome).events()).isEmpty();
        Imported home = stores.importAll(stores.importer());
        assertThat(home.events()).isEmpty();
        assertThat(home.summary().gone()).isZero();
    }

    @Test
    void anOpenRunOfAStoreNotLookedAtWhoseTranscriptChangedSinceIsLeftForTheImportThatReadsIt() throws Exception {
        stores.importAll(stores.importer());
        Path otherHome = Files.createDirectories(tmp.resolve("other-home"));
        StoreImporter elsewhere = stores.importer();

        // the agent goes on writing in the first home while the other one is imported
        Path f = stores.claudeFile("-srv-big", F + ".jsonl");
        Files.writeString(f, "{\"type\":\"system\",\"sessionId\":\"" + F + "\",\"timestamp\":\"" + stores.clock.instant().plus(Duration.ofMinutes(2))
                + "\"}\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.from(stores.clock.instant().plus(Duration.ofMinutes(2))));
        stores.clock.advance(Duration.ofMinutes(33)); // 34 minutes since the file as last seen, 31 since it changed

        Imported later = importElsewhere(elsewhere, otherHome);
        assertThat(later.statuses("claude-code:" + F + ":f-p3")).isEmpty();

        // read where it is looked at: the open run is still open, and closed there by the rule (its file idle since)
        Imported home = stores.importAll(stores.importer());
        assertThat(home.done("claude-code:" + F + ":f-p3").getReportSummary()).isEqualTo("API Error: overloaded");
    }

    private Imported importElsewhere(StoreImporter importer, Path home) {
        Stores.ListSink sink = new Stores.ListSink();
        ImportSummary summary = importer.importStores(AgentStores.underHome(home), sink);
        return new Imported(summary, sink.events);
    }

    @Test
    void anOpenRunWhoseStoreFolderIsGoneIsClosedByThe30MinuteRule() throws Exception {
        StoreImporter importer = stores.importer();
        stores.importAll(importer);
        Path moved = tmp.resolve("projects-moved");
        Files.move(stores.claude, moved); // the store folder is gone (an unmounted disk, a renamed folder)

        stores.clock.advance(Duration.ofMinutes(30));
        Imported later = stores.importAll(importer);
        assertThat(later.done("claude-code:" + F + ":f-p3").getReportSummary()).isEqualTo("API Error: overloaded");
        assertThat(later.summary().gone()).isZero();

        Files.move(moved, stores.claude); // back: the run stays done, nothing is read again
        assertThat(stores.importAll(importer).events()).isEmpty();
    }

    @Test
    void aMalformedLineIsCountedAndSkippedAndTheImportGoesOn() {
        Imported got = importOnce();
        Path file = stores.claudeFile("-home-ana-notes", G + ".jsonl");

        assertThat(got.summary().skippedLines()).singleElement().satisfies(s -> {
            assertThat(s.file()).isEqualTo(file);
            assertThat(s.reason()).startsWith("malformed line 2: ");
        });
        assertThat(got.claims(G)).hasSize(1);
        assertThat(got.engine(G)).hasSize(1);
        assertThat(got.done("claude-code:" + G).getReportSummary()).isEqualTo("Your notes are about Kafka.");
        assertThat(got.summary().toString()).endsWith("; 1 malformed line skipped");
    }

    @Test
    void aFileThatIsNotATranscriptIsSkipped() {
        Imported got = importOnce();

        assertThat(got.summary().skippedFiles()).filteredOn(s -> s.reason().equals("not a transcript"))
                .extracting(s -> s.file().getFileName().toString()).containsExactly("settings-backup.jsonl");
        assertThat(got.claims()).extracting(RunClaimed::getAgentSessionId).doesNotContain("settings-backup");
    }

    @Test
    void anUnreadableFileIsSkippedWithTheReason() throws Exception {
        Files.createSymbolicLink(stores.claudeFile("-home-ana-notes", "gone.jsonl"), tmp.resolve("nowhere.jsonl"));

        assertThat(importOnce().summary().skippedFiles()).filteredOn(s -> s.kind().equals("unreadable"))
                .singleElement().satisfies(s -> assertThat(s.file().getFileName().toString()).isEqualTo("gone.jsonl"));
    }

    @Test
    void envelopeHasTheAccountTheComputerAndADeterministicId() {
        Imported got = importOnce();
        Event claim = got.eventOf(got.claims(A).get(0));

        assertThat(claim.getEventId()).isEqualTo(
                UUID.nameUUIDFromBytes(("claude-code/" + A + "/a-p1/claimed").getBytes(StandardCharsets.UTF_8)).toString());
        assertThat(claim.getAccount()).isEqualTo(Stores.ACCOUNT);
        assertThat(claim.getSpace()).isEqualTo("local:" + Stores.COMPUTER);
        assertThat(claim.getSource()).isEqualTo("computer:" + Stores.COMPUTER);
        assertThat(claim.getRecordedAt()).isEqualTo(Stores.NOW);
        assertThat(got.ids()).doesNotHaveDuplicates();
    }

    static void writeLines(Path file, String... lines) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        Stores.touch(file, Stores.NOW.minus(Duration.ofMinutes(1)));
    }
}
