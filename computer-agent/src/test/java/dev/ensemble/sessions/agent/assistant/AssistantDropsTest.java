package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.assistant.AssistantDrops.Dropped;
import dev.ensemble.sessions.agent.assistant.AssistantDrops.Outcome;
import dev.ensemble.sessions.agent.assistant.AssistantSessions.Entry;
import dev.ensemble.sessions.agent.assistant.AssistantSessions.Retired;
import dev.ensemble.sessions.assistant.DropRules;
import dev.ensemble.sessions.assistant.TurnRules;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ensemble.sessions.agent.assistant.FakeHome.minus;
import static dev.ensemble.sessions.agent.assistant.FakeHome.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Dropping a chat's session on this computer (guide §6 "Deleting a chat deletes its session": the store entry, the
 * agent's own session, the chat's own folder, after any running turn of that chat has ended), on a fake HOME: a
 * listing before and after shows exactly the session's files, the entry and the chat's folder gone, and nothing else.
 */
class AssistantDropsTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final String S1 = "11111111-aaaa-4aaa-8aaa-000000000001";
    static final String S2 = "22222222-aaaa-4aaa-8aaa-000000000002";
    static final String NEIGHBOUR = "33333333-aaaa-4aaa-8aaa-000000000003";
    static final String R1 = "c0c0c0c0-2222-4222-8222-000000000001";
    static final String R2 = "c0c0c0c0-2222-4222-8222-000000000002";

    @TempDir
    Path tmp;
    FakeHome home;
    AssistantSessions sessions;
    ChatLocks locks;
    AssistantDrops drops;
    Path project;

    @BeforeEach
    void setUp() throws IOException {
        home = new FakeHome(tmp);
        sessions = AssistantSessions.open(home.state, Clock.fixed(T, ZoneOffset.UTC));
        locks = new ChatLocks();
        drops = new AssistantDrops(sessions, new AgentStoreDeleter(home.stores()), locks, "laptop");
        project = tmp.resolve("Ensemble/projects/Launch");

        // chat-1: Claude Code session S1 in its own folder, with a sub-agent; a Copilot session R1 it retired
        Path chat1 = sessions.makeChatFolder("chat-1");
        String chat1Projects = "-" + chat1.toString().substring(1).replace('/', '-').replace('.', '-');
        write(home.claudeProjects().resolve(chat1Projects).resolve(S1 + ".jsonl"), claudeLine(S1, "hello"));
        write(home.claudeProjects().resolve(chat1Projects).resolve(S1).resolve("subagents/agent-5678ef01.jsonl"),
                claudeLine(S1, "a sub-agent"));
        write(home.claudeProjects().resolve(chat1Projects).resolve(NEIGHBOUR + ".jsonl"), claudeLine(NEIGHBOUR, "the person's own"));
        write(home.copilotState().resolve(R1).resolve("events.jsonl"), "{\"type\":\"user.message\",\"data\":{\"content\":\"hi\"}}\n");
        write(home.copilotState().resolve(R1).resolve("workspace.yaml"), "cwd: /x\n");
        write(home.copilotState().resolve(R2).resolve("events.jsonl"), "{\"type\":\"user.message\",\"data\":{\"content\":\"mine\"}}\n");
        write(chat1.resolve("instructions.md"), "You are Ensemble.\n");
        write(chat1.resolve("mcp.json"), "{}\n");
        Files.createSymbolicLink(chat1.resolve("project-link"), Files.createDirectories(project));
        sessions.put(new Entry("chat-1", "claude-code", S1, "sonnet", List.of("You are Ensemble."), chat1.toString(), null,
                4, 2, 2, "laptop", T, List.of(new Retired("copilot", R1))));

        // chat-2: grouped, works in the group's project folder; its own folder has the turn's files
        write(home.claudeProjects().resolve("-work-Ensemble-projects-Launch").resolve(S2 + ".jsonl"), claudeLine(S2, "grouped"));
        write(project.resolve("AGENTS.md"), "# Launch\n");
        write(sessions.makeChatFolder("chat-2").resolve("instructions.md"), "You are Ensemble.\n");
        sessions.put(new Entry("chat-2", "claude-code", S2, "sonnet", List.of("You are Ensemble."), project.toString(), 30,
                2, 1, 1, "laptop", T, List.of()));
    }

    @AfterEach
    void closeStore() {
        sessions.close();
    }

    static String claudeLine(String sessionId, String text) {
        return "{\"type\":\"user\",\"sessionId\":\"" + sessionId + "\",\"message\":{\"role\":\"user\",\"content\":\"" + text + "\"}}\n";
    }

    String chat1Projects() {
        return ".claude/projects/-" + sessions.chatFolder("chat-1").toString().substring(1).replace('/', '-').replace('.', '-');
    }

    String rel(Path p) {
        return home.home.relativize(p).toString();
    }

    @Test
    void exactlyTheSessionsFilesTheRetiredSessionTheEntryAndTheChatsFolderGo() {
        Set<String> before = home.listing();

        Dropped d = drops.drop("chat-1", Duration.ofSeconds(5));

        String own = rel(sessions.chatFolder("chat-1"));
        Set<String> gone = minus(before, home.listing());
        assertThat(gone).containsExactlyInAnyOrder(
                chat1Projects() + "/" + S1 + ".jsonl",
                chat1Projects() + "/" + S1,
                chat1Projects() + "/" + S1 + "/subagents",
                chat1Projects() + "/" + S1 + "/subagents/agent-5678ef01.jsonl",
                ".copilot/session-state/" + R1,
                ".copilot/session-state/" + R1 + "/events.jsonl",
                ".copilot/session-state/" + R1 + "/workspace.yaml",
                own,
                own + "/instructions.md",
                own + "/mcp.json",
                own + "/project-link");
        assertThat(minus(home.listing(), before)).as("nothing new").isEmpty();
        assertThat(project.resolve("AGENTS.md")).as("a link in the chat's folder is removed, never followed").exists();
        sessions.close();
        try (AssistantSessions reopened = AssistantSessions.open(home.state, Clock.systemUTC())) {
            assertThat(reopened.all()).as("the entry is gone, the other chat's stays").containsOnlyKeys("chat-2");
        }

        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.confirmed()).isTrue();
        assertThat(d.key()).isEqualTo("chat-1");
        assertThat(d.computerId()).isEqualTo("laptop");
        assertThat(d.agent()).isEqualTo("claude-code");
        assertThat(d.sessionId()).isEqualTo(S1);
        assertThat(d.retired()).containsExactly(new Retired("copilot", R1));
        assertThat(d.entryRemoved()).isTrue();
        assertThat(d.folderRemoved()).isTrue();
        assertThat(d.error()).isNull();
        assertThat(d.removedPaths()).hasSize(gone.size()).allSatisfy(p -> assertThat(gone).contains(rel(Path.of(p))));
    }

    @Test
    void aGroupedChatsProjectFolderStaysItsOwnFolderGoes() {
        Set<String> before = home.listing();

        Dropped d = drops.drop("chat-2", Duration.ofSeconds(5));

        String own = rel(sessions.chatFolder("chat-2"));
        assertThat(minus(before, home.listing())).containsExactlyInAnyOrder(
                ".claude/projects/-work-Ensemble-projects-Launch/" + S2 + ".jsonl", own, own + "/instructions.md");
        assertThat(project.resolve("AGENTS.md")).exists();
        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(sessions.get("chat-2")).isNull();
    }

    @Test
    void droppingAgainIsAlreadyGoneAndChangesNothing() {
        drops.drop("chat-1", Duration.ofSeconds(5));
        Set<String> before = home.listing();

        Dropped again = drops.drop("chat-1", Duration.ofSeconds(5));

        assertThat(again.outcome()).isEqualTo(Outcome.ALREADY_GONE);
        assertThat(again.confirmed()).isTrue();
        assertThat(again.removedPaths()).isEmpty();
        assertThat(again.entryRemoved()).isFalse();
        assertThat(home.listing()).isEqualTo(before);
        assertThat(drops.drop("never-ran-here", Duration.ofSeconds(5)).outcome()).isEqualTo(Outcome.ALREADY_GONE);
    }

    @Test
    void aSessionAlreadyGoneFromTheAgentCountsAsDeleted() throws IOException {
        Files.delete(home.home.resolve(chat1Projects()).resolve(S1 + ".jsonl"));

        Dropped d = drops.drop("chat-1", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.entryRemoved()).isTrue();
        assertThat(sessions.get("chat-1")).isNull();
        assertThat(sessions.chatFolder("chat-1")).doesNotExist();
    }

    @Test
    void aFolderLeftWithoutAnEntryIsRemoved() {
        Path left = sessions.makeChatFolder("chat-3");
        write(left.resolve("instructions.md"), "x");

        Dropped d = drops.drop("chat-3", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.entryRemoved()).isFalse();
        assertThat(d.folderRemoved()).isTrue();
        assertThat(left).doesNotExist();
    }

    @Test
    void neverWhileATurnOfThatChatIsRunning() throws Exception {
        ExecutorService turnThread = Executors.newSingleThreadExecutor();
        CountDownLatch turnHolds = new CountDownLatch(1);
        CountDownLatch turnMayEnd = new CountDownLatch(1);
        try {
            Future<?> turn = turnThread.submit(() -> {
                try (ChatLocks.Held held = locks.hold("chat-1")) {
                    turnHolds.countDown();
                    turnMayEnd.await();
                    write(sessions.chatFolder("chat-1").resolve("turn-output.md"), "the turn's answer"); // the turn's last file
                }
                return null;
            });
            assertThat(turnHolds.await(10, TimeUnit.SECONDS)).isTrue();
            Set<String> before = home.listing();

            Dropped waited = drops.drop("chat-1", Duration.ofMillis(200));

            assertThat(waited.outcome()).isEqualTo(Outcome.TURN_RUNNING);
            assertThat(waited.confirmed()).isFalse();
            assertThat(waited.error()).contains("still running");
            assertThat(home.listing()).as("nothing done").isEqualTo(before);
            assertThat(sessions.get("chat-1")).isNotNull();

            CompletableFuture<Dropped> after = CompletableFuture.supplyAsync(() -> drops.drop("chat-1", Duration.ofSeconds(30)));
            Thread.sleep(300);
            assertThat(after).as("the drop waits for the turn").isNotDone();
            turnMayEnd.countDown();
            turn.get(10, TimeUnit.SECONDS);

            Dropped d = after.get(30, TimeUnit.SECONDS);
            assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
            assertThat(sessions.chatFolder("chat-1")).as("with the turn's last file").doesNotExist();
            assertThat(sessions.get("chat-1")).isNull();
        } finally {
            turnMayEnd.countDown();
            turnThread.shutdownNow();
        }
    }

    @Test
    void anotherChatsTurnDoesNotHoldItUp() throws Exception {
        ExecutorService turnThread = Executors.newSingleThreadExecutor();
        CountDownLatch turnHolds = new CountDownLatch(1);
        CountDownLatch turnMayEnd = new CountDownLatch(1);
        try {
            turnThread.submit(() -> {
                try (ChatLocks.Held held = locks.hold("chat-2")) {
                    turnHolds.countDown();
                    turnMayEnd.await();
                }
                return null;
            });
            assertThat(turnHolds.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(drops.drop("chat-1", Duration.ofMillis(200)).outcome()).isEqualTo(Outcome.DROPPED);
        } finally {
            turnMayEnd.countDown();
            turnThread.shutdownNow();
        }
    }

    @Test
    void aSessionThatCouldNotBeDeletedKeepsTheEntryAndTheFolderForTheNextRequest() {
        sessions.put(new Entry("chat-4", "claude-code", "../x1", null, List.of(), null, null, 0, 0, null, "laptop", T, List.of()));
        Path folder = sessions.makeChatFolder("chat-4");
        Set<String> before = home.listing();

        Dropped d = drops.drop("chat-4", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(d.confirmed()).isFalse();
        assertThat(d.error()).contains("../x1");
        assertThat(sessions.get("chat-4")).isNotNull();
        assertThat(folder).exists();
        assertThat(home.listing()).isEqualTo(before);
    }

    /** Antigravity's store is encrypted: this computer never deletes its sessions, so its chats are dropped without. */
    @ParameterizedTest
    @ValueSource(strings = {"antigravity", "no-such-agent"})
    void aChatOfAnAgentThisComputerNeverDeletesFromIsDroppedAndItsSessionReportedKept(String agent) {
        sessions.put(new Entry("chat-4", agent, "x1", null, List.of(), null, 1, 0, 0, null, "laptop", T,
                List.of(new Retired("copilot", R2), new Retired(agent, "x0"))));
        Path folder = sessions.makeChatFolder("chat-4");
        write(folder.resolve("instructions.md"), "x");

        Dropped d = drops.drop("chat-4", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.confirmed()).isTrue();
        assertThat(d.error()).isNull();
        assertThat(d.keptInAgent()).containsExactly(new Retired(agent, "x1"), new Retired(agent, "x0"));
        assertThat(d.entryRemoved()).isTrue();
        assertThat(d.folderRemoved()).isTrue();
        assertThat(sessions.get("chat-4")).isNull();
        assertThat(folder).doesNotExist();
        assertThat(home.copilotState().resolve(R2)).as("the retired Copilot session is deleted").doesNotExist();

        // the computer's own sweep drops it too, and then has nothing left to retry
        sessions.put(new Entry("chat-5", agent, "x2", null, List.of(), null, 1, 0, 0, null, "laptop", T, List.of()));
        List<Dropped> swept = drops.dropExpired(T.plus(Duration.ofDays(2)), Duration.ofSeconds(5));
        assertThat(swept).extracting(Dropped::key).containsExactly("chat-5");
        assertThat(swept.get(0).outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(drops.expired(T.plus(Duration.ofDays(2)))).doesNotContain("chat-5");
    }

    @Test
    void aReplacedSessionOfAnAgentThisComputerNeverDeletesFromIsReportedKept() {
        Dropped d;
        try (ChatLocks.Held turn = locks.hold("chat-1")) {
            d = drops.deleteReplaced("chat-1", new TurnRules.Replaced("x1", "antigravity", "laptop",
                    sessions.chatFolder("chat-1").toString(), true));
        }
        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.keptInAgent()).containsExactly(new Retired("antigravity", "x1"));
        assertThat(d.folderRemoved()).isTrue();
    }

    @Test
    void aLinkedFoldersOfChatsIsNeverDeletedThroughNorMadeIn() throws IOException {
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        write(elsewhere.resolve("chat-1/keep.md"), "not the chat's");
        Path root = sessions.chatFolders();
        Files.move(root, tmp.resolve("assistant-moved"));
        Files.createSymbolicLink(root, elsewhere);
        Set<String> before = home.listing();

        Dropped d = drops.drop("chat-1", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(d.error()).contains("is a link");
        assertThat(elsewhere.resolve("chat-1/keep.md")).exists();
        assertThat(sessions.get("chat-1")).as("kept for the next request").isNotNull();
        assertThatThrownBy(() -> sessions.makeChatFolder("chat-9")).cause().hasMessageContaining("is a link");
        assertThat(elsewhere.resolve("chat-9")).doesNotExist();
        try (ChatLocks.Held turn = locks.hold("chat-1")) {
            Dropped r = drops.deleteReplaced("chat-1", new TurnRules.Replaced("x1", "antigravity", "laptop",
                    sessions.chatFolder("chat-1").toString(), true));
            assertThat(r.outcome()).isEqualTo(Outcome.FAILED);
        }
        assertThat(elsewhere.resolve("chat-1/keep.md")).exists();
        assertThat(minus(before, home.listing())).isEmpty();
    }

    @Test
    void aFolderOfManyFilesIsReportedAsACountAndTheFirstPaths() {
        Path folder = sessions.makeChatFolder("chat-3");
        for (int i = 0; i < 450; i++) {
            write(folder.resolve("out/file-" + i + ".txt"), "x");
        }

        Dropped d = drops.drop("chat-3", Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.removedCount()).as("450 files, their folder and the chat's").isEqualTo(452);
        assertThat(d.removedPaths()).hasSize(Dropped.MAX_REPORTED_PATHS).allSatisfy(p -> assertThat(p).startsWith(folder.toString()));
        assertThat(folder).doesNotExist();
    }

    @Test
    void aRequestForAnotherComputerDoesNothing() {
        Set<String> before = home.listing();

        Dropped d = drops.drop(new DropRules.PendingDrop("chat-1", "desktop", T, null), Duration.ofSeconds(5));

        assertThat(d.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(d.error()).contains("desktop");
        assertThat(home.listing()).isEqualTo(before);
        assertThat(drops.drop(new DropRules.PendingDrop("chat-1", "laptop", T, null), Duration.ofSeconds(5)).outcome())
                .isEqualTo(Outcome.DROPPED);
    }

    @Test
    void aReplacedSessionIsDeletedAtOnceWithTheChatsOwnFolderAndTheEntryIsLeftToTheTurn() {
        Set<String> before = home.listing();

        Dropped d;
        try (ChatLocks.Held turn = locks.hold("chat-1")) { // the turn that replaced it holds the chat's lock
            d = drops.deleteReplaced("chat-1", new TurnRules.Replaced(S1, "claude-code", "laptop",
                    sessions.chatFolder("chat-1").toString(), true));
        }

        String own = rel(sessions.chatFolder("chat-1"));
        assertThat(minus(before, home.listing())).containsExactlyInAnyOrder(
                chat1Projects() + "/" + S1 + ".jsonl", chat1Projects() + "/" + S1, chat1Projects() + "/" + S1 + "/subagents",
                chat1Projects() + "/" + S1 + "/subagents/agent-5678ef01.jsonl",
                own + "/instructions.md", own + "/mcp.json", own + "/project-link");
        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.folderRemoved()).as("its content").isTrue();
        assertThat(sessions.chatFolder("chat-1")).as("the new session's working folder stays, empty").isEmptyDirectory();
        assertThat(project.resolve("AGENTS.md")).as("a link inside is removed, never followed").exists();
        assertThat(sessions.get("chat-1")).as("the turn stores the new session's entry").isNotNull();
        assertThat(home.copilotState().resolve(R1)).as("a retired session waits for the chat's drop").exists();
    }

    @Test
    void theNewSessionsFilesWrittenAfterTheReplacedSessionWentStayAndItsWorkingFolderIsThere() {
        Path folder = sessions.chatFolder("chat-1");
        try (ChatLocks.Held turn = locks.hold("chat-1")) {
            // the turn: decide, delete the replaced session, then write the new session's files and run in the folder
            drops.deleteReplaced("chat-1", new TurnRules.Replaced(S1, "claude-code", "laptop", folder.toString(), true));
            assertThat(folder).as("the agent's working folder exists for the new session").isDirectory();
            write(sessions.makeChatFolder("chat-1").resolve("instructions.md"), "the new session's instructions\n");
        }
        assertThat(folder.resolve("instructions.md")).hasContent("the new session's instructions");
        assertThat(folder.resolve("mcp.json")).as("the replaced session's file").doesNotExist();
    }

    @Test
    void aReplacedSessionWhoseFolderIsNotAPathLeavesTheChatsFolder() {
        Dropped d;
        try (ChatLocks.Held turn = locks.hold("chat-1")) {
            d = drops.deleteReplaced("chat-1", new TurnRules.Replaced(S1, "claude-code", "laptop", "bad\u0000folder", true));
        }
        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.folderRemoved()).isFalse();
        assertThat(sessions.chatFolder("chat-1").resolve("instructions.md")).exists();
    }

    @Test
    void aReplacedSessionWorkingInAProjectFolderLeavesEveryFolder() {
        Set<String> before = home.listing();

        Dropped d;
        try (ChatLocks.Held turn = locks.hold("chat-2")) {
            d = drops.deleteReplaced("chat-2", new TurnRules.Replaced(S2, "claude-code", "laptop", project.toString(), false));
        }

        assertThat(minus(before, home.listing())).containsExactly(".claude/projects/-work-Ensemble-projects-Launch/" + S2 + ".jsonl");
        assertThat(d.outcome()).isEqualTo(Outcome.DROPPED);
        assertThat(d.folderRemoved()).isFalse();
    }

    @Test
    void aReplacedSessionIsDeletedOnlyByTheThreadHoldingTheChatsLockAndNeverWaits() throws Exception {
        TurnRules.Replaced replaced = new TurnRules.Replaced(S2, "claude-code", "laptop", project.toString(), false);
        Set<String> before = home.listing();

        assertThatThrownBy(() -> drops.deleteReplaced("chat-2", replaced)).as("no lock held")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("lock");

        ExecutorService other = Executors.newSingleThreadExecutor();
        CountDownLatch holds = new CountDownLatch(1);
        CountDownLatch mayEnd = new CountDownLatch(1);
        try {
            other.submit(() -> {
                try (ChatLocks.Held held = locks.hold("chat-2")) {
                    holds.countDown();
                    mayEnd.await();
                }
                return null;
            });
            assertThat(holds.await(10, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> CompletableFuture.supplyAsync(() -> drops.deleteReplaced("chat-2", replaced))
                    .get(10, TimeUnit.SECONDS)).as("another thread's lock is not this caller's: refused at once, no wait")
                    .hasCauseInstanceOf(IllegalStateException.class);
        } finally {
            mayEnd.countDown();
            other.shutdownNow();
        }
        assertThat(home.listing()).as("nothing deleted").isEqualTo(before);
    }

    @Test
    void aSessionUnusedForItsKeepDaysIsDroppedByTheComputerItself() {
        // chat-1: no keepDays (30 days); chat-2: 30; an ask (keepDays 1), a node conversation (7), one kept forever (0)
        sessions.put(new Entry("ask-1", "claude-code", "a1", null, List.of(), null, 1, 0, 1, null, "laptop", T, List.of()));
        sessions.put(new Entry("node-1", "claude-code", "n1", null, List.of(), null, 7, 0, 1, null, "laptop", T, List.of()));
        sessions.put(new Entry("kept", "claude-code", "k1", null, List.of(), null, 0, 0, 1, null, "laptop", T, List.of()));

        assertThat(drops.expired(T.plus(Duration.ofDays(1)).minusMillis(1))).isEmpty();
        assertThat(drops.expired(T.plus(Duration.ofDays(1)))).containsExactly("ask-1");
        assertThat(drops.expired(T.plus(Duration.ofDays(7)))).containsExactly("ask-1", "node-1");
        assertThat(drops.expired(T.plus(Duration.ofDays(30)).minusMillis(1))).containsExactly("ask-1", "node-1");
        assertThat(drops.expired(T.plus(Duration.ofDays(30)))).containsExactly("chat-1", "chat-2", "ask-1", "node-1");
        assertThat(drops.expired(T.plus(Duration.ofDays(10_000)))).doesNotContain("kept");

        List<Dropped> dropped = drops.dropExpired(T.plus(Duration.ofDays(7)), Duration.ofSeconds(5));

        assertThat(dropped).extracting(Dropped::key).containsExactly("ask-1", "node-1");
        assertThat(sessions.all()).containsOnlyKeys("chat-1", "chat-2", "kept");
    }
}
