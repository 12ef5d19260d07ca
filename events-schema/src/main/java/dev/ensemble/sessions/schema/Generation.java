package dev.ensemble.sessions.schema;

import java.util.List;

/**
 * A generation of the projector (DESIGN.md §4 "a rebuild runs the same topology as a new generation"): its own Streams
 * application id and its own view topics, so a rebuild replays the log beside the serving generation and readers
 * switch when it has caught up ({@link Generations}). Generation 1 keeps the names the system always had
 * ({@code ensemble-projector}, {@code sessions.view.sessions}); generation n ≥ 2 adds {@code -g<n>} to application ids
 * and {@code .g<n>} to view topic names ({@code ensemble-projector-g2}, {@code sessions.view.sessions.g2}).
 *
 * @param number 1, 2, ...
 */
public record Generation(int number) {
    /** The generation of a system that never rebuilt. */
    public static final Generation FIRST = new Generation(1);

    public Generation {
        if (number < 1) {
            throw new IllegalArgumentException("a generation is numbered from 1, not " + number);
        }
    }

    /** The one after this. */
    public Generation next() {
        return new Generation(number + 1);
    }

    /** {@code base} for generation 1, {@code base-g<n>} after: a Streams application id (so its group and internal topics). */
    public String applicationId(String base) {
        return number == 1 ? base : base + "-g" + number;
    }

    /** A view topic of this generation: the same serdes, the name with {@code .g<n>} (none for generation 1). */
    public <K, V> Topic<K, V> view(Topic<K, V> t) {
        return number == 1 ? t : new Topic<>(t.name() + ".g" + number, t.keySerde(), t.valueSerde(), t.compacted());
    }

    /** The projector's view topics in this generation: sessions, corpus, retirement, deletion audit, assistant conversations. */
    public List<Topic<?, ?>> views() {
        return List.of(view(Topics.SESSIONS_VIEW), view(Topics.CORPUS_VIEW), view(Topics.RETIREMENT_VIEW), view(Topics.DELETION_AUDIT),
                view(Topics.ASSISTANT_VIEW));
    }

    @Override
    public String toString() {
        return "g" + number;
    }
}
