package dev.airlock.spi;

import dev.airlock.FileStat;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.WriteOptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every operation a subclass does not override reaches the delegate with its arguments and its answer. */
class ForwardingRemoteFilesTest {

    /** Records each call; answers with fixed values. */
    private static final class Recording implements RemoteFiles {
        final List<String> calls = new ArrayList<>();
        final InputStream readAnswer = new ByteArrayInputStream(new byte[] {1});
        final InputStream copyOutAnswer = new ByteArrayInputStream(new byte[] {2});

        @Override
        public void write(String path, Payload content, WriteOptions options) {
            calls.add("write " + path);
        }

        @Override
        public InputStream read(String path) {
            calls.add("read " + path);
            return readAnswer;
        }

        @Override
        public Optional<FileStat> stat(String path) {
            calls.add("stat " + path);
            return Optional.empty();
        }

        @Override
        public List<FileStat> list(String dir) {
            calls.add("list " + dir);
            return List.of();
        }

        @Override
        public boolean delete(String path) {
            calls.add("delete " + path);
            return true;
        }

        @Override
        public void mkdirs(String dir) {
            calls.add("mkdirs " + dir);
        }

        @Override
        public void copyIn(String dir, InputStream tar) {
            calls.add("copyIn " + dir);
        }

        @Override
        public InputStream copyOut(String dir) {
            calls.add("copyOut " + dir);
            return copyOutAnswer;
        }
    }

    @Test
    void whatIsNotOverriddenReachesTheDelegate() {
        Recording d = new Recording();
        RemoteFiles f = new ForwardingRemoteFiles(d) {
            @Override
            public boolean delete(String path) {
                return false; // done natively
            }
        };
        f.write("/w", new byte[] {9});
        assertSame(d.readAnswer, f.read("/r"));
        assertEquals(Optional.empty(), f.stat("/s"));
        assertEquals(List.of(), f.list("/l"));
        assertEquals(false, f.delete("/d"), "the override's answer");
        f.mkdirs("/m");
        f.copyIn("/ci", InputStream.nullInputStream());
        assertSame(d.copyOutAnswer, f.copyOut("/co"));
        assertEquals(List.of("write /w", "read /r", "stat /s", "list /l", "mkdirs /m", "copyIn /ci", "copyOut /co"), d.calls);
    }

    @Test
    void aDelegateIsRequired() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> new ForwardingRemoteFiles(null) { });
        assertTrue(e.getMessage().contains("delegate"), e.getMessage());
    }
}
