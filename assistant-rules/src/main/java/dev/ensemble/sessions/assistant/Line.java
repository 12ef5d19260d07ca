package dev.ensemble.sessions.assistant;

import java.util.Comparator;
import java.util.List;

/**
 * One at a time, in order (guide §5: "Turns of one chat run one at a time"; asks on one page by one person "never
 * two at once and never one ahead of an earlier one"), as a pure function: while one entry runs none other starts;
 * otherwise the earliest waiting one (by its place in line, taken when the request arrived) starts. Ended entries
 * hold nothing up.
 */
public final class Line {
    private Line() {
    }

    public enum State { WAITING, RUNNING, ENDED }

    /** One turn or ask in line; {@code order} is its place, taken when the request arrived. */
    public record Entry(String id, long order, State state) {
    }

    /** The entry that may start now, or null (one is running, or none waits). */
    public static String next(List<Entry> entries) {
        if (entries.stream().anyMatch(e -> e.state() == State.RUNNING)) {
            return null;
        }
        return waiting(entries).stream().findFirst().orElse(null);
    }

    /** The waiting entries' ids in the order of their places. */
    public static List<String> waiting(List<Entry> entries) {
        return entries.stream().filter(e -> e.state() == State.WAITING)
                .sorted(Comparator.comparingLong(Entry::order)).map(Entry::id).toList();
    }
}
