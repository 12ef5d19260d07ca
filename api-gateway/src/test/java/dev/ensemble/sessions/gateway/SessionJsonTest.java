package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A session's JSON: a session whose transcript is gone from disk shows as gone; every folder is listed. */
class SessionJsonTest {
    static SessionView view(boolean gone) {
        Instant t = Instant.parse("2026-11-02T09:00:00Z");
        return SessionView.newBuilder().setSessionId("qwen-code:s1").setAccount("ana").setSpace("local:laptop").setSequence(3L)
                .setAgent("qwen-code").setComputerId("laptop").setComputerIds(new ArrayList<>(List.of("laptop")))
                .setFolder("/a").setFolders(new ArrayList<>(List.of("/a", "/b"))).setKind("TERMINAL_CHAT")
                .setStatus(SessionStatus.IDLE).setResumable(!gone).setGone(gone).setFilesChanged(new ArrayList<>())
                .setCreatedAt(t).setLastActiveAt(t).setRuns(new ArrayList<>()).setTasks(new ArrayList<>()).build();
    }

    @Test
    void aSessionWhoseTranscriptIsGoneShowsAsGoneAndNotResumable() {
        ObjectNode gone = SessionJson.summary(view(true));
        assertThat(gone.get("status").asText()).isEqualTo("gone");
        assertThat(gone.get("resumable").asBoolean()).isFalse();
        assertThat(SessionJson.summary(view(false)).get("status").asText()).isEqualTo("idle");
    }

    @Test
    void everyFolderIsListedTheFirstFirst() {
        ObjectNode j = SessionJson.summary(view(false));
        assertThat(j.get("folder").asText()).isEqualTo("/a");
        assertThat(j.get("folders")).extracting(n -> n.asText()).containsExactly("/a", "/b");
        // the second folder is searchable too
        assertThat(SessionJson.select(List.of(view(false)), null, null, "/b", 10)).hasSize(1);
        assertThat(SessionJson.select(List.of(view(false)), null, null, "/c", 10)).isEmpty();
    }
}
