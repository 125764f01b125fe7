package dev.airlock.docker;

import dev.airlock.ConfigurationException;
import dev.airlock.Environment;
import dev.airlock.Environments;
import dev.airlock.ExecRequest;
import dev.airlock.ExecResult;
import dev.airlock.settings.Settings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.InputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hardening options against the real daemon, as seen from inside the container (or the daemon's refusal). */
@ExtendWith(DockerFixture.class)
class DockerHardeningTest {

    private static String sh(Environment env, String command) {
        ExecResult r = env.exec(ExecRequest.builder(command).build());
        assertEquals(0, r.exitCode(), command + ": " + r.stderr().text());
        return r.stdout().text().strip();
    }

    @Test
    void aReadOnlyRootKeepsItsTmpfsMountsWritable() throws Exception {
        try (Environment env = Environments.open(DockerFixture.settings(DockerHardening.READ_ONLY, "true",
                DockerHardening.TMPFS, "/tmp:size=16m,mode=1777,/root:size=8m"))) {
            ExecResult etc = env.exec(ExecRequest.builder("touch /etc/airlock-probe").build());
            assertTrue(etc.exitCode() != 0 && etc.stderr().text().contains("Read-only"), etc.stderr().text());
            assertTrue(sh(env, "grep ' /tmp ' /proc/mounts").matches("tmpfs /tmp tmpfs rw.*size=16384k.*"),
                    sh(env, "grep ' /tmp ' /proc/mounts"));
            assertTrue(sh(env, "grep ' /root ' /proc/mounts").contains("size=8192k"));
            env.files().write("/tmp/data/f.bin", new byte[] {1, 0, 2});
            try (InputStream in = env.files().read("/tmp/data/f.bin")) {
                assertArrayEquals(new byte[] {1, 0, 2}, in.readAllBytes());
            }
        }
    }

    @Test
    void ulimitsAndShmSizeApply() {
        try (Environment env = Environments.open(DockerFixture.settings(DockerHardening.ULIMITS, "nofile=512:1024,nproc=300",
                DockerHardening.SHM_SIZE, "32m"))) {
            // The container gets both limits. A command gets the hard one, the bound that matters (a
            // command may raise its soft limit up to it anyway); its soft nofile is sometimes the hard
            // one: runc 1.1's exec (Debian 12's) restores the limit its Go runtime raised, after applying the spec's.
            String files = sh(env, "grep 'Max open files' /proc/1/limits");
            assertTrue(files.matches("Max open files\\s+512\\s+1024\\s+files"), "[" + files + "]");
            String own = sh(env, "grep 'Max open files' /proc/self/limits");
            assertTrue(own.matches("Max open files\\s+(512|1024)\\s+1024\\s+files"), "[" + own + "]");
            String processes = sh(env, "grep 'Max processes' /proc/self/limits");
            assertTrue(processes.matches("Max processes\\s+300\\s+300\\s+processes"), "[" + processes + "]");
            String shm = sh(env, "grep ' /dev/shm ' /proc/mounts");
            assertTrue(shm.contains("size=32768k"), "[" + shm + "]");
        }
    }

    @Test
    void aDeviceIsMappedIn() {
        try (Environment env = Environments.open(DockerFixture.settings(DockerHardening.DEVICES, "/dev/null:/dev/airlock-null:rw"))) {
            assertEquals("ok", sh(env, "[ -c /dev/airlock-null ] && echo x > /dev/airlock-null && echo ok"));
        }
    }

    @Test
    void thePlatformIsTheImagesOrARefusalNamingTheSetting() {
        try (Environment env = Environments.open(DockerFixture.settings(DockerHardening.PLATFORM, "linux/amd64"))) {
            assertEquals("x86_64", sh(env, "uname -m"));
        }
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> Environments.open(DockerFixture.settings(DockerHardening.PLATFORM, "linux/s390x")));
        assertOneLineNaming(DockerHardening.PLATFORM, e);
    }

    /** Where the daemon cannot honour the option (no GPU, no xfs quota here), it refuses in one line naming the setting. */
    @Test
    void gpusAndAStorageQuotaApplyOrAreRefusedByName() {
        for (String[] option : new String[][] {{DockerHardening.GPUS, "all"}, {DockerHardening.STORAGE_SIZE, "1g"}}) {
            Settings s = DockerFixture.settings(option[0], option[1]);
            try (Environment env = Environments.open(s)) {
                assertEquals("up", sh(env, "echo up"), "the daemon supports " + option[0] + " here");
            } catch (ConfigurationException e) {
                assertOneLineNaming(option[0], e);
            }
        }
    }

    private static void assertOneLineNaming(String key, ConfigurationException e) {
        assertTrue(e.getMessage().contains(key), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
    }
}
