package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.views.RunView;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The part of a run that its status reports change (guide §1: the run's status, when it started and ended, its end
 * report), kept in the run's own record ({@link RunRecord}) and not in its session's {@link SessionView}, so that a status
 * report, a quarter of the log, writes that record and its session's small fill ({@link SessionFill}) alone. The
 * session's view is assembled with its runs' progress when it is read or published ({@link SessionAssembly}).
 *
 * @param status        the run's status ({@code RunStatus} name)
 * @param startedAt     its earliest WORKING report, or null
 * @param endedAt       the occurredAt of the end report applied, or null while it has not ended (or was cancelled: then
 *                      the cancellation's time)
 * @param reportSummary the end report's summary, or null
 * @param tokens        the end report's tokens, or null
 * @param durationMs    the end report's duration, ms, or null
 * @param filesChanged  the files of the end reports applied, each once, first reported first; the newest
 *                      {@link ViewBounds#FILES} kept
 * @param filesOmitted  how many files were left out of {@code filesChanged} by that bound
 */
record RunProgress(String status, Instant startedAt, Instant endedAt, String reportSummary, Long tokens, Long durationMs,
                   List<String> filesChanged, int filesOmitted) {

    RunProgress {
        filesChanged = List.copyOf(filesChanged);
    }

    /** A run as its claim leaves it: {@code status} (WORKING or QUEUED), nothing else known. */
    static RunProgress claimed(String status) {
        return new RunProgress(status, null, null, null, null, null, List.of(), 0);
    }

    /** The progress a run's view holds (a run claimed before runs had a progress of their own: no files of its own). */
    static RunProgress of(RunView r) {
        return new RunProgress(r.getStatus(), r.getStartedAt(), r.getEndedAt(), r.getReportSummary(), r.getTokens(),
                r.getDurationMs(), List.of(), 0);
    }

    RunProgress withStatus(String newStatus) {
        return new RunProgress(newStatus, startedAt, endedAt, reportSummary, tokens, durationMs, filesChanged, filesOmitted);
    }

    RunProgress withStartedAt(Instant at) {
        return new RunProgress(status, at, endedAt, reportSummary, tokens, durationMs, filesChanged, filesOmitted);
    }

    /** Cancelled at {@code at} (a queued run of a session being deleted). */
    RunProgress cancelled(String cancelledStatus, Instant at) {
        return new RunProgress(cancelledStatus, startedAt, at, reportSummary, tokens, durationMs, filesChanged, filesOmitted);
    }

    /** Ended at {@code at} with this end report; its files join the run's (each once, first reported first, newest kept). */
    RunProgress ended(String endStatus, Instant at, String summary, Long reportTokens, Long reportDurationMs, List<String> files) {
        LinkedHashSet<String> all = new LinkedHashSet<>(filesChanged);
        all.addAll(files);
        List<String> kept = new ArrayList<>(all);
        int omitted = filesOmitted;
        if (kept.size() > ViewBounds.FILES) {
            omitted += kept.size() - ViewBounds.FILES;
            kept = kept.subList(kept.size() - ViewBounds.FILES, kept.size());
        }
        return new RunProgress(endStatus, startedAt, at, summary, reportTokens, reportDurationMs, kept, omitted);
    }

    /**
     * Its bytes inside its {@link RunRecord}: a byte of flags (which of startedAt, endedAt, tokens, durationMs are
     * present), the status and summary (UTF-8 after their length, -1: null), the four numbers (ms or counts; 0 when
     * absent), the files' count and each file, the files omitted.
     */
    byte[] encode() {
        byte[] st = StoreBytes.utf8(status);
        byte[] sum = reportSummary == null ? null : StoreBytes.utf8(reportSummary);
        List<byte[]> files = new ArrayList<>(filesChanged.size());
        int n = 1 + 4 + st.length + 4 + (sum == null ? 0 : sum.length) + 32 + 4 + 4;
        for (String f : filesChanged) {
            byte[] u = StoreBytes.utf8(f);
            files.add(u);
            n += 4 + u.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        b.put((byte) ((startedAt != null ? 1 : 0) | (endedAt != null ? 2 : 0) | (tokens != null ? 4 : 0) | (durationMs != null ? 8 : 0)));
        b.putInt(st.length).put(st);
        if (sum == null) {
            b.putInt(-1);
        } else {
            b.putInt(sum.length).put(sum);
        }
        b.putLong(startedAt == null ? 0 : startedAt.toEpochMilli());
        b.putLong(endedAt == null ? 0 : endedAt.toEpochMilli());
        b.putLong(tokens == null ? 0 : tokens);
        b.putLong(durationMs == null ? 0 : durationMs);
        b.putInt(files.size());
        for (byte[] u : files) {
            b.putInt(u.length).put(u);
        }
        b.putInt(filesOmitted);
        return b.array();
    }

    /** Reads what {@link #encode} wrote, from {@code b}'s position. */
    static RunProgress decode(ByteBuffer b) {
        int flags = b.get();
        String status = StoreBytes.string(b);
        String summary = StoreBytes.string(b);
        long started = b.getLong();
        long ended = b.getLong();
        long tokens = b.getLong();
        long duration = b.getLong();
        int n = b.getInt();
        List<String> files = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            files.add(StoreBytes.string(b));
        }
        int omitted = b.getInt();
        return new RunProgress(status, (flags & 1) != 0 ? Instant.ofEpochMilli(started) : null,
                (flags & 2) != 0 ? Instant.ofEpochMilli(ended) : null, summary, (flags & 4) != 0 ? tokens : null,
                (flags & 8) != 0 ? duration : null, files, omitted);
    }
}
