package dev.ensemble.sessions.gateway;

/**
 * Whose token a request carries.
 *
 * @param account the account it acts for; a request sees and writes only this account's data
 * @param role    person, node, computer, service or admin (admin: the local system's operator)
 * @param subject who exactly (a person, node or computer id)
 */
public record Principal(String account, String role, String subject) {
    /** True for the operator role. */
    public boolean isAdmin() {
        return "admin".equals(role);
    }
}
