package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.EventFactory;
import dev.ensemble.sessions.agent.ImportConfig;
import dev.ensemble.sessions.assistant.TurnRules.Kind;
import dev.ensemble.sessions.events.Event;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The turn client against a gateway that is away or answers garbage, hostile chat keys and a corrupt store. */
class AssistantTurnsHostileTest extends AssistantTurnsTest {

    AssistantTurns.TurnRequest chatOf(String key, String turnId) {
        return new AssistantTurns.TurnRequest(turnId, key, Kind.CHAT, "claude-code", "sonnet", List.of(), List.of("be brief"),
                null, null, null, workspace(), null);
    }

    @Test
    void aGatewayAnswering500OrGarbageOrAwayRefusesTheTurnAndReleasesTheChat() throws Exception {
        answer(500, "<html>Internal Server Error</html>");
        assertThatThrownBy(() -> turns.begin(chatOf("chat-1", "t1"))).isInstanceOfSatisfying(AssistantTurns.TurnRefused.class,
                e -> assertThat(e.status()).isEqualTo(500));
        answer(200, "not json at all");
        assertThatThrownBy(() -> turns.begin(chatOf("chat-1", "t1"))).isInstanceOf(AssistantTurns.TurnRefused.class);
        answer(200, "[1,2]");
        assertThatThrownBy(() -> turns.begin(chatOf("chat-1", "t1"))).isInstanceOf(AssistantTurns.TurnRefused.class);
        answer(200, "{\"action\":\"resume\"}");
        assertThatThrownBy(() -> turns.begin(chatOf("chat-1", "t1"))).isInstanceOf(AssistantTurns.TurnRefused.class);
        for (String keepDays : List.of("\"x\"", "1.5", "-1", "true")) {
            answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[],\"keepDays\":" + keepDays + "}");
            assertThatThrownBy(() -> turns.begin(chatOf("chat-1", "t1"))).as("keepDays %s", keepDays)
                    .isInstanceOf(AssistantTurns.TurnRefused.class).hasMessageContaining("keepDays");
        }
        assertThat(locks.held("chat-1")).isFalse();

        ImportConfig config = new ImportConfig("acct-ana", "laptop", Clock.fixed(T, ZoneOffset.UTC), home.state.resolve("import-state.json"));
        List<Event> none = new ArrayList<>();
        AssistantTurns away = new AssistantTurns(new AssistantTurns.Gateway(URI.create("http://127.0.0.1:1"), "tok", Duration.ofSeconds(2)),
                store, new TranscriptPrompts(home.stores()), new AgentStoreDeleter(home.stores()), locks, new EventFactory(config),
                none::add, Clock.fixed(T, ZoneOffset.UTC));
        assertThatThrownBy(() -> away.begin(chatOf("chat-1", "t2"))).isInstanceOfSatisfying(AssistantTurns.TurnRefused.class,
                e -> assertThat(e.status()).isZero());
        assertThat(locks.held("chat-1")).isFalse();

        answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[]}");
        turns.begin(chatOf("chat-1", "t3"));
        turns.end("t3", true, S1, 10L, null, null);
        assertThat(store.with(s -> s.get("chat-1")).sessionId()).isEqualTo(S1);
    }

    @Test
    void hostileChatKeysStayInTheChatsFolderAndAReplacedFolderOutsideIsNeverDeleted() throws Exception {
        Path outside = Files.createDirectories(tmp.resolve("precious"));
        Files.writeString(outside.resolve("keep.txt"), "keep");
        for (String key : List.of("../../precious", "..", "/etc/passwd", "k".repeat(10_000), "a/../../b", "CON")) {
            String turn = "t-" + Integer.toHexString(key.hashCode());
            answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[],\"replaced\":{\"sessionId\":\"../../x\","
                    + "\"agent\":\"claude-code\",\"folder\":\"" + outside.toString().replace("\\", "\\\\") + "\",\"deleteFolder\":true}}");
            AssistantTurns.Began b = turns.begin(chatOf(key, turn));
            assertThat(b.chatFolder().toAbsolutePath().normalize())
                    .startsWith(home.state.toAbsolutePath().normalize().resolve("assistant"));
            assertThat(b.chatFolder().getFileName().toString().length()).isLessThanOrEqualTo(128);
            turns.end(turn, true, S1, null, null, null);
            assertThat((Object) store.with(s -> s.get(key))).isNotNull();
        }
        assertThat(outside.resolve("keep.txt")).exists();
        try (Stream<Path> s = Files.list(home.state.resolve("assistant"))) {
            assertThat(s.count()).isEqualTo(6);
        }
    }

    @Test
    void aCorruptStoreIsKeptAsideAndTheTurnGoesOnAsAFirstTurn() throws Exception {
        Files.createDirectories(home.state);
        Files.writeString(home.state.resolve(AssistantSessions.FILE), "{\"version\":1,\"sessions\":{\"chat-1\":{\"agent\":");
        answer(200, "{\"action\":\"new\",\"reason\":\"first-turn\",\"history\":[]}");
        turns.begin(chatOf("chat-1", "t1"));
        assertThat(request().path("entry").isNull()).isTrue();
        turns.end("t1", true, S1, null, null, null);
        assertThat(store.with(s -> s.get("chat-1")).sessionId()).isEqualTo(S1);
        try (Stream<Path> s = Files.list(home.state)) {
            assertThat(s.map(p -> p.getFileName().toString())).anyMatch(n -> n.startsWith(AssistantSessions.FILE + ".corrupt-"));
        }
    }
}
