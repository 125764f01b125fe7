package dev.airlock.ssh;

import com.jcraft.jsch.UIKeyboardInteractive;
import com.jcraft.jsch.UserInfo;
import dev.airlock.settings.Secret;

/**
 * Answers a server's password questions with {@code airlock.ssh.password}, as a user at a terminal
 * would: every keyboard-interactive prompt that does not echo (PAM's {@code Password:}) gets the
 * password, and so does the {@code password} method. A round with a prompt that echoes (a user
 * name, a one-time code shown as typed) cannot be answered from a setting, so it is cancelled and
 * the login fails with the usual one-line authentication error. The password is given once per
 * login: a server that asks again after a wrong one (JSch would answer until sshd's
 * {@code MaxAuthTries} disconnects) is refused, so a wrong setting costs one failed attempt, not
 * six, against an account lockout such as {@code pam_faillock}. Never asks about host keys (strict checking decides) or
 * key passphrases (their own settings do). The password never reaches a log or an exception.
 */
final class PasswordPrompts implements UserInfo, UIKeyboardInteractive {
    private final Secret password;
    private boolean given;

    PasswordPrompts(Secret password) {
        this.password = password;
    }

    @Override
    public String[] promptKeyboardInteractive(String destination, String name, String instruction, String[] prompt, boolean[] echo) {
        for (boolean shown : echo) {
            if (shown) {
                return null;
            }
        }
        if (!giveOnce()) {
            return null;
        }
        String[] answers = new String[prompt.length];
        java.util.Arrays.fill(answers, password.reveal());
        return answers;
    }

    @Override
    public boolean promptPassword(String message) {
        return giveOnce();
    }

    /** True the first time only: the one attempt this login makes with the password. */
    private synchronized boolean giveOnce() {
        boolean first = !given;
        given = true;
        return first;
    }

    @Override
    public String getPassword() {
        return password.reveal();
    }

    @Override
    public String getPassphrase() {
        return null;
    }

    @Override
    public boolean promptPassphrase(String message) {
        return false;
    }

    @Override
    public boolean promptYesNo(String message) {
        return false;
    }

    @Override
    public void showMessage(String message) {
        // a banner or a host-key warning: strict checking has decided already; nothing to show it to
    }
}
