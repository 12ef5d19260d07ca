package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.SessionDeletionSkipped;

/**
 * Who may post which deletion event (and config change) through {@code POST /api/events} (guide §6). The projector's guard
 * decides every deletion whatever is posted; this keeps each event honest about who it comes from:
 * <ul>
 *   <li>SessionDeletionAccepted, SessionDeletionSkipped, SessionDeleted: nobody (the projector writes them);</li>
 *   <li>ChoiceConfigChanged: nobody (the choice service's config publisher appends it, to every partition);</li>
 *   <li>SessionDeletionRequested: a service or the admin (requestedBy any); a person only as itself
 *       (requestedBy person, requesterId its subject); a node only as itself (requestedBy node, requesterId its
 *       subject) with its owner's confirmation; a computer never. People and nodes normally use
 *       {@code DELETE /api/agent/sessions/{id}}, which also says which computer to connect or update;</li>
 *   <li>SessionDeletedOnComputer: only a computer about itself (computerId and source {@code computer:<subject>});</li>
 *   <li>ComputerStatus from a computer: only about itself.</li>
 * </ul>
 */
final class DeletionEventPolicy {
    private DeletionEventPolicy() {
    }

    /** Why {@code principal} may not post {@code e}, or null when it may. */
    static String refusal(Principal principal, Event e) {
        Object p = e.getPayload();
        String role = principal.role();
        if (p instanceof SessionDeletionAccepted || p instanceof SessionDeletionSkipped || p instanceof SessionDeleted) {
            return "deletion decisions are made only by the projector's guard; ask with DELETE /api/agent/sessions/{id}";
        }
        if (p instanceof ChoiceConfigChanged) {
            return "the session-choice config changes only through its file (ENSEMBLE_SESSION_CHOICE_CONFIG), which the choice service appends";
        }
        if (p instanceof SessionDeletionRequested r) {
            String by = r.getRequestedBy().name();
            switch (role) {
                case "service", "admin":
                    return null;
                case "person":
                    return by.equals("person") && principal.subject().equals(r.getRequesterId()) ? null
                            : "a person asks for a deletion only as itself (requestedBy person, requesterId '" + principal.subject() + "')";
                case "node":
                    if (!by.equals("node") || !principal.subject().equals(r.getRequesterId())) {
                        return "a node asks for a deletion only as itself (requestedBy node, requesterId '" + principal.subject() + "')";
                    }
                    return r.getConfirmedBy() == null || r.getConfirmedBy().isBlank()
                            ? "a node asks for a deletion only with its owner's confirmation (confirmedBy)" : null;
                default:
                    return "a " + role + " does not ask for deletions";
            }
        }
        if (p instanceof SessionDeletedOnComputer a) {
            if (!role.equals("computer") || !principal.subject().equals(a.getComputerId())
                    || !("computer:" + principal.subject()).equals(e.getSource())) {
                return "only computer '" + a.getComputerId() + "' reports its own deletions (role computer, source computer:"
                        + a.getComputerId() + ")";
            }
            return null;
        }
        if (p instanceof ComputerStatus cs && role.equals("computer") && !principal.subject().equals(cs.getComputerId())) {
            return "a computer reports only its own status ('" + principal.subject() + "'), not '" + cs.getComputerId() + "'";
        }
        return null;
    }
}
