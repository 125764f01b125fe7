package dev.airlock.safety;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The write tiers on concrete paths and on patterns, without a target. */
class ProtectedPathsTest {
    private static final ProtectedPaths RULES = GuardTables.RULES;

    private static Tier tier(String path, Access access) {
        return RULES.classify(PathPattern.of(path, null).orElseThrow(), access).tier();
    }

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource(delimiter = '|', textBlock = """
            /home/dev/.ssh/authorized_keys     | WRITE | HARD
            /home/dev/.ssh/id_rsa              | WRITE | HARD
            /home/dev/.ssh/id_ed25519          | WRITE | HARD
            /home/dev/.netrc                   | WRITE | HARD
            /home/dev/.pgpass                  | WRITE | HARD
            /home/dev/.npmrc                   | WRITE | HARD
            /home/dev/.pypirc                  | WRITE | HARD
            /home/dev/.git-credentials         | WRITE | HARD
            /home/dev/.ssh/known_hosts         | WRITE | HARD
            /home/dev/.aws/credentials         | WRITE | HARD
            /home/dev/.gnupg/pubring.kbx       | WRITE | HARD
            /home/dev/.kube/config             | WRITE | HARD
            /home/dev/.docker/config.json      | WRITE | HARD
            /home/dev/.azure/accessTokens.json | WRITE | HARD
            /home/dev/.config/gh/hosts.yml     | WRITE | HARD
            /home/dev/.config/gcloud/x.db      | WRITE | HARD
            /srv/airlock/home/.ssh/id_rsa      | WRITE | HARD
            /srv/airlock/airlock.properties    | WRITE | HARD
            /srv/airlock/approvals.list        | WRITE | HARD
            /srv/airlock/.env                  | WRITE | HARD
            /etc/sudoers                       | WRITE | HARD
            /etc/passwd                        | WRITE | HARD
            /etc/shadow                        | WRITE | HARD
            /etc/sudoers.d/agent               | WRITE | HARD
            /etc/systemd/system/x.service      | WRITE | HARD
            /dev/sda                           | WRITE | HARD
            /home/dev/.ssh/config              | WRITE | APPROVAL
            /srv/airlock/home/.ssh/config      | WRITE | APPROVAL
            /home/dev/.ssh/config.d/work       | WRITE | HARD
            /home/dev/.ssh                     | WRITE | HARD
            /home/dev/.ssh                     | MKDIR | FREE
            /home/dev/.ssh/keys                | MKDIR | HARD
            /home/dev                          | TREE  | HARD
            /home                              | TREE  | HARD
            /srv/airlock                       | TREE  | HARD
            /home/dev/project                  | TREE  | FREE
            /home/dev/.ssh                     | INTO  | HARD
            /home/dev/.config                  | WRITE | FREE
            /home/dev/.bashrc                  | WRITE | FREE
            /home/dev/.ssh.bak                 | WRITE | FREE
            /home/other/.ssh/id_rsa            | WRITE | FREE
            /etc/hosts                         | WRITE | FREE
            /srv/airlock/home/notes.txt        | WRITE | FREE
            /dev/null                          | WRITE | FREE
            /dev/stdout                        | WRITE | FREE
            /dev/stderr                        | WRITE | FREE
            /dev/fd/3                          | WRITE | FREE
            /tmp/x                             | WRITE | FREE
            """)
    void tierOfPath(String path, Access access, Tier expected) {
        assertEquals(expected, tier(path, access));
    }

    @Test
    void approvalIsJudgedBeforeTheSshDirectoryButOnlyForTheExactPath() {
        assertEquals(Tier.APPROVAL, tier("/home/dev/.ssh/./config", Access.WRITE));
        assertEquals(Tier.APPROVAL, tier("/home/dev/.ssh/x/../config", Access.WRITE));
        // A pattern that may name the config may also name a key beside it: hard.
        PathPattern glob = PathPattern.of("/home/dev/.ssh/conf" + Marks.STAR, null).orElseThrow();
        assertEquals(Tier.HARD, RULES.classify(glob, Access.WRITE).tier());
    }

    @Test
    void unknownTailsAreJudgedByWhatIsKnown() {
        // ~/.ssh/$X: inside a credential directory whatever X is.
        assertEquals(Tier.HARD, RULES.classify(PathPattern.of("/home/dev/.ssh/" + Marks.UNKNOWN, null).orElseThrow(), Access.WRITE).tier());
        // ~/.net$X may be ~/.netrc.
        assertEquals(Tier.HARD, RULES.classify(PathPattern.of("/home/dev/.net" + Marks.UNKNOWN, null).orElseThrow(), Access.WRITE).tier());
        // ~/$X may be ~/.ssh/..., so writing it asks (issue 31); rm -r ~/$X may remove the home itself.
        assertEquals(Tier.APPROVAL, RULES.classify(PathPattern.of("/home/dev/" + Marks.UNKNOWN, null).orElseThrow(), Access.WRITE).tier());
        // Below a place that holds nothing protected, a computed name stays free.
        assertEquals(Tier.FREE, RULES.classify(PathPattern.of("/home/dev/.cache/" + Marks.UNKNOWN, null).orElseThrow(), Access.WRITE).tier());
        assertEquals(Tier.FREE, RULES.classify(PathPattern.of("/work/proj/out/" + Marks.UNKNOWN + ".log", null).orElseThrow(), Access.WRITE).tier());
        assertEquals(Tier.HARD, RULES.classify(PathPattern.of("/home/dev/" + Marks.UNKNOWN, null).orElseThrow(), Access.TREE).tier());
        // $X/.ssh/id_rsa: nothing is known.
        assertTrue(PathPattern.of(Marks.UNKNOWN + "/.ssh/id_rsa", null).isEmpty());
    }

    @Test
    void relativePathsWaitForTheTarget() {
        assertEquals(Tier.FREE, tier(".ssh/id_rsa", Access.WRITE));
        assertEquals(Tier.HARD, tier("/home/dev/proj/../.ssh/id_rsa", Access.WRITE));
    }

    @Test
    void safeRootsKeepWritesInside() {
        ProtectedPaths rules = new ProtectedPaths(List.of("/home/dev"), List.of("/etc"), List.of("/srv/airlock"),
                List.of("/work"), List.of("/tmp/airlock-priv"));
        assertTrue(rules.hasSafeRoots());
        assertTrue(rules.insideSafeRoots(PathPattern.concrete("/work/proj/a.txt")));
        assertTrue(rules.insideSafeRoots(PathPattern.concrete("/work")));
        assertTrue(rules.insideSafeRoots(PathPattern.concrete("/dev/null")));
        assertTrue(rules.insideSafeRoots(PathPattern.concrete("/tmp/airlock-priv/tmp/x")));
        assertFalse(rules.insideSafeRoots(PathPattern.concrete("/tmp/x")));
        assertFalse(rules.insideSafeRoots(PathPattern.concrete("/workshop/x")));
        assertFalse(rules.insideSafeRoots(PathPattern.of("/w" + Marks.STAR + "/x", null).orElseThrow()));
        assertFalse(RULES.hasSafeRoots());
    }

    @Test
    void globMatchingFollowsShellRules() {
        assertTrue(PathPattern.matches(".ss" + Marks.QUESTION, ".ssh"));
        assertTrue(PathPattern.matches(Marks.BRACKET + ".]ssh", ".ssh"));
        assertTrue(PathPattern.matches("id_" + Marks.STAR, "id_rsa"));
        assertFalse(PathPattern.matches("id_" + Marks.STAR, "known_hosts"));
        assertFalse(PathPattern.matches(".ssh", ".sSh"));
    }

    /** Each hard verdict says why it denies, and the message the user reads is chosen by that, never by its wording. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /home/dev/.ssh/id_rsa            | PROTECTED
            /etc/passwd                      | PROTECTED
            /srv/airlock/airlock.properties  | PROTECTED
            /dev/sda                         | DEVICE
            /dev/*                           | DEVICE
            """)
    void aHardVerdictNamesItsDenial(String path, ProtectedPaths.Denial denial) {
        ProtectedPaths.Verdict v = RULES.classify(PathPattern.of(path, null).orElseThrow(), Access.WRITE);
        assertEquals(Tier.HARD, v.tier());
        assertEquals(denial, v.denial(), v.reason());
    }

    @Test
    void anSshConfigTheSandboxKeepsReadOnlyIsDeniedAsSuchAndOtherwiseAsked() {
        PathPattern config = PathPattern.of("/home/dev/.ssh/config", null).orElseThrow();
        ProtectedPaths sandboxed = new ProtectedPaths(List.of("/home/dev"), List.of("/etc"), List.of(), List.of(), List.of(),
                List.of(), true);
        ProtectedPaths.Verdict v = sandboxed.classify(config, Access.WRITE);
        assertEquals(Tier.HARD, v.tier());
        assertEquals(ProtectedPaths.Denial.READ_ONLY_IN_SANDBOX, v.denial());
        ProtectedPaths.Verdict asked = RULES.classify(config, Access.WRITE);
        assertEquals(Tier.APPROVAL, asked.tier());
        assertEquals(null, asked.denial());
    }
}
