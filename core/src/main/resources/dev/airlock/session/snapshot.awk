# The session's variables, with awk that every target has (busybox, mawk, gawk); lines starting
# with '#' are dropped before the program is sent. m=dump prints the environment the shell got at
# launch, one NAME=ENCODED line each; m=save reads that dump and the names the session owned
# ("+NAME" lines) on stdin and prints the snapshot's variable part: the variables the session set
# or changed (export), those it removed (unset), the names it owns now and the working directory.
# x holds the names never saved (Airlock's own), space-separated. LC_ALL and PATH are run as C and
# a safe PATH for awk itself, so their real values come in __AIRLOCK_V_LC_ALL / __AIRLOCK_V_PATH
# ("x" + value when set, empty when not).
function skip(n) { return n !~ /^[A-Za-z_][A-Za-z0-9_]*$/ || n ~ /^(AIRLOCK_|__AIRLOCK|__airlock)/ || index(x, " " n " ") > 0 }
function has(n) { return n == "LC_ALL" || n == "PATH" ? ENVIRON["__AIRLOCK_V_" n] != "" : (n in ENVIRON) }
function val(n) { return n == "LC_ALL" || n == "PATH" ? substr(ENVIRON["__AIRLOCK_V_" n], 2) : ENVIRON[n] }
function enc(s,   r, i) { r = ""; while ((i = match(s, /[\\\n]/)) > 0) { r = r substr(s, 1, i - 1) (substr(s, i, 1) == "\\" ? "\\\\" : "\\n"); s = substr(s, i + 1) } return r s }
function q(s,   r, i) { r = ""; while ((i = index(s, "'")) > 0) { r = r substr(s, 1, i - 1) "'\\''"; s = substr(s, i + 1) } return "'" r s "'" }
m == "dump" { next }
substr($0, 1, 1) == "+" { own[substr($0, 2)] = 1; next }
{ i = index($0, "="); if (i > 1) base[substr($0, 1, i - 1)] = substr($0, i + 1) }
END {
  if (m == "dump") { for (n in ENVIRON) if (!skip(n) && has(n)) print n "=" enc(val(n)); exit }
  o = ""
  for (n in ENVIRON) {
    if (skip(n) || !has(n)) continue
    v = val(n)
    if ((n in own) || !(n in base) || base[n] != enc(v)) { print "export " n "=" q(v); o = o "+" n "\n" }
  }
  for (n in base) if (!skip(n) && !has(n)) print "unset " n
  for (n in own) if (!skip(n) && !has(n) && !(n in base)) print "unset " n
  print "__airlock_owned=" q(o)
  print "__airlock_cwd=" q(ENVIRON["__AIRLOCK_CWD"])
}
