# Runs a command under a new pseudo-terminal (its controlling terminal, so /dev/tty is the pty)
# with stdin from a file, and types ANSWER each time the approval prompt appears ("-": never).
# Prints everything the command wrote to the terminal, then "[prompts=N]"; exits with its status.
import os
import pty
import select
import sys
import time

answer, payload, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
PROMPT = b"or [d]eny?"
pid, master = pty.fork()
if pid == 0:
    fd = os.open(payload, os.O_RDONLY)
    os.dup2(fd, 0)
    os.execvp(cmd[0], cmd)
out = b""
answered = 0
deadline = time.time() + 120
while True:
    if time.time() > deadline:
        os.kill(pid, 9)
        break
    ready, _, _ = select.select([master], [], [], 0.1)
    if master in ready:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    if answer != "-" and answered < out.count(PROMPT):
        os.write(master, (answer + "\n").encode())
        answered += 1
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.stdout.write("\n[prompts=%d]\n" % out.count(PROMPT))
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
