package dev.airlock.emulator;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every request an emulator served, so a test can prove what travelled: no payload or env value
 * in any command text or argv, and no command dispatched twice. Thread-safe; entries keep their
 * arrival order.
 */
public final class CallJournal {
    /**
     * One request. {@code command} and {@code argv} are what the client sent as the command (empty
     * for calls that carry none); {@code envNames} only the names of natively sent variables
     * (their values are a legitimate channel, not a command); {@code dispatchKey} identifies a
     * dispatch (the exec id, idempotency key or command id), empty for other calls.
     * {@code requestBytes} is the request body read when the answer started; {@code responseBytes}
     * the answer's declared length, -1 when it streams, has no body or never started (a call is
     * journalled before its answer leaves, so a client holding the answer finds it here).
     */
    public record Entry(long seq, String call, String sandbox, String command, List<String> argv,
                        List<String> envNames, long requestBytes, long responseBytes, String dispatchKey,
                        Optional<Fault> fault) {
        public Entry {
            Objects.requireNonNull(call, "call");
            sandbox = sandbox == null ? "" : sandbox;
            command = command == null ? "" : command;
            argv = List.copyOf(argv);
            envNames = List.copyOf(envNames);
            dispatchKey = dispatchKey == null ? "" : dispatchKey;
            Objects.requireNonNull(fault, "fault");
        }

        public boolean dispatch() {
            return !dispatchKey.isEmpty();
        }
    }

    private final AtomicLong seq = new AtomicLong();
    private final List<Entry> entries = new ArrayList<>();

    /** Records a plain call (no command). */
    public Entry call(String call, String sandbox, long requestBytes, long responseBytes, Optional<Fault> fault) {
        return add(call, sandbox, "", List.of(), List.of(), requestBytes, responseBytes, "", fault);
    }

    /** Records a command dispatch: its text, argv and the key that identifies it. */
    public Entry dispatch(String call, String sandbox, String command, List<String> argv, List<String> envNames,
                          long requestBytes, String dispatchKey, Optional<Fault> fault) {
        if (dispatchKey == null || dispatchKey.isEmpty()) {
            throw new IllegalArgumentException("a dispatch needs a key (exec id, command id or a hash of the request)");
        }
        return add(call, sandbox, command, argv, envNames, requestBytes, 0, dispatchKey, fault);
    }

    private synchronized Entry add(String call, String sandbox, String command, List<String> argv,
                                   List<String> envNames, long req, long resp, String key, Optional<Fault> fault) {
        Entry e = new Entry(seq.incrementAndGet(), call, sandbox, command, argv, envNames, req, resp, key, fault);
        entries.add(e);
        return e;
    }

    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    public synchronized List<Entry> entries(String call) {
        return entries.stream().filter(e -> e.call().equals(call)).toList();
    }

    /** The entries whose command text or argv contain {@code value} (as text, or as its UTF-8 bytes). */
    public synchronized List<Entry> carrying(String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("an empty value is in every command");
        }
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries) {
            if (e.command().contains(value) || e.argv().stream().anyMatch(a -> a.contains(value))) {
                out.add(e);
            }
        }
        return out;
    }

    /** The entries that carry any of these bytes (a payload, which need not be text). */
    public synchronized List<Entry> carrying(byte[] payload) {
        return carrying(new String(payload, StandardCharsets.ISO_8859_1), true);
    }

    private List<Entry> carrying(String latin1, boolean bytes) {
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries) {
            List<String> texts = new ArrayList<>(e.argv());
            texts.add(e.command());
            for (String t : texts) {
                if (new String(t.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1).contains(latin1)) {
                    out.add(e);
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Fails when any command text or argv carries one of {@code values} (env values, tokens,
     * payloads). The message names the call and the value's position, never the value.
     */
    public void assertNoneCarries(String... values) {
        for (int i = 0; i < values.length; i++) {
            List<Entry> hits = carrying(values[i]);
            if (!hits.isEmpty()) {
                Entry e = hits.get(0);
                throw new AssertionError("value #" + (i + 1) + " (" + values[i].length() + " chars) travelled in the command of "
                        + e.call() + " #" + e.seq() + (e.sandbox().isEmpty() ? "" : " on " + e.sandbox())
                        + "; payloads and env values must never be in a command or argv");
            }
        }
    }

    /** Fails when the payload's bytes appear in any command text or argv. */
    public void assertNoneCarries(byte[] payload) {
        if (payload.length < 8) {
            throw new IllegalArgumentException("a payload under 8 bytes matches by chance; use a longer one");
        }
        List<Entry> hits = carrying(payload);
        if (!hits.isEmpty()) {
            throw new AssertionError("the payload (" + payload.length + " bytes) travelled in the command of "
                    + hits.get(0).call() + " #" + hits.get(0).seq());
        }
    }

    /** Dispatch keys seen more than once, with their counts. */
    public synchronized Map<String, Integer> dispatchedTwice() {
        Map<String, Integer> count = new LinkedHashMap<>();
        for (Entry e : entries) {
            if (e.dispatch()) {
                count.merge(e.sandbox() + "/" + e.dispatchKey(), 1, Integer::sum);
            }
        }
        count.values().removeIf(n -> n < 2);
        return count;
    }

    /** Fails when any command was dispatched twice. */
    public void assertNoDoubleDispatch() {
        Map<String, Integer> twice = dispatchedTwice();
        if (!twice.isEmpty()) {
            throw new AssertionError("dispatched more than once: " + twice);
        }
    }

    public synchronized int size() {
        return entries.size();
    }
}
