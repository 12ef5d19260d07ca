package dev.ensemble.sessions.streams;

import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;

/**
 * Removal of a Streams application that read an old projector generation's views (a reader's application of
 * generation n is {@code <base>-g<n>}, of generation 1 {@code <base>}): its consumer group, its internal topics
 * ({@code <application id>-…-changelog} / {@code -repartition}; for {@code <base>} itself not those of {@code <base>-g<n>})
 * and its local state folder. Call it after the application is closed.
 */
public final class GenerationApps {
    private static final Logger LOG = LoggerFactory.getLogger(GenerationApps.class);

    private GenerationApps() {
    }

    /**
     * @param stateDir the Streams state folder ({@code state.dir}); the application's folder in it is deleted
     * @return false when its group or topics could not be removed (logged)
     */
    public static boolean remove(String bootstrapServers, Map<String, ?> clientProperties, Path stateDir, String applicationId, String base) {
        boolean removed = true;
        try (Admin admin = Admin.create(dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties))) {
            try {
                admin.deleteConsumerGroups(List.of(applicationId)).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                    throw e;
                }
            }
            Pattern otherGeneration = Pattern.compile(Pattern.quote(base) + "-g\\d+-.*");
            List<String> topics = new ArrayList<>();
            for (String t : admin.listTopics().names().get()) {
                if (t.startsWith(applicationId + "-") && (t.endsWith("-changelog") || t.endsWith("-repartition"))
                        && (!applicationId.equals(base) || !otherGeneration.matcher(t).matches())) {
                    topics.add(t);
                }
            }
            if (!topics.isEmpty()) {
                admin.deleteTopics(topics).all().get();
            }
            LOG.info("removed application {} (group, topics {})", applicationId, topics);
        } catch (ExecutionException e) {
            LOG.warn("could not remove application {}: {}", applicationId, e.getCause().toString());
            removed = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            removed = false;
        }
        deleteTree(stateDir.resolve(applicationId));
        return removed;
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("could not remove {}: {}", dir, e.toString());
        }
    }
}
