package dev.ensemble.sessions.choice;

import java.util.List;

/**
 * One candidate's signals against the new task (guide §4 "Signals", Signals in score.ts); enough to score it again
 * under another config without any text ({@link Scorer#rescore}). Mirrors the event schema's CandidateSignals.
 *
 * @param anchors       shared anchors that count (after every exclusion)
 * @param anchorsShared those anchors, as shown (kind stripped), sorted
 * @param issueKeys     how many of those anchors are issue or pull-request keys (kind {@code issue}: {@code ABC-42},
 *                      {@code #123}, {@code CVE-…}), which weigh {@code weights.issueKey}; counted before the kind is
 *                      stripped. The event schema does not carry it: {@link ChoiceRecords#storedCandidates} reads the
 *                      shown anchors again with the rescoring config's anchor rules
 * @param topic         TF-IDF cosine 0–1, already damped below {@code limits.minCorpus}; 0 below {@code topicMinShared}
 * @param topicTerms    the shared words that weigh most, best first (at most 5), as the new task wrote them
 *                      (the first word of the new task with that stem: "ranking" for the stem "rank")
 * @param fill          context-window fill 0–1, or null when unknown
 * @param tasks         tasks in the session
 * @param linkedTitle   the title of the session's task the new task names, when {@code link}
 */
public record Signals(boolean link, boolean deliverable, boolean meeting, boolean parentPage, int anchors,
                      List<String> anchorsShared, int issueKeys, double topic, List<String> topicTerms, boolean followUp,
                      boolean newWork, boolean warm, Double fill, int tasks, String linkedTitle) {
    public Signals {
        anchorsShared = anchorsShared == null ? List.of() : List.copyOf(anchorsShared);
        topicTerms = topicTerms == null ? List.of() : List.copyOf(topicTerms);
    }
}
