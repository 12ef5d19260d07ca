package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.assistant.IdleRules;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant idle rules (assistant-rules' {@link IdleRules}) and the retirement rules' idle numbers are the same
 * guide numbers (§5, §6: asks 30 minutes, chats 30 days, node conversations 7 days, routines 30..90 days): changing
 * one without the other fails here.
 */
class AssistantIdleNumbersTest {
    @Test
    void theIdleRulesDefaultsAreTheRetirementRulesDefaults() {
        RetirementRules.Config r = RetirementRules.Config.defaults();

        assertThat(IdleRules.Config.defaults()).isEqualTo(new IdleRules.Config(r.askIdle(), r.chatIdle(),
                r.nodeConversationIdle(), r.routineMin(), r.routineMax()));
    }
}
