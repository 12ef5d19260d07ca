package dev.ensemble.sessions.agent;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The importer's meters (docs/operations.md "Metrics"), counted by {@link ComputerAgent} after each import:
 * <ul>
 *   <li>{@value #FILES_READ}, by {@code agent}: changed transcripts read;</li>
 *   <li>{@value #FILES_SKIPPED}, gauge by {@code kind} ({@code not a transcript}, {@code unreadable}, {@code sub-agent
 *       transcript}, ...; {@code unchanged} is not a skip): the files the last import left out (a file left out at every
 *       poll is counted once, not once a poll); {@value #LINES_SKIPPED}: malformed lines left out;</li>
 *   <li>{@value #TRANSCRIPTS}, gauge by {@code agent}: the transcripts its stores held at the last import;</li>
 *   <li>{@value #EVENTS}: events written to the log;</li>
 *   <li>{@value #FAILURES}: imports that failed (tried again at the next poll);</li>
 *   <li>{@value #LAG}, gauge in seconds: how long ago the newest successful import started, so a transcript change older
 *       than this is in the log (grows while imports fail or take long; NaN before the first one).</li>
 * </ul>
 */
final class ImportMetrics {
    static final String FILES_READ = "ensemble.import.files.read";
    static final String FILES_SKIPPED = "ensemble.import.files.skipped";
    static final String LINES_SKIPPED = "ensemble.import.lines.skipped";
    static final String TRANSCRIPTS = "ensemble.import.transcripts";
    static final String EVENTS = "ensemble.import.events";
    static final String FAILURES = "ensemble.import.failures";
    static final String LAG = "ensemble.import.lag.seconds";

    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<String, AtomicLong> transcripts = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> skipped = new ConcurrentHashMap<>();
    private volatile Instant lastGoodStart;

    ImportMetrics(MeterRegistry registry, Clock clock) {
        this.registry = registry;
        this.clock = clock;
        Gauge.builder(LAG, this, m -> m.lastGoodStart == null ? Double.NaN
                        : Math.max(0, java.time.Duration.between(m.lastGoodStart, m.clock.instant()).toMillis()) / 1000.0)
                .description("seconds since the newest successful import started").baseUnit("seconds").register(registry);
    }

    /** One successful import of every store that started at {@code started}. */
    void imported(Instant started, ImportSummary summary) {
        imported(started, summary, true);
    }

    /**
     * One successful import that started at {@code started}: of every store ({@code whole}), or of the files a watch
     * saw change, which counts files, lines and events but leaves the gauges (transcripts, skipped files, lag) as the
     * last whole import set them: it looked at only some files.
     */
    void imported(Instant started, ImportSummary summary, boolean whole) {
        for (ImportSummary.Store s : summary.stores()) {
            counter(FILES_READ, "agent", s.agent(), "changed files the importer read or tried (the progress bar's count)").increment(s.read());
        }
        Counter.builder(LINES_SKIPPED).description("malformed transcript lines the importer left out").register(registry)
                .increment(summary.skippedLines().size());
        Counter.builder(EVENTS).description("events the importer wrote to the log").register(registry).increment(summary.events());
        if (!whole) {
            return;
        }
        lastGoodStart = started;
        for (ImportSummary.Store s : summary.stores()) {
            transcripts.computeIfAbsent(s.agent(), a -> {
                AtomicLong n = new AtomicLong();
                Gauge.builder(TRANSCRIPTS, n, AtomicLong::get).tag("agent", a)
                        .description("transcripts in the agent's stores at the last import").register(registry);
                return n;
            }).set(s.transcripts());
        }
        Map<String, Long> skips = summary.skippedFilesByKind();
        skipped.forEach((kind, n) -> n.set(skips.getOrDefault(kind, 0L))); // a kind the last import had none of: 0
        skips.forEach((kind, n) -> {
            if (!kind.equals("unchanged")) {
                skipped.computeIfAbsent(kind, k -> {
                    AtomicLong held = new AtomicLong();
                    Gauge.builder(FILES_SKIPPED, held, AtomicLong::get).tag("kind", k)
                            .description("files the last import left out").register(registry);
                    return held;
                }).set(n);
            }
        });
    }

    /** One failed import. */
    void failed() {
        Counter.builder(FAILURES).description("imports that failed").register(registry).increment();
    }

    private Counter counter(String name, String tag, String value, String description) {
        return Counter.builder(name).tag(tag, value).description(description).register(registry);
    }
}
