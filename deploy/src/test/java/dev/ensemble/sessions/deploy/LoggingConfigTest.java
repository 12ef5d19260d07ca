package dev.ensemble.sessions.deploy;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.xml.XmlConfiguration;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The launcher's console logging: deploy's log4j2.xml is the one Log4j loads, with Kafka at WARN. */
class LoggingConfigTest {
    private static final ClassLoader LOADER = LoggingConfigTest.class.getClassLoader();

    @Test
    void componentPropertiesPinOurXmlSoNoOtherLog4j2FileWins() throws Exception {
        Properties p = new Properties();
        try (InputStream in = LOADER.getResourceAsStream("log4j2.component.properties")) {
            assertThat(in).isNotNull();
            p.load(in);
        }
        assertThat(p.getProperty("log4j2.configurationFile")).isEqualTo("classpath:log4j2.xml");
    }

    private static org.apache.logging.log4j.core.LogEvent warning(String logger, String message) {
        return org.apache.logging.log4j.core.impl.Log4jLogEvent.newBuilder().setLoggerName(logger).setLevel(Level.WARN)
                .setMessage(new org.apache.logging.log4j.message.SimpleMessage(message)).build();
    }

    @Test
    void kafkaLogsAtWarnAndTheLauncherAtInfo() {
        ConfigurationSource source = ConfigurationSource.fromResource("log4j2.xml", LOADER);
        assertThat(source).isNotNull();
        assertThat(source.getLocation()).doesNotContain(".jar!"); // deploy's own file, not a dependency's
        LoggerContext context = new LoggerContext("log4j2-xml-check");
        try {
            Configuration config = new XmlConfiguration(context, source);
            config.initialize();
            assertThat(config.getLoggerConfig("org.apache.kafka.clients.admin.AdminClientConfig").getLevel())
                    .isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("org.apache.kafka.streams.KafkaStreams").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("kafka.server.BrokerServer").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("state.change.logger").getLevel()).isEqualTo(Level.WARN);
            assertThat(config.getLoggerConfig("kafka.server.DefaultAutoTopicCreationManager").getLevel())
                    .as("its TOPIC_ALREADY_EXISTS warnings are noise").isEqualTo(Level.ERROR);
            assertThat(config.getLoggerConfig("dev.ensemble.sessions.deploy.LocalKafka").getLevel()).isEqualTo(Level.INFO);
            var streamsConfig = config.getLoggerConfig("org.apache.kafka.streams.StreamsConfig");
            assertThat(streamsConfig.getLevel()).isEqualTo(Level.WARN);
            assertThat(streamsConfig.isFiltered(warning("org.apache.kafka.streams.StreamsConfig", "Processing exception handler is not "
                    + "enabled for the GlobalThread. It's recommended to set `processing.exception.handler.global.enabled` to true")))
                    .as("Streams' warning about its own topology config is dropped").isTrue();
            assertThat(streamsConfig.isFiltered(warning("org.apache.kafka.streams.StreamsConfig", "some other warning")))
                    .as("its other warnings are kept").isFalse();
            assertThat(config.getRootLogger().getLevel()).isEqualTo(Level.INFO);
        } finally {
            context.stop();
        }
    }
}
