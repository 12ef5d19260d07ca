package dev.ensemble.sessions.schema;

import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every released version of every record schema, shipped as resources under
 * {@code schemas/history/<full name>/} with an {@code index.txt} that lists the files oldest first. A decoder
 * resolves a writer's schema by its 64-bit fingerprint among these.
 */
public final class SchemaHistory {
    private SchemaHistory() {
    }

    private static final Map<String, List<Schema>> CACHE = new ConcurrentHashMap<>();

    /** The released versions of the record named {@code fullName}, oldest first; empty when none is shipped. */
    public static List<Schema> versionsOf(String fullName) {
        return CACHE.computeIfAbsent(fullName, SchemaHistory::load);
    }

    /** The CRC-64-AVRO fingerprint that single-object encoding writes for {@code schema}. */
    public static long fingerprint(Schema schema) {
        return SchemaNormalization.parsingFingerprint64(schema);
    }

    private static List<Schema> load(String fullName) {
        String dir = "/schemas/history/" + fullName + "/";
        List<Schema> out = new ArrayList<>();
        try (InputStream index = SchemaHistory.class.getResourceAsStream(dir + "index.txt")) {
            if (index == null) {
                return List.of();
            }
            BufferedReader lines = new BufferedReader(new InputStreamReader(index, StandardCharsets.UTF_8));
            String line;
            while ((line = lines.readLine()) != null) {
                line = line.strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                try (InputStream in = SchemaHistory.class.getResourceAsStream(dir + line)) {
                    if (in == null) {
                        throw new IllegalStateException("schema history lists " + dir + line + " but it is not shipped");
                    }
                    out.add(new Schema.Parser().parse(in));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(out);
    }
}
