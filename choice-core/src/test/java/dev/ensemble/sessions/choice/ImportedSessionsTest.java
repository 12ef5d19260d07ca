package dev.ensemble.sessions.choice;

import org.junit.jupiter.api.Test;

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
                new Case("unknown-agent", "id", "/w", null))) {
            assertThat(ImportedSessions.resumeCommand(c.agent(), c.id(), c.folder())).as(c.agent()).isEqualTo(c.command());
        }
    }
}
