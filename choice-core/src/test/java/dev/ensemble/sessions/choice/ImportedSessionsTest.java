package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.views.TaskFactsView;

import java.util.List;

import static dev.ensemble.sessions.choice.Fx.*;
import static org.assertj.core.api.Assertions.assertThat;

/** A person's own imported sessions: the task their content gives, and the command that resumes them. */
class ImportedSessionsTest {
    @Test
    void theTaskOfAnImportedSessionComesFromItsPrompts() {
        SessionTask t = ImportedSessions.taskOf("abc", SPACE, ACCOUNT, "/home/p/proj", List.of(
                new ImportedSessions.Prompt("\n  Add retry to the upload client\nuse exponential backoff", List.of("/home/p/proj/src/Upload.java")),
                new ImportedSessions.Prompt(null, List.of()),
                new ImportedSessions.Prompt("Also cap the backoff at 30 s", List.of("src/Upload.java", "/etc/hosts"))));
        assertThat(t.taskId()).isEqualTo("imported:abc");
        assertThat(t.facts().title()).isEqualTo("Add retry to the upload client");
        assertThat(t.facts().description()).isEqualTo("use exponential backoff\n\nAlso cap the backoff at 30 s");
        assertThat(t.filesChanged()).containsExactly("src/Upload.java", "/etc/hosts");
        assertThat(ImportedSessions.taskOf("x", SPACE, ACCOUNT, null, List.of(new ImportedSessions.Prompt(" ", List.of())))).isNull();
    }

    @Test
    void aTaskWordedLikeALaterPromptMeetsTheImportedSession_anUnrelatedOneDoesNot() {
        SessionTask t = ImportedSessions.taskOf("abc", SPACE, ACCOUNT, "/p", List.of(
                new ImportedSessions.Prompt("Add retry to the upload client", List.of("/p/src/UploadClient.java")),
                new ImportedSessions.Prompt("Cap the exponential backoff of UploadClient retries", List.of())));
        Decision near = decide(run(facts("Cap the exponential backoff of UploadClient retries at 30 s")), session("s1", 600, t));
        assertThat(near.decision()).isEqualTo(Decision.Choice.CONTINUE);
        Decision far = decide(run(facts("Translate the settings page into German")), session("s1", 600, t));
        assertThat(far.decision()).isEqualTo(Decision.Choice.NEW);
    }

    @Test
    void resumeCommands() {
        record Case(String agent, String id, String folder, String command) {
        }
        for (Case c : List.of(
                new Case("claude-code", "3f2a-11", "/home/p/my proj", "cd '/home/p/my proj' && claude --resume 3f2a-11"),
                new Case("codex", "0199-aa", "/w", "cd /w && codex resume 0199-aa"),
                new Case("claude", "id", null, "claude --resume id"),
                new Case("grok-build", "019f6000-01", "/w", "cd /w && grok --resume 019f6000-01"),
                new Case("mistral-vibe", "a1b2c3d4-0000", "/w", "cd /w && vibe --resume a1b2c3d4-0000"),
                new Case("kimi-code", "5e4f-77", "/w", "cd /w && kimi --session 5e4f-77"),
                new Case("unknown-agent", "id", "/w", null),
                new Case("claude-code", "--dangerously-skip-permissions", "/w", null),
                new Case("claude-code", "id", "-P", "cd -- -P && claude --resume id"),
                // a session that ran on Windows (Copilot CLI's cwd): no Unix cd into it; run where the folder says
                new Case("copilot", "07c40cd0-ff51-4d6e-bdcd-ac2f90877203", "D:\\Source\\GitHub\\agent-engram",
                        "copilot --resume 07c40cd0-ff51-4d6e-bdcd-ac2f90877203"),
                new Case("copilot", "id", "C:/Users/ana/app", "copilot --resume id"),
                new Case("codex", "id", "\\\\server\\share\\app", "codex resume id"))) {
            assertThat(ImportedSessions.resumeCommand(c.agent(), c.id(), c.folder())).as(c.agent()).isEqualTo(c.command());
        }
    }

    /** An imported Claude Code session's view as the projector folds it: one task per prompt, chats in local:COMPUTER. */
    static SessionView importedView(String agentSessionId, String folder, String... prompts) {
        java.util.List<RunView> runs = new java.util.ArrayList<>();
        java.util.List<SessionTaskView> tasks = new java.util.ArrayList<>();
        for (int i = 0; i < prompts.length; i++) {
            String runId = AGENT + ":" + agentSessionId + (i == 0 ? "" : ":" + i);
            runs.add(RunView.newBuilder().setRunId(runId).setComputerId(COMPUTER).setStatus("DONE")
                    .setClaimedAt(NOW.minusSeconds(3600 - i)).build());
            String p = prompts[i];
            tasks.add(SessionTaskView.newBuilder().setTaskId(null).setRunIds(new java.util.ArrayList<>(java.util.List.of(runId)))
                    .setSpace("local:" + COMPUTER)
                    .setFacts(TaskFactsView.newBuilder().setTitle(p.isBlank() ? "(image)" : p.lines().findFirst().orElse(p))
                            .setDescription(p.isBlank() ? null : p).build())
                    .setFilesChanged(new java.util.ArrayList<>(i == 0 ? java.util.List.of(folder + "/src/UploadClient.java") : java.util.List.of())).build());
        }
        return SessionView.newBuilder().setSessionId(AGENT + ":" + agentSessionId).setAccount(ACCOUNT).setSpace("local:" + COMPUTER)
                .setSequence(1).setAgent(AGENT).setComputerId(COMPUTER).setFolder(folder)
                .setFolders(new java.util.ArrayList<>(java.util.List.of(folder))).setFolderKind("LOCAL").setKind("TERMINAL_CHAT")
                .setAgentSessionId(agentSessionId).setFill(0.2).setStatus(SessionStatus.IDLE).setResumable(true)
                .setCreatedAt(NOW.minusSeconds(3600)).setLastActiveAt(NOW.minusSeconds(3000)).setRuns(runs).setTasks(tasks).build();
    }

    static NewRun localRun(String title) {
        return NewRun.taskRun("run-new", null, facts(title), "local:" + COMPUTER, ACCOUNT, null, COMPUTER, AGENT);
    }

    @Test
    void anImportedSessionIsACandidateWithItsPromptsAsOneTask_unlessTheSwitchIsOff() {
        SessionView v = importedView("3f2a-11", "/home/p/proj", "Add retry to the upload client\nuse exponential backoff",
                " ", "Cap the exponential backoff of UploadClient retries");
        CandidateSession c = ViewMapping.candidate(v, SessionChoiceConfig.defaults());
        assertThat(c.kind()).isEqualTo(NewRun.RunKind.TASK_RUN);
        assertThat(c.taskCount()).isEqualTo(3);
        assertThat(c.tasks()).singleElement().satisfies(t -> {
            assertThat(t.taskId()).isEqualTo("imported:3f2a-11");
            assertThat(t.space()).isEqualTo("local:" + COMPUTER);
            assertThat(t.facts().title()).isEqualTo("Add retry to the upload client");
            assertThat(t.facts().description()).isEqualTo("use exponential backoff\n\nCap the exponential backoff of UploadClient retries");
            assertThat(t.filesChanged()).containsExactly("src/UploadClient.java");
        });

        NewRun near = localRun("Cap the exponential backoff of UploadClient retries at 30 s");
        java.util.List<CandidateSession> on = java.util.List.of(ViewMapping.candidate(v, SessionChoiceConfig.defaults()));
        Decision d = Scorer.decide(near, on, corpus(100), CFG, NOW, () -> 0L);
        assertThat(d.decision()).isEqualTo(Decision.Choice.CONTINUE);
        assertThat(d.sessionId()).isEqualTo(AGENT + ":3f2a-11");

        SessionChoiceConfig off = CFG.withImportedSessions(new SessionChoiceConfig.ImportedSessionsConfig(false));
        CandidateSession chat = ViewMapping.candidate(v, off);
        assertThat(chat.kind()).isEqualTo(NewRun.RunKind.TERMINAL_CHAT);
        assertThat(Candidates.filter(near, java.util.List.of(chat), off.limits(), NOW).excluded())
                .containsEntry(AGENT + ":3f2a-11", Candidates.CHAT);
        assertThat(Scorer.decide(near, java.util.List.of(chat), corpus(100), off, NOW, () -> 0L).decision()).isEqualTo(Decision.Choice.NEW);

        // a web space's run (another space of the account) never meets the person's own local sessions
        NewRun web = NewRun.taskRun("run-web", "t", facts("Cap the exponential backoff of UploadClient retries at 30 s"),
                SPACE, ACCOUNT, null, COMPUTER, AGENT);
        assertThat(Candidates.filter(web, on, CFG.limits(), NOW).excluded()).containsEntry(AGENT + ":3f2a-11", Candidates.OTHER_SPACE);
    }

    @Test
    void theSwitchIsAFieldOfTheConfigJson() throws Exception {
        assertThat(CFG.importedSessions().candidates()).isTrue();
        assertThat(ConfigLoader.toJson(CFG)).endsWith(",\"importedSessions\":{\"candidates\":true}}");
        SessionChoiceConfig off = ConfigLoader.merge(CFG, "{\"importedSessions\": {\"candidates\": false}}");
        assertThat(off.importedSessions().candidates()).isFalse();
        assertThat(off.hash()).isNotEqualTo(CFG.hash());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConfigLoader.merge(CFG, "{\"importedSessions\": {\"candidates\": \"no\"}}"))
                .hasMessageContaining("importedSessions.candidates: must be true or false");
    }

    @Test
    void aSessionWorkedInAFolderOrOneUnderIt() {
        SessionView v = importedView("a", "/home/p/proj/api", "Fix the login");
        assertThat(ImportedSessions.workedIn(v, null)).isTrue();
        assertThat(ImportedSessions.workedIn(v, "/home/p/proj/api")).isTrue();
        assertThat(ImportedSessions.workedIn(v, "/home/p/proj/")).isTrue();
        assertThat(ImportedSessions.workedIn(v, "/home/p/pro")).isFalse();
        assertThat(ImportedSessions.workedIn(v, "/home/p/proj/api/sub")).isFalse();
    }
}
