package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.agent.Stores.Imported;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.RunClaimed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Importing again reads only what changed, and gives the same event ids however it is split. */
class IncrementalImportTest {
    static final String A = ClaudeImportTest.A;

    @TempDir
    Path tmp;

    @Test
    void importingTwiceEmitsNothingTheSecondTime() {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();

        Imported first = stores.importAll(importer);
        Imported second = stores.importAll(importer);

        assertThat(first.events()).hasSizeGreaterThan(40);
        assertThat(second.events()).isEmpty();
        assertThat(second.summary().filesRead()).isZero();
        assertThat(second.summary().toString()).isEqualTo(
                "nothing new (10 files unchanged); 2 files skipped (2 sub-agent transcript)");
        // a new importer over the same state file (a restart) sends nothing either
        assertThat(stores.importAll(stores.importer()).events()).isEmpty();
    }

    @Test
    void stateIsAJsonFileAtTheGivenPath() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        stores.importAll(stores.importer());

        JsonNode state = new ObjectMapper().readTree(stores.stateFile.toFile());
        Path a = stores.claudeFile("-home-ana-my-app", A + ".jsonl");
        JsonNode file = state.path("files").path(a.toAbsolutePath().toString());
        assertThat(file.path("agent").asText()).isEqualTo("claude-code");
        assertThat(file.path("offset").asLong()).isEqualTo(Files.size(a));
        assertThat(file.path("session").path("sessionId").asText()).isEqualTo(A);
    }

    /** The same computer's stores imported for another account (up --account bo on the same data folder): all of them again. */
    @Test
    void anotherAccountOnTheSameStateFileGetsEveryTranscriptAgain() {
        Stores stores = Stores.withFixtures(tmp);
        Imported first = stores.importAll(stores.importer());
        StoreImporter bo = new StoreImporter(new ImportConfig("acct-bo", Stores.COMPUTER, stores.clock, stores.stateFile));
        Imported forBo = stores.importAll(bo);
        assertThat(forBo.events()).hasSameSizeAs(first.events()).allSatisfy(e -> assertThat(e.getAccount()).isEqualTo("acct-bo"));
        assertThat(stores.importAll(bo).events()).as("then incremental again").isEmpty();
        Imported back = stores.importAll(stores.importer());
        assertThat(back.events()).as("and the first account's again when it comes back").hasSameSizeAs(first.events());
    }

    @Test
    void reimportingFromScratchAfterLosingTheStateSendsTheSameEventIds() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        Imported first = stores.importAll(stores.importer());

        Files.delete(stores.stateFile);
        Imported again = stores.importAll(stores.importer());

        assertThat(again.ids()).isEqualTo(first.ids());
        assertThat(again.events()).isEqualTo(first.events());
    }

    @Test
    void aFileThatGrewIsReadFromWhereTheLastImportStoppedAtALineBoundary() throws Exception {
        Path full = Stores.fixtures().resolve("claude/-home-ana-my-app/" + A + ".jsonl");
        byte[] bytes = Files.readAllBytes(full);
        int cut = nthLineEnd(bytes, 9) + 40; // nine complete lines, then part of the tenth

        Stores stores = Stores.empty(tmp.resolve("grow"));
        Path file = stores.claudeFile("-home-ana-my-app", A + ".jsonl");
        Files.createDirectories(file.getParent());
        Files.write(file, Arrays.copyOf(bytes, cut));
        Stores.touch(file, Stores.NOW.minusSeconds(60));
        List<long[]> reads = new ArrayList<>();
        StoreImporter importer = new StoreImporter(stores.config(), new ImportProgress() {
            @Override
            public void onFile(Path f, long n) {
                reads.add(new long[] {n});
            }
        });

        Imported before = stores.importAll(importer);
        assertThat(before.claims()).extracting(RunClaimed::getRunId).containsExactly("claude-code:" + A);
        assertThat(before.summary().skippedLines()).isEmpty(); // the incomplete line is not malformed

        Files.write(file, Arrays.copyOfRange(bytes, cut, bytes.length), StandardOpenOption.APPEND);
        Stores.touch(file, Stores.NOW.minusSeconds(30));
        // a restarted importer: what it knows comes from the state file
        Imported after = stores.importAll(new StoreImporter(stores.config(), new ImportProgress() {
            @Override
            public void onFile(Path f, long n) {
                reads.add(new long[] {n});
            }
        }));

        assertThat(reads.get(0)[0]).isEqualTo(nthLineEnd(bytes, 9));
        assertThat(reads.get(1)[0]).isEqualTo(bytes.length - nthLineEnd(bytes, 9));
        assertThat(after.claims()).extracting(RunClaimed::getRunId).containsExactly("claude-code:" + A + ":a-p2");

        // the same file imported whole, from scratch, gives exactly the same events
        Stores whole = Stores.empty(tmp.resolve("whole"));
        Path wholeFile = whole.claudeFile("-home-ana-my-app", A + ".jsonl");
        Files.createDirectories(wholeFile.getParent());
        Files.copy(full, wholeFile);
        Stores.touch(wholeFile, Stores.NOW.minusSeconds(30));
        Imported once = whole.importAll(whole.importer());
        List<String> split = new ArrayList<>(before.ids());
        split.addAll(after.ids());
        assertThat(split).containsExactlyInAnyOrderElementsOf(once.ids());
    }

    /**
     * Every fixture transcript, cut at every line boundary: importing the first part, then (after a restart, from
     * the state file) the rest, sends exactly the event ids of importing it whole.
     */
    @Test
    void splittingATranscriptAtAnyLineGivesTheSameEventIdsAsImportingItWhole() throws Exception {
        List<Path> transcripts;
        try (var files = Files.walk(Stores.fixtures())) {
            transcripts = files.filter(p -> p.toString().endsWith(".jsonl"))
                    .filter(p -> !p.getFileName().toString().startsWith("agent-"))
                    .filter(p -> !p.getFileName().toString().startsWith("settings-")).sorted().toList();
        }
        assertThat(transcripts).hasSize(9);
        int cases = 0;
        for (Path source : transcripts) {
            boolean codex = source.toString().contains("/codex/");
            byte[] bytes = Files.readAllBytes(source);
            List<String> whole = importInPieces(tmp.resolve("whole-" + cases), source, codex, bytes, bytes.length);
            int lines = (int) java.util.stream.IntStream.range(0, bytes.length).filter(i -> bytes[i] == '\n').count();
            for (int k = 1; k < lines; k++) {
                List<String> split = importInPieces(tmp.resolve("split-" + cases++), source, codex, bytes, nthLineEnd(bytes, k));
                assertThat(split).as("%s cut after line %d", source.getFileName(), k).containsExactlyInAnyOrderElementsOf(whole);
            }
        }
        assertThat(cases).isEqualTo(73); // every inner line boundary of the nine transcripts
    }

    /** Imports {@code bytes[0, cut)} then (with a new importer) the rest; the ids of both imports. */
    private static List<String> importInPieces(Path home, Path source, boolean codex, byte[] bytes, int cut) throws Exception {
        Stores stores = Stores.empty(home);
        Path file = (codex ? stores.codex : stores.claude).resolve(source.getParent().getFileName()).resolve(source.getFileName());
        Files.createDirectories(file.getParent());
        Files.write(file, Arrays.copyOf(bytes, cut));
        Stores.touch(file, Stores.NOW.minusSeconds(120));
        List<String> ids = new ArrayList<>(stores.importAll(stores.importer()).ids());
        if (cut < bytes.length) {
            Files.write(file, Arrays.copyOfRange(bytes, cut, bytes.length), StandardOpenOption.APPEND);
            Stores.touch(file, Stores.NOW.minusSeconds(60));
            ids.addAll(stores.importAll(stores.importer()).ids());
        }
        return ids;
    }

    @Test
    void anIncompleteLastLineIsLeftForTheNextImport() throws Exception {
        Stores stores = Stores.empty(tmp);
        Path file = stores.claudeFile("-home-ana-x", "13131313-0000-4000-8000-000000000013.jsonl");
        String prompt = "{\"type\":\"user\",\"sessionId\":\"13131313-0000-4000-8000-000000000013\",\"cwd\":\"/home/ana/x\","
                + "\"uuid\":\"p1\",\"timestamp\":\"2026-02-07T10:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"Hello\"}}\n";
        String reply = "{\"type\":\"assistant\",\"sessionId\":\"13131313-0000-4000-8000-000000000013\",\"cwd\":\"/home/ana/x\","
                + "\"uuid\":\"r1\",\"timestamp\":\"2026-02-07T10:00:02.000Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-haiku-4-5\","
                + "\"role\":\"assistant\",\"stop_reason\":\"end_turn\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}],"
                + "\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":0,\"cache_creation_input_tokens\":900,\"output_tokens\":2}}}\n";
        Files.createDirectories(file.getParent());
        Files.writeString(file, prompt + reply.substring(0, 60));
        Stores.touch(file, Stores.NOW.minusSeconds(60));
        StoreImporter importer = stores.importer();

        Imported first = stores.importAll(importer);
        JsonNode state = new ObjectMapper().readTree(stores.stateFile.toFile())
                .path("files").path(file.toAbsolutePath().toString());
        assertThat(state.path("offset").asLong()).isEqualTo(prompt.length());
        assertThat(state.path("lines").asLong()).isEqualTo(1);
        assertThat(first.summary().skippedLines()).isEmpty();
        assertThat(first.claims()).hasSize(1);
        assertThat(first.payloads(EngineEvent.class)).isEmpty();

        Files.writeString(file, reply.substring(60), StandardOpenOption.APPEND);
        Stores.touch(file, Stores.NOW.minusSeconds(30));
        Imported second = stores.importAll(importer);

        assertThat(second.engine("13131313-0000-4000-8000-000000000013")).singleElement()
                .satisfies(e -> assertThat(e.getContextUsed()).isEqualTo(907L));
        assertThat(second.done("claude-code:13131313-0000-4000-8000-000000000013").getTokens()).isEqualTo(909L);
    }

    @Test
    void aFileThatShrankIsReadAgainFromTheStartWithTheSameIds() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();
        Imported first = stores.importAll(importer);
        Path file = stores.claudeFile("-home-ana-my-app", A + ".jsonl");
        byte[] bytes = Files.readAllBytes(file);

        Files.write(file, Arrays.copyOf(bytes, nthLineEnd(bytes, 9)));
        Stores.touch(file, Stores.NOW.minusSeconds(10));
        Imported again = stores.importAll(importer);

        assertThat(again.claims()).extracting(RunClaimed::getRunId).containsExactly("claude-code:" + A);
        assertThat(first.ids()).containsAll(again.ids());
    }

    /**
     * A transcript replaced by another, longer one (moved over it, or written over it in place): its bytes before the
     * offset read are not those read, so it is read again from its start, as a file that shrank, not from the middle
     * of a line.
     */
    @Test
    void aTranscriptReplacedByALongerOneIsReadAgainFromTheStart() throws Exception {
        String id = "14141414-0000-4000-8000-000000000014";
        String old = prompt(id, "p1", "Old first prompt") + prompt(id, "p2", "Old second prompt");
        String replacement = prompt(id, "n1", "A whole new first prompt, and a longer one") + prompt(id, "n2", "New second")
                + prompt(id, "n3", "New third");
        for (boolean moved : new boolean[] {true, false}) {
            Stores stores = Stores.empty(tmp.resolve(moved ? "moved" : "in-place"));
            Path file = stores.claudeFile("-home-ana-my-app", id + ".jsonl");
            Files.createDirectories(file.getParent());
            Files.writeString(file, old);
            Stores.touch(file, Stores.NOW.minusSeconds(60));
            StoreImporter importer = stores.importer();
            assertThat(stores.importAll(importer).claims()).extracting(c -> c.getTask().getTitle())
                    .containsExactly("Old first prompt", "Old second prompt");

            if (moved) {
                Path other = file.resolveSibling("other.tmp");
                Files.writeString(other, replacement);
                Files.move(other, file, StandardCopyOption.REPLACE_EXISTING);
            } else {
                Files.writeString(file, replacement);
            }
            Stores.touch(file, Stores.NOW.minusSeconds(30));
            Imported again = stores.importAll(importer);

            assertThat(again.claims()).as(moved ? "moved over" : "written over").extracting(c -> c.getTask().getTitle())
                    .containsExactly("A whole new first prompt, and a longer one", "New second", "New third");
            assertThat(again.summary().skippedLines()).isEmpty();
            // the run the last read left open is in the file no more: done as of its last line, not working for ever
            assertThat(again.done("claude-code:" + id + ":p2").getDurationMs()).isNotNull();
            assertThat(again.summary().gone()).as("the same session, still here").isZero();
            JsonNode state = new ObjectMapper().readTree(stores.stateFile.toFile())
                    .path("files").path(file.toAbsolutePath().toString());
            assertThat(state.path("offset").asLong()).isEqualTo(replacement.length());
            assertThat(state.path("lines").asLong()).isEqualTo(3);
            // then appended to: only the new line is read
            Files.writeString(file, prompt(id, "n4", "New fourth"), StandardOpenOption.APPEND);
            Stores.touch(file, Stores.NOW.minusSeconds(20));
            assertThat(stores.importAll(importer).claims()).extracting(c -> c.getTask().getTitle()).containsExactly("New fourth");
        }
    }

    /** A state file written before the last bytes read were kept loads, and its files are read on from their offset. */
    @Test
    void aStateWithoutTheLastBytesReadIsReadOnFromItsOffset() throws Exception {
        String id = "15151515-0000-4000-8000-000000000015";
        Stores stores = Stores.empty(tmp);
        Path file = stores.claudeFile("-home-ana-my-app", id + ".jsonl");
        Files.createDirectories(file.getParent());
        Files.writeString(file, prompt(id, "p1", "First"));
        Stores.touch(file, Stores.NOW.minusSeconds(60));
        stores.importAll(stores.importer());
        ObjectMapper json = new ObjectMapper();
        ObjectNode state = (ObjectNode) json.readTree(stores.stateFile.toFile());
        ObjectNode fs = (ObjectNode) state.path("files").path(file.toAbsolutePath().toString());
        assertThat(fs.has("tail")).isTrue();
        fs.remove("tail");
        json.writeValue(stores.stateFile.toFile(), state);

        Files.writeString(file, prompt(id, "p2", "Second"), StandardOpenOption.APPEND);
        Stores.touch(file, Stores.NOW.minusSeconds(30));
        Imported next = stores.importAll(stores.importer());

        assertThat(next.claims()).extracting(c -> c.getTask().getTitle()).containsExactly("Second");
        assertThat(next.summary().skippedLines()).isEmpty();
    }

    /**
     * A line longer than the limit is a malformed line, named with the limit; the lines after it are read, and the
     * next import reads nothing again. One whose line end is not written yet is passed over as it grows: each import
     * reads only what was added.
     */
    @Test
    void aLineLongerThanTheLimitIsSkippedAsMalformedAndTheRestIsRead() throws Exception {
        String id = "16161616-0000-4000-8000-000000000016";
        String p1 = prompt(id, "p1", "First");
        String p2 = prompt(id, "p2", "Second");
        String big = "{\"type\":\"assistant\",\"text\":\"" + "x".repeat(1000) + "\"}";
        Stores stores = Stores.empty(tmp);
        Path file = stores.claudeFile("-home-ana-my-app", id + ".jsonl");
        Files.createDirectories(file.getParent());
        Files.writeString(file, p1 + big + "\n" + p2);
        Stores.touch(file, Stores.NOW.minusSeconds(60));
        List<Long> reads = new ArrayList<>();
        StoreImporter importer = new StoreImporter(stores.config(), new ImportProgress() {
            @Override
            public void onFile(Path f, long n) {
                reads.add(n);
            }
        }).withMaxLine(400);

        Imported first = stores.importAll(importer);
        assertThat(first.claims()).extracting(c -> c.getTask().getTitle()).containsExactly("First", "Second");
        assertThat(first.summary().skippedLines()).extracting(ImportSummary.Skip::reason)
                .containsExactly("malformed line 2: " + big.length() + " bytes, longer than the line length limit of 400 bytes");
        Imported second = stores.importAll(importer);
        assertThat(second.events()).isEmpty();
        assertThat(second.summary().filesRead()).isZero();

        // an over-long line still being written: passed over up to the end of the file, then on from there
        String p3 = prompt(id, "p3", "Third");
        Files.writeString(file, big.substring(0, 700), StandardOpenOption.APPEND);
        Stores.touch(file, Stores.NOW.minusSeconds(50));
        Imported growing = stores.importAll(importer);
        assertThat(growing.events()).isEmpty();
        assertThat(growing.summary().skippedLines()).isEmpty();
        JsonNode state = new ObjectMapper().readTree(stores.stateFile.toFile()).path("files").path(file.toAbsolutePath().toString());
        assertThat(state.path("offset").asLong()).isEqualTo(Files.size(file));
        assertThat(state.path("longLineFrom").asLong()).isEqualTo(Files.size(file) - 700);
        assertThat(state.path("lines").asLong()).isEqualTo(3);

        Files.writeString(file, big.substring(700) + "\n" + p3, StandardOpenOption.APPEND);
        Stores.touch(file, Stores.NOW.minusSeconds(40));
        Imported ended = stores.importAll(importer);
        assertThat(ended.claims()).extracting(c -> c.getTask().getTitle()).containsExactly("Third");
        assertThat(ended.summary().skippedLines()).extracting(ImportSummary.Skip::reason)
                .containsExactly("malformed line 4: " + big.length() + " bytes, longer than the line length limit of 400 bytes");
        assertThat(reads).as("bytes read by each import that read the file")
                .containsExactly((long) (p1.length() + big.length() + 1 + p2.length()), 700L, (long) (big.length() - 700 + 1 + p3.length()));
        assertThat(stores.importAll(importer).events()).isEmpty();
        JsonNode after = new ObjectMapper().readTree(stores.stateFile.toFile()).path("files").path(file.toAbsolutePath().toString());
        assertThat(after.has("longLineFrom")).isFalse();
        assertThat(after.path("offset").asLong()).isEqualTo(Files.size(file));
    }

    @Test
    void aTranscriptThatIsGoneIsForgotten() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();
        stores.importAll(importer);
        Path file = stores.claudeFile("-home-ana-my-app", A + ".jsonl");

        Files.delete(file);
        stores.importAll(importer);

        JsonNode files = new ObjectMapper().readTree(stores.stateFile.toFile()).path("files");
        assertThat(files.has(file.toAbsolutePath().toString())).isFalse();
        assertThat(files.size()).isEqualTo(9);
    }

    @Test
    void whenTheSinkFailsNoProgressIsSavedAndTheNextImportSendsTheSameEvents() {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();
        List<String> attempted = new ArrayList<>();
        EventSink failing = new EventSink() {
            @Override
            public void accept(dev.ensemble.sessions.events.Event e) {
                attempted.add(e.getEventId());
            }

            @Override
            public void flush() {
                throw new IllegalStateException("broker unreachable");
            }
        };

        assertThatThrownBy(() -> importer.importAll(List.of(stores.claude), List.of(stores.codex), failing))
                .hasMessage("broker unreachable");
        assertThat(Files.exists(stores.stateFile)).isFalse();

        Imported retried = stores.importAll(importer);
        assertThat(retried.ids()).isEqualTo(attempted);
        assertThat(stores.importAll(importer).events()).isEmpty();
    }

    @Test
    void progressIsReportedPerChangedFile() {
        Stores stores = Stores.withFixtures(tmp);
        List<String> calls = new ArrayList<>();
        StoreImporter importer = new StoreImporter(stores.config(), new ImportProgress() {
            @Override
            public void onStart(int files, long bytes) {
                calls.add("start " + files + " " + (bytes > 20_000));
            }

            @Override
            public void onFile(Path file, long bytes) {
                calls.add("file");
            }

            @Override
            public void onDone(ImportSummary summary) {
                calls.add("done " + summary.runs() + " from " + summary.filesRead());
            }
        });

        stores.importAll(importer);
        stores.importAll(importer);

        // 8 Claude Code files (one not a transcript, one a sub-agent's found only by reading it) and 2 Codex rollouts;
        // the sub-agents named as such are not read. The summary counts the files the bar counts.
        assertThat(calls).containsExactly("start 10 true", "file", "file", "file", "file", "file", "file", "file",
                "file", "file", "file", "done 13 from 10", "start 0 false", "done 0 from 0");
    }

    @Test
    void transcriptsTouchedWithNothingNewAreCheckedNotImportedAndTheirIdleRunsSaySo() {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();
        ImportSummary first = stores.importAll(importer).summary();
        assertThat(first.toString()).startsWith("imported 8 sessions, 13 runs, 16 engine events from 10 files; ");

        // every file touched (its time changed, nothing written): read again, nothing new
        stores.touchAll(Stores.NOW.minusSeconds(30));
        Imported touched = stores.importAll(importer);
        assertThat(touched.events()).isEmpty();
        assertThat(touched.summary().sessions()).isZero();
        assertThat(touched.summary().toString()).isEqualTo(
                "10 files checked, nothing new; 4 files skipped (1 not a transcript, 3 sub-agent transcript)");

        // touched again with a time 2 hours ago: nothing new, but the open runs are over by the 30-minute rule
        stores.touchAll(Stores.NOW.minus(java.time.Duration.ofHours(2)));
        Imported idle = stores.importAll(importer);
        assertThat(idle.payloads(dev.ensemble.sessions.events.RunStatusChanged.class)).hasSize(4);
        assertThat(idle.summary().sessions()).as("sessions closed by the 30-minute rule are not imported ones").isZero();
        assertThat(idle.summary().idleClosed()).isEqualTo(4);
        assertThat(idle.summary().toString()).isEqualTo("10 files checked, nothing new; "
                + "4 runs marked done after 30 minutes without change; 4 files skipped (1 not a transcript, 3 sub-agent transcript)");
        assertThat(idle.summary().storeLines()).anySatisfy(l -> assertThat(l).startsWith("Claude Code (")
                .endsWith(": 8 sessions, 8 files checked, nothing new, 3 runs marked done after 30 minutes without change"));
    }

    /** The offset just after the {@code n}th line end. */
    @Test
    void manyChangedTranscriptsAreReadAFewAheadAndAppliedInTheOrderOfTheirFiles() throws Exception {
        // many more than are read ahead at once, written newest first: applied oldest first all the same
        int n = 6 * Runtime.getRuntime().availableProcessors() + 3;
        Stores stores = Stores.empty(tmp);
        Path project = stores.claude.resolve("-home-ana-many");
        Files.createDirectories(project);
        List<String> expected = new ArrayList<>();
        for (int i = n - 1; i >= 0; i--) {
            String id = String.format("00000000-2222-4222-8222-%012d", i);
            Path file = project.resolve(id + ".jsonl");
            Files.writeString(file, "{\"type\":\"user\",\"sessionId\":\"" + id + "\",\"uuid\":\"u" + i
                    + "\",\"cwd\":\"/home/ana/many\",\"timestamp\":\"2026-03-01T11:00:00.000Z\","
                    + "\"message\":{\"role\":\"user\",\"content\":\"prompt " + i + "\"}}\n");
            Stores.touch(file, Stores.NOW.minusSeconds(60 + n - i));
        }
        for (int i = 0; i < n; i++) {
            expected.add("prompt " + i);
        }

        Imported got = stores.importAll(stores.importer());

        assertThat(got.claims()).extracting(c -> c.getTask().getTitle()).containsExactlyElementsOf(expected);
        assertThat(got.summary().filesRead()).isEqualTo(n);
        assertThat(stores.importAll(stores.importer()).events()).isEmpty();
    }

    @Test
    void importChangedReadsOnlyTheGivenFilesAndForgetsAGivenFileThatIsGone() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        StoreImporter importer = stores.importer();
        stores.importAll(importer);
        Path grown = stores.claudeFile("-home-ana-my-app", A + ".jsonl");
        Path other = stores.claudeFile("-home-ana-auth", "12345678-1111-4111-8111-000000000008.jsonl");
        Path gone = stores.claudeFile("-srv-big", "ffffffff-1111-4111-8111-000000000006.jsonl");
        Files.writeString(grown, prompt(A, "a-p3", "Ship it"), StandardOpenOption.APPEND);
        Files.writeString(other, prompt("12345678-1111-4111-8111-000000000008", "o-p9", "Not asked for"),
                StandardOpenOption.APPEND);
        Files.delete(gone);
        AgentStores agentStores = AgentStores.of(List.of(stores.claude), List.of(stores.codex));

        Stores.ListSink sink = new Stores.ListSink();
        ImportSummary summary = importer.importChanged(agentStores, List.of(grown, gone, tmp.resolve("elsewhere.jsonl")), sink);
        Imported got = new Imported(summary, sink.events);

        assertThat(got.claims()).extracting(RunClaimed::getRunId).containsExactly("claude-code:" + A + ":a-p3");
        assertThat(got.payloads(EngineEvent.class)).filteredOn(EngineEvent::getTranscriptGone)
                .extracting(EngineEvent::getAgentSessionId).containsExactly("ffffffff-1111-4111-8111-000000000006");
        assertThat(summary.filesRead()).isEqualTo(1);
        // the file not given is read by the next whole import, and nothing is sent twice
        Imported next = stores.importAll(importer);
        assertThat(next.claims()).extracting(RunClaimed::getRunId)
                .containsExactly("claude-code:12345678-1111-4111-8111-000000000008:o-p9");
        assertThat(next.ids()).doesNotContainAnyElementsOf(got.ids());
    }

    /**
     * A second importer (the {@code import} command's, with its own state file) given the first one's state reads
     * only what the first did not: an already imported folder is not imported again as new runs.
     */
    @Test
    void anImporterKnowingAnotherOnesStateImportsOnlyWhatThatOneHasNotRead() throws Exception {
        Stores stores = Stores.withFixtures(tmp);
        Imported first = stores.importAll(stores.importer());
        assertThat(first.claims()).hasSizeGreaterThan(5);
        Path grown = stores.claudeFile("-home-ana-my-app", A + ".jsonl");
        Files.writeString(grown, prompt(A, "a-p3", "Ship it"), StandardOpenOption.APPEND);

        Path cliState = tmp.resolve("cli/import-state-cli.json");
        StoreImporter cli = new StoreImporter(new ImportConfig(Stores.ACCOUNT, Stores.COMPUTER, stores.clock, cliState))
                .knowing(stores.stateFile);
        Stores.ListSink sink = new Stores.ListSink();
        ImportSummary summary = cli.importAll(List.of(stores.claude), List.of(stores.codex), sink);

        assertThat(new Imported(summary, sink.events).claims()).extracting(RunClaimed::getRunId)
                .containsExactly("claude-code:" + A + ":a-p3");
        assertThat(summary.filesRead()).isEqualTo(1);
        assertThat(summary.storeLines()).anySatisfy(line -> assertThat(line).startsWith("Claude Code (")
                .endsWith(", imported 1 (1 new run)"));
        // and again: nothing new
        Stores.ListSink again = new Stores.ListSink();
        assertThat(cli.importAll(List.of(stores.claude), List.of(stores.codex), again).filesRead()).isZero();
        assertThat(again.events).isEmpty();
        // without the other state, every transcript would be read again as new
        Stores.ListSink blind = new Stores.ListSink();
        new StoreImporter(new ImportConfig(Stores.ACCOUNT, Stores.COMPUTER, stores.clock, tmp.resolve("blind.json")))
                .importAll(List.of(stores.claude), List.of(stores.codex), blind);
        assertThat(new Imported(null, blind.events).claims()).hasSize(first.claims().size() + 1);
    }

    /** A Claude Code prompt line. */
    static String prompt(String sessionId, String uuid, String text) {
        return "{\"type\":\"user\",\"sessionId\":\"" + sessionId + "\",\"cwd\":\"/home/ana/my-app\",\"uuid\":\"" + uuid
                + "\",\"timestamp\":\"2026-03-01T11:59:30.000Z\",\"message\":{\"role\":\"user\",\"content\":\"" + text + "\"}}\n";
    }

    static int nthLineEnd(byte[] bytes, int n) {
        int seen = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == '\n' && ++seen == n) {
                return i + 1;
            }
        }
        throw new IllegalArgumentException("fewer than " + n + " lines");
    }
}
