# airlock doctor's probe: looks at what a child of this environment sees, and changes nothing.
# Output: key=value records separated by NUL. Stdin holds a marker line; $AIRLOCK_DOCTOR_MARKER
# another; neither may show up in any process's argv.
p() { printf '%s=%s\0' "$1" "$2"; }
t() { if "$@"; then echo 1; else echo 0; fi; }
# 1 when PATH lies on a read-only mount (the longest mount point that contains it decides)
ro() {
    [ -r /proc/self/mountinfo ] || { echo ?; return; }
    awk -v path="$1" '
        { mp = $5; gsub(/\\040/, " ", mp)
          if (path == mp || mp == "/" || index(path, mp "/") == 1) {
              if (length(mp) > best) { best = length(mp); opts = $6 } } }
        END { n = split(opts, o, ","); r = 0; for (i = 1; i <= n; i++) if (o[i] == "ro") r = 1; print r }
    ' /proc/self/mountinfo 2>/dev/null || echo ?
}
# the type of the filesystem mounted exactly at $1 (the topmost such mount), or nothing
fstype() {
    [ -r /proc/self/mountinfo ] || return 0
    awk -v path="$1" '
        { mp = $5; gsub(/\\040/, " ", mp)
          if (mp == path) { for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); break } } }
        END { print t }
    ' /proc/self/mountinfo 2>/dev/null
}
# the dir of its filesystem that the mount exactly at $1 shows (the topmost such mount), or nothing
mountroot() {
    [ -r /proc/self/mountinfo ] || return 0
    awk -v path="$1" '
        { mp = $5; gsub(/\\040/, " ", mp); r = $4; gsub(/\\040/, " ", r)
          if (mp == path) { root = r } }
        END { print root }
    ' /proc/self/mountinfo 2>/dev/null
}
# the type of the filesystem that holds $1 (the longest mount point containing it)
fsof() {
    [ -r /proc/self/mountinfo ] || return 0
    awk -v path="$1" '
        { mp = $5; gsub(/\\040/, " ", mp)
          if (path == mp || mp == "/" || index(path, mp "/") == 1) {
              if (length(mp) >= best) { best = length(mp); for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); break } } } }
        END { print t }
    ' /proc/self/mountinfo 2>/dev/null
}
shim() { [ -f "$1" ] && head -n 3 "$1" 2>/dev/null | grep -q '^# airlock-shim'; }
p uid "$(id -u)"
p home "${HOME:-}"
p real_home "${AIRLOCK_REAL_HOME:-}"
if [ -n "${AIRLOCK_REAL_HOME:-}" ]; then
    p real_home_w "$(t [ -w "$AIRLOCK_REAL_HOME" ])"
    p real_home_ro "$(ro "$AIRLOCK_REAL_HOME")"
    p real_home_fs "$(fsof "$AIRLOCK_REAL_HOME")"
fi
c=$(command -v crontab 2>/dev/null)
p crontab "$c"
[ -n "$c" ] && p crontab_shim "$(t shim "$c")"
for r in /usr/bin/crontab /bin/crontab /usr/local/bin/crontab /usr/sbin/crontab; do
    if [ -x "$r" ] && ! shim "$r"; then p crontab_real "$r"; break; fi
done
for s in /var/spool/cron/crontabs /var/spool/cron/tabs /var/spool/cron; do
    if [ -d "$s" ]; then p spool "$s"; p spool_ro "$(ro "$s")"; break; fi
done
c=$(command -v systemctl 2>/dev/null)
p systemctl "$c"
[ -n "$c" ] && p systemctl_shim "$(t shim "$c")"
p dbus "${DBUS_SESSION_BUS_ADDRESS:-}"
p xdg_runtime "${XDG_RUNTIME_DIR:-}"
for b in "${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/bus}" "/run/user/$(id -u)/bus"; do
    if [ -n "$b" ] && [ -S "$b" ]; then p bus_socket "$b"; p bus_socket_w "$(t [ -w "$b" ])"; break; fi
done
p tmpdir "${TMPDIR:-}"
[ -n "${TMPDIR:-}" ] && p tmpdir_mode "$(stat -c %a "$TMPDIR" 2>/dev/null || ls -ld "$TMPDIR" 2>/dev/null | cut -c1-10)"
p tmp_w "$(t [ -w /tmp ])"
p tmp_ro "$(ro /tmp)"
p root_ro "$(ro /)"
p tmp_fs "$(fstype /tmp)"
p tmp_root "$(mountroot /tmp)"
p run_fs "$(fstype /run)"
if [ -n "${AIRLOCK_DOCTOR_SHARED_TMP:-}" ]; then
    p shared_tmp_fs "$(fstype "$AIRLOCK_DOCTOR_SHARED_TMP")"
    p shared_tmp_ro "$(ro "$AIRLOCK_DOCTOR_SHARED_TMP")"
    p shared_tmp_root "$(mountroot "$AIRLOCK_DOCTOR_SHARED_TMP")"
fi
# host sockets a command could reach: looked at, never connected to
u=$(id -u)
socks=
for s in /run/docker.sock /var/run/docker.sock /run/containerd/containerd.sock /run/podman/podman.sock \
    "/run/user/$u/podman/podman.sock" "/run/user/$u/docker.sock" "/run/user/$u/bus" /run/dbus/system_bus_socket \
    "${SSH_AUTH_SOCK:-}" "${DOCKER_HOST#unix://}"; do
    case $s in /var/run/*) [ -L /var/run ] && continue ;; esac
    if [ -n "$s" ] && [ -S "$s" ] && [ -w "$s" ]; then socks="$socks $s"; fi
done
p sockets "${socks# }"
# listeners in this network namespace: abstract UNIX sockets (a bus, an X server) and TCP ports
# have no path a read-only / could hide; only a network namespace of its own cuts them
if [ -r /proc/net/unix ]; then
    p abstract_listeners "$(awk 'NR > 1 && $4 == "00010000" && substr($8, 1, 1) == "@" { n++ } END { print n + 0 }' /proc/net/unix 2>/dev/null)"
fi
if [ -r /proc/net/tcp ]; then
    p tcp_listeners "$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { n++ } END { print n + 0 }')"
fi
# routes past the loopback, as this network namespace has them: none means no network at all
if [ -r /proc/net/route ]; then
    p routes "$({ awk 'NR > 1 && $1 != "lo" { n++ } END { print n + 0 }' /proc/net/route; awk '$10 != "lo" { n++ } END { print n + 0 }' /proc/net/ipv6_route 2>/dev/null || echo 0; } | awk '{ n += $1 } END { print n + 0 }')"
fi
# under an allowlist: does a server the list does not name answer? (the doctor's own, on the JVM's
# loopback port $AIRLOCK_DOCTOR_UNLISTED_PORT, tried at 127.0.0.1 and at the default gateway)
if [ -n "${AIRLOCK_DOCTOR_UNLISTED_PORT:-}" ] && command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
    gw=$(awk 'NR > 1 && $2 == "00000000" { g = $3; printf "%d.%d.%d.%d", "0x" substr(g, 7, 2), "0x" substr(g, 5, 2), "0x" substr(g, 3, 2), "0x" substr(g, 1, 2); exit }' /proc/net/route 2>/dev/null)
    reached=
    tried=
    for a in 127.0.0.1 $gw; do
        tried="$tried $a"
        got=$(timeout 10 bash -c 'exec 3<>"/dev/tcp/$0/$1" && head -c 64 <&3' "$a" "$AIRLOCK_DOCTOR_UNLISTED_PORT" 2>/dev/null)
        case $got in airlock-doctor-unlisted*) reached="$reached $a" ;; esac
    done
    p unlisted_tried "${tried# }"
    p unlisted_reached "${reached# }"
fi
if [ -r /proc/self/cmdline ]; then
    p procs "$(ls -d /proc/[0-9]* 2>/dev/null | wc -l | tr -d ' ')"
    # the markers reach grep as patterns on stdin; printf is a builtin, so they never enter an argv
    p argv_hits "$({ cat; [ -z "${AIRLOCK_DOCTOR_MARKER:-}" ] || printf '%s\n' "$AIRLOCK_DOCTOR_MARKER"; } | grep -F -l -f - /proc/[0-9]*/cmdline 2>/dev/null | wc -l | tr -d ' ')"
fi
# capabilities held here: with CAP_SYS_ADMIN a command can unmount or remount its way out of a sandbox
[ -r /proc/self/status ] && p cap_eff "$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)"
# whether mounts can be changed: a tmpfs over an empty dir of our own scratch dir, taken off at once
# (the path spelled out each time, so the command guard sees where it is)
if [ -n "${TMPDIR:-}" ] && command -v mount >/dev/null 2>&1 && mkdir "$TMPDIR/.airlock-doctor-mnt-$$" 2>/dev/null; then
    if mount -t tmpfs airlock-doctor "$TMPDIR/.airlock-doctor-mnt-$$" 2>/dev/null; then
        umount "$TMPDIR/.airlock-doctor-mnt-$$" 2>/dev/null; p mount_ok 1
    else
        p mount_ok 0
    fi
    rmdir "$TMPDIR/.airlock-doctor-mnt-$$" 2>/dev/null
fi
# the JVM that runs Airlock: is it visible, and is its environment (with the stripped secrets) readable?
j=${AIRLOCK_DOCTOR_JVM_PID:-}
if [ -n "$j" ] && [ -r "/proc/$j/cmdline" ] && tr '\0' ' ' < "/proc/$j/cmdline" 2>/dev/null | grep -q java; then
    p jvm_visible 1
    if head -c 1 "/proc/$j/environ" >/dev/null 2>&1; then p jvm_environ 1; else p jvm_environ 0; fi
elif [ -n "$j" ]; then
    p jvm_visible 0
fi
# another exec (started by doctor, its marker in its argv, a marker on its stdin): visible? its stdin readable?
if [ -n "${AIRLOCK_DOCTOR_SIBLING:-}" ] && [ -r /proc/self/cmdline ]; then
    pids=$(printf '%s\n' "$AIRLOCK_DOCTOR_SIBLING" | grep -F -l -f - /proc/[0-9]*/cmdline 2>/dev/null | sed 's|^/proc/||; s|/cmdline$||')
    if [ -n "$pids" ]; then p sibling_visible 1; else p sibling_visible 0; fi
    got=0
    for pid in $pids; do
        if [ "$(head -c ${#AIRLOCK_DOCTOR_SIBLING_IN} "/proc/$pid/fd/0" 2>/dev/null)" = "$AIRLOCK_DOCTOR_SIBLING_IN" ]; then got=1; break; fi
    done
    p sibling_stdin "$got"
fi
# the home of the user database, which ssh-keygen and friends use whatever HOME says
pw=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6)
[ -n "$pw" ] || pw=$(awk -F: -v u="$(id -u)" '$3 == u { print $6; exit }' /etc/passwd 2>/dev/null)
if [ -n "$pw" ]; then p passwd_home "$pw"; p passwd_home_w "$(t [ -w "$pw" ])"; fi
# Airlock's own state and program files on this host: could a command write (or create) one?
if [ -n "${AIRLOCK_DOCTOR_STATE:-}" ]; then
    w=
    # each line: the file, the nearest part of it that exists on the host, and that part's inode there
    while IFS='	' read -r f d ino; do
        [ -n "$f" ] || continue
        [ "$(stat -c %i "$d" 2>/dev/null)" = "$ino" ] && [ -w "$d" ] && w="$w$f "
    done <<AIRLOCK_DOCTOR_STATE_END
$AIRLOCK_DOCTOR_STATE
AIRLOCK_DOCTOR_STATE_END
    p state_w "${w% }"
fi
# the working directory's git metadata: the operator's git runs what its config (core.fsmonitor) and hooks say
g=
if [ -d .git ]; then g=$PWD/.git; elif [ -f .git ]; then g=$(sed -n '1s/^gitdir: *//p' .git 2>/dev/null); fi
case $g in /*|'') ;; *) g=$PWD/$g ;; esac
if [ -n "$g" ] && [ -d "$g" ]; then
    p git_dir "$g"
    p git_config_ro "$(ro "$g/config")"
    p git_hooks_ro "$(ro "$g/hooks")"
fi
# processes whose root this command can open and which is not its own: a way out of a sandbox
o=
for d in /proc/[0-9]*; do
    if [ -e "$d/root/." ] && ! [ "$d/root/." -ef / ]; then o="$o ${d#/proc/}"; fi
done
[ -d /proc/self ] && p foreign_roots "${o# }"
# a job in a session of its own: doctor looks for it (by the marker in its argv) after this exec ended
if [ -n "${AIRLOCK_DOCTOR_SURVIVOR:-}" ] && command -v setsid >/dev/null 2>&1; then
    setsid sh -c 'sleep 60; :' "$AIRLOCK_DOCTOR_SURVIVOR" </dev/null >/dev/null 2>&1 &
    p survivor_started 1
fi
exit 0
