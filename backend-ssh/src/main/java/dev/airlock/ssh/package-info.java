/**
 * The {@code ssh} backend: commands and files on a remote host over SSH, with JSch (the mwiede
 * fork). {@link dev.airlock.ssh.SshProvider} is found through ServiceLoader; settings are in
 * {@code SshSettings}.
 *
 * <ul>
 *   <li>One exec channel per command (PIPE stdin; its end is an SSH EOF), from a small pool of
 *       connections that each carry at most {@code airlock.ssh.channels-per-connection} channels.</li>
 *   <li>Each command runs through {@code sh -c} explicitly, whatever the login shell (fish and
 *       tcsh included), exec'd in the process sshd started (no wrapper stays its parent, so the
 *       status is the command's own); the core's launcher record names its process group. The exit status returns with the server's exit-status, then the output grace
 *       applies. Timeouts, cancels and a lost connection are the core's checked process-group
 *       kill, each step a line to one {@code sh} kept running per environment (the core's
 *       {@code ControlShell}: no login, so a slow {@code ~/.bashrc} cannot delay a KILL), or an
 *       exec of its own over a fresh connection once that shell is gone.</li>
 *   <li>Environment values travel in the core's staged 0600 file, never in the command text.</li>
 *   <li>Anything a non-interactive login prints to stdout (a noisy {@code .bashrc}) before the
 *       launcher record is dropped by the core.</li>
 * </ul>
 */
package dev.airlock.ssh;
