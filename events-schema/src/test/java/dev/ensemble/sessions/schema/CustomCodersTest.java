package dev.ensemble.sessions.schema;

import dev.ensemble.sessions.commands.CleanupCommand;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.CorpusView;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionState;
import dev.ensemble.sessions.views.ParkedEvents;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunFacts;
import dev.ensemble.sessions.views.RunRef;
import dev.ensemble.sessions.views.SessionView;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.apache.avro.util.RandomData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The custom encoders generated for the records (events-schema/src/main/avro-templates, also for timestamp-millis fields)
 * write the bytes Avro's generic writer writes: random records of each stored and published record's schema (Avro's
 * {@link RandomData}: every union branch, empty and long arrays and maps, any long as a timestamp), read into the
 * generated class, are written by {@link AvroSerde} as Avro's generic writer writes the same object, and read back. An
 * {@link Event} (its union of payloads has no custom encoder of its own) is written by the generic writer up to its
 * payload and by the payload's encoder from there.
 */
class CustomCodersTest {
    @ParameterizedTest
    @ValueSource(classes = {SessionView.class, RetirementView.class, DeletionState.class, DeletionAudit.class, ConversationView.class,
            CorpusView.class, RunFacts.class, RunRef.class, ParkedEvents.class, CleanupCommand.class, Event.class})
    void theCustomEncoderWritesTheBytesOfAvrosGenericWriter(Class<? extends SpecificRecord> type) throws Exception {
        // an event's own union of payloads has none; each payload has its own
        assertThat(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals("customEncode")))
                .as("%s has a generated custom encoder", type.getSimpleName()).isEqualTo(type != Event.class);
        @SuppressWarnings({"unchecked", "rawtypes"})
        AvroSerde<SpecificRecord> serde = (AvroSerde) AvroSerde.of(type);
        assertThat(serde.writesWithCustomCoders()).as("the serde of %s uses them", type.getSimpleName()).isTrue();
        Schema schema = SpecificData.get().getSchema(type);
        SpecificDatumReader<SpecificRecord> reader = new SpecificDatumReader<>(schema, schema, SpecificData.getForClass(type));
        int n = 0;
        for (Object random : new RandomData(schema, 300, 20261203L)) {
            SpecificRecord record = reader.read(null, DecoderFactory.get().binaryDecoder(generic(schema, random), null));
            byte[] encoded = serde.encode(record);
            // the same object by Avro's generic writer (a map's entries in the order the object's map holds them)
            assertThat(Arrays.copyOfRange(encoded, 10, encoded.length)).as("record %d of %s", n, type.getSimpleName())
                    .isEqualTo(specificGeneric(schema, record, SpecificData.getForClass(type)));
            assertThat(serde.encode(serde.decode(encoded))).as("record %d of %s read back", n, type.getSimpleName()).isEqualTo(encoded);
            n++;
        }
        assertThat(n).isEqualTo(300);
    }

    @org.junit.jupiter.api.Test
    void everyPayloadOfAnEventHasACustomEncoder() {
        for (Schema payload : Event.getClassSchema().getField("payload").schema().getTypes()) {
            Class<?> type = SpecificData.get().getClass(payload);
            assertThat(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals("customEncode")))
                    .as("%s has a generated custom encoder", type.getSimpleName()).isTrue();
        }
    }

    /** {@code record} by Avro's generic writer ({@code model}: the class's own, whose custom coders are off). */
    private static byte[] specificGeneric(Schema schema, SpecificRecord record, SpecificData model) throws java.io.IOException {
        assertThat(model.useCustomCoders()).isFalse();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new org.apache.avro.specific.SpecificDatumWriter<SpecificRecord>(schema, model).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    private static byte[] generic(Schema schema, Object datum) throws java.io.IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        org.apache.avro.generic.GenericData model = new org.apache.avro.generic.GenericData();
        model.addLogicalTypeConversion(new org.apache.avro.data.TimeConversions.TimestampMillisConversion()); // RandomData makes Instants
        new GenericDatumWriter<>(schema, model).write(datum, encoder);
        encoder.flush();
        return out.toByteArray();
    }
}
