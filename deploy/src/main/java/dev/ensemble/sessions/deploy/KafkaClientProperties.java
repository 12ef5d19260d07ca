package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.schema.Secrets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka client properties files: the embedded broker's credentials ({@code <data-dir>/kafka-client.properties}, made
 * at the first start that finds it missing) and the file {@code --client-properties} names for another cluster
 * (its {@code security.protocol}, {@code sasl.*}, {@code ssl.*} settings, as Kafka's own tools read them).
 */
final class KafkaClientProperties {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaClientProperties.class);
    /** The embedded broker's client user. */
    static final String USER = "ensemble";
    private static final Pattern PLAIN_JAAS = Pattern.compile(
            "PlainLoginModule\\s+required\\s+username=\"([^\"]+)\"\\s+password=\"([^\"]+)\"\\s*;\\s*");

    private KafkaClientProperties() {
    }

    /**
     * The embedded broker's client user, its password, and the file they are kept in.
     *
     * @param file where they are kept (owner-only)
     */
    record Credentials(Path file, String user, String password) {
        /** {@code security.protocol=SASL_PLAINTEXT}, {@code sasl.mechanism=PLAIN} and {@code sasl.jaas.config}; a new map. */
        Map<String, Object> clientProperties() {
            Map<String, Object> p = new HashMap<>();
            p.put("security.protocol", "SASL_PLAINTEXT");
            p.put("sasl.mechanism", "PLAIN");
            p.put("sasl.jaas.config", jaas(user, password));
            return p;
        }

        @Override
        public String toString() {
            return "Credentials[" + file + ", user " + user + "]"; // never the password
        }
    }

    /**
     * Reads the embedded broker's credentials from {@code file}, or, when it does not exist, makes new ones (user
     * {@value #USER}, 32 random bytes as password, base64url) and writes them there readable by its owner only.
     *
     * @throws IllegalStateException when the file exists but holds no PLAIN user and password (it names the file and
     *                               says to delete it)
     */
    static Credentials readOrCreate(Path file) {
        if (!Files.exists(file)) {
            Credentials c = new Credentials(file, USER, Secrets.newSecret());
            StringBuilder text = new StringBuilder()
                    .append("# The embedded Kafka broker's client settings, made at its first start. Every client of that broker\n")
                    .append("# needs them (e.g. kafka-console-consumer.sh --consumer.config this-file); without them it is refused.\n")
                    .append("# Delete this file to get a new password at the next start.\n");
            c.clientProperties().entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .forEach(e -> text.append(e.getKey()).append('=').append(e.getValue()).append('\n'));
            DataDir.writePrivate(file, text.toString());
            LOG.info("Made new credentials for the local Kafka broker's clients in {}", file);
            return c;
        }
        Map<String, Object> p = load(file);
        Matcher m = PLAIN_JAAS.matcher(String.valueOf(p.getOrDefault("sasl.jaas.config", "")));
        if (!"PLAIN".equals(p.get("sasl.mechanism")) || !m.find()) {
            throw new IllegalStateException(file + " holds no PLAIN user and password for the local Kafka broker (sasl.mechanism=PLAIN "
                    + "and sasl.jaas.config with username and password); delete it to get new ones at the next start");
        }
        return new Credentials(file, m.group(1), m.group(2));
    }

    /**
     * The properties in {@code file} (Java properties format, as Kafka's tools read {@code --command-config}).
     *
     * @throws IllegalArgumentException when it cannot be read, naming it
     */
    static Map<String, Object> load(Path file) {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalArgumentException("cannot read the Kafka client properties file " + file + ": " + e.getMessage(), e);
        }
        Map<String, Object> out = new HashMap<>();
        p.forEach((k, v) -> out.put(k.toString(), v.toString().strip()));
        out.remove("bootstrap.servers"); // the address comes from the command (or the running system), never from here
        return out;
    }

    /** The {@code sasl.jaas.config} of a PLAIN client. */
    static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user + "\" password=\""
                + password + "\";";
    }
}
