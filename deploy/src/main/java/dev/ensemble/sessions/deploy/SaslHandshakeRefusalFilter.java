package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;

/**
 * Picks out the embedded broker's refusal of a client that speaks to it without its SASL settings (a tool pointed at it
 * by hand, which reconnects every second): {@code Selector} logs "Unexpected error from …; closing connection" at WARN
 * with an {@code InvalidRequestException} "Unexpected Kafka request of type … during SASL handshake". Those lines go
 * on to the next filter ({@code NEUTRAL}: a {@code BurstFilter} in {@code log4j2.xml} keeps one in ten seconds); every
 * other line is accepted as it is. Used as {@code <SaslHandshakeRefusal/>}.
 */
@Plugin(name = "SaslHandshakeRefusal", category = Node.CATEGORY, elementType = Filter.ELEMENT_TYPE, printObject = true)
public final class SaslHandshakeRefusalFilter extends ConsoleNoiseFilter {
    private SaslHandshakeRefusalFilter() {
        super(Result.NEUTRAL, Result.ACCEPT);
    }

    /** The filter (no settings). */
    @PluginFactory
    public static SaslHandshakeRefusalFilter create() {
        return new SaslHandshakeRefusalFilter();
    }

    @Override
    boolean isNoise(LogEvent event) {
        Throwable t = event.getThrown();
        String message = message(event);
        return "org.apache.kafka.common.network.Selector".equals(event.getLoggerName())
                && message.contains("Unexpected error from ") && message.endsWith("; closing connection")
                && t instanceof org.apache.kafka.common.errors.InvalidRequestException
                && String.valueOf(t.getMessage()).matches("Unexpected Kafka request of type \\w+ during SASL handshake\\.");
    }
}
