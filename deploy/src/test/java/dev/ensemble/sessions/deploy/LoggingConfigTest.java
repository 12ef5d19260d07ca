package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.ComputerAgent;
import dev.ensemble.sessions.agent.ImportSummary;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.ConfigurationSource;
import org.apache.logging.log4j.core.config.xml.XmlConfiguration;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;

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

    /**
     * {@code up} prints each import's summary line itself ({@link ImportProgressBar}); the computer agent's log line of
     * the same summary is left out so the line shows once, while its other lines still show.
     */
    @Test
    void theComputerAgentsImportSummaryIsNotLoggedASecondTime() {
        ConfigurationSource source = ConfigurationSource.fromResource("log4j2.xml", LOADER);
        LoggerContext context = new LoggerContext("log4j2-summary-check");
        try {
            Configuration config = new XmlConfiguration(context, source);
            context.start(config);
            List<String> shown = new CopyOnWriteArrayList<>();
            AbstractAppender capture = new AbstractAppender("capture", null, null, true, Property.EMPTY_ARRAY) {
                @Override
                public void append(LogEvent event) {
                    shown.add(event.getMessage().getFormattedMessage());
                }
            };
            capture.start();
            config.addAppender(capture);
            config.getRootLogger().addAppender(capture, null, null);
            context.updateLoggers();

            org.apache.logging.log4j.Logger agent = context.getLogger(ComputerAgent.class.getName());
            ImportSummary summary = new ImportSummary(6, 43, 247, 296, 6,
                    List.of(new ImportSummary.Skip(Path.of("/home/ana/.claude/projects/p/agent-1.jsonl"), "sub-agent transcript")));
            agent.info("{}", summary); // as ComputerAgent logs it after each import that read or sent anything
            agent.info("computer agent {} started for account {}", "laptop", "ana");
            agent.error("import failed; trying again in {}", "PT5S");
            assertThat(shown).containsExactly("computer agent laptop started for account ana", "import failed; trying again in PT5S");
        } finally {
            context.stop();
        }
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
            assertThat(config.getRootLogger().getLevel()).isEqualTo(Level.INFO);
        } finally {
            context.stop();
        }
    }
}
