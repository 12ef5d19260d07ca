package dev.ensemble.sessions.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Deleting one agent session's files from the stores (guide §6), and nothing else. */
class AgentStoreDeleterTest {
    static final String SID = "aaaaaaaa-1111-4111-8111-000000000001";
    static final String OTHER = "bbbbbbbb-1111-4111-8111-000000000002";

    static Path write(Path p, String text) throws Exception {
        Files.createDirectories(p.getParent());
        return Files.writeString(p, text);
    }

    static String line(String sid) {
        return "{\"type\":\"user\",\"sessionId\":\"" + sid + "\",\"isSidechain\":true}\n";
    }

    static List<Path> files(Path root) throws Exception {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }

    @Test
    void claudeCodeTheTranscriptAndItsSubAgentsOldAndNewGoAndNothingElse(@TempDir Path home) throws Exception {
        Path projects = home.resolve("projects");
        Path transcript = write(projects.resolve("-work-app/" + SID + ".jsonl"), line(SID));
        Path oldAgent = write(projects.resolve("-work-app/agent-1234abcd.jsonl"), "{\"type\":\"summary\"}\n" + line(SID));
        Path otherAgent = write(projects.resolve("-work-app/agent-9999ffff.jsonl"), line(OTHER));
        Path newAgent = write(projects.resolve("-work-app/" + SID + "/subagents/agent-5678ef01.jsonl"), line(SID));
        Path otherSession = write(projects.resolve("-work-app/" + OTHER + ".jsonl"), line(OTHER));
        Path lookalike = write(projects.resolve("-work-app/" + SID + "-copy.jsonl"), line(SID));
        Path elsewhere = write(projects.resolve("-work-other/" + OTHER + ".jsonl"), line(OTHER));
        Path keptBeside = write(projects.resolve("-work-app/" + OTHER + "/subagents/agent-1.jsonl"), line(OTHER));

        AgentStoreDeleter.Result r = new AgentStoreDeleter(List.of(projects), List.of()).delete("claude-code", List.of(SID));

        assertThat(r.ok()).isTrue();
        assertThat(r.error()).isNull();
        assertThat(r.removedPaths()).contains(transcript.toString(), oldAgent.toString(), newAgent.toString(),
                projects.resolve("-work-app/" + SID).toString());
        assertThat(files(projects)).containsExactlyInAnyOrder(otherAgent, otherSession, lookalike, elsewhere, keptBeside);
        assertThat(Files.exists(projects.resolve("-work-app/" + SID))).isFalse();
    }

    @Test
    void aSessionFolderWithMoreThanSubAgentsKeepsTheRest(@TempDir Path home) throws Exception {
        Path projects = home.resolve("projects");
        write(projects.resolve("-w/" + SID + "/subagents/agent-1.jsonl"), line(SID));
        Path other = write(projects.resolve("-w/" + SID + "/tool-results/out.txt"), "x");
        new AgentStoreDeleter(List.of(projects), List.of()).delete("claude-code", List.of(SID));
        assertThat(files(projects)).containsExactly(other);
    }

    @Test
    void codexTheRolloutGoesAndOtherRolloutsStay(@TempDir Path home) throws Exception {
        Path sessions = home.resolve("sessions");
        String id = "019e1625-789d-76c0-80ab-3724b5ddb799";
        Path rollout = write(sessions.resolve("2026/05/11/rollout-2026-05-11T11-26-55-" + id + ".jsonl"), "{}\n");
        Path other = write(sessions.resolve("2026/05/12/rollout-2026-05-12T08-00-00-0195aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl"), "{}\n");
        AgentStoreDeleter.Result r = new AgentStoreDeleter(List.of(), List.of(sessions)).delete("codex", List.of(id));
        assertThat(r.ok()).isTrue();
        assertThat(r.removedPaths()).containsExactly(rollout.toString());
        assertThat(files(sessions)).containsExactly(other);
    }

    @Test
    void aSessionAlreadyGoneCountsAsDeleted(@TempDir Path home) {
        AgentStoreDeleter.Result r = new AgentStoreDeleter(List.of(home.resolve("projects")), List.of(home.resolve("nowhere")))
                .delete("claude-code", List.of(SID));
        assertThat(r.ok()).isTrue();
        assertThat(r.removedPaths()).isEmpty();
    }

    @Test
    void anAgentWithoutAKnownStoreOrAnIdThatIsNotAFileNameIsAnErrorAndNothingIsTouched(@TempDir Path home) throws Exception {
        Path projects = home.resolve("projects");
        Path kept = write(projects.resolve("-w/" + OTHER + ".jsonl"), line(OTHER));
        AgentStoreDeleter d = new AgentStoreDeleter(List.of(projects), List.of());
        AgentStoreDeleter.Result unknown = d.delete("antigravity", List.of(SID)); // its store is encrypted: not read
        assertThat(unknown.ok()).isFalse();
        assertThat(unknown.error()).contains("antigravity");
        for (String bad : List.of("../-w/" + OTHER, "..", ".hidden", "a/b", "")) {
            AgentStoreDeleter.Result r = d.delete("claude-code", List.of(bad));
            assertThat(r.ok()).as(bad).isFalse();
        }
        assertThat(files(projects)).containsExactly(kept);
    }

    @Test
    void aLinkIsRemovedAsALinkAndWhatItPointsToStays(@TempDir Path home) throws Exception {
        Path projects = home.resolve("projects");
        Path target = write(home.resolve("precious/notes.jsonl"), line(SID));
        Files.createDirectories(projects.resolve("-w"));
        Path link = Files.createSymbolicLink(projects.resolve("-w/" + SID + ".jsonl"), target);
        AgentStoreDeleter.Result r = new AgentStoreDeleter(List.of(projects), List.of()).delete("claude-code", List.of(SID));
        assertThat(r.ok()).isTrue();
        assertThat(Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readString(target)).isEqualTo(line(SID));
    }

    @Test
    void anImportedSessionsIdNamesItsAgentSession() {
        assertThat(AgentStoreDeleter.agentSessionIdOf("claude-code", "claude-code:" + SID)).isEqualTo(SID);
        assertThat(AgentStoreDeleter.agentSessionIdOf("claude-code", "claude-code:" + SID + ":prompt-2")).isEqualTo(SID);
        assertThat(AgentStoreDeleter.agentSessionIdOf("codex", "job-1")).isNull();
    }
}
