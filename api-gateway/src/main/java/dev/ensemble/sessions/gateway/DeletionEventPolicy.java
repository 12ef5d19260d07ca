package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ChoiceConfigChanged;
import dev.ensemble.sessions.events.ComputerStatus;
import dev.ensemble.sessions.events.ConversationDeletionAccepted;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationDeletionSkipped;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;

/**
 * Who may post which deletion event, assistant event (and config change) through {@code POST /api/events} (guide §5, §6). The projector's guard
 * decides every deletion whatever is posted; this keeps each event honest about who it comes from:
 * <ul>
 *   <li>SessionDeletionAccepted, SessionDeletionSkipped, SessionDeleted: nobody (the projector writes them);</li>
 *   <li>ChoiceConfigChanged: nobody (the choice service's config publisher appends it, to every partition);</li>
 *   <li>SessionDeletionRequested: a service or the admin (requestedBy any); a person only as itself
 *       (requestedBy person, requesterId its subject); a node only as itself (requestedBy node, requesterId its
 *       subject) with its owner's confirmation; a computer never. People and nodes normally use
 *       {@code DELETE /api/agent/sessions/{id}}, which also says which computer to connect or update;</li>
 *   <li>SessionDeletedOnComputer: only a computer about itself (computerId and source {@code computer:<subject>});</li>
 *   <li>ComputerStatus from a computer: only about itself;</li>
 *   <li>TurnDecided, AskRequested: nobody (the gateway writes them for {@code POST /api/assistant/turns} and the asks'
 *       endpoints); ConversationDeletionAccepted, ConversationDeletionSkipped: nobody (the projector's guard);</li>
 *   <li>ConversationDeletionRequested: a service or the admin; a person only as itself (requestedBy person,
 *       requesterId its subject; normally {@code DELETE /api/assistant/conversations/{id}}); a node or a computer never;</li>
 *   <li>TurnEnded: a computer only about itself (computerId and source {@code computer:<subject>}), a service or the
 *       admin (the cleanup's "cleared" report); a person or a node never;</li>
 *   <li>ConversationDroppedOnComputer: only a computer about itself (computerId and source {@code computer:<subject>}).</li>
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
        if (p instanceof TurnDecided) {
            return "a turn's session is decided only by the gateway: ask with POST /api/assistant/turns";
        }
        if (p instanceof AskRequested) {
            return "an ask is made with POST /api/pages/{kind}/{id}/ensemble or POST /api/ensemble/invoke";
        }
        if (p instanceof ConversationDeletionAccepted || p instanceof ConversationDeletionSkipped) {
            return "conversation deletion decisions are made only by the projector's guard; ask with DELETE /api/assistant/conversations/{id}";
        }
        if (p instanceof ConversationDeletionRequested r) {
            switch (role) {
                case "service", "admin":
                    return null;
                case "person":
                    return r.getRequestedBy().name().equals("person") && principal.subject().equals(r.getRequesterId()) ? null
                            : "a person asks for a conversation's deletion only as itself (requestedBy person, requesterId '"
                            + principal.subject() + "')";
                default:
                    return "a " + role + " does not ask for a conversation's deletion";
            }
        }
        if (p instanceof TurnEnded t) {
            if (role.equals("service") || role.equals("admin")) {
                return null;
            }
            return ownReport(principal, e, t.getComputerId(), "turns");
        }
        if (p instanceof ConversationDroppedOnComputer d) {
            return ownReport(principal, e, d.getComputerId(), "conversation drops");
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

    /** Null when a computer reports about itself (role computer, computerId its subject, source computer:<subject>). */
    private static String ownReport(Principal principal, Event e, String computerId, String what) {
        if (!principal.role().equals("computer") || !principal.subject().equals(computerId)
                || !("computer:" + principal.subject()).equals(e.getSource())) {
            return "only computer '" + computerId + "' reports its own " + what + " (role computer, source computer:" + computerId + ")";
        }
        return null;
    }
}
