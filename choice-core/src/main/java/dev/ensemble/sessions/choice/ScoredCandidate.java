package dev.ensemble.sessions.choice;

import java.time.Instant;
import java.util.Map;

/**
 * One candidate's signals, parts (weight × signal, by part name, only the non-zero ones) and score (their sum), and
 * whether it is too full to continue (guide §4 "Score"). Mirrors the event schema's CandidateScore.
 */
public record ScoredCandidate(String sessionId, Instant lastActiveAt, Signals signals, Map<String, Double> parts,
                              double score, boolean tooFull) {
    public ScoredCandidate {
        parts = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(parts));
    }
}
