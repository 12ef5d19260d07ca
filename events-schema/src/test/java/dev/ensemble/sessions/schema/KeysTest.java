package dev.ensemble.sessions.schema;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

class KeysTest {

    /** Parts whose texts repeat in distinct objects, and objects that repeat: the cases the recent-keys memo must tell apart. */
    private static List<String> parts(String prefix) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String s = prefix + i;
            parts.add(s);
            parts.add(new String(s)); // same text, another object
        }
        parts.add(new String(""));
        return parts;
    }

    @Test
    void aKeyIsAccountSlashIdWhateverCameBefore() {
        List<String> accounts = parts("acct-");
        List<String> ids = parts("run-");
        Random random = new Random(42);
        for (int n = 0; n < 20_000; n++) {
            String account = accounts.get(random.nextInt(accounts.size()));
            String id = ids.get(random.nextInt(ids.size()));
            assertThat(Keys.of(account, id)).isEqualTo(account + "/" + id);
        }
        String account = accounts.get(0), id = ids.get(0);
        String key = Keys.of(account, id);
        Keys.of(accounts.get(1), ids.get(2));
        Keys.of(accounts.get(3), ids.get(4));
        assertThat(Keys.of(account, id)).as("the same parts again, among the last four: the same key object").isSameAs(key);
        assertThat(Keys.of(new String(account), id)).isEqualTo(key);
        assertThat(Keys.of("a", null)).isEqualTo("a/null");
        assertThat(Keys.of(null, null)).isEqualTo("null/null");
        assertThat(Keys.of(null, "x")).isEqualTo("null/x");
    }

    @Test
    void threadsDoNotSeeEachOthersKeys() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> checks = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                checks.add(pool.submit(() -> {
                    List<String> accounts = parts("a" + seed + "-");
                    List<String> ids = parts("id-");
                    Random random = new Random(seed);
                    int wrong = 0;
                    for (int n = 0; n < 50_000; n++) {
                        String account = accounts.get(random.nextInt(accounts.size()));
                        String id = ids.get(random.nextInt(ids.size()));
                        if (!Keys.of(account, id).equals(account + "/" + id)) wrong++;
                    }
                    return wrong;
                }));
            }
            for (Future<Integer> f : checks) assertThat(f.get()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }
}
