package dev.ensemble.sessions.schema;

import java.security.SecureRandom;
import java.util.Base64;

/** Random secrets the system makes for itself: a service's bearer secret, the local broker's SASL passwords. */
public final class Secrets {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Secrets() {
    }

    /** 32 random bytes, base64url without padding: nothing to escape in a header, a JAAS or a properties file. */
    public static String newSecret() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
