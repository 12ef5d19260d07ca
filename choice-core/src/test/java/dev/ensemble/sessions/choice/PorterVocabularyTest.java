package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.schema.testing.SharedData;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Guide §4 "topic": words are reduced to their stem by Porter's algorithm — checked against the reference vocabulary. */
class PorterVocabularyTest {
    @Test
    void porterStemFilterMatchesTheReferenceOutputOnEveryWord() throws Exception {
        Path voc = SharedData.require("data/porter/voc.txt");
        Path expected = SharedData.require("data/porter/output.txt");
        List<String> words = Files.readAllLines(voc, StandardCharsets.US_ASCII);
        List<String> stems = Files.readAllLines(expected, StandardCharsets.US_ASCII);
        assertThat(words).hasSize(23_531).hasSameSizeAs(stems);
        List<String> mismatches = new ArrayList<>();
        KeywordTokenizer tok = new KeywordTokenizer();
        try (TokenStream ts = new PorterStemFilter(tok)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            for (int i = 0; i < words.size(); i++) {
                tok.setReader(new StringReader(words.get(i)));
                ts.reset();
                assertThat(ts.incrementToken()).isTrue();
                if (!term.toString().equals(stems.get(i))) mismatches.add(words.get(i) + " -> " + term + " (want " + stems.get(i) + ")");
                ts.end();
                ts.close();
            }
        }
        assertThat(mismatches).as("mismatches").isEmpty();
    }
}
