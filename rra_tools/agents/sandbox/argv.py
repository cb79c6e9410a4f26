"""The command lines of the two backends for one cell: bubblewrap's and Podman's.

Both give the same picture (:mod:`.layout`): the listed mounts and nothing else, a network
namespace with only its own loopback, a PID namespace (the host's processes, the evaluator
among them, cannot be seen, signalled or traced), no capabilities, a new session (no terminal
to inject keystrokes into), and the cell's environment only.

- **bubblewrap** needs no daemon and no image, and runs inside a Slurm job. Its limits come
  from the cell's control group (:mod:`.cgroup`), which the runner joins before ``exec``.
- **Podman** runs the same mounts over an empty root directory (``--rootfs``), so no image is
  pulled; its limits are its own (``--memory``, ``--pids-limit``, ``--cpus``) and GPUs are CDI
  devices (``nvidia.com/gpu=N``).
"""

from __future__ import annotations

import glob
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...model.cell import SandboxLimits, SandboxMount
from .layout import INSIDE_TMP, system_links

__all__ = ["bwrap_argv", "gpu_device_paths", "podman_argv"]


def gpu_device_paths(gpus: Sequence[int]) -> list[str]:
    """The device files of the leased GPUs and the driver's shared ones (control, UVM), as they
    exist on this host; the other GPUs' files are left out."""
    shared = ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"]
    shared += sorted(glob.glob("/dev/nvidia-caps/*"))
    own = [f"/dev/nvidia{i}" for i in gpus]
    return [p for p in own + shared if Path(p).exists()]


def bwrap_argv(bwrap: str, mounts: Sequence[SandboxMount], env: Mapping[str, str], workdir: Path,
               devices: Sequence[str], tmp_mib: int | None, command: Sequence[str]) -> list[str]:
    """bubblewrap's command line for ``command`` (the init program and the cell's command)."""
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", "cell", "--clearenv", "--proc", "/proc", "--dev", "/dev"]
    # /tmp first: a later mount under it (a workspace in /tmp) must not be hidden by the tmpfs.
    if tmp_mib is not None:
        argv += ["--size", str(tmp_mib << 20)]
    argv += ["--tmpfs", INSIDE_TMP]
    for link, target in system_links():
        argv += ["--symlink", target, link]
    for mount in mounts:
        argv += ["--ro-bind" if mount.mode == "ro" else "--bind", mount.source, mount.target]
    for device in devices:
        argv += ["--dev-bind", device, device]
    for name, value in sorted(env.items()):
        argv += ["--setenv", name, value]
    # Last: the root (and the directories made on it for the mount points above) read-only, as
    # Podman's --read-only makes it; the workspace and /tmp are mounts of their own and stay
    # writable. Otherwise a cell could write into the parents of its workspace, which exist
    # only inside but look like the benchmark directory.
    argv += ["--remount-ro", "/", "--chdir", str(workdir), "--", *command]
    return argv


def podman_argv(podman: Sequence[str], rootfs: Path, name: str, mounts: Sequence[SandboxMount],
                env: Mapping[str, str], workdir: Path, limits: SandboxLimits, gpus: Sequence[int],
                tmp_mib: int | None, command: Sequence[str]) -> list[str]:
    """Podman's command line: a container named ``name`` over the empty root ``rootfs``."""
    argv = [*podman, "run", "--rm", "--name", name, "--network", "none", "--cap-drop", "all",
            "--security-opt", "no-new-privileges", "--hostname", "cell", "--pull", "never",
            "--log-driver", "none", "--env-host=false", "--workdir", str(workdir)]
    # The same picture as bubblewrap's: a read-only root (a writable one is the host's disk, where
    # the workspace's quota does not reach; --read-only puts tmpfs, charged to the cell's memory,
    # on /run and /var/tmp), only the cell's variables (not Podman's TERM and HOSTNAME), and no
    # /etc/hosts (a copy of the host's, with the host's address).
    argv += ["--read-only", "--unsetenv-all", "--no-hosts"]
    tmp = "rw,nosuid,nodev" + (f",size={tmp_mib}m" if tmp_mib is not None else "")
    argv += ["--tmpfs", f"{INSIDE_TMP}:{tmp}"]
    if limits.memory_mib is not None:
        argv += ["--memory", f"{limits.memory_mib}m", "--memory-swap", f"{limits.memory_mib}m"]
    if limits.pids is not None:
        argv += ["--pids-limit", str(limits.pids)]
    if limits.cpus is not None:
        argv += ["--cpus", f"{limits.cpus:g}"]
    for mount in mounts:
        argv += ["-v", f"{mount.source}:{mount.target}:{mount.mode}"]
    for gpu in gpus:
        argv += ["--device", f"nvidia.com/gpu={gpu}"]
    for key, value in sorted(env.items()):
        argv += ["--env", f"{key}={value}"]
    argv += ["--rootfs", str(rootfs), *command]
    return argv
