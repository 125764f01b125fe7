package dev.airlock.local;

import dev.airlock.StdinMode;
import dev.airlock.settings.Settings;

/**
 * The local backend's settings.
 *
 * <table>
 *   <caption>local settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>airlock.local.stdin-mode</td><td>pipe|payload</td><td>pipe</td>
 *       <td>payload stages stdin as a 0600 file like the cloud backends do (for testing that path)</td></tr>
 *   <tr><td>airlock.local.env-mode</td><td>native|staged</td><td>native</td>
 *       <td>staged sends the children's variables in a staged env script like the remote backends do
 *       (for testing that path)</td></tr>
 * </table>
 */
record LocalSettings(StdinMode stdinMode, boolean nativeEnv) {
    static final String STDIN_MODE = "airlock.local.stdin-mode";
    static final String ENV_MODE = "airlock.local.env-mode";

    static LocalSettings from(Settings s) {
        StdinMode mode = "payload".equals(s.getChoice(STDIN_MODE, "pipe", "pipe", "payload")) ? StdinMode.PAYLOAD : StdinMode.PIPE;
        boolean nativeEnv = "native".equals(s.getChoice(ENV_MODE, "native", "native", "staged"));
        return new LocalSettings(mode, nativeEnv);
    }
}
