#!/bin/bash
# Interleaved timings of one sandboxed `bash -c true` by five launch chains (issue 35, the local
# agent turn; bench/analysis.md, "The local turn's floor"). Root only (the plan's `unshare --mount`
# prefix, as LocalBackend runs it as root). Usage: bench/local-launch-chains.sh [ROUNDS]
#   plan     the sandbox LocalBackend starts per step: the default plan's mounts (a profile home
#            with its credential paths bound read-only) under /tmp/pl
#   minimal  the same chain with only bwrap's own /, /dev and /proc
#   shared   nsenter into one long-lived sandbox per environment (its pid namespace shared)
#   inside   bwrap run inside that long-lived sandbox's mount namespace (a fresh pid namespace)
#   plain    bash -c true, no sandbox
# It prints each chain's mount count and whether a `setsid` job outlives its step.
set -u
H=/tmp/pl/home; P=/tmp/pl
mkdir -p $P/sandbox-tmp $H/.config/gh $H/.config/gcloud $H/.ssh $H/.aws $H/.gnupg $H/.kube $H/.docker $H/.azure
(cd $H && touch .netrc .pgpass .npmrc .pypirc .git-credentials)
CRED=""; for c in .config .ssh; do CRED="$CRED --bind $H/$c $H/$c"; done
for c in .ssh .aws .gnupg .kube .docker .azure .config/gh .config/gcloud .netrc .pgpass .npmrc .pypirc .git-credentials; do CRED="$CRED --ro-bind $H/$c $H/$c"; done
CRED="$CRED --ro-bind /dev/null /etc/shadow --ro-bind /dev/null /etc/gshadow --ro-bind /dev/null /etc/shadow- --ro-bind /dev/null /etc/gshadow-"
BASE="--bind $P/sandbox-tmp /tmp --tmpfs /run --tmpfs /root --bind $P $P --bind $H $H --bind $P/sandbox-tmp $P/sandbox-tmp $CRED --remount-ro /root"
PLAN="--ro-bind / / --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys $BASE"
NS="--unshare-pid --unshare-ipc --unshare-uts --unshare-user-try --cap-drop ALL --die-with-parent"
TAIL="$NS --chdir /tmp --cap-add CAP_SETFCAP -- /usr/bin/unshare --user --map-current-user -- /usr/bin/setpriv --bounding-set=-all -- /bin/sh -c"
READY="printf '\001' >&2; exec \"\$@\""
plan()    { unshare --mount --propagation private -- bwrap $PLAN $TAIL "$READY" airlock /usr/bin/bash -c "$1"; }
minimal() { unshare --mount --propagation private -- bwrap --ro-bind / / --dev /dev --proc /proc $TAIL "$READY" airlock /usr/bin/bash -c "$1"; }
plain()   { /usr/bin/bash -c "$1"; }
unshare --mount --propagation private -- bwrap $PLAN $NS -- sleep 1003 & A=$!
unshare --mount --propagation private -- bwrap --ro-bind / / --dev /dev --bind /proc /proc $BASE --unshare-ipc --unshare-uts --unshare-user-try --cap-drop ALL --die-with-parent -- sleep 1004 & B=$!
sleep 1; SP=$(pgrep -f "^sleep 1003$"); MP=$(pgrep -f "^sleep 1004$")
shared()  { nsenter -t $SP --user --mount --pid --ipc --uts --preserve-credentials -- unshare --user --map-current-user -- setpriv --bounding-set=-all -- /bin/sh -c "$READY" airlock /usr/bin/bash -c "$1"; }
inside()  { nsenter --mount=/proc/$MP/ns/mnt -- bwrap --bind / / --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys $TAIL "$READY" airlock /usr/bin/bash -c "$1"; }
for f in plan minimal shared inside; do echo "$f: mounts $($f 'wc -l < /proc/self/mountinfo' 2>/dev/null), setsid job outlives: $($f 'setsid sleep 91 >/dev/null 2>&1 & :' 2>/dev/null; sleep 0.3; pgrep -fc '^sleep 91$'; pkill -f '^sleep 91$')"; done
declare -A tot; N=${1:-30}
for i in $(seq $N); do for f in plan minimal shared inside plain; do t0=$(date +%s%N); $f true 2>/dev/null; t1=$(date +%s%N); tot[$f]+=" $(( (t1-t0)/1000 ))"; done; done
for f in plan minimal shared inside plain; do echo "$f median $(echo ${tot[$f]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') us"; done
kill $A $B; pkill -f "^sleep 100[34]$"
