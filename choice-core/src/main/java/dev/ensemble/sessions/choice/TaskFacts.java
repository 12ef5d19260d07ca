package dev.ensemble.sessions.choice;

import java.util.List;

/**
 * What the web knows of a task (guide §4 "Where": related, factsOf; kept on each run as context.taskFacts).
 * Strings may be null (absent); lists are never null.
 *
 * @param linkedTaskIds tasks this task names: @mentions on its page, dependencies (links in its text are found too)
 */
public record TaskFacts(String title, String description, List<String> labels, String page, String instructions,
                        String deliverable, String meeting, String parentPage, List<String> linkedTaskIds) {
    public TaskFacts {
        title = title == null ? "" : title;
        labels = labels == null ? List.of() : List.copyOf(labels);
        linkedTaskIds = linkedTaskIds == null ? List.of() : List.copyOf(linkedTaskIds);
    }

    /** Facts with only a title, description and labels. */
    public static TaskFacts of(String title, String description, List<String> labels) {
        return new TaskFacts(title, description, labels, null, null, null, null, null, List.of());
    }
}
