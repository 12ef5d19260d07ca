package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.DropRules.Action;
import dev.ensemble.sessions.assistant.DropRules.Computer;
import dev.ensemble.sessions.assistant.DropRules.Next;
import dev.ensemble.sessions.assistant.DropRules.PendingDrop;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Asking computers to drop a deleted chat's session ({@link DropRules}), one nested class per sentence. */
class DropRulesTest {
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");
    static final Computer ONLINE = new Computer("laptop", true, true, true, T.minus(Duration.ofDays(1)));
    static final Computer AWAY = new Computer("laptop", true, false, true, T.minus(Duration.ofDays(1)));

    @Nested
    class ItAsksEachOfThePersonsComputersThatRunsAssistantTurns {
        @Test
        void table() {
            List<Computer> computers = List.of(ONLINE, new Computer("desktop", true, false, true, null),
                    new Computer("phone", true, true, false, null), new Computer("old", false, true, true, null));
            assertThat(DropRules.computersToAsk(computers)).containsExactly("laptop", "desktop");
        }
    }

    @Nested
    class AComputerAwayOrNotConfirmingIsAskedAgainWhenItsStreamNextOpensAndWhileOnlineEvery5Minutes {
        @ParameterizedTest(name = "online, last asked {0} ago → {1}")
        @CsvSource({
                "PT0S,          WAIT",
                "PT4M59.999S,   WAIT",
                "PT5M,          ASK",
                "PT5M0.001S,    ASK",
                "PT6M,          ASK",
        })
        void everyFiveMinutesWhileOnline(Duration since, Action action) {
            Next n = DropRules.next(new PendingDrop("chat-1", "laptop", T, T), ONLINE, T.plus(since));
            assertThat(n.action()).isEqualTo(action);
            if (action == Action.WAIT) {
                assertThat(n.at()).isEqualTo(T.plus(Duration.ofMinutes(5)));
            }
        }

        @Test
        void anAwayComputerWaitsForItsStreamAndIsAskedWhenItOpens() {
            PendingDrop never = new PendingDrop("chat-1", "laptop", T, null);
            assertThat(DropRules.next(never, AWAY, T.plus(Duration.ofDays(3)))).isEqualTo(new Next(Action.WAIT, null));
            Computer back = new Computer("laptop", true, true, true, T.plus(Duration.ofDays(3)));
            assertThat(DropRules.next(never, back, T.plus(Duration.ofDays(3))).action()).isEqualTo(Action.ASK);
        }

        @Test
        void aStreamOpenedSinceTheLastAskIsAskedAtOnceNotAfterFiveMinutes() {
            PendingDrop asked = new PendingDrop("chat-1", "laptop", T, T);
            Computer reopened = new Computer("laptop", true, true, true, T.plus(Duration.ofMinutes(1)));
            assertThat(DropRules.next(asked, reopened, T.plus(Duration.ofMinutes(1))).action()).isEqualTo(Action.ASK);
            Computer openedBefore = new Computer("laptop", true, true, true, T.minusSeconds(1));
            assertThat(DropRules.next(asked, openedBefore, T.plus(Duration.ofMinutes(1))).action()).isEqualTo(Action.WAIT);
        }
    }

    @Nested
    class PendingRequestsAreKept30DaysPerComputerAndThoseOfAComputerNoLongerPairedAreDropped {
        @ParameterizedTest(name = "requested {0} ago → {1}")
        @CsvSource({
                "P29DT23H59M59.999S, WAIT",
                "P30D,               EXPIRE",
                "P30DT0.001S,        EXPIRE",
        })
        void thirtyDays(Duration since, Action action) {
            PendingDrop p = new PendingDrop("chat-1", "laptop", T, null);
            assertThat(DropRules.next(p, AWAY, T.plus(since)).action()).isEqualTo(action);
        }

        @Test
        void theLastWaitOfAnOnlineComputerIsNeverPastTheExpiry() {
            Instant last = T.plus(Duration.ofDays(30)).minus(Duration.ofMinutes(2));
            Next n = DropRules.next(new PendingDrop("chat-1", "laptop", T, last), ONLINE, last.plusSeconds(1));
            assertThat(n).isEqualTo(new Next(Action.WAIT, T.plus(Duration.ofDays(30))));
        }

        @Test
        void aComputerNoLongerPaired() {
            PendingDrop p = new PendingDrop("chat-1", "laptop", T, null);
            assertThat(DropRules.next(p, null, T).action()).isEqualTo(Action.DROP_UNPAIRED);
            assertThat(DropRules.next(p, new Computer("laptop", false, true, true, T), T).action()).isEqualTo(Action.DROP_UNPAIRED);
        }
    }
}
