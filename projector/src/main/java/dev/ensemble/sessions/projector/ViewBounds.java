package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.schema.EventTypes;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.schema.Limits;
import dev.ensemble.sessions.views.CorpusView;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.SessionView;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The bounds of what the projector keeps and publishes, whatever the log holds (issue 14: an event reaches the log from
 * any producer, not only through the gateway's limits). Pure: no Kafka, no state.
 *
 * <p><b>Texts</b> longer than their bound keep their first characters and end with {@link #ELLIPSIS} (the result is
 * exactly the bound long, the ellipsis included): titles, project names, models and labels {@link #TITLE_CHARS};
 * report summaries, a task's report, errors, reasons and details {@link #SUMMARY_CHARS}; descriptions, pages,
 * instructions, deliverables and meeting notes {@link #LONG_TEXT_CHARS}; folders and file paths {@link #PATH_CHARS}.
 *
 * <p><b>Lists</b> longer than their bound keep their newest (last) items; the number left out is counted in the view's
 * {@code omitted} map under the list's path ({@code runs}, {@code tasks}, {@code tasks.filesChanged},
 * {@code tasks.facts.labels}, ...; nested lists add up over their parents): a session's {@link #RUNS} runs and
 * {@link #TASKS} tasks, {@link #FILES} files changed (a session's, a task's, a run's report, a computer's removed paths),
 * {@link #LABELS} labels, {@link #LINKED_TASKS} linked tasks, {@link #IDS} ids in any other list. Not capped: a
 * retirement view's {@code runIds}, which a deletion request must name whole (guide §6, the guard compares them).
 *
 * <p><b>A whole session view</b> is kept under {@link #VIEW_CHARS} characters of text (at most three bytes each in UTF-8,
 * so under the broker's default {@code max.message.bytes} of 1 MiB): while over, its oldest tasks, then its oldest runs,
 * are left out (counted), never the newest of either. A view that still exceeds its topic's {@code max.message.bytes}
 * goes to the dead-letter topic ({@code DeadLetterProductionExceptionHandler}, docs/reliability.md).
 *
 * <p><b>Events</b>, as the projector receives them ({@link #event}): texts shortened and content lists (files changed,
 * labels, linked tasks, removed paths) cut to {@link #EVENT_LIST_FACTOR} times their bound in a view (newest kept, not
 * counted: no real event has as many), in place, so that nothing the stores keep grows much from one event; a session
 * chain's lists are then capped, counted, as it is stored ({@link #stored}); an id (a field, or a list's entry, that
 * the intake's limits count as one: {@link Limits#isId}) longer than {@link #ID_CHARS} cannot be shortened without
 * becoming another id, so such an event is refused ({@link InvalidEventException} naming the field: dead-letter topic).
 *
 * <p>Views ({@link #session}, {@link #retirement}, {@link #audit}, {@link #corpus}) are never changed in place: they are
 * the stores' live objects; a view within its bounds is returned as it is, any other as a bounded copy.
 */
public final class ViewBounds {
    private ViewBounds() {
    }

    /** What ends a shortened text. */
    public static final String ELLIPSIS = "…";
    /** Titles, project names, models, labels, chars. */
    public static final int TITLE_CHARS = 500;
    /** Report summaries, a task's report, errors, reasons, details, chars. */
    public static final int SUMMARY_CHARS = 2_000;
    /** Descriptions, pages, instructions, deliverables, meeting notes, chars. */
    public static final int LONG_TEXT_CHARS = 4_000;
    /** Folders and file paths, chars. */
    public static final int PATH_CHARS = 1_000;
    /**
     * The longest id (event, account, run, task, session, computer, request...), chars, as the intake's limit
     * ({@link Limits#MAX_ID_CHARS}); a longer one refuses its event.
     */
    public static final int ID_CHARS = Limits.MAX_ID_CHARS;
    /** A session view's runs. */
    public static final int RUNS = 100;
    /** A session view's tasks. */
    public static final int TASKS = 50;
    /** Files in one list (changed, removed). */
    public static final int FILES = 200;
    /** A task's labels. */
    public static final int LABELS = 20;
    /** A task's linked tasks. */
    public static final int LINKED_TASKS = 50;
    /** Items of any other list of a view. */
    public static final int IDS = 200;
    /** An event's content lists are cut as it arrives at this many times their bound in a view, uncounted (no real task has as many). */
    public static final int EVENT_LIST_FACTOR = 10;
    /** The text of one session view, chars in all. */
    public static final int VIEW_CHARS = 256 * 1024;

    private static final Map<String, Integer> TEXTS = new HashMap<>();
    private static final Map<String, Integer> LISTS = new HashMap<>();
    /** The lists capped in events as they arrive: their content, not ids the rules compare. */
    private static final Set<String> EVENT_LISTS = Set.of("filesChanged", "labels", "linkedTaskIds", "removedPaths");

    static {
        for (String f : List.of("title", "firstTaskTitle", "latestTaskTitle", "projectName", "name", "parentPage", "linkedTitle",
                "model", "thinking", "labels")) {
            TEXTS.put(f, TITLE_CHARS);
        }
        for (String f : List.of("reportSummary", "latestReportSummary", "report", "error", "lastError", "detail", "note", "reason",
                "skipReason", "readyReason", "blockers")) {
            TEXTS.put(f, SUMMARY_CHARS);
        }
        for (String f : List.of("description", "page", "instructions", "deliverable", "meeting")) {
            TEXTS.put(f, LONG_TEXT_CHARS);
        }
        for (String f : List.of("folder", "filesChanged", "removedPaths")) {
            TEXTS.put(f, PATH_CHARS);
        }
        LISTS.put("runs", RUNS);
        LISTS.put("tasks", TASKS);
        LISTS.put("filesChanged", FILES);
        LISTS.put("removedPaths", FILES);
        LISTS.put("labels", LABELS);
        LISTS.put("linkedTaskIds", LINKED_TASKS);
    }

    /** {@code text} within {@code max} chars: as it is, or its first {@code max - 1} chars and {@link #ELLIPSIS}. */
    public static String text(String text, int max) {
        if (text == null || text.length() <= max) {
            return text;
        }
        int end = max - ELLIPSIS.length();
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        return text.substring(0, end) + ELLIPSIS;
    }

    /**
     * Bounds an event as it arrives, in place: texts shortened, content lists capped (their newest kept).
     *
     * @throws InvalidEventException naming the field when an id is longer than {@link #ID_CHARS}
     */
    public static void event(Event e) {
        walk(e, "", true, new Walk(true, e));
    }

    /** The session view within its bounds: {@code view} itself when it is, else a bounded copy. */
    public static SessionView session(SessionView view) {
        if (view == null) {
            return null;
        }
        Walk measure = new Walk(false, null);
        boolean over = walk(view, "", false, measure) || measure.chars > VIEW_CHARS;
        if (!over) {
            return view;
        }
        SessionView copy = SessionView.newBuilder(view).build(); // a deep copy
        Walk apply = new Walk(true, null);
        walk(copy, "", false, apply);
        Map<String, Integer> omitted = new HashMap<>(copy.getOmitted());
        apply.omitted.forEach((k, n) -> omitted.merge(k, n, Integer::sum));
        long chars = apply.chars;
        while (chars > VIEW_CHARS && (copy.getTasks().size() > 1 || copy.getRuns().size() > 1)) {
            Object dropped;
            String list;
            if (copy.getTasks().size() > 1) {
                dropped = copy.getTasks().remove(0);
                list = "tasks";
            } else {
                dropped = copy.getRuns().remove(0);
                list = "runs";
            }
            Walk w = new Walk(false, null);
            walk((SpecificRecord) dropped, list, false, w);
            chars -= w.chars;
            omitted.merge(list, 1, Integer::sum);
        }
        copy.setOmitted(omitted);
        return copy;
    }

    /**
     * A session chain as the store keeps it, in place: the lists that grow with its runs without the rules needing them
     * whole (the files changed, of the session and of each task; each task's labels and linked tasks) keep their newest
     * ({@link #FILES}, {@link #LABELS}, {@link #LINKED_TASKS}), the rest counted in {@code omitted}. Its runs and tasks
     * stay whole (the rules and the deletion guard need them); its texts were bounded as their events arrived
     * ({@link #event}).
     *
     * @return {@code session}
     */
    public static SessionView stored(SessionView session) {
        Map<String, Integer> omitted = null;
        List<String> files = session.getFilesChanged();
        if (files.size() > FILES) {
            omitted = count(omitted, session, "filesChanged", files.size() - FILES);
            session.setFilesChanged(newest(files, FILES));
        }
        for (var t : session.getTasks()) {
            if (t.getFilesChanged().size() > FILES) {
                omitted = count(omitted, session, "tasks.filesChanged", t.getFilesChanged().size() - FILES);
                t.setFilesChanged(newest(t.getFilesChanged(), FILES));
            }
            var f = t.getFacts();
            if (f != null && f.getLabels().size() > LABELS) {
                omitted = count(omitted, session, "tasks.facts.labels", f.getLabels().size() - LABELS);
                f.setLabels(newest(f.getLabels(), LABELS));
            }
            if (f != null && f.getLinkedTaskIds().size() > LINKED_TASKS) {
                omitted = count(omitted, session, "tasks.facts.linkedTaskIds", f.getLinkedTaskIds().size() - LINKED_TASKS);
                f.setLinkedTaskIds(newest(f.getLinkedTaskIds(), LINKED_TASKS));
            }
        }
        if (omitted != null) {
            session.setOmitted(omitted);
        }
        return session;
    }

    private static Map<String, Integer> count(Map<String, Integer> omitted, SessionView session, String list, int n) {
        Map<String, Integer> m = omitted != null ? omitted : new HashMap<>(session.getOmitted());
        m.merge(list, n, Integer::sum);
        return m;
    }

    private static List<String> newest(List<String> list, int n) {
        return new ArrayList<>(list.subList(list.size() - n, list.size()));
    }

    /** The retirement view within its bounds (its {@code runIds} whole): {@code view} itself when it is, else a bounded copy. */
    public static RetirementView retirement(RetirementView view) {
        return bounded(view, v -> RetirementView.newBuilder(v).build(), RetirementView::getOmitted, RetirementView::setOmitted);
    }

    /** The deletion audit within its bounds: {@code audit} itself when it is, else a bounded copy. */
    public static DeletionAudit audit(DeletionAudit audit) {
        return bounded(audit, a -> DeletionAudit.newBuilder(a).build(), DeletionAudit::getOmitted, DeletionAudit::setOmitted);
    }

    /**
     * The rarity table as it is: it holds no text of its own but the terms of the account's last tasks (guide §4,
     * {@code limits.corpusTasks}), analysed from texts already bounded as they arrived ({@link #event}); its topic takes
     * records of up to 16 MiB. Here so that every view the projector publishes passes one place.
     */
    public static CorpusView corpus(CorpusView view) {
        return view;
    }

    private static <V extends SpecificRecord> V bounded(V view, java.util.function.UnaryOperator<V> deepCopy,
                                                        java.util.function.Function<V, Map<String, Integer>> omittedOf,
                                                        java.util.function.BiConsumer<V, Map<String, Integer>> setOmitted) {
        if (view == null || !walk(view, "", false, new Walk(false, null))) {
            return view;
        }
        V copy = deepCopy.apply(view);
        Walk apply = new Walk(true, null);
        walk(copy, "", false, apply);
        Map<String, Integer> omitted = new HashMap<>(omittedOf.apply(copy));
        apply.omitted.forEach((k, n) -> omitted.merge(k, n, Integer::sum));
        setOmitted.accept(copy, omitted);
        return copy;
    }

    /** One pass over a record: whether it changes things, the event it refuses for, what it counts. */
    private static final class Walk {
        final boolean apply;
        final Event event;
        final Map<String, Integer> omitted = new HashMap<>();
        long chars;

        Walk(boolean apply, Event event) {
            this.apply = apply;
            this.event = event;
        }
    }

    /**
     * A field's path in the view ({@code tasks.facts.labels}), made into a String only when it is reported (an omitted
     * count, a refusal): most fields are within their bounds, and a walk of every event must not build a path per field.
     */
    private record At(At parent, String name) {
        static final At TOP = new At(null, "");

        At child(String field) {
            return new At(this, field);
        }

        boolean isTopField(String field) {
            return parent == TOP && name.equals(field);
        }

        @Override
        public String toString() {
            return parent == null ? name : parent == TOP ? name : parent + "." + name;
        }
    }

    /**
     * Walks {@code r}'s fields: bounds (when {@code w.apply}) or only measures them; true when something is over its
     * bound. {@code path} is the record's path in the view ({@code ""} at the top).
     */
    private static boolean walk(SpecificRecord r, String path, boolean isEvent, Walk w) {
        At at = At.TOP;
        if (!path.isEmpty()) {
            for (String part : path.split("\\.")) {
                at = at.child(part);
            }
        }
        return walk(r, at, isEvent, w);
    }

    private static boolean walk(SpecificRecord r, At path, boolean isEvent, Walk w) {
        boolean over = false;
        for (Field f : FIELDS.get(r.getClass())) {
            Object v = r.get(f.pos);
            if (v == null) {
                continue;
            }
            if (v instanceof CharSequence s) {
                over |= text(r, f, path, s.toString(), isEvent, w);
            } else if (v instanceof SpecificRecord child) {
                over |= walk(child, path.child(f.name), isEvent, w);
            } else if (v instanceof List<?> list) {
                over |= list(r, f, path.child(f.name), list, isEvent, w);
            }
        }
        return over;
    }

    /**
     * What the walk needs of one field of a record class, worked out once per class: its position and name, its text
     * bound ({@code -1}: none), whether it is an id ({@link Limits#isId}), a content list capped in events, its list bound.
     * The fields left out (counts, and what is not text for people: a config's JSON, the corpus' table) have none.
     */
    private record Field(int pos, String name, int textMax, boolean id, boolean eventList, int listMax) {
    }

    private static final ClassValue<Field[]> FIELDS = new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
            Schema schema = org.apache.avro.specific.SpecificData.get().getSchema(type);
            List<Field> out = new ArrayList<>();
            for (Schema.Field f : schema.getFields()) {
                String name = f.name();
                if (name.equals("omitted") || name.equals("json") || name.equals("hash") || name.equals("stats")) {
                    continue;
                }
                out.add(new Field(f.pos(), name, TEXTS.getOrDefault(name, -1), Limits.isId(name), EVENT_LISTS.contains(name),
                        LISTS.getOrDefault(name, IDS)));
            }
            return out.toArray(Field[]::new);
        }
    };

    private static boolean text(SpecificRecord r, Field f, At path, String s, boolean isEvent, Walk w) {
        if (isEvent && f.id && s.length() > ID_CHARS) {
            refuse(w.event, path.child(f.name).toString(), s.length());
        }
        int max = f.textMax;
        if (max < 0 || s.length() <= max) {
            w.chars += s.length();
            return false;
        }
        w.chars += max;
        if (w.apply) {
            r.put(f.pos, text(s, max));
        }
        return true;
    }

    private static boolean list(SpecificRecord r, Field f, At at, List<?> list, boolean isEvent, Walk w) {
        boolean over = false;
        List<?> kept = list;
        boolean capped = isEvent ? f.eventList : !(at.isTopField("runIds") && r instanceof RetirementView);
        int max = f.listMax * (isEvent ? EVENT_LIST_FACTOR : 1);
        if (capped && list.size() > max) {
            over = true;
            kept = list.subList(list.size() - max, list.size());
            if (w.apply) {
                w.omitted.merge(at.toString(), list.size() - max, Integer::sum);
                r.put(f.pos, new ArrayList<>(kept));
                kept = (List<?>) r.get(f.pos);
            }
        }
        int textMax = f.textMax;
        boolean ids = isEvent && f.id;
        for (int i = 0; i < kept.size(); i++) {
            Object item = kept.get(i);
            if (item instanceof CharSequence cs) {
                String s = cs.toString();
                if (ids && s.length() > ID_CHARS) {
                    refuse(w.event, at + "[" + (list.size() - kept.size() + i) + "]", s.length());
                }
                if (textMax >= 0 && s.length() > textMax) {
                    over = true;
                    w.chars += textMax;
                    if (w.apply) {
                        @SuppressWarnings("unchecked") List<Object> mutable = (List<Object>) kept;
                        if (kept == list) { // never change a list of the caller's in place before it is copied
                            mutable = new ArrayList<>(list);
                            r.put(f.pos, mutable);
                            kept = mutable;
                        }
                        mutable.set(i, text(s, textMax));
                    }
                } else {
                    w.chars += s.length();
                }
            } else if (item instanceof SpecificRecord child) {
                over |= walk(child, at, isEvent, w);
            }
        }
        return over;
    }

    private static void refuse(Event e, String field, int length) {
        throw new InvalidEventException(e == null ? null : text(e.getEventId(), 100), e == null ? null : EventTypes.typeOf(e), field,
                "an id of " + length + " characters; at most " + ID_CHARS);
    }
}
