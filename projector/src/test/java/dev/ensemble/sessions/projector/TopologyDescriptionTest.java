package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.schema.testing.SharedData;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/architecture.md shows the projector's topology as Kafka Streams describes it: every node and every state
 * store of {@code Projector.buildTopology().describe()} is named there (a node or store added without the page fails
 * here), and the description is written to {@code target/topology.txt} to paste.
 */
class TopologyDescriptionTest {
    @Test
    void everyNodeAndStoreOfTheTopologyIsOnTheArchitecturePage() throws Exception {
        TopologyDescription d = Projector.buildTopology().describe();
        Files.writeString(java.nio.file.Path.of("target", "topology.txt"), d.toString());
        Set<String> names = new TreeSet<>();
        for (TopologyDescription.Subtopology s : d.subtopologies()) {
            for (TopologyDescription.Node n : s.nodes()) {
                names.add(n.name());
                if (n instanceof TopologyDescription.Processor p) {
                    names.addAll(p.stores());
                }
            }
        }
        assertThat(names).contains(Projector.EVENT_INTAKE, StoreNames.SESSION_FILLS);
        String page = Files.readString(SharedData.projectRoot().resolve("docs/architecture.md"));
        List<String> missing = new ArrayList<>();
        for (String name : names) {
            if (!page.contains("`" + name + "`")) {
                missing.add(name);
            }
        }
        assertThat(missing).as("nodes and stores of the topology not named (in backquotes) on docs/architecture.md").isEmpty();
    }
}
