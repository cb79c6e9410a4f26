"""A control group per cell: memory, processes and CPU limits the kernel enforces on the whole
process tree, a count of what hit them, and a kill that reaches every process of the cell.

Both layouts are handled: the unified hierarchy (cgroup v2: ``memory.max``, ``pids.max``,
``cpu.max``, ``cgroup.kill``) and the per-controller one (v1, as on hosts in hybrid mode:
``memory/…/memory.limit_in_bytes``, ``pids/…/pids.max``, ``cpu/…/cpu.cfs_quota_us``). Where no
hierarchy can be written (an unprivileged user without delegation, some Slurm nodes), :func:`open_cgroup`
returns None and the caller falls back to per-process resource limits, recording the difference.

Processes join the group by a small shell prologue that writes its own pid into ``cgroup.procs``
and then ``exec``s the sandbox: a process placed from outside after it started could already
have forked children that stay behind in the parent group.
"""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CellCgroup", "open_cgroup"]

#: Where cgroup hierarchies are mounted.
ROOT = Path("/sys/fs/cgroup")
#: The parent group of every cell's group, under each hierarchy.
PARENT = "rra-cells"


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii")
    except OSError:
        return ""


def _event(text: str, name: str) -> int:
    match = re.search(rf"^{re.escape(name)} (\d+)$", text, re.MULTILINE)
    return int(match.group(1)) if match else 0


@dataclass
class CellCgroup:
    """One cell's group: the directories that make it (one in v2, one per controller in v1)."""

    version: int
    dirs: dict[str, Path]
    enforced: list[str] = field(default_factory=list)

    def join_prologue(self) -> str:
        """Shell words that move the shell running them into the group (then it ``exec``s)."""
        targets = sorted({str(d / "cgroup.procs") for d in self.dirs.values()})
        return " && ".join(f"echo $$ > '{t}'" for t in targets)

    def pids(self) -> set[int]:
        """Every process now in the group."""
        found: set[int] = set()
        for directory in self.dirs.values():
            for line in _read(directory / "cgroup.procs").split():
                found.add(int(line))
        return found

    def kill(self, timeout_s: float = 5.0) -> None:
        """SIGKILL every process in the group, until it is empty (or ``timeout_s`` passed)."""
        if self.version == 2 and (self.dirs["unified"] / "cgroup.kill").exists():
            try:
                _write(self.dirs["unified"] / "cgroup.kill", "1")
            except OSError:
                pass
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def hits(self) -> dict[str, int]:
        """How often each limit was hit: 'memory' (out-of-memory kills), 'pids' (refused forks)."""
        if self.version == 2:
            d = self.dirs["unified"]
            return {"memory": _event(_read(d / "memory.events"), "oom_kill"),
                    "pids": _event(_read(d / "pids.events"), "max")}
        out = {"memory": 0, "pids": 0}
        if "memory" in self.dirs:
            out["memory"] = _event(_read(self.dirs["memory"] / "memory.oom_control"), "oom_kill")
        if "pids" in self.dirs:
            out["pids"] = _event(_read(self.dirs["pids"] / "pids.events"), "max")
        return out

    def remove(self) -> None:
        """Kill what is left and remove the group's directories."""
        self.kill()
        for directory in self.dirs.values():
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _v2_root() -> Path | None:
    if (ROOT / "cgroup.controllers").exists():
        return ROOT
    unified = ROOT / "unified"
    if (unified / "cgroup.controllers").exists() and _read(unified / "cgroup.controllers").strip():
        return unified
    return None


def _open_v2(root: Path, name: str, cpus: float | None, memory_mib: int | None,
             pids: int | None) -> CellCgroup | None:
    parent = root / PARENT
    try:
        parent.mkdir(exist_ok=True)
        available = set(_read(parent / "cgroup.controllers").split())
        wanted = {"memory", "pids", "cpu"} & available
        if wanted:
            # A controller must be enabled in the parent for the cell's group to have its files.
            _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted)))
        cell = parent / name
        cell.mkdir()
    except OSError:
        return None
    group = CellCgroup(2, {"unified": cell})
    for limit, filename, value in (("memory", "memory.max", None if memory_mib is None else str(memory_mib << 20)),
                                   ("pids", "pids.max", None if pids is None else str(pids)),
                                   ("cpu", "cpu.max", None if cpus is None else f"{int(cpus * 100000)} 100000")):
        if value is None:
            continue
        try:
            _write(cell / filename, value)
            group.enforced.append(f"cgroup-v2:{limit}")
        except OSError:
            pass
    if memory_mib is not None and (cell / "memory.swap.max").exists():
        try:
            _write(cell / "memory.swap.max", "0")
        except OSError:
            pass
    return group


def _open_v1(name: str, cpus: float | None, memory_mib: int | None, pids: int | None) -> CellCgroup | None:
    settings = {
        "memory": [("memory.limit_in_bytes", None if memory_mib is None else str(memory_mib << 20))],
        "pids": [("pids.max", None if pids is None else str(pids))],
        "cpu": [("cpu.cfs_period_us", None if cpus is None else "100000"),
                ("cpu.cfs_quota_us", None if cpus is None else str(int(cpus * 100000)))],
    }
    group = CellCgroup(1, {})
    for controller, files in settings.items():
        base = ROOT / controller
        if not (base / "cgroup.procs").exists():
            continue
        directory = base / PARENT / name
        try:
            directory.mkdir(parents=True)
        except OSError:
            continue
        group.dirs[controller] = directory
        applied = True
        for filename, value in files:
            if value is None:
                applied = False
                continue
            try:
                _write(directory / filename, value)
            except OSError:
                applied = False
        if applied:
            group.enforced.append(f"cgroup-v1:{controller}")
    if not group.dirs:
        return None
    return group


def open_cgroup(name: str, *, cpus: float | None, memory_mib: int | None, pids: int | None) -> CellCgroup | None:
    """A new group named ``name`` with these limits, or None when no hierarchy can be written."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:200]
    root = _v2_root()
    if root is not None and root == ROOT:
        return _open_v2(root, name, cpus, memory_mib, pids)
    return _open_v1(name, cpus, memory_mib, pids)
