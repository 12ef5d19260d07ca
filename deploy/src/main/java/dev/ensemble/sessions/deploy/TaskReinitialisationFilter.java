package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Node;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.config.plugins.PluginFactory;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Drops the console lines of Kafka Streams' own recovery of a task whose local state it cannot trust: after an
 * unclean stop ({@code kill -9}, a crash, a power cut) a store under exactly-once has no checkpoint, so Streams
 * marks its tasks corrupted ({@code TaskCorruptedException}), wipes their local state and restores it from the
 * changelogs; nothing is lost (every service logs each store it restored, "projector: restored store … N records",
 * {@code StreamsDefaults.start}). Streams tells each step at WARN, with a stack trace for each task, and once at
 * ERROR ("Get exceptions for the following tasks"): some 200 lines at every start after a crash, all of them about a
 * recovery that works. The same lines follow any other {@code TaskCorruptedException} (a transaction that could not
 * commit under exactly-once, say), whose cause Streams logs in lines of its own, which stay.
 *
 * <p>Only those events are dropped: the state manager's "did not find checkpoint offsets while stores are not empty,
 * since under EOS", the state directory's "Failed to register startup state stores" for corrupted tasks, the task
 * manager's "Encounter corrupted task" and its ERROR when every exception it lists is a {@code TaskCorruptedException},
 * and the stream thread's "Detected the states of tasks … are corrupted". Any other exception among them, and every
 * other line of these loggers, still reach the console. Used in {@code log4j2.xml} as {@code <TaskReinitialisation/>}.
 */
@Plugin(name = "TaskReinitialisation", category = Node.CATEGORY, elementType = Filter.ELEMENT_TYPE, printObject = true)
public final class TaskReinitialisationFilter extends ConsoleNoiseFilter {
    private static final String CORRUPTED = "org.apache.kafka.streams.errors.TaskCorruptedException";
    private static final String PACKAGE = "org.apache.kafka.streams.processor.internals.";
    /**
     * One entry of the task manager's map of task id → exception ({@code 0_1=org.….TaskCorruptedException: …}), whatever
     * the task id's form; the exception's class name is group 1 (empty when the entry is not a class name).
     */
    private static final Pattern TASK_EXCEPTION = Pattern.compile("(?:\\{|, )[^=,{}\\s]+=([\\w.$]*)");

    private TaskReinitialisationFilter() {
    }

    /** The filter (no settings). */
    @PluginFactory
    public static TaskReinitialisationFilter create() {
        return new TaskReinitialisationFilter();
    }

    @Override
    boolean isNoise(LogEvent event) {
        String logger = event.getLoggerName();
        if (logger == null || !logger.startsWith(PACKAGE)) {
            return false;
        }
        String message = message(event);
        Throwable thrown = event.getThrown();
        boolean corruptedOrNone = thrown == null || CORRUPTED.equals(thrown.getClass().getName());
        switch (logger.substring(PACKAGE.length())) {
            case "ProcessorStateManager":
                return thrown == null && message.contains("did not find checkpoint offsets while stores are not empty, since under EOS");
            case "StateDirectory":
                return thrown == null && message.contains("Failed to register startup state stores for task")
                        && message.contains("are corrupted and hence need to be re-initialized");
            case "TaskManager":
                if (message.contains("Encounter corrupted task")) {
                    return corruptedOrNone;
                }
                return thrown == null && message.contains("Get exceptions for the following tasks: {") && onlyCorrupted(message);
            case "StreamThread":
                return corruptedOrNone && message.contains("Detected the states of tasks [") && message.contains("are corrupted");
            default:
                return false;
        }
    }

    /** Whether every exception in the task manager's map is a TaskCorruptedException (and there is at least one). */
    private static boolean onlyCorrupted(String message) {
        Matcher m = TASK_EXCEPTION.matcher(message);
        int found = 0;
        while (m.find()) {
            if (!CORRUPTED.equals(m.group(1))) {
                return false;
            }
            found++;
        }
        return found > 0;
    }
}
