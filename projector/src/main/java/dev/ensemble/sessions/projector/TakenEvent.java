package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;

/**
 * What the event intake passes on to the session chains: a valid event not applied before and, for an event about a
 * run, the key ({@code <account>/<runId>}) and the {@link RunRecord} of that run as the intake has changed it (its
 * eventId added, its facts folded: {@link AppliedEvents.NewId#take}) and not yet written. The chains change that same
 * record and do not write it; the intake writes it once when the chains are done with the event. So an event about a
 * run reads its run's record once and writes it once, however many of the processors change it.
 *
 * @param event  the event
 * @param runKey the key of its run's record, or null for an event not about a run
 * @param run    that record (never null when {@code runKey} is not), or null
 */
record TakenEvent(Event event, String runKey, RunRecord run) {
}
