package dev.airlock.local;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Where {@link SandboxView} places a path, read back from bubblewrap's options as bubblewrap applies them. */
class SandboxViewTest {
    @TempDir
    Path dir;

    private Path work;
    private Path ownTmp;
    private Path pinned;

    @org.junit.jupiter.api.BeforeEach
    void dirs() throws IOException {
        work = Files.createDirectories(dir.resolve("work")).toRealPath();
        ownTmp = Files.createDirectories(dir.resolve("private/sandbox-tmp")).toRealPath();
        pinned = Files.createDirectories(work.resolve(".git/hooks")).toRealPath();
    }

    private List<String> options(String... more) {
        List<String> a = new ArrayList<>(List.of("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--bind", ownTmp.toString(), "/tmp", "--tmpfs", "/run",
                "--bind", work.toString(), work.toString(),
                "--ro-bind", pinned.toString(), pinned.toString(),
                "--tmpfs", "/root", "--remount-ro", "/root",
                "--unshare-pid", "--unshare-user-try", "--cap-drop", "ALL", "--die-with-parent", "--chdir", work.toString()));
        a.addAll(List.of(more));
        return a;
    }

    private SandboxView view(String... more) {
        return SandboxView.of(options(more)).orElseThrow();
    }

    @Test
    void aBindOfADirectoryToItselfIsTheSamePlaceAndWritable() throws IOException {
        SandboxView v = view();
        SandboxView.Place p = v.locate(work.resolve("src/A.java")).orElseThrow();
        assertEquals(work.resolve("src/A.java"), p.host());
        assertEquals(work, p.mountRoot());
        assertTrue(p.writable());
        assertEquals(work, v.start());
    }

    @Test
    void theRootIsReadOnlyAndTmpIsTheEnvironmentsOwnDirectory() throws IOException {
        SandboxView v = view();
        SandboxView.Place etc = v.locate(Path.of("/etc/hosts")).orElseThrow();
        assertEquals(Path.of("/etc/hosts"), etc.host());
        assertFalse(etc.writable());
        SandboxView.Place tmp = v.locate(Path.of("/tmp/x/y")).orElseThrow();
        assertEquals(ownTmp.resolve("x/y"), tmp.host(), "the sandbox's /tmp is its own dir, not the host's");
        assertTrue(tmp.writable());
    }

    @Test
    void aDeeperReadOnlyBindWinsOverItsWritableParent() throws IOException {
        SandboxView.Place p = view().locate(pinned.resolve("pre-commit")).orElseThrow();
        assertFalse(p.writable(), "the pinned git hooks stay read-only");
    }

    @Test
    void aLaterMountAboveAnEarlierOneHidesIt() throws IOException {
        // a tmpfs over the work dir's parent after the work dir's bind hides the bind
        SandboxView v = view("--tmpfs", work.getParent().toString());
        assertEquals(Optional.empty(), v.locate(work.resolve("a")));
    }

    @Test
    void fileSystemsOfTheSandboxsOwnAndVolatileTreesHaveNoPlace() throws IOException {
        SandboxView v = view();
        for (String p : List.of("/run/x", "/root/.ssh/id_rsa", "/root", "/proc/self/environ", "/dev/null", "/sys/kernel")) {
            assertEquals(Optional.empty(), v.locate(Path.of(p)), p);
        }
    }

    @Test
    void aFileBoundOverANameHidesTheHostsFile() {
        SandboxView v = view("--ro-bind", "/dev/null", "/etc/shadow");
        assertEquals(Optional.empty(), v.locate(Path.of("/etc/shadow")), "/etc/shadow is /dev/null to commands");
        assertEquals(Path.of("/etc/passwd"), v.locate(Path.of("/etc/passwd")).orElseThrow().host());
    }

    @Test
    void remountReadOnlyTakesTheWritesOfTheMountHoldingThePath() throws IOException {
        SandboxView v = view("--remount-ro", work.toString());
        assertFalse(v.locate(work.resolve("a")).orElseThrow().writable());
        assertTrue(v.locate(Path.of("/tmp/a")).orElseThrow().writable(), "other mounts keep their flags");
    }

    @Test
    void pathsThatAreNotNormalOrAbsoluteHaveNoPlace() throws IOException {
        SandboxView v = view();
        assertEquals(Optional.empty(), v.locate(work.resolve("a/../b")));
        assertEquals(Optional.empty(), v.locate(work.resolve("./b")));
        assertEquals(Optional.empty(), v.locate(Path.of("relative/b")));
    }

    @Test
    void aFileBoundOverAFileOrASourceThroughALinkHasNoPlace() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("work"));
        SandboxView v = view("--ro-bind", "/dev/null", "/etc/shadow", "--bind", link.toString(), "/mnt/w");
        assertEquals(Optional.empty(), v.locate(Path.of("/etc/shadow")));
        assertEquals(Optional.empty(), v.locate(Path.of("/mnt/w/a")));
    }

    @Test
    void anOptionItDoesNotKnowGivesNoViewAtAll() throws IOException {
        assertEquals(Optional.empty(), SandboxView.of(options("--symlink", "/a", "/b")));
        assertEquals(Optional.empty(), SandboxView.of(options("--bind", "/only-one")));
        List<String> noStart = new ArrayList<>(options());
        int i = noStart.indexOf("--chdir");
        noStart.remove(i + 1);
        noStart.remove(i);
        assertEquals(Optional.empty(), SandboxView.of(noStart));
    }

    @Test
    void theDirectoriesOnTheWayThroughAReadOnlyTmpfsAreAnsweredAndNothingElseInIt() throws IOException {
        Path home = Files.createDirectories(dir.resolve("home")).toRealPath();
        Path project = Files.createDirectories(home.resolve("user/project")).toRealPath();
        Files.createDirectories(home.resolve("user/.ssh"));
        List<String> a = new ArrayList<>(List.of("--ro-bind", "/", "/", "--tmpfs", home.toString(),
                "--bind", project.toString(), project.toString()));
        List<String> sealed = new ArrayList<>(a);
        sealed.addAll(List.of("--remount-ro", home.toString(), "--chdir", project.toString()));
        SandboxView v = SandboxView.of(sealed).orElseThrow();
        assertEquals(Optional.of(home), v.hostPlace(home), "the tmpfs's own root");
        assertEquals(Optional.of(home.resolve("user")), v.hostPlace(home.resolve("user")), "made on the way to the project");
        assertEquals(Optional.of(project.resolve("a")), v.hostPlace(project.resolve("a")));
        assertEquals(Optional.empty(), v.hostPlace(home.resolve("user/.ssh")), "hidden: not in the sandbox at all");

        a.addAll(List.of("--chdir", project.toString()));
        SandboxView writableTmpfs = SandboxView.of(a).orElseThrow();
        assertEquals(Optional.empty(), writableTmpfs.hostPlace(home.resolve("user")),
                "in a tmpfs commands can write, a directory on the way may have been replaced");
    }
}
