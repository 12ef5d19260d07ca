package dev.ensemble.sessions.projector.testing;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;

import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A projector processor with a bug, for tests of what stops a replay for a reason other than its record: set as
 * {@code BatchRebuild.processorSuppliers} (and reset to {@code p -> p} afterwards). In this module's test-jar.
 */
public final class BuggyProcessor {
    private BuggyProcessor() {
    }

    /**
     * The suppliers with {@code node}'s processor wrapped: each instance throws {@code IllegalStateException(message)}
     * on the {@code nth} record it is given (1-based) and processes every other as the real one.
     */
    @SuppressWarnings("unchecked")
    public static UnaryOperator<Map<String, ProcessorSupplier<?, ?, ?, ?>>> throwingOn(String node, int nth, String message) {
        return suppliers -> {
            Map<String, ProcessorSupplier<?, ?, ?, ?>> out = new HashMap<>(suppliers);
            var real = (ProcessorSupplier<Object, Object, Object, Object>) suppliers.get(node);
            out.put(node, () -> new Processor<Object, Object, Object, Object>() {
                private final Processor<Object, Object, Object, Object> processor = real.get();
                private int seen;

                @Override
                public void init(ProcessorContext<Object, Object> context) {
                    processor.init(context);
                }

                @Override
                public void process(Record<Object, Object> record) {
                    if (++seen == nth) throw new IllegalStateException(message);
                    processor.process(record);
                }
            });
            return out;
        };
    }
}
