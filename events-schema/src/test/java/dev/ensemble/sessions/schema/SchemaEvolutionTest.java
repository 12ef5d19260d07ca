package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.ParkedEvents;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunFacts;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Schema evolution (DESIGN.md section 3): every released version is kept, a newer version reads the older
 * bytes, and the older reads the newer.
 */
class SchemaEvolutionTest {

    static Schema v2() throws Exception {
        try (InputStream in = SchemaEvolutionTest.class.getResourceAsStream("/evolution/Event-v2.avsc")) {
            return new Schema.Parser().parse(in);
        }
    }

    @Test
    void everyCurrentSchemaIsAReleasedVersion() {
        for (Schema current : List.of(Event.getClassSchema(), SessionView.getClassSchema(), RunRef.getClassSchema(), ParkedEvents.getClassSchema(),
                RetirementView.getClassSchema(), DeletionAudit.getClassSchema(), DeletionState.getClassSchema(), RunFacts.getClassSchema(),
                CleanupCommand.getClassSchema(), dev.ensemble.sessions.views.CorpusView.getClassSchema(),
                dev.ensemble.sessions.views.ConversationView.getClassSchema())) {
            List<Schema> released = SchemaHistory.versionsOf(current.getFullName());
            assertThat(released).as("released versions of %s", current.getFullName()).isNotEmpty();
            assertThat(released.stream().map(SchemaHistory::fingerprint))
                    .as("the current %s is kept under schemas/history (add a version file when a schema changes)", current.getName())
                    .contains(SchemaHistory.fingerprint(current));
            for (Schema old : released) {
                assertThat(SchemaCompatibility.checkReaderWriterCompatibility(current, old).getType())
                        .as("current %s reads %s", current.getName(), old)
                        .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
                assertThat(SchemaCompatibility.checkReaderWriterCompatibility(old, knownTo(old, current)).getType())
                        .as("released %s reads the current one's events of the types it knows", current.getName())
                        .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
            }
        }
    }

    /**
     * Event types added after the first release, by version. Avro cannot let an older reader resolve a union branch it
     * never had, so an older reader reads every event of the types it knows, and an event of a newer type is an
     * undecodable record to it (dead-lettered with its reason, docs/events.md "Evolution"). Adding a type here is the
     * one schema change that is not read both ways; every other change must be.
     */
    static final java.util.Map<String, List<String>> ADDED_EVENT_TYPES = java.util.Map.of(
            "v4", List.of("TurnDecided", "TurnEnded", "AskRequested", "ConversationDeletionRequested",
                    "ConversationDeletionAccepted", "ConversationDeletionSkipped", "ConversationDroppedOnComputer"));

    /**
     * {@code current} with its payload union cut to the types {@code old} has (an {@code Event}), else {@code current}
     * itself: what an older reader must still read.
     */
    static Schema knownTo(Schema old, Schema current) {
        if (!current.getFullName().equals(Event.getClassSchema().getFullName())) {
            return current;
        }
        java.util.Set<String> known = new java.util.HashSet<>();
        old.getField("payload").schema().getTypes().forEach(t -> known.add(t.getName()));
        List<Schema> kept = current.getField("payload").schema().getTypes().stream().filter(t -> known.contains(t.getName())).toList();
        List<String> added = current.getField("payload").schema().getTypes().stream().map(Schema::getName)
                .filter(n -> !known.contains(n)).toList();
        assertThat(ADDED_EVENT_TYPES.values().stream().flatMap(List::stream).toList())
                .as("event types the released version lacks are listed in ADDED_EVENT_TYPES").containsAll(added);
        List<Schema.Field> fields = current.getFields().stream()
                .map(f -> new Schema.Field(f, f.name().equals("payload") ? Schema.createUnion(kept) : f.schema())).toList();
        return Schema.createRecord(current.getName(), current.getDoc(), current.getNamespace(), false, fields);
    }

    /** The newest released Event knows every type but the ones added after it; the current one adds none unlisted. */
    @Test
    void addedEventTypesAreTheOnlyBranchesAnOlderReaderLacks() {
        List<Schema> released = SchemaHistory.versionsOf(Event.getClassSchema().getFullName());
        Schema v3 = released.get(2);
        Schema restricted = knownTo(v3, Event.getClassSchema());
        assertThat(restricted.getField("payload").schema().getTypes()).hasSize(v3.getField("payload").schema().getTypes().size());
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(v3, Event.getClassSchema()).getType())
                .as("the whole current union is not readable by v3: the check above is what keeps the rest readable")
                .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.INCOMPATIBLE);
    }

    @Test
    void secondVersionReadsFirstVersionBytes() throws Exception {
        Event v1Event = Samples.engineEvent();
        byte[] v1Bytes = AvroSerde.of(Event.class).encode(v1Event);

        BinaryMessageDecoder<GenericRecord> v2Reader = new BinaryMessageDecoder<>(GenericData.get(), v2());
        v2Reader.addSchema(Event.getClassSchema());
        GenericRecord read = v2Reader.decode(v1Bytes);
        GenericRecord payload = (GenericRecord) read.get("payload");
        assertThat(payload.get("agentSessionId").toString()).isEqualTo("sess-1");
        assertThat(payload.get("agentVersion").toString()).as("the added field takes its default").isEqualTo("unknown");
    }

    @Test
    void firstVersionReadsSecondVersionBytes() throws Exception {
        Schema v2 = v2();
        GenericRecord payload = new GenericData.Record(v2.getField("payload").schema().getTypes().stream()
                .filter(s -> s.getName().equals("EngineEvent")).findFirst().orElseThrow());
        payload.put("runId", "run-9");
        payload.put("agentSessionId", "sess-9");
        payload.put("contextUsed", 1000L);
        payload.put("contextSize", 200000L);
        payload.put("model", null);
        payload.put("agentVersion", "2.0.76");
        GenericRecord env = new GenericData.Record(v2);
        env.put("eventId", "e-9");
        env.put("account", "acct");
        env.put("space", "local:c");
        env.put("occurredAt", 1_700_000_000_000L);
        env.put("recordedAt", 1_700_000_000_001L);
        env.put("source", "computer:c");
        env.put("payload", payload);
        ByteBuffer v2Bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(env);
        byte[] bytes = new byte[v2Bytes.remaining()];
        v2Bytes.get(bytes);

        AvroSerde<Event> v1 = AvroSerde.of(Event.class);
        assertThatThrownBy(() -> v1.decode(bytes))
                .as("a writer schema the reader was never given is refused, not misread")
                .isInstanceOf(SerializationException.class);
        Event read = v1.withWriterSchema(v2).decode(bytes);
        assertThat(((EngineEvent) read.getPayload()).getAgentSessionId()).isEqualTo("sess-9");
        assertThat(read.getOccurredAt()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_000L));
    }

    @Test
    void committedFirstVersionSamplesStillDecode() throws Exception {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        List<Event> expected = Samples.all();
        for (int i = 0; i < expected.size(); i++) {
            String name = "/samples/v1/event-" + i + ".bin";
            try (InputStream in = getClass().getResourceAsStream(name)) {
                assertThat(in).as("committed sample %s", name).isNotNull();
                byte[] bytes = in.readAllBytes();
                assertThat(serde.decode(bytes)).as(name).isEqualTo(expected.get(i));
            }
        }
    }

    /**
     * The serde writes the bytes Avro's own single-object encoder writes, and reads what it writes, for every event
     * type (other services decode the log with Avro's message classes, docs/events.md).
     */
    @Test
    void encodesAsAvrosSingleObjectEncoderAndReadsItsBytes() throws Exception {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        BinaryMessageEncoder<Event> avro = new BinaryMessageEncoder<>(org.apache.avro.specific.SpecificData.getForClass(Event.class), Event.getClassSchema());
        for (Event e : Samples.all()) {
            ByteBuffer theirs = avro.encode(e);
            byte[] expected = new byte[theirs.remaining()];
            theirs.get(expected);
            assertThat(serde.encode(e)).as("%s", e.getEventId()).isEqualTo(expected);
            assertThat(serde.decode(expected)).isEqualTo(e);
            assertThat(Event.getDecoder().decode(serde.encode(e))).isEqualTo(e);
        }
    }

    @Test
    void aTruncatedBodyOrAnUnknownFingerprintIsASerializationErrorWithTheReason() {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        byte[] whole = serde.encode(Samples.all().get(0));
        assertThatThrownBy(() -> serde.decode(java.util.Arrays.copyOf(whole, whole.length - 5)))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("cannot decode Event (" + (whole.length - 5) + " bytes)");
        byte[] other = whole.clone();
        other[5] ^= 0x55;
        assertThatThrownBy(() -> serde.decode(other))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("fingerprint");
    }

    @Test
    void garbageIsASerializationErrorWithTheReason() {
        AvroSerde<Event> serde = AvroSerde.of(Event.class);
        assertThatThrownBy(() -> serde.decode(new byte[]{1, 2, 3}))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("cannot decode Event (3 bytes)");
    }
}
