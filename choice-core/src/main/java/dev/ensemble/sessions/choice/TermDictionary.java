package dev.ensemble.sessions.choice;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Process-wide ids of analysed terms and phrases, so that {@link CorpusStats} answers a document frequency with an
 * array read instead of a string lookup (the hot loop of a decision). Ids never leave the process (the stored forms
 * use the strings) and no result depends on them. Grows with the vocabulary seen; thread-safe.
 */
final class TermDictionary {
    private static final ConcurrentHashMap<String, Integer> IDS = new ConcurrentHashMap<>();
    private static int next;

    private TermDictionary() {
    }

    /** The id of {@code term}, assigning the next one when new. */
    static int id(String term) {
        Integer id = IDS.get(term);
        if (id != null) return id;
        synchronized (TermDictionary.class) {
            return IDS.computeIfAbsent(term, t -> next++);
        }
    }

    /** The id of {@code term}, or -1 when it was never seen. */
    static int existing(String term) {
        Integer id = IDS.get(term);
        return id == null ? -1 : id;
    }
}
