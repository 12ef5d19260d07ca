package dev.ensemble.sessions.deploy;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Ctrl-C (SIGINT) and SIGTERM as a request to stop, for a command that runs until it is stopped ({@code up}).
 * <p>
 * The JVM's own answer to these signals is to run the shutdown hooks and exit with 128 + the signal's number (130,
 * 143), whatever the hooks do: a hook cannot change that status (only {@link Runtime#halt} from inside a hook could,
 * cutting short the other hooks). So the command handles the signals itself, through {@code sun.misc.Signal}
 * (module jdk.unsupported, there in every JDK 17): the handler asks to stop, the command stops everything on its main
 * thread and ends with 0. Where a signal cannot be handled this way, the JVM's own answer stays.
 */
final class StopSignals {
    private static final Logger LOG = LoggerFactory.getLogger(StopSignals.class);
    static final List<String> SIGNALS = List.of("INT", "TERM");

    private StopSignals() {
    }

    /** What a signal does. */
    interface Handler {
        /** Called on the JVM's signal thread with the signal's name and number; must return quickly. */
        void onSignal(String name, int number);
    }

    /** Makes SIGINT and SIGTERM call {@code handler} instead of shutting the JVM down; false when a signal could not be taken. */
    static boolean install(Handler handler) {
        boolean all = true;
        for (String name : SIGNALS) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> handler.onSignal(s.getName(), s.getNumber()));
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                LOG.debug("SIG{} keeps the JVM's own handling: {}", name, e.getMessage());
                all = false;
            }
        }
        return all;
    }
}
