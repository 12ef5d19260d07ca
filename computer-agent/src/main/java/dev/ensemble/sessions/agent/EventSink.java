package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.events.Event;

/**
 * Where the importer sends the events it derives. One call per event, in the order they occurred within an
 * agent session.
 *
 * <p>Errors: an implementation may throw from {@link #accept} or {@link #flush}; the importer then does not
 * record its progress, so the next import sends the same events again (with the same event ids, so the log
 * stays idempotent: DESIGN.md section 3).
 */
@FunctionalInterface
public interface EventSink {
    /** Takes one event. */
    void accept(Event e);

    /**
     * Blocks until every event accepted so far is durably written, or throws. The importer calls it before it
     * saves its progress. Default: nothing to wait for.
     */
    default void flush() {
    }
}
