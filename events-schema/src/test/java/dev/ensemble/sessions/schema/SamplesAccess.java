package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.events.Event;

/** Test access to the committed sample events for tests in other packages. */
public final class SamplesAccess {
    private SamplesAccess() {
    }

    /** One sample event (an EngineEvent). */
    public static Event one() {
        return Samples.engineEvent();
    }
}
