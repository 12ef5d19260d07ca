package dev.ensemble.sessions.deploy;

import org.apache.kafka.common.errors.NotControllerException;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;

import java.util.concurrent.CompletionException;

/**
 * Drops the console line of one known, harmless race at the start of the embedded broker on its existing data (every
 * {@code up} after the first, KRaft combined mode): the broker registers its controller listener
 * ({@code CONTROLLER_REGISTRATION}) before the node's own controller has finished becoming active, the controller
 * answers {@code NOT_CONTROLLER} ("The active controller appears to be node 1", itself), logged by
 * {@code kafka.server.ControllerApis} at ERROR as an "Unexpected error handling request" (after its log context,
 * {@code [ControllerApis nodeId=1] }), and the broker's registration
 * manager sends the request again a moment later, which succeeds. Only that line is dropped: that logger, a
 * {@code CONTROLLER_REGISTRATION} request, and a {@link NotControllerException} (alone or in a
 * {@link CompletionException}). Used in {@code log4j2.xml} as {@code <ControllerRegistrationRace/>}.
 */
@Plugin(name = "ControllerRegistrationRace", category = Node.CATEGORY, elementType = Filter.ELEMENT_TYPE, printObject = true)
public final class ControllerRegistrationRaceFilter extends ConsoleNoiseFilter {
    static final String LOGGER = "kafka.server.ControllerApis";

    private ControllerRegistrationRaceFilter() {
    }

    /** The filter (no settings). */
    @PluginFactory
    public static ControllerRegistrationRaceFilter create() {
        return new ControllerRegistrationRaceFilter();
    }

    @Override
    boolean isNoise(LogEvent event) {
        if (!LOGGER.equals(event.getLoggerName())
                || !withoutLogContext(message(event)).startsWith("Unexpected error handling request RequestHeader(apiKey=CONTROLLER_REGISTRATION,")) {
            return false;
        }
        Throwable thrown = event.getThrown();
        if (thrown instanceof CompletionException && thrown.getCause() != null) {
            thrown = thrown.getCause();
        }
        return thrown instanceof NotControllerException;
    }
}
