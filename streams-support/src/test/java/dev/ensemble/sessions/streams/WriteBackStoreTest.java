package dev.ensemble.sessions.streams;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link WriteBackStore} in a real Streams task (TopologyTestDriver, which commits after every input record):
 * each input record is a script of store operations run in one {@code process} call, i.e. between two commits;
 * the script's answers are forwarded to an output topic, and the store's changelog is read back as Kafka
 * Streams wrote it.
 */
class WriteBackStoreTest {
    private static final String STORE = "things";
    private static final String CHANGELOG = "wb-test-" + STORE + "-changelog";

    @TempDir
    Path stateDir;
    private TopologyTestDriver driver;
    private TestInputTopic<String, String> scripts;
    private TestOutputTopic<String, String> answers;
    private TestOutputTopic<String, String> changelog;

    /** Runs {@code op;op;...}: put k=v, del k, get k, all, prefix p, range a..b; answers joined by '|'. */
    static final class ScriptProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, String> store;

        @Override
        public void init(ProcessorContext<String, String> context) {
            this.context = context;
            this.store = context.getStateStore(STORE);
        }

        @Override
        public void process(Record<String, String> record) {
            List<String> out = new ArrayList<>();
            for (String op : record.value().split(";")) {
                String[] w = op.trim().split(" ", 2);
                switch (w[0]) {
                    case "put" -> store.put(w[1].split("=")[0], w[1].split("=")[1]);
                    case "del" -> out.add("deleted " + store.delete(w[1]));
                    case "get" -> out.add(String.valueOf(store.get(w[1])));
                    case "all" -> out.add(dump(store.all()));
                    case "prefix" -> out.add(dump(store.prefixScan(w[1], new StringSerializer())));
                    case "range" -> out.add(dump(store.range(w[1].split("\\.\\.")[0], w[1].split("\\.\\.")[1])));
                    case "reverse" -> out.add(dump(store.reverseAll()));
                    default -> throw new IllegalArgumentException(op);
                }
            }
            context.forward(record.withValue(String.join("|", out)));
        }

        private static String dump(KeyValueIterator<String, String> it) {
            List<String> kv = new ArrayList<>();
            try (it) {
                it.forEachRemaining(p -> kv.add(p.key + "=" + p.value));
            }
            return String.join(",", kv);
        }
    }

    @BeforeEach
    void start() {
        startWith(3);
    }

    private void startWith(int maxEntries) {
        Topology t = new Topology();
        t.addSource("in", new StringDeserializer(), new StringDeserializer(), "scripts");
        t.addProcessor("script", ScriptProcessor::new, "in");
        t.addStateStore(WriteBackStore.builder(Stores.persistentKeyValueStore(STORE), Serdes.String(), maxEntries), "script");
        t.addSink("out", "answers", new StringSerializer(), new StringSerializer(), "script");
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "wb-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        driver = new TopologyTestDriver(t, p);
        scripts = driver.createInputTopic("scripts", new StringSerializer(), new StringSerializer());
        answers = driver.createOutputTopic("answers", new StringDeserializer(), new StringDeserializer());
        changelog = driver.createOutputTopic(CHANGELOG, new StringDeserializer(), new StringDeserializer());
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    private String run(String script) {
        scripts.pipeInput("k", script);
        return answers.readValue();
    }

    @Test
    void aKeyChangedManyTimesBetweenCommitsIsWrittenOnceWithItsLastValue() {
        StringBuilder script = new StringBuilder();
        for (int i = 1; i <= 100; i++) {
            script.append("put a=").append(i).append(';');
        }
        script.append("put b=x;get a");
        assertEquals("100", run(script.toString()));
        List<KeyValue<String, String>> written = changelog.readKeyValuesToList();
        assertEquals(List.of(KeyValue.pair("a", "100"), KeyValue.pair("b", "x")), written);
        assertEquals("100", driver.<String, String>getKeyValueStore(STORE).get("a"));
    }

    @Test
    void aDeletionWritesATombstoneOnlyForAKeyTheChangelogHolds() {
        assertEquals("deleted 1", run("put fresh=1;del fresh"));
        assertEquals(List.of(), changelog.readKeyValuesToList(), "a key put and deleted between two commits never reaches the changelog");
        run("put kept=1");
        changelog.readKeyValuesToList();
        assertEquals("deleted 1|null", run("del kept;get kept"));
        assertEquals(List.of(KeyValue.pair("kept", null)), changelog.readKeyValuesToList());
        assertEquals("deleted null", run("del never"));
        assertEquals(List.of(), changelog.readKeyValuesToList());
    }

    @Test
    void iterationMergesUncommittedChangesOverTheStoreInKeyOrder() {
        run("put b=1;put d=1;put x/1=1;put x/3=1");
        assertEquals("deleted 1|a=new,b=2,d=1,x/1=1,x/2=new|x/1=1,x/2=new", run("put b=2;put a=new;put x/2=new;del x/3;all;prefix x/"),
                "before the commit: changed values over the committed ones, the deleted key gone");
        assertEquals("x/1=1,x/2=new", run("prefix x/"), "after the commit");
        assertEquals("b=2,d=1", run("range b..d"));
        assertEquals("x/2=new,x/1=1,d=1,b=2,a=new", run("reverse"));
        assertEquals("c=3,d=4|x/2=new,x/1=1,d=4,c=3,b=2,a=new", run("put d=4;put c=3;range c..d;reverse"),
                "a range and the reverse order before the commit");
    }

    @Test
    void iterationKeepsTheStoresByteOrderAlsoForKeysAboveTheBasicPlane() {
        // U+1F600 (UTF-8 F0 9F 98 80) sorts after U+E000 (EE 80 80) as bytes, before it as Java chars (D83D < E000)
        run("put y/\uE000=1");
        assertEquals("y/a=2,y/\uE000=1,y/\uD83D\uDE00=3", run("put y/\uD83D\uDE00=3;put y/a=2;prefix y/"),
                "committed and uncommitted keys merged in the order of their bytes");
        assertEquals("y/a=2,y/\uE000=1,y/\uD83D\uDE00=3", run("prefix y/"), "the store beneath, after the commit");
        assertEquals("y/\uE000=1,y/\uD83D\uDE00=3", run("range y/\uE000..y/\uD83D\uDE00"));
    }

    @Test
    void theBoundHoldsAndAKeyWrittenEarlyAndPutAgainIsWrittenAgain() {
        stop();
        startWith(1);
        run("put k1=1;put k2=2;put k1=3");
        assertEquals(List.of(KeyValue.pair("k1", "1"), KeyValue.pair("k2", "2"), KeyValue.pair("k1", "3")), changelog.readKeyValuesToList(),
                "bound 1: k1 leaves (written) when k2 comes, k2 when k1 comes back; k1's last value at the commit");
    }

    @Test
    void aKeyPutWithoutBeingReadAndThenDeletedGetsItsTombstone() {
        stop();
        startWith(1);
        run("put k1=1");
        changelog.readKeyValuesToList();
        // k1 is no longer held once k2 is; put k1 blind (not read), then delete it: the store beneath holds it
        assertEquals("deleted 9|null", run("put k2=2;put k1=9;del k1;get k1"));
        assertEquals(List.of(KeyValue.pair("k2", "2"), KeyValue.pair("k1", null)), changelog.readKeyValuesToList());
        assertNull(driver.<String, String>getKeyValueStore(STORE).get("k1"));
    }

    /** The shared-object contract, checked by the verifying mode the test suites run with. */
    @Test
    void aValueChangedWithoutAPutIsCaughtAtTheCommitAndOneChangedAndPutIsWritten() {
        stop();
        String was = System.getProperty(WriteBackStore.VERIFY_PROPERTY);
        System.setProperty(WriteBackStore.VERIFY_PROPERTY, "true");
        Topology t = new Topology();
        t.addSource("in", new StringDeserializer(), new StringDeserializer(), "scripts");
        t.addProcessor("bytes", () -> new Processor<String, String, Void, Void>() {
            private KeyValueStore<String, byte[]> store;

            @Override
            public void init(ProcessorContext<Void, Void> context) {
                store = context.getStateStore("bytes");
            }

            @Override
            public void process(Record<String, String> record) {
                switch (record.value()) {
                    case "put" -> store.put(record.key(), new byte[]{1});
                    case "change and put" -> {
                        byte[] v = store.get(record.key());
                        v[0]++;
                        store.put(record.key(), v);
                    }
                    case "change only" -> store.get(record.key())[0]++;
                    default -> throw new IllegalArgumentException(record.value());
                }
            }
        }, "in");
        t.addStateStore(WriteBackStore.builder(Stores.inMemoryKeyValueStore("bytes"), Serdes.ByteArray(), 10), "bytes");
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "wb-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        driver = new TopologyTestDriver(t, p);
        if (was == null) {
            System.clearProperty(WriteBackStore.VERIFY_PROPERTY);
        } else {
            System.setProperty(WriteBackStore.VERIFY_PROPERTY, was);
        }
        TestInputTopic<String, String> in = driver.createInputTopic("scripts", new StringSerializer(), new StringSerializer());
        TestOutputTopic<String, byte[]> log = driver.createOutputTopic("wb-test-bytes-changelog", new StringDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer());
        // (a byte[] value is its own encoding: the changelog record is read before the array changes again)
        in.pipeInput("a", "put");
        assertEquals(1, log.readValue()[0]);
        in.pipeInput("a", "change and put");
        assertEquals(2, log.readValue()[0]);
        RuntimeException caught = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> in.pipeInput("a", "change only"));
        Throwable cause = caught;
        while (cause.getCause() != null && !(cause instanceof IllegalStateException)) {
            cause = cause.getCause();
        }
        org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(cause.getMessage()).contains("key 'a' was changed without a put"),
                String.valueOf(cause));
    }

    @Test
    void keysBeyondTheBoundLeaveTheObjectsAndAreWrittenIfChanged() {
        // bound 3: five keys changed in one call; the two oldest are written when they leave, the rest at the commit
        assertEquals("1|2|5", run("put k1=1;put k2=2;put k3=3;put k4=4;put k5=5;get k1;get k2;get k5"));
        List<KeyValue<String, String>> written = changelog.readKeyValuesToList();
        assertEquals(5, written.size(), written.toString());
        assertEquals("k1=1,k2=2,k3=3,k4=4,k5=5", run("all"));
    }

    @Test
    void aPutOfAnEqualValueIsWrittenAndAMissingKeyReadsNull() {
        run("put a=1");
        changelog.readKeyValuesToList();
        assertEquals("1|1", run("put a=1;get a;get a"));
        assertEquals(List.of(KeyValue.pair("a", "1")), changelog.readKeyValuesToList(), "a put writes even an equal value");
        assertNull(driver.<String, String>getKeyValueStore(STORE).get("missing"));
    }
}
