package dev.ensemble.sessions.choice.service;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Clock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The choice service's secret: random per instance, or the one given to a service run alone (its gateway has it too). */
class ChoiceServiceSecretTest {
    private static ChoiceService service() {
        return new ChoiceService(new ChoiceService.Settings("127.0.0.1:1", Path.of("unused"), 1, "127.0.0.1", 0, null,
                Clock.systemUTC()));
    }

    @Test
    void aGivenSecretReplacesTheRandomOneAndAShortOneIsRefused() {
        ChoiceService random = service();
        assertThat(random.secret()).hasSizeGreaterThanOrEqualTo(32).isNotEqualTo(service().secret());
        assertThat(service().withSecret("  shared-secret-of-the-gateway \n").secret()).isEqualTo("shared-secret-of-the-gateway");
        assertThatThrownBy(() -> service().withSecret("short")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the choice service's secret must have 16 characters or more");
    }
}
