package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ensemble.sessions.views.SessionStatus;
import dev.ensemble.sessions.views.SessionView;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A session's JSON: a session whose transcript is gone from disk shows as gone; every folder is listed; a capped view says what it left out. */
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
    void theItemsACappedViewLeftOutAreCountedPerListOnlyWhenThereAreAny() {
        assertThat(SessionJson.summary(view(false)).has("omitted")).isFalse();
        SessionView capped = view(false);
        capped.setOmitted(new java.util.HashMap<>(java.util.Map.of("runs", 12, "filesChanged", 40)));
        ObjectNode j = SessionJson.detail(capped);
        assertThat(j.get("omitted").get("runs").asInt()).isEqualTo(12);
        assertThat(j.get("omitted").get("filesChanged").asInt()).isEqualTo(40);
        assertThat(SessionJson.summary(capped).get("omitted").size()).isEqualTo(2);
    }

    @Test
    void everyFolderIsListedTheFirstFirst() {
        ObjectNode j = SessionJson.summary(view(false));
        assertThat(j.get("folder").asText()).isEqualTo("/a");
        assertThat(j.get("folders")).extracting(n -> n.asText()).containsExactly("/a", "/b");
    }
}
