"""The record of a cell's sandbox says what the cell could see and under which limits: every
mount (checked against the mount table inside), the limits and what enforced each, the names of
the variables; which backend 'auto' picks; paths that must stay hidden; the workspace's disk use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rra_tools.agents.sandbox import Backend, SandboxError, disk_use, new_run_dir, resolve_backend, run_sandboxed
from rra_tools.agents.sandbox import backends as backends_module
from rra_tools.agents.sandbox.layout import python_paths
from rra_tools.agents.sandbox.runner import CellCommand
from rra_tools.model.cell import SandboxLimits

from .sandbox_support import PATH, SANDBOXES, run_cell, sandbox_backend

MIB = 1 << 20
#: Filesystems a sandbox makes for itself (not host paths).
OWN_FILESYSTEMS = {"tmpfs", "proc", "sysfs", "devpts", "devtmpfs", "mqueue", "cgroup", "cgroup2", "shm"}


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> Backend:
    """Each backend under test."""
    return sandbox_backend(request.param)


def _mount_points(mountinfo: str) -> dict[str, str]:
    """Mount point -> filesystem type, from /proc/self/mountinfo."""
    points = {}
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        points[before.split()[4]] = after.split()[0]
    return points


def test_record_lists_every_mount(tmp_path: Path, sandbox: Backend) -> None:
    handover = tmp_path / "handover"
    handover.mkdir()
    hidden = [tmp_path / "references", tmp_path / "home"]
    for path in hidden:
        path.mkdir()
    ran = run_cell(tmp_path, sandbox, "cat /proc/self/mountinfo", readonly=[handover], hidden=hidden)
    record = ran.exit.record
    assert (record.backend, record.requested, record.network) == (sandbox.name, sandbox.name, "proxy-only")
    ws = str((tmp_path / "ws").resolve())
    assert [(m.source, m.target, m.role) for m in record.mounts if m.mode == "rw"] == [(ws, ws, "workspace")]
    roles = {m.target: m.role for m in record.mounts}
    assert roles["/usr"] == "system"
    assert roles["/run/rra"] == "proxy"
    assert roles[str(handover)] == "reproducer"
    assert {str(p) for p in python_paths() if not p.is_relative_to("/usr")} <= {t for t, r in roles.items() if r == "rra"}
    for mount in record.mounts:
        for path in hidden:
            assert not path.is_relative_to(mount.source), (mount, path)
            assert not Path(mount.source).is_relative_to(path), (mount, path)
    # The mount table inside: every host path mounted there is in the record, and the reverse.
    inside = _mount_points(ran.stdout)
    host_paths = {point for point, kind in inside.items() if kind not in OWN_FILESYSTEMS}
    # Podman's own: the empty root directory and the container's hostname file.
    own = {"/", "/etc/hostname"} if sandbox.name == "podman" else set()
    assert host_paths - own == {m.target for m in record.mounts}


def test_record_lists_limits_and_what_enforced_them(tmp_path: Path, sandbox: Backend) -> None:
    limits = SandboxLimits(wall_clock_s=10, memory_mib=128, pids=64, cpus=1.5, disk_mib=20)
    record = run_cell(tmp_path, sandbox, "true", limits=limits).exit.record
    assert record.limits.model_dump(exclude={"enforced_by"}) == limits.model_dump(exclude={"enforced_by"})
    enforced = set(record.limits.enforced_by)
    assert {"rlimit:fsize", "watch:disk"} <= enforced
    if sandbox.name == "podman":
        assert enforced == {"rlimit:fsize", "watch:disk", "podman:memory", "podman:pids", "podman:cpus"}
    else:
        # cgroup v1 names the cpu controller 'cpu' too; either hierarchy will do.
        by_cgroup = {e.split(":")[1] for e in enforced if e.startswith(("cgroup-v1:", "cgroup-v2:"))}
        assert by_cgroup == {"memory", "pids", "cpu"}, enforced


def test_record_lists_variable_names_not_values(tmp_path: Path, sandbox: Backend) -> None:
    env = {"GIVEN": "1", "ANTHROPIC_API_KEY": "dummy-key-7d1e"}
    ran = run_cell(tmp_path, sandbox, "true", env=env)
    record = ran.exit.record
    assert record.env == ["ANTHROPIC_API_KEY", "GIVEN", "HOME", "HOSTNAME", "LANG", "PATH", "TMPDIR"]
    assert "dummy-key-7d1e" not in record.model_dump_json()


def test_none_is_recorded_as_the_host(tmp_path: Path) -> None:
    ran = run_cell(tmp_path, sandbox_backend("none"), "true", env={"GIVEN": "1"})
    record = ran.exit.record
    assert (record.backend, record.requested, record.network) == ("none", "none", "host")
    assert record.mounts == []
    assert record.env == ["GIVEN", "PATH"]
    # The memory limit as an address-space limit of the command (ulimit -v), and the disk watch:
    # nothing else of the limits is the host's to enforce per cell.
    assert record.limits.enforced_by == ["rlimit:as", "watch:disk"]


# -- which backend ---------------------------------------------------------------------------------


def test_auto_picks_podman_where_it_can_run() -> None:
    found = sandbox_backend("podman")
    assert resolve_backend("auto") == found


@pytest.mark.parametrize(("podman", "bwrap", "picked"), [
    (True, True, "podman"),
    (True, False, "podman"),
    (False, True, "bwrap"),
])
def test_auto_order(monkeypatch: pytest.MonkeyPatch, podman: bool, bwrap: bool, picked: str) -> None:
    usable = {"podman": podman, "bwrap": bwrap}
    monkeypatch.setattr(backends_module, "probe",
                        lambda name: Backend(name, (f"/usr/bin/{name}",)) if usable[name] else f"{name} cannot run")
    assert resolve_backend("auto").name == picked


def test_auto_without_a_backend_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends_module, "probe", lambda name: f"{name} is not installed")
    with pytest.raises(SandboxError) as caught:
        resolve_backend("auto")
    assert str(caught.value) == "no sandbox can run here: podman is not installed; bwrap is not installed"
    assert caught.value.hint == "install bubblewrap (or Podman), or give --sandbox none to run unisolated"


def test_named_backend_that_cannot_run_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends_module, "probe", lambda name: f"{name} is not installed")
    with pytest.raises(SandboxError) as caught:
        resolve_backend("bwrap")
    assert str(caught.value) == "bwrap is not installed"


def test_unknown_backend_is_an_error() -> None:
    with pytest.raises(SandboxError) as caught:
        resolve_backend("docker")
    assert str(caught.value) == "unknown sandbox 'docker'"
    assert caught.value.hint == "use one of auto, podman, bwrap, none"


# -- hidden paths ----------------------------------------------------------------------------------


def _refused(tmp_path: Path, workspace: Path, readonly: list[Path], hidden: list[Path]) -> SandboxError:
    run_dir = new_run_dir()
    cell = CellCommand(command="true", workspace=workspace, env={"PATH": PATH}, proxy=False,
                       limits=SandboxLimits(wall_clock_s=10), readonly=readonly, hidden=hidden)
    with pytest.raises(SandboxError) as caught:
        run_sandboxed(cell, resolve_backend("none"), requested="none", logs=tmp_path / "logs", run_dir=run_dir)
    # Nothing ran, and the run directory is gone as promised.
    assert not (tmp_path / "logs").exists()
    assert not run_dir.exists()
    return caught.value


def test_readonly_path_above_a_hidden_path_is_refused(tmp_path: Path) -> None:
    hidden = tmp_path / "bench" / "references"
    error = _refused(tmp_path, tmp_path / "ws", [tmp_path / "bench"], [hidden])
    assert str(error) == f"the read-only path {str(tmp_path / 'bench')!r} would show {str(hidden)!r} to the cell"


def test_readonly_path_inside_a_hidden_path_is_refused(tmp_path: Path) -> None:
    hidden = tmp_path / "bench"
    inside = hidden / "tools"
    error = _refused(tmp_path, tmp_path / "ws", [inside], [hidden])
    assert str(error) == f"the read-only path {str(inside)!r} would show {str(hidden)!r} to the cell"


def test_workspace_above_a_hidden_path_is_refused(tmp_path: Path) -> None:
    hidden = tmp_path / "ws" / "references"
    error = _refused(tmp_path, tmp_path / "ws", [], [hidden])
    assert str(error) == f"the workspace {str(tmp_path / 'ws')!r} would show {str(hidden)!r} to the cell"


def test_workspace_inside_a_hidden_path_is_allowed(tmp_path: Path) -> None:
    # A benchmark's output directory is hidden, and holds the cells' workspaces.
    ran = run_cell(tmp_path, resolve_backend("none"), "true", workspace=tmp_path / "out" / "ws",
                   hidden=[tmp_path / "out"])
    assert ran.exit.exit_status == 0


# -- disk use --------------------------------------------------------------------------------------


def test_disk_use_counts_blocks_not_sizes(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as handle:
        handle.truncate(100 * MIB)
    assert sparse.stat().st_size == 100 * MIB
    assert disk_use(tmp_path) < MIB
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "dense").write_bytes(os.urandom(2 * MIB))
    assert 2 * MIB <= disk_use(tmp_path) < 2 * MIB + MIB // 2


def test_disk_use_does_not_follow_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(os.urandom(2 * MIB))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "to-dir").symlink_to(outside)
    (ws / "to-file").symlink_to(outside / "big")
    assert disk_use(ws) < 64 * 1024


def test_disk_use_stops_counting_past_stop_at(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data").write_bytes(os.urandom(2 * MIB))
    full = disk_use(tmp_path)
    partial = disk_use(tmp_path, stop_at=MIB)
    assert MIB < partial < full


def test_a_hidden_path_inside_the_python_shown_to_cells_is_refused(tmp_path: Path) -> None:
    """The evaluator's Python is mounted read-only in every cell: a benchmark directory made inside
    it would be seen, so the cell is refused (the check runs with a real backend's mounts)."""
    hidden = python_paths()[0] / "bench-out"
    (tmp_path / "ws").mkdir()
    run_dir = new_run_dir()
    cell = CellCommand(command="true", workspace=tmp_path / "ws", env={"PATH": PATH}, proxy=False,
                       limits=SandboxLimits(wall_clock_s=10), hidden=[hidden])
    with pytest.raises(SandboxError) as caught:
        run_sandboxed(cell, sandbox_backend("bwrap"), requested="bwrap", logs=tmp_path / "logs", run_dir=run_dir)
    assert str(caught.value) == (f"the Python that runs rra, {str(python_paths()[0])!r}, is shown to every cell "
                                 f"and holds {str(hidden)!r}")
    assert not run_dir.exists()
