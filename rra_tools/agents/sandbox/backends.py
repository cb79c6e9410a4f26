"""Which sandbox backend a cell gets: ``auto`` picks Podman when it can run a sandbox here,
else bubblewrap; ``none`` (the host, no isolation) only when asked for by name.

Each backend is probed once per process by running a real sandbox of the cell's shape (an
empty root, its own network namespace, no capabilities) with ``/usr/bin/true``: a program that
is installed but cannot make namespaces here (a container without user namespaces, a missing
setuid bit) is not usable, and the reason is kept for the error message.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxError
from .layout import INSIDE_TMP, SYSTEM_LINKS, system_links

__all__ = ["CDI_DIRS", "CHOICES", "Backend", "cdi_has_gpus", "for_gpus", "podman_conf", "probe", "resolve_backend"]

#: What ``--sandbox`` accepts.
CHOICES = ("auto", "podman", "bwrap", "none")

#: Podman's settings for cells: no default ulimits (runc cannot set them in some containers,
#: and a cell's limits are its own options anyway).
PODMAN_CONF = "[containers]\ndefault_ulimits = []\n"


@dataclass(frozen=True)
class Backend:
    """A usable backend: its name and the command that starts it (program and global options)."""

    name: str
    command: tuple[str, ...]


def podman_conf() -> Path:
    """A containers.conf for cells (:data:`PODMAN_CONF`), written once per process."""
    return _podman_conf_path()


@functools.cache
def _podman_conf_path() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="rra-podman-"))
    path = directory / "containers.conf"
    path.write_text(PODMAN_CONF, encoding="ascii")
    return path


def _run(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        return (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()[-1]
    return None


@functools.cache
def _probe_bwrap() -> Backend | str:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", INSIDE_TMP]
    for link, target in system_links():
        argv += ["--symlink", target, link]
    for name in SYSTEM_LINKS:
        if os.path.isdir(f"/{name}") and not os.path.islink(f"/{name}"):
            argv += ["--ro-bind", f"/{name}", f"/{name}"]
    argv += ["--", "/usr/bin/true"]
    why = _run(argv)
    if why is not None:
        return f"bubblewrap cannot make a sandbox here: {why}"
    return Backend("bwrap", (bwrap,))


@functools.cache
def _probe_podman() -> Backend | str:
    podman = shutil.which("podman")
    if podman is None:
        return "podman is not installed (Debian: apt-get install podman runc)"
    env = {**os.environ, "CONTAINERS_CONF": str(podman_conf())}
    runtimes: list[tuple[str, ...]] = [(podman,)]
    runc = shutil.which("runc") or ("/usr/sbin/runc" if Path("/usr/sbin/runc").exists() else None)
    if runc is not None:
        # crun, Podman's default, fails on some hosts in cgroup hybrid mode; runc works there.
        runtimes.append((podman, "--runtime", runc))
    last = "no runtime"
    with tempfile.TemporaryDirectory(prefix="rra-probe-") as root:
        for name in ("usr", "tmp"):
            os.mkdir(os.path.join(root, name))
        os.symlink("usr/lib", os.path.join(root, "lib"))
        os.symlink("usr/lib64", os.path.join(root, "lib64"))
        os.symlink("usr/bin", os.path.join(root, "bin"))
        for command in runtimes:
            why = _run([*command, "run", "--rm", "--network", "none", "--cap-drop", "all", "--pull", "never",
                        "--log-driver", "none", "-v", "/usr:/usr:ro", "--rootfs", root, "/usr/bin/true"], env)
            if why is None:
                return Backend("podman", command)
            last = why
    return f"podman cannot run a container here: {last}"


#: Where Container Device Interface specifications live (nvidia-ctk cdi generate writes there).
CDI_DIRS = (Path("/etc/cdi"), Path("/var/run/cdi"))


def cdi_has_gpus() -> bool:
    """Whether a CDI specification here names NVIDIA GPUs (Podman passes GPUs only through CDI)."""
    for directory in CDI_DIRS:
        try:
            for spec in directory.iterdir():
                if spec.suffix in (".yaml", ".yml", ".json") and "nvidia.com/gpu" in spec.read_text(errors="replace"):
                    return True
        except OSError:
            continue
    return False


def for_gpus(backend: Backend, requested: str) -> Backend:
    """The backend for a cell with GPUs: under 'auto', bubblewrap when Podman has no CDI
    specification for them (it could not pass them in); otherwise ``backend`` itself (a Podman
    asked for by name then fails to start, saying why)."""
    if backend.name == "podman" and requested == "auto" and not cdi_has_gpus():
        found = probe("bwrap")
        if isinstance(found, Backend):
            return found
    return backend


def probe(name: str) -> Backend | str:
    """The backend ``name`` ('bwrap' or 'podman') when usable here, else why not."""
    return _probe_bwrap() if name == "bwrap" else _probe_podman()


def resolve_backend(requested: str) -> Backend:
    """The backend a cell runs under for ``--sandbox requested``; SandboxError when the one asked
    for (or, for 'auto', neither) can run here."""
    if requested not in CHOICES:
        raise SandboxError(f"unknown sandbox {requested!r}", f"use one of {', '.join(CHOICES)}")
    if requested == "none":
        return Backend("none", ())
    if requested == "auto":
        reasons = []
        for name in ("podman", "bwrap"):
            found = probe(name)
            if isinstance(found, Backend):
                return found
            reasons.append(found)
        raise SandboxError("no sandbox can run here: " + "; ".join(reasons),
                           "install bubblewrap (or Podman), or give --sandbox none to run unisolated")
    found = probe(requested)
    if isinstance(found, str):
        raise SandboxError(found, "give --sandbox auto to use whichever backend works")
    return found
