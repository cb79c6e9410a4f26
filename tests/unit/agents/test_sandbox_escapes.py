"""What a cell may try in order to get out, each against bubblewrap and Podman: every attempt is
refused or contained.

Each test plants a real target in its own directory (a reference file, a key in a home
directory, another cell's workspace, a service on the host's loopback, the evaluator's own
process) and, where it makes sense, runs the same command with the backend 'none' as a control:
there the attempt succeeds, so it is the sandbox that stops it, not the command.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rra_tools.agents.sandbox import Backend, disk_use
from rra_tools.agents.sandbox.layout import ETC_FILES
from rra_tools.model.cell import SandboxLimits

from .sandbox_support import SANDBOXES, host_processes, kill_host_processes, run_cell, sandbox_backend

SECRET = "rra-secret-5f0c9e"
MIB = 1 << 20


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> Backend:
    """Each backend under test."""
    return sandbox_backend(request.param)


@pytest.fixture
def bare() -> Backend:
    """The backend 'none' (the host), for the controls."""
    return sandbox_backend("none")


def _script(tmp_path: Path, name: str, text: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / name).write_text(text, encoding="utf-8")


# -- files beside the workspace -------------------------------------------------------------------


def test_references_beside_the_workspace_cannot_be_read(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    refs = tmp_path / "references"
    refs.mkdir()
    (refs / "answers.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    command = f"cat {refs}/answers.txt; cat ../references/answers.txt; ls -a {refs}"
    ran = run_cell(tmp_path, sandbox, command, hidden=[refs])
    assert SECRET not in ran.output
    assert "answers.txt" not in ran.stdout
    assert ran.exit.exit_status != 0
    control = run_cell(tmp_path, bare, command, hidden=[refs])
    assert control.stdout.count(SECRET) == 2


def test_home_and_its_ssh_key_are_not_there(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n", encoding="ascii")
    command = 'cat "$HOME/.ssh/id_rsa"; ls -a "$HOME/.ssh"'
    ran = run_cell(tmp_path, sandbox, command, env={"HOME": str(home)}, hidden=[home])
    assert SECRET not in ran.output
    assert "id_rsa" not in ran.stdout
    control = run_cell(tmp_path, bare, command, env={"HOME": str(home)}, hidden=[home])
    assert SECRET in control.stdout


def test_another_cells_workspace_cannot_be_listed(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    cells = tmp_path / "cells"
    other = cells / "other"
    other.mkdir(parents=True)
    (other / "result.json").write_text(f'{{"value": "{SECRET}"}}\n', encoding="utf-8")
    command = f"ls -a {other}; cat {other}/result.json; echo; echo siblings:; ls -a .."
    ran = run_cell(tmp_path, sandbox, command, workspace=cells / "mine", hidden=[other])
    assert SECRET not in ran.output
    assert sorted(ran.stdout.split("siblings:")[1].split()) == [".", "..", "mine"]
    control = run_cell(tmp_path, bare, command, workspace=cells / "mine", hidden=[other])
    assert SECRET in control.stdout
    assert "other" in control.stdout.split("siblings:")[1].split()


def test_writes_outside_the_workspace_do_not_reach_the_host(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    sibling = tmp_path / "sibling"
    handover = tmp_path / "handover"
    sibling.mkdir()
    handover.mkdir()
    targets = [sibling / "pwned", handover / "pwned"]
    # mkdir -p: in bubblewrap the directories above the workspace are the sandbox's own, so the
    # write may succeed in there; what matters is that nothing reaches the host.
    command = (f"echo x > {targets[0]}; mkdir -p {sibling} && echo x > {targets[0]}; echo x > {targets[1]}; "
               f"ls {sibling}")
    run_cell(tmp_path, sandbox, command, readonly=[handover])
    assert [t for t in targets if t.exists()] == []
    control = run_cell(tmp_path, bare, command, readonly=[handover])
    assert [t for t in targets if t.exists()] == targets, control.output


FILL = """\
for d in / /etc /run /var/tmp /tmp /dev/shm /run/rra/rootfs "$HOME"; do
  i=0
  while [ $i -lt 8 ]; do
    head -c 15M /dev/zero > "$d/fill$i" 2>/dev/null || break
    i=$((i+1))
    echo "$d $i"
  done
done
"""


def test_writes_outside_the_workspace_count_against_a_limit(tmp_path: Path, sandbox: Backend) -> None:
    # Every writable place outside the workspace must be memory (a tmpfs charged to the cell's
    # memory limit), never the host's disk beyond the workspace's quota.
    limits = SandboxLimits(wall_clock_s=20, memory_mib=64, pids=64, disk_mib=20)
    ran = run_cell(tmp_path, sandbox, FILL, limits=limits)
    assert ran.exit.stopped != "timeout", ran.output
    written: dict[str, int] = {}
    for line in ran.stdout.splitlines():
        place, count = line.rsplit(" ", 1)
        written[place] = int(count)
    assert 15 * sum(written.values()) <= 64 + 15, written


# -- the network ----------------------------------------------------------------------------------

CONNECT = """\
import socket, sys
family = socket.AF_UNIX if sys.argv[1].startswith("@") else socket.AF_INET
address = "\\0" + sys.argv[1][1:] if family == socket.AF_UNIX else (sys.argv[1], int(sys.argv[2]))
s = socket.socket(family, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect(address)
except socket.timeout:
    print("timeout")
except OSError as exc:
    print("errno", exc.errno)
else:
    s.settimeout(1)
    try:
        greeting = s.recv(64).decode().strip()
    except OSError:
        greeting = ""  # a TLS server waits for the client to speak first
    print("connected", greeting)
"""


@pytest.fixture
def host_service() -> Iterator[tuple[int, str]]:
    """A service of the host on 127.0.0.1 and on an abstract Unix socket: (port, @name)."""
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"rra-test-{uuid.uuid4().hex[:12]}"
    unix.bind("\0" + name)
    unix.listen(8)
    done = threading.Event()

    def serve(server: socket.socket) -> None:
        server.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"host-service\n")

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in (tcp, unix)]
    for thread in threads:
        thread.start()
    yield tcp.getsockname()[1], "@" + name
    done.set()
    for thread in threads:
        thread.join()
    tcp.close()
    unix.close()


def test_loopback_service_of_the_host_is_refused(tmp_path: Path, sandbox: Backend, bare: Backend,
                                                 host_service: tuple[int, str]) -> None:
    _script(tmp_path, "connect.py", CONNECT)
    command = f"python3 connect.py 127.0.0.1 {host_service[0]}"
    ran = run_cell(tmp_path, sandbox, command)
    # The sandbox's loopback is its own: nothing listens there.
    assert ran.stdout.strip() == f"errno {errno.ECONNREFUSED}", ran.output
    assert run_cell(tmp_path, bare, command).stdout.strip() == "connected host-service"


def test_abstract_unix_socket_of_the_host_is_refused(tmp_path: Path, sandbox: Backend, bare: Backend,
                                                     host_service: tuple[int, str]) -> None:
    # Abstract Unix sockets belong to the network namespace, and need no file to be reached.
    _script(tmp_path, "connect.py", CONNECT)
    command = f"python3 connect.py {host_service[1]}"
    ran = run_cell(tmp_path, sandbox, command)
    assert ran.stdout.strip() == f"errno {errno.ECONNREFUSED}", ran.output
    assert run_cell(tmp_path, bare, command).stdout.strip() == "connected host-service"


def test_public_address_is_unreachable(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "connect.py", CONNECT)
    command = "python3 connect.py 1.1.1.1 443"
    ran = run_cell(tmp_path, sandbox, command)
    # No route at all (not a timeout): the namespace has nothing but its loopback.
    assert ran.stdout.strip() == f"errno {errno.ENETUNREACH}", ran.output
    # The control sees what the host sees, whatever the host's own network is.
    host = subprocess.run([sys.executable, str(tmp_path / "ws" / "connect.py"), "1.1.1.1", "443"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert run_cell(tmp_path, bare, command).stdout.strip() == host.stdout.strip()


DNS = """\
import os, socket, struct
print("resolv.conf", os.path.exists("/etc/resolv.conf"))
try:
    socket.getaddrinfo("example.com", 443)
    print("getaddrinfo resolved")
except socket.gaierror:
    print("getaddrinfo failed")
server = "1.1.1.1"
if os.path.exists("/etc/resolv.conf"):
    for line in open("/etc/resolv.conf"):
        if line.split()[:1] == ["nameserver"]:
            server = line.split()[1]
            break
server = os.environ.get("NAMESERVER", server)
query = struct.pack(">HHHHHH", 0x5241, 0x0100, 1, 0, 0, 0) + b"\\x07example\\x03com\\x00" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
try:
    s.sendto(query, (server, 53))
    s.recv(512)
    print("nameserver answered")
except OSError:
    print("nameserver unreachable")
"""


def _nameserver() -> str:
    try:
        for line in Path("/etc/resolv.conf").read_text(encoding="utf-8").splitlines():
            if line.split()[:1] == ["nameserver"]:
                return line.split()[1]
    except OSError:
        pass
    return "1.1.1.1"


def test_dns_does_not_resolve(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "dns.py", DNS)
    # The host's own nameserver, asked directly (the cell has no resolv.conf to find it in).
    env = {"NAMESERVER": _nameserver()}
    ran = run_cell(tmp_path, sandbox, "python3 dns.py", env=env)
    assert ran.stdout.splitlines() == ["resolv.conf False", "getaddrinfo failed", "nameserver unreachable"], ran.output
    host = subprocess.run([sys.executable, str(tmp_path / "ws" / "dns.py")], capture_output=True, text=True,
                          timeout=30, check=False, env={**os.environ, **env})
    assert run_cell(tmp_path, bare, "python3 dns.py", env=env).stdout == host.stdout


# -- processes and limits -------------------------------------------------------------------------

BOMB = """\
import os, sys, time
n = 0
try:
    while n < int(sys.argv[1]):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        n += 1
except OSError as exc:
    print("refused after", n, exc.errno, flush=True)
else:
    print("forked", n, flush=True)
"""


def test_fork_bomb_is_contained(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "bomb.py", BOMB)
    marker = f"bomb-{uuid.uuid4().hex[:12]}"
    limits = SandboxLimits(wall_clock_s=15, memory_mib=256, pids=32, disk_mib=20)
    try:
        ran = run_cell(tmp_path, sandbox, f"python3 bomb.py 2000 {marker}", limits=limits)
        words = ran.stdout.split()
        assert words[:2] == ["refused", "after"], ran.output
        assert int(words[2]) < 32
        assert int(words[3]) == errno.EAGAIN
        assert ran.exit.stopped is None
        assert ran.exit.wall_s < 15
        assert host_processes(marker) == []
        if sandbox.name == "bwrap":
            # bubblewrap's limit is the cell's control group, which counts what it refused.
            assert any(e.startswith("the process limit (32) refused") for e in ran.exit.escapes), ran.exit.escapes
        # The host still forks (and the control's 40 children, above the cell's 32, all start).
        control = run_cell(tmp_path, bare, f"python3 bomb.py 40 {marker}", limits=limits)
        assert control.stdout.split() == ["forked", "40"]
    finally:
        kill_host_processes(marker)


HOG = """\
chunks = []
for i in range(16):
    chunks.append(b"x" * (16 << 20))
    print(16 * (i + 1), flush=True)
print("survived")
"""


def test_memory_beyond_the_limit_is_killed(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "hog.py", HOG)
    limits = SandboxLimits(wall_clock_s=20, memory_mib=64, pids=64, disk_mib=20)
    ran = run_cell(tmp_path, sandbox, "python3 hog.py", limits=limits)
    assert "survived" not in ran.stdout
    assert (ran.exit.stopped, ran.exit.limit) == ("limit", "memory"), ran.output
    # Unsandboxed, a memory limit is an address-space limit (ulimit -v): the control has none.
    control = run_cell(tmp_path, bare, "python3 hog.py", limits=limits.model_copy(update={"memory_mib": None}))
    assert control.stdout.splitlines()[-1] == "survived"
    assert control.exit.limit is None


DAEMON = """\
import os, sys, time
if os.fork():
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
null = os.open("/dev/null", os.O_RDWR)
for fd in range(3):
    os.dup2(null, fd)
end = time.time() + 60
while time.time() < end:
    with open(sys.argv[1], "w") as beat:
        beat.write(repr(time.time()))
    time.sleep(0.05)
"""


def test_daemon_does_not_outlive_the_cell(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "daemon.py", DAEMON)
    marker = f"heartbeat-{uuid.uuid4().hex[:12]}"
    # sleep takes a number: its marker is a duration no other process has.
    sleeper = f"1000.{uuid.uuid4().int % 10**9:09d}"
    command = f"setsid sleep {sleeper} & python3 daemon.py {marker}; sleep 0.5; echo started"
    beat = tmp_path / "ws" / marker
    try:
        ran = run_cell(tmp_path, sandbox, command)
        assert ran.stdout == "started\n", ran.output
        assert host_processes(marker) == []
        assert host_processes(sleeper) == []
        last = beat.read_text(encoding="ascii")
        time.sleep(0.5)
        assert beat.read_text(encoding="ascii") == last
        # Without a sandbox both outlive the cell's command (and are killed here).
        run_cell(tmp_path, bare, command)
        assert len(host_processes(marker)) == 1
        assert len(host_processes(sleeper)) == 1
        last = beat.read_text(encoding="ascii")
        time.sleep(0.5)
        assert beat.read_text(encoding="ascii") != last
    finally:
        kill_host_processes(marker)
        kill_host_processes(sleeper)


PTRACE = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
print("ptrace", libc.ptrace(PTRACE_SEIZE, int(sys.argv[1]), 0, 0), ctypes.get_errno())
"""


def test_evaluator_cannot_be_signalled_or_traced(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    _script(tmp_path, "ptrace.py", PTRACE)
    env = {"EVALUATOR_PID": str(os.getpid())}
    command = 'kill -TERM "$EVALUATOR_PID"; echo "kill $?"; test -e "/proc/$EVALUATOR_PID"; echo "proc $?"'
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        ran = run_cell(tmp_path, sandbox, command + '; python3 ptrace.py "$EVALUATOR_PID"', env=env)
        lines = ran.stdout.splitlines()
        assert lines[0] == "kill 1"
        assert lines[1] == "proc 1"
        assert lines[2] == f"ptrace -1 {errno.ESRCH}"
        time.sleep(0.1)
        assert received == []
        # The same signal from the host reaches this process (ptrace is left out there: it
        # would attach to the test itself).
        control = run_cell(tmp_path, bare, command, env=env)
        time.sleep(0.1)
        assert control.stdout.splitlines() == ["kill 0", "proc 0"]
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


WRITE = """\
import sys
with open("big", "wb") as f:
    for _ in range(int(sys.argv[1])):
        f.write(b"0" * (1 << 20))
print("wrote", sys.argv[1])
"""


@pytest.mark.parametrize("writer", ["dd if=/dev/zero of=big bs=1M count=10240 status=none",
                                    "python3 write.py 10240"])
def test_ten_gigabyte_file_stops_at_the_quota(tmp_path: Path, sandbox: Backend, bare: Backend, writer: str) -> None:
    _script(tmp_path, "write.py", WRITE)
    limits = SandboxLimits(wall_clock_s=20, memory_mib=256, pids=64, disk_mib=20)
    ran = run_cell(tmp_path, sandbox, writer, limits=limits)
    assert disk_use(tmp_path / "ws") < 25 * MIB
    # dd dies of SIGXFSZ (the disk limit); Python ignores that signal and gets EFBIG instead.
    assert ran.exit.limit == "disk" or "File too large" in ran.stderr, ran.output
    assert "wrote" not in ran.stdout
    # On the host the same writer is not capped per file (40 MiB: the disk watch would stop a
    # larger one, which is the next test's subject).
    (tmp_path / "ws" / "big").unlink()
    control = run_cell(tmp_path, bare, "python3 write.py 40", limits=limits)
    assert control.stdout == "wrote 40\n"
    assert (tmp_path / "ws" / "big").stat().st_size == 40 * MIB


def test_many_files_stop_at_the_quota(tmp_path: Path, sandbox: Backend) -> None:
    # Each file is under the per-file cap; the watch of the workspace stops the whole.
    command = "i=0; while :; do head -c 4M /dev/zero > f$i; i=$((i+1)); sleep 0.05; done"
    limits = SandboxLimits(wall_clock_s=20, memory_mib=256, pids=64, disk_mib=20)
    ran = run_cell(tmp_path, sandbox, command, limits=limits)
    assert (ran.exit.stopped, ran.exit.limit) == ("limit", "disk"), ran.output
    assert "the workspace went over its quota of 20 MiB" in ran.exit.escapes
    assert ran.exit.wall_s < 10


# -- what is inside -------------------------------------------------------------------------------

ENVIRONS = """\
tr '\\0' '\\n' < /proc/self/environ
echo ---
for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f"; done 2>/dev/null
"""


def test_environment_holds_only_the_given_variables(tmp_path: Path, sandbox: Backend, bare: Backend,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    # A process of the evaluator's that holds the secret in its environment.
    holder = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        ran = run_cell(tmp_path, sandbox, ENVIRONS, env={"GIVEN": "1"})
        own, _, every = ran.stdout.partition("---\n")
        names = {line.split("=", 1)[0] for line in own.splitlines()}
        # PWD is the shell's own.
        assert names - {"PWD"} == set(ran.exit.record.env) == {"GIVEN", "HOME", "HOSTNAME", "LANG", "PATH", "TMPDIR"}
        assert SECRET not in every
        # On the host the evaluator's processes' environments can be read.
        assert SECRET in run_cell(tmp_path, bare, ENVIRONS, env={"GIVEN": "1"}).stdout
    finally:
        holder.kill()
        holder.wait()


def _inside_or_above(path: str, allowed: list[str]) -> bool:
    return any(path == a or a.startswith(path + "/") or path.startswith(a + "/") for a in allowed)


def test_root_and_home_hold_only_the_python_installation(tmp_path: Path, sandbox: Backend) -> None:
    ran = run_cell(tmp_path, sandbox, 'find /root /home -maxdepth 4 2>/dev/null; test -e /root/.ssh; echo "ssh $?"')
    lines = ran.stdout.splitlines()
    assert lines[-1] == "ssh 1"
    allowed = [m.source for m in ran.exit.record.mounts]
    assert [p for p in lines[:-1] if not _inside_or_above(p, allowed)] == []


def test_etc_holds_no_shadow_no_keys_and_no_resolver(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    command = 'test -e /etc/shadow; echo "shadow $?"; test -e /etc/ssl/private; echo "private $?"; ls -A /etc'
    ran = run_cell(tmp_path, sandbox, command)
    lines = ran.stdout.splitlines()
    assert lines[:2] == ["shadow 1", "private 1"]
    # Podman writes the container's own hostname (and mtab, a link to /proc/mounts).
    assert set(lines[2:]) - {"hostname", "mtab"} <= {name.split("/")[0] for name in ETC_FILES}
    assert "resolv.conf" not in lines
    control = run_cell(tmp_path, bare, command).stdout.splitlines()
    assert control[:2] == [f"shadow {0 if Path('/etc/shadow').exists() else 1}",
                           f"private {0 if Path('/etc/ssl/private').exists() else 1}"]


def _capabilities(status: str) -> dict[str, int]:
    fields = (line.split(":") for line in status.splitlines() if line.startswith(("Cap", "NoNewPrivs")))
    return {name: int(value.strip(), 16) for name, value in fields}


def test_no_capabilities(tmp_path: Path, sandbox: Backend, bare: Backend) -> None:
    command = "grep -E '^(Cap|NoNewPrivs)' /proc/self/status"
    inside = _capabilities(run_cell(tmp_path, sandbox, command).stdout)
    assert inside == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0, "NoNewPrivs": 1}
    host = _capabilities(Path("/proc/self/status").read_text(encoding="ascii"))
    assert _capabilities(run_cell(tmp_path, bare, command).stdout)["CapEff"] == host["CapEff"]
