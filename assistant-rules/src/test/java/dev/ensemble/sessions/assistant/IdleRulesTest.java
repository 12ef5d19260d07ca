package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.TurnRules.Kind;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/** Idle reaping of assistant conversations ({@link IdleRules}), one nested class per sentence, at the boundaries. */
class IdleRulesTest {
    static final IdleRules.Config C = IdleRules.Config.defaults();
    static final Instant T = Instant.parse("2026-11-02T09:00:00Z");

    static boolean dropped(Kind kind, Integer keepDays, Instant nextRunAt, Duration since) {
        return IdleRules.dropped(kind, T, T, keepDays, nextRunAt, T.plus(since), C);
    }

    @Nested
    class SessionsUnusedFor30DaysOrTheChatsKeepDaysAreDropped {
        @ParameterizedTest(name = "chat, keepDays {0}, unused {1} → dropped {2}")
        @CsvSource({
                " , P29DT23H59M59.999S, false",
                " , P30D,               true",
                " , P30DT0.001S,        true",
                "3, P2DT23H59M59.999S,  false",
                "3, P3D,                true",
                "60, P30D,              false",
                "60, P60D,              true",
                "0, P30D,               false",
                "0, P10000D,            false",
        })
        void table(Integer keepDays, Duration since, boolean dropped) {
            assertThat(dropped(Kind.CHAT, keepDays, null, since)).isEqualTo(dropped);
        }

        @Test
        void keepDaysZeroIsNeverAsTheIdleTtl0OfTheDurableSessionsGuide() {
            assertThat(IdleRules.dropAt(Kind.CHAT, T, T, 0, null, C)).isNull();
            assertThat(IdleRules.dropAt(Kind.ROUTINE, T, T, 0, T.plus(Duration.ofDays(1)), C)).isNull();
            assertThat(IdleRules.dropAt(Kind.NODE_CONVERSATION, T, T, 0, null, C)).isNull();
        }
    }

    @Nested
    class ANodeConversationIsKept7DaysUnused {
        @ParameterizedTest(name = "unused {0} → dropped {1}")
        @CsvSource({
                "P6DT23H59M59.999S, false",
                "P7D,               true",
                "P7DT0.001S,        true",
        })
        void table(Duration since, boolean dropped) {
            assertThat(dropped(Kind.NODE_CONVERSATION, null, null, since)).isEqualTo(dropped);
            assertThat(dropped(Kind.NODE_CONVERSATION, TurnRules.NODE_KEEP_DAYS, null, since)).as("as sent with keepDays 7").isEqualTo(dropped);
        }
    }

    @Nested
    class ARoutinesTurnsKeepTheirSessionTwiceTheGapToItsNextRun30To90Days {
        @ParameterizedTest(name = "next run in {0} → keepDays {1}")
        @CsvSource({
                "PT1H,          30",
                "P1D,           30",
                "P7D,           30",
                "P14D,          30",
                "P14DT23H59M,   30",
                "P15D,          30",
                "P15DT1M,       31",
                "P20D,          40",
                "P30D,          60",
                "P44D,          88",
                "P44DT23H59M,   90",
                "P45D,          90",
                "P45DT0.001S,   90",
                "P91D,          90",
        })
        void table(Duration gap, int keepDays) {
            assertThat(IdleRules.routineKeepDays(T, T.plus(gap), C)).isEqualTo(keepDays);
        }

        @Test
        void aNextRunNotKnownKeepsIt90Days() {
            assertThat(IdleRules.routineKeepDays(T, null, C)).isEqualTo(90);
        }

        @ParameterizedTest(name = "monthly routine unused {0} → dropped {1}")
        @CsvSource({
                "P59DT23H59M59.999S, false",
                "P60D,               true",
        })
        void aMonthlyRoutineStaysInOneSession(Duration since, boolean dropped) {
            assertThat(dropped(Kind.ROUTINE, null, T.plus(Duration.ofDays(30)), since)).isEqualTo(dropped);
        }
    }

    @Nested
    class AsksGo30MinutesAfterTheLastAnswer {
        @ParameterizedTest(name = "keepDays {0}, {1} after the answer → dropped {2}")
        @CsvSource({
                " , PT29M59.999S, false",
                " , PT30M,        true",
                "1, PT29M59.999S, false",
                "1, PT30M,        true",
        })
        void table(Integer keepDays, Duration since, boolean dropped) {
            assertThat(dropped(Kind.ASK, keepDays, null, since)).isEqualTo(dropped);
        }

        @Test
        void anAskWithNoAnswerYetIsLeftToTheAskSweep() {
            assertThat(IdleRules.dropAt(Kind.ASK, T, null, 1, null, C)).isNull();
        }
    }

    @Nested
    class AOneOffKeepsNoSession {
        @Test
        void nothingToReap() {
            assertThat(IdleRules.dropAt(Kind.ONE_OFF, T, T, null, null, C)).isNull();
        }
    }
}
