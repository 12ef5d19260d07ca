package dev.ensemble.sessions.schema.testing;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The strict reader of the Prometheus text format that the metrics tests scrape with. */
class PrometheusTextTest {
    @Test
    void theParserRefusesWhatIsNotTheTextFormat() {
        assertThatThrownBy(() -> PrometheusText.parse("# TYPE a counter\na{b=\"c} 1\n"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PrometheusText.parse("a 1 2 3\n"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PrometheusText.parse("# TYPE a counter\na one\n"))
                .isInstanceOf(IllegalArgumentException.class);
        PrometheusText ok = PrometheusText.parse("# HELP a_total what \\\\ it is\n# TYPE a_total counter\n"
                + "a_total{b=\"x\\\"y\",c=\"\"} 1.5e3\nb +Inf\n");
        assertThat(ok.value("a_total", new LinkedHashMap<>(Map.of("b", "x\"y", "c", "")))).isEqualTo(1500.0);
        assertThat(ok.value("b", Map.of())).isInfinite();
    }

    @Test
    void aTypeAfterItsSamplesOrASeriesGivenTwiceIsRefused() {
        assertThatThrownBy(() -> PrometheusText.parse("a 1\n# TYPE a gauge\n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PrometheusText.parse("a{b=\"1\"} 1\na{b=\"1\"} 2\n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PrometheusText.parse("# TYPE a countr\n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PrometheusText.parse("a{1b=\"x\"} 1\n")).isInstanceOf(IllegalArgumentException.class);
    }
}
