package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.views.SessionView;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The session indexes ({@link SessionIndex}) of one read side (one Streams application, one projector generation), one
 * per partition whose task runs here, under {@code <dir>/<taskId>}. A task's processor opens its partition's index when
 * the task starts running (its store restored), filling it from the store, and closes it when the task leaves this
 * instance; a query finds its account's partition's index here, or none while that task is not running.
 */
final class SessionIndexes {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionIndexes.class);
    private final Path dir;
    private final Map<Integer, SessionIndex> byPartition = new ConcurrentHashMap<>();

    SessionIndexes(Path dir) {
        this.dir = dir;
    }

    /** A new index of the task's partition filled with every view of its store; it answers from then on. */
    SessionIndex open(TaskId task, KeyValueStore<String, SessionView> store) {
        long start = System.nanoTime();
        SessionIndex index = new SessionIndex(dir.resolve(task.toString()));
        int n = 0;
        try (KeyValueIterator<String, SessionView> all = store.all()) {
            while (all.hasNext()) {
                var kv = all.next();
                index.put(kv.key, kv.value);
                n++;
            }
        } catch (RuntimeException e) {
            index.close();
            throw e;
        }
        SessionIndex before = byPartition.put(task.partition(), index);
        if (before != null) {
            before.close();
        }
        LOG.info("session index of task {}: {} sessions indexed in {} ms", task, n, (System.nanoTime() - start) / 1_000_000);
        return index;
    }

    /** The task left this instance (or the read side closes): its index stops answering and is removed. */
    void close(TaskId task, SessionIndex index) {
        byPartition.remove(task.partition(), index);
        index.close();
    }

    /** The index of a partition, or null while its task does not run here. */
    SessionIndex of(int partition) {
        return byPartition.get(partition);
    }
}
