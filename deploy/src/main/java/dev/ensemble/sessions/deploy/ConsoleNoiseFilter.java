package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.filter.AbstractFilter;

/**
 * A filter on one of Kafka's loggers in {@code log4j2.xml} that drops the console lines of one known, harmless exchange
 * ({@link #isNoise}) and leaves every other line to the logger's level: each subclass names exactly which lines, by
 * logger, words and exception, so that an error that only looks alike still reaches the console.
 */
abstract class ConsoleNoiseFilter extends AbstractFilter {
    /** A filter that drops its lines and leaves the others to the logger. */
    ConsoleNoiseFilter() {
        super(Result.DENY, Result.NEUTRAL);
    }

    /** A filter that answers {@code onMatch} for its lines and {@code onMismatch} for the others. */
    ConsoleNoiseFilter(Result onMatch, Result onMismatch) {
        super(onMatch, onMismatch);
    }

    @Override
    public final Result filter(LogEvent event) {
        return isNoise(event) ? onMatch : onMismatch;
    }

    /** Whether {@code event} is one of the lines this filter drops. */
    abstract boolean isNoise(LogEvent event);

    /**
     * {@code message} without the log context Kafka's loggers put before it ({@code [ControllerApis nodeId=1] }: a
     * bracketed prefix and a space), or as it is when it has none.
     */
    static String withoutLogContext(String message) {
        if (message.startsWith("[")) {
            int end = message.indexOf("] ");
            if (end > 0) {
                return message.substring(end + 2);
            }
        }
        return message;
    }

    /** The event's formatted message, "" when it has none. */
    static String message(LogEvent event) {
        return event.getMessage() == null ? "" : event.getMessage().getFormattedMessage();
    }
}
