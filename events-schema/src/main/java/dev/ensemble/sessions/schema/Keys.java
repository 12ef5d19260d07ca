package dev.ensemble.sessions.schema;

import org.apache.kafka.common.utils.Utils;

/**
 * Record keys. Source topics are keyed by account; views and stores by {@code <account>/<id>}. Both are
 * partitioned by the account, so one account's events and views live in the same partition number.
 */
public final class Keys {
    private Keys() {
    }

    /** The separator between account and id in a composite key. Accounts never contain it. */
    public static final char SEPARATOR = '/';

    /**
     * {@code account + "/" + id}. The keys of the last few calls on this thread are given again for the same
     * {@code account} and {@code id} objects: the processors of one event ask for its keys several times, and the same
     * key object is hashed once for all their store lookups.
     */
    public static String of(String account, String id) {
        Recent r = RECENT.get();
        for (int i = 0; i < Recent.SIZE; i++) {
            if (r.accounts[i] == account && r.ids[i] == id && account != null) return r.keys[i];
        }
        String key = account + SEPARATOR + id;
        int i = r.next;
        r.accounts[i] = account;
        r.ids[i] = id;
        r.keys[i] = key;
        r.next = (i + 1) % Recent.SIZE;
        return key;
    }

    /** The last keys made on a thread, by the identity of their parts (oldest replaced first). */
    private static final class Recent {
        static final int SIZE = 4;
        final String[] accounts = new String[SIZE];
        final String[] ids = new String[SIZE];
        final String[] keys = new String[SIZE];
        int next;
    }

    private static final ThreadLocal<Recent> RECENT = ThreadLocal.withInitial(Recent::new);

    /** The account part of a composite key (the whole key when it has no separator). */
    public static String accountOf(String key) {
        int i = key.indexOf(SEPARATOR);
        return i < 0 ? key : key.substring(0, i);
    }

    /** The id part of a composite key. */
    public static String idOf(String key) {
        int i = key.indexOf(SEPARATOR);
        return i < 0 ? key : key.substring(i + 1);
    }

    /** The prefix of every composite key of one account, for prefix scans. */
    public static String prefix(String account) {
        return account + SEPARATOR;
    }

    /**
     * The partition of an account: the same murmur2 hash as Kafka's default partitioner applied to the
     * account's UTF-8 bytes, so a composite key lands where its account's source events land.
     */
    public static int accountPartition(String keyOrAccount, int numPartitions) {
        byte[] bytes = accountOf(keyOrAccount).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return Utils.toPositive(Utils.murmur2(bytes)) % numPartitions;
    }

    /**
     * The order of a Kafka Streams store's String keys: the order of their UTF-8 bytes, which is code point order. It
     * differs from {@link String#compareTo} only between a surrogate pair (a character above U+FFFF) and a character
     * from U+E000 to U+FFFF.
     */
    public static final java.util.Comparator<String> UTF8_ORDER = (a, b) -> {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            int x = a.charAt(i), y = b.charAt(i);
            if (x != y) {
                if (x >= 0xD800 && y >= 0xD800) {
                    x = x >= 0xE000 ? x - 0x800 : x + 0x2000;
                    y = y >= 0xE000 ? y - 0x800 : y + 0x2000;
                }
                return x - y;
            }
        }
        return a.length() - b.length();
    };
}
