"""A real Slurm cluster for the tests: ``munged``, ``slurmctld`` and ``slurmd`` (Debian's
``slurm-wlm`` 22.05 and ``munge``) on localhost, one node with fake GPUs (``gres/gpu`` backed by
plain files), configured in a temporary directory.

Clients find the cluster through ``SLURM_CONF`` (set in this process's environment while the
cluster runs, so ``sbatch``/``squeue`` called by submitit and by ``rra`` subprocesses reach it).
Slurm's ports are fixed, so only one such cluster can run on a machine: a lock file
(``/tmp/rra-slurm-test.lock``) makes a second one (another pytest worker) wait for the first.
There is no accounting daemon: ``sacct`` says accounting is disabled, and job states after the
end come from ``scontrol`` (kept for ``MinJobAge`` seconds).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SlurmCluster", "slurm_cluster"]

LOCK = Path("/tmp/rra-slurm-test.lock")
LOCK_WAIT_S = 1200.0
STARTUP_TIMEOUT_S = 120.0
MUNGE_KEY = Path("/etc/munge/munge.key")
#: Fake devices on the node; tests ask for at most this many per job.
GPUS = 2


@dataclass
class SlurmCluster:
    """The running cluster: its directory, configuration, node name and partition."""

    base: Path
    conf: Path
    node: str
    partition: str = "debug"
    #: Another partition of the same node (not the default).
    second: str = "second"
    gpus: int = GPUS
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment additions that point Slurm's clients at this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def command(self, *argv: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command (``squeue``, ``scancel``, ``scontrol``) against the cluster."""
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False,
                              env={**os.environ, **self.env})

    def log_tail(self) -> str:
        """The end of the controller's and the node daemon's logs (for failure messages)."""
        parts = []
        for name in ("ctld.log", "d.log"):
            path = self.base / name
            text = path.read_text(errors="replace")[-1500:] if path.exists() else "(no log)"
            parts.append(f"--- {name}\n{text}")
        return "\n".join(parts)


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False,
                          env={**os.environ, **(env or {})})


def _munge_works() -> bool:
    if shutil.which("munge") is None:
        return False
    try:
        made = subprocess.run(["munge", "-n"], capture_output=True, timeout=10, check=False)
        if made.returncode != 0:
            return False
        read = subprocess.run(["unmunge"], input=made.stdout, capture_output=True, timeout=10, check=False)
    except subprocess.TimeoutExpired:
        return False
    return read.returncode == 0


def _start_munged() -> int | None:
    """Start munged as the munge user (key and socket directory as it requires); its pid, or
    None when a munged already answers (left running: not ours)."""
    if _munge_works():
        return None
    munge = pwd.getpwnam("munge")
    if not MUNGE_KEY.exists():
        MUNGE_KEY.parent.mkdir(parents=True, exist_ok=True)
        MUNGE_KEY.write_bytes(os.urandom(1024))
    os.chown(MUNGE_KEY, munge.pw_uid, munge.pw_gid)
    os.chmod(MUNGE_KEY, 0o400)
    for directory in (Path("/run/munge"), Path("/var/log/munge"), Path("/var/lib/munge")):
        directory.mkdir(parents=True, exist_ok=True)
        os.chown(directory, munge.pw_uid, munge.pw_gid)
    started = _run(["su", "-s", "/bin/sh", "munge", "-c", "/usr/sbin/munged"])
    if started.returncode != 0:
        raise RuntimeError(f"munged did not start: {started.stderr.strip() or started.stdout.strip()}")
    deadline = time.monotonic() + 120  # generous: a loaded machine starts services slowly
    while not _munge_works():
        if time.monotonic() > deadline:
            raise RuntimeError("munged started but 'munge -n | unmunge' still failed after 120 s")
        time.sleep(0.2)
    try:
        return int(Path("/run/munge/munged.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 4096


def _write_config(base: Path, node: str) -> Path:
    conf = base / "slurm.conf"
    cpus = os.cpu_count() or 1
    # Below what the node has, so slurmd never finds it low and drains the node.
    memory = max(1024, _memory_mb() - 1024)
    conf.write_text(
        "ClusterName=rratest\n"
        f"SlurmctldHost={node}\n"
        "AuthType=auth/munge\n"
        f"StateSaveLocation={base}/state\n"
        f"SlurmdSpoolDir={base}/spool\n"
        f"SlurmctldLogFile={base}/ctld.log\n"
        f"SlurmdLogFile={base}/d.log\n"
        f"SlurmctldPidFile={base}/ctld.pid\n"
        f"SlurmdPidFile={base}/d.pid\n"
        "ProctrackType=proctrack/linuxproc\n"
        "TaskPlugin=task/none\n"
        "SelectType=select/cons_tres\n"
        "SelectTypeParameters=CR_Core\n"
        "ReturnToService=2\n"
        "SlurmUser=root\n"
        "GresTypes=gpu\n"
        # A cancelled job's processes get SIGKILL 5 s after SIGTERM (default 30 s).
        "KillWait=5\n"
        "MinJobAge=600\n"
        "SchedulerParameters=sched_interval=2\n"
        f"NodeName={node} Gres=gpu:{GPUS} CPUs={cpus} RealMemory={memory} State=UNKNOWN\n"
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
        # A second partition on the same node: tests see which one a job was sent to.
        "PartitionName=second Nodes=ALL MaxTime=INFINITE State=UP\n",
        encoding="utf-8")
    devices = [base / f"fakegpu{i}" for i in range(GPUS)]
    for device in devices:
        device.touch()
    (base / "gres.conf").write_text(f"NodeName={node} Name=gpu File={base}/fakegpu[0-{GPUS - 1}]\n",
                                    encoding="utf-8")
    for sub in ("state", "spool"):
        (base / sub).mkdir()
    return conf


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextmanager
def _machine_lock() -> Iterator[None]:
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"another test Slurm cluster held {LOCK} for {LOCK_WAIT_S:.0f} s") from None
                time.sleep(1)
        yield
    finally:
        os.close(fd)


@contextmanager
def slurm_cluster() -> Iterator[SlurmCluster]:
    """Start the cluster, wait until ``sinfo`` shows the node idle, and tear it down on exit
    (jobs cancelled, daemons stopped, the directory removed, ``SLURM_CONF`` restored)."""
    for tool in ("slurmctld", "slurmd", "munged", "sinfo"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed; the Slurm executor's tests need it "
                               "(apt-get install slurm-wlm munge; .ci/run installs them)")
    with _machine_lock():
        munged = _start_munged()
        base = Path(tempfile.mkdtemp(prefix="rra-slurm-", dir="/tmp"))
        os.chmod(base, 0o755)
        node = socket.gethostname().split(".")[0]
        cluster = SlurmCluster(base=base, conf=_write_config(base, node), node=node)
        saved = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = str(cluster.conf)
        try:
            for daemon, log in (("slurmctld", "ctld.out"), ("slurmd", "d.out")):
                with open(base / log, "wb") as out:
                    cluster.processes.append(subprocess.Popen(
                        [daemon, "-D", "-f", str(cluster.conf)], stdin=subprocess.DEVNULL, stdout=out,
                        stderr=out, start_new_session=True, env={**os.environ, **cluster.env}))
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            state = ""
            while True:
                for process in cluster.processes:
                    if process.poll() is not None:
                        raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n"
                                           f"{cluster.log_tail()}")
                shown = cluster.command("sinfo", "-h", "-p", cluster.partition, "-o", "%t", timeout=20)
                state = shown.stdout.strip() or shown.stderr.strip()
                if shown.returncode == 0 and state == "idle":
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the Slurm node is not idle after {STARTUP_TIMEOUT_S:.0f} s "
                                       f"(sinfo: {state!r}):\n{cluster.log_tail()}")
                time.sleep(0.5)
            yield cluster
        finally:
            if cluster.processes:
                cluster.command("scancel", "--full", "-u", pwd.getpwuid(os.getuid()).pw_name)
            for process in reversed(cluster.processes):
                _stop(process)
            if saved is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = saved
            if munged is not None:
                try:
                    os.kill(munged, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            shutil.rmtree(base, ignore_errors=True)
