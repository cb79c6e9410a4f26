"""``rra bench run`` with hostile reproducers, under both sandboxes, through the real CLI.

One benchmark per backend (bubblewrap, Podman) runs one cell per escape of issue 21 (item 4):
read the references by absolute path, read ``~/.ssh``, list other cells, reach a public
address, a loopback service of the host and DNS, write outside the workspace, fork-bomb, exhaust
memory, leave a daemon, signal or ptrace the evaluator, and leave ``submission.json`` as a FIFO,
a symbolic link or a 10 GB file. Each is refused or contained, the cell's outcome says so, and
the benchmark goes on. The same attackers run with ``--sandbox none`` (the safe ones: no fork
bomb, no signals to the evaluator) and do escape there, so each check can fail: on the code
before the sandbox, every one of them read or wrote what it wanted.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rra_tools.model.bench_results import BenchResults

from ..bench_tiny import tiny_artifact, tiny_taskset
from ..rra_cli import rra, rra_command

#: What each attacker tries; it writes what it got to stolen.txt in its workspace, and
#: what happened to its stdout.
ATTACKS: dict[str, str] = {
    "refs": """
steal(open(REFS).read())
""",
    "ssh": """
steal(open(HOME + "/.ssh/id_rsa").read())
""",
    "cells": """
steal("\\n".join(os.listdir(OUT + "/cells/p/t1/exact/refined")))
""",
    "loopback": """
s = socket.create_connection(("127.0.0.1", PORT), 3)
steal(s.recv(100).decode())
""",
    "public": """
try:
    socket.create_connection(("1.1.1.1", 443), 3)
    steal("connected")
except OSError as exc:
    print("public errno", exc.errno)
""",
    "dns": """
steal(open("/etc/resolv.conf").read() or "empty resolv.conf")
""",
    "write": """
open(OUT + "/pwned.txt", "w").write("pwned")
""",
    "forkbomb": """
os.execvp("sh", ["sh", "-c", "f() { f | f & }; f; sleep 30"])
""",
    "memory": """
hog = [bytearray(16 << 20) for _ in range(256)]
steal("allocated 4 GiB")
""",
    "daemon": """
import subprocess
subprocess.Popen(["setsid", "sh", "-c", "while :; do date +%s%N > heartbeat; sleep 0.1; done"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
time.sleep(0.5)
""",
    "signal": """
import signal
def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return b""
# The stand-in by its pid, and the real evaluator (the rra bench run process) by its command line.
found = [int(p) for p in os.listdir("/proc") if p.isdigit()
         and (int(p) == EVALUATOR or b"bench\\0run" in cmdline(p))]
print("evaluator visible:", bool(found))
for pid in found:
    os.kill(pid, signal.SIGSTOP)
    steal("stopped the evaluator")
""",
    "ptrace": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
attached = libc.ptrace(16, EVALUATOR, None, None)  # PTRACE_ATTACH
print("ptrace", attached, ctypes.get_errno())
if attached == 0:
    steal("traced the evaluator")
""",
    "fifo": """
os.mkfifo("submission.json")
""",
    "symlink": """
os.symlink(REFS, "submission.json")
""",
    "huge": """
with open("submission.json", "wb") as f:
    for _ in range(10 * 1024):
        f.write(b"\\0" * (1 << 20))
steal("wrote 10 GB")
""",
}

#: The attacks that are safe to run on the host (the control run with --sandbox none).
ON_HOST = ("refs", "ssh", "cells", "loopback", "dns", "write", "symlink")

SECRET_KEY = "-----BEGIN TEST KEY----- not a real key"


class _Service:
    """A loopback TCP service of the host (standing in for a registry), greeting every client."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.sendall(b"registry-greeting")
            conn.close()


@pytest.fixture(scope="module")
def service() -> Iterator[_Service]:
    s = _Service()
    yield s
    s.sock.close()


def _setup(tmp: Path, evaluator_pid: int, port: int, names: tuple[str, ...]) -> tuple[Path, Path, Path, dict[str, str]]:
    tiny_artifact(tmp / "tiny")
    limits = {"wall_clock_s": 20, "memory_mib": 192, "pids": 64, "disk_mib": 20}
    taskset, references = tiny_taskset(tmp, repeats=1, limits=limits, conditions=["refined"],
                                       sandbox={"readonly": ["attacks"]})
    # One task is enough: drop 'var' from both parts.
    public = json.loads(taskset.read_text())
    public["papers"][0]["experiments"][0]["tasks"] = public["papers"][0]["experiments"][0]["tasks"][1:]
    taskset.write_text(json.dumps(public))
    private = json.loads(references.read_text())
    private["references"] = private["references"][1:]
    references.write_text(json.dumps(private))
    home = tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET_KEY)
    out = tmp / "out"
    attacks = tmp / "attacks"
    attacks.mkdir()
    prelude = (f"import os, socket, sys, time\nREFS = {str(references)!r}\nHOME = {str(home)!r}\n"
               f"OUT = {str(out)!r}\nPORT = {port}\nEVALUATOR = {evaluator_pid}\n"
               # The argument is read before stolen.txt is opened: only what was got is written.
               "def steal(text):\n    open('stolen.txt', 'w').write(text)\n")
    commands = {}
    for name in names:
        # Prefixed: a script named like a module of the standard library (signal.py) would shadow it.
        (attacks / f"attack_{name}.py").write_text(prelude + ATTACKS[name], encoding="utf-8")
        commands[name] = f"python3 {attacks}/attack_{name}.py"
    return taskset, references, out, commands


def _bench(tmp: Path, sandbox: str, names: tuple[str, ...], port: int) -> tuple[Any, BenchResults, Path, Path]:
    # The evaluator is this test's own rra process: its pid is known only once it runs, so the
    # attackers aim at a stand-in started first, a sleeping child of the test, and the rra
    # process itself is checked by its exit status.
    victim = subprocess.Popen(["sleep", "300"])
    try:
        taskset, references, out, commands = _setup(tmp, victim.pid, port, names)
        args = [a for name, cmd in commands.items() for a in ("--reproducer", f"{name}={cmd}")]
        proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "-j", "2",
                   "--sandbox", sandbox, *args, env={"HOME": str(tmp / "home")}, timeout=900)
        assert victim.poll() is None, "the attackers stopped a process of the host"
        status = Path(f"/proc/{victim.pid}/status").read_text()
        assert "\nState:\tT" not in status and "TracerPid:\t0" in status, status
    finally:
        victim.kill()
        victim.wait()
    assert proc.returncode == 0, proc.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    return proc, results, out, references


@pytest.fixture(scope="module", params=["bwrap", "podman"])
def sandboxed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              service: _Service) -> tuple[str, Any, BenchResults, Path, Path]:
    name = str(request.param)
    tmp = tmp_path_factory.mktemp(f"iso-{name}")
    before = service.accepted
    proc, results, out, refs = _bench(tmp, name, tuple(ATTACKS), service.port)
    assert service.accepted == before, "a cell reached the host's loopback service"
    return name, proc, results, out, refs


def _cell(results: BenchResults, name: str) -> Any:
    (cell,) = [c for c in results.cells if c.cell.reproducer == name]
    return cell


def _stolen(out: Path, name: str) -> str | None:
    path = out / "cells" / "p" / "t1" / "exact" / "refined" / name / "1" / "workspace" / "stolen.txt"
    return path.read_text() if path.is_file() else None


def _log(out: Path, name: str) -> str:
    directory = out / "cells" / "p" / "t1" / "exact" / "refined" / name / "1"
    return (directory / "reproducer.stdout.log").read_text() + (directory / "reproducer.stderr.log").read_text()


def test_every_cell_is_sandboxed_and_recorded(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    name, _, results, _, _ = sandboxed
    assert len(results.cells) == len(ATTACKS)
    for cell in results.cells:
        assert cell.sandbox is not None and cell.sandbox.backend == name
        assert cell.sandbox.network == "proxy-only"
        assert cell.state != "success", cell


@pytest.mark.parametrize("attack", ["refs", "ssh", "cells", "dns", "loopback", "public"])
def test_nothing_outside_can_be_read_or_reached(sandboxed: tuple[str, Any, BenchResults, Path, Path],
                                                attack: str) -> None:
    _, _, results, out, _ = sandboxed
    stolen = _stolen(out, attack)
    if attack == "cells":
        # The parents of its own workspace exist inside (mount points); no other cell is there.
        assert stolen is not None and not set(stolen.split()) & (set(ATTACKS) - {"cells"}), stolen
    else:
        assert stolen is None, _log(out, attack)
    assert _cell(results, attack).state == "missing_value"
    if attack == "public":
        # Refused at once by the sandbox's empty network namespace (no route), not a timeout.
        assert "public errno 101" in _log(out, attack)


def test_nothing_is_written_outside(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    _, _, results, out, _ = sandboxed
    # Inside, the benchmark directory's path exists only as the parents of the workspace's mount
    # point (read-only, or on the sandbox's own /tmp when it lies under /tmp): nothing reaches the host.
    assert not (out / "pwned.txt").exists()
    assert _cell(results, "write").state == "missing_value"


def test_a_fork_bomb_is_contained(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    name, _, results, _, _ = sandboxed
    cell = _cell(results, "forkbomb")
    # It ends (at the latest at the wall clock) and the benchmark goes on.
    assert (cell.state, cell.infrastructure) in (("infrastructure_failure", "timeout"), ("missing_value", None))
    assert cell.wall_s is not None and cell.wall_s < 30
    if name == "bwrap":
        assert any("process limit (64)" in e for e in cell.sandbox.escapes), cell.sandbox


def test_memory_exhaustion_is_an_oom(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    _, _, results, out, _ = sandboxed
    cell = _cell(results, "memory")
    assert _stolen(out, "memory") is None
    assert (cell.state, cell.infrastructure) == ("infrastructure_failure", "oom"), cell.detail


def test_no_daemon_outlives_its_cell(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    _, _, _, out, _ = sandboxed
    heartbeat = out / "cells" / "p" / "t1" / "exact" / "refined" / "daemon" / "1" / "workspace" / "heartbeat"
    assert heartbeat.is_file(), "the daemon never ran"
    first = heartbeat.read_text()
    time.sleep(0.6)
    assert heartbeat.read_text() == first, "the daemon still runs after its cell ended"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert b"date +%s%N > heartbeat" not in cmdline, pid


@pytest.mark.parametrize("attack", ["signal", "ptrace"])
def test_the_evaluator_cannot_be_seen_signalled_or_traced(sandboxed: tuple[str, Any, BenchResults, Path, Path],
                                                           attack: str) -> None:
    _, _, _, out, _ = sandboxed
    assert _stolen(out, attack) is None, _log(out, attack)
    if attack == "signal":
        assert "evaluator visible: False" in _log(out, attack)
    else:
        assert "ptrace -1 3" in _log(out, attack) or "ptrace -1 1" in _log(out, attack), _log(out, attack)


@pytest.mark.parametrize(("attack", "words"), [("fifo", "is a FIFO, not a regular file"),
                                                ("symlink", "is a symbolic link, not a regular file")])
def test_a_submission_that_is_no_file_is_a_parse_failure(sandboxed: tuple[str, Any, BenchResults, Path, Path],
                                                         attack: str, words: str) -> None:
    _, _, results, _, _ = sandboxed
    cell = _cell(results, attack)
    assert cell.state == "parse_failure"
    assert words in (cell.detail or "")


def test_a_10_gb_submission_hits_the_disk_quota(sandboxed: tuple[str, Any, BenchResults, Path, Path]) -> None:
    _, _, results, out, _ = sandboxed
    cell = _cell(results, "huge")
    assert cell.state == "limit_reached", cell
    assert "disk quota of 20 MiB" in (cell.detail or "")
    workspace = out / "cells" / "p" / "t1" / "exact" / "refined" / "huge" / "1" / "workspace"
    assert (workspace / "submission.json").stat().st_size <= 20 << 20


def test_unsandboxed_the_same_attackers_escape(tmp_path: Path, service: _Service) -> None:
    """The control: with --sandbox none (how every cell ran before the sandbox), the attackers
    read the references, the home's key and the other cells, reach the loopback service, read the
    resolver's configuration and write outside the workspace; the report flags every cell."""
    before = service.accepted
    proc, results, out, refs = _bench(tmp_path, "none", ON_HOST, service.port)
    assert "0.8125" in (_stolen(out, "refs") or "")
    assert _stolen(out, "ssh") == SECRET_KEY
    assert "refs" in (_stolen(out, "cells") or "").split()
    assert _stolen(out, "loopback") == "registry-greeting" and service.accepted == before + 1
    assert _stolen(out, "dns") is not None
    assert (out / "pwned.txt").read_text() == "pwned"
    assert _cell(results, "symlink").state == "parse_failure"
    assert "ran unisolated (--sandbox none)" in proc.stdout
    assert all(c.sandbox is not None and c.sandbox.backend == "none" for c in results.cells)


def _loops(tag: str) -> list[int]:
    """Host processes running the heartbeat loop tagged ``tag``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if tag.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("backend", ["bwrap", "podman"])
def test_a_killed_evaluator_leaves_no_sandbox_running(tmp_path: Path, backend: str) -> None:
    """The evaluator dies with SIGKILL mid-cell: bubblewrap's sandbox dies with it; Podman's
    container (which outlives 'podman run') is removed when the benchmark is resumed."""
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"], limits={"wall_clock_s": 6})
    tag = f"heartbeat-{backend}-{os.getpid()}"
    loop = f"while :; do echo {tag} > heartbeat; sleep 0.1; done"
    out = tmp_path / "out"
    args = ["bench", "run", str(taskset), "--references", str(references), "-o", str(out), "-j", "1",
            "--sandbox", backend, "--reproducer", f"loop={loop}"]
    proc = subprocess.Popen([*rra_command(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    beat = out / "cells" / "p/t1/var/refined/loop/1" / "workspace" / "heartbeat"
    deadline = time.monotonic() + 120
    while not beat.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the cell's loop did not start"
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    if backend == "bwrap":
        deadline = time.monotonic() + 5
        while _loops(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _loops(tag), "the sandbox outlived its evaluator"
        return
    assert _loops(tag), "Podman's container is expected to outlive 'podman run' (else this test shows nothing)"
    resumed = rra(*args, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert not _loops(tag), "a container of the killed evaluator still runs after the resume"
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert [(c.state, c.infrastructure) for c in results.cells] == [("infrastructure_failure", "timeout")] * 2
