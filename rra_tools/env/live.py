"""What a live environment holds: interpreter, installed distributions, marker values, GPUs.

The interpreter is asked in a subprocess, so the environment checked need not be the one the
tool runs in (``--python``). GPUs come from ``nvidia-smi``, or from ``RRA_GPU_INVENTORY`` (a JSON
list of ``{index, name, driver_version, memory_total_mib[, cuda_version]}``) when set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from ..errors import ExitStatus
from .errors import EnvLayerError

__all__ = ["GPU_INVENTORY_VAR", "Gpu", "InstalledDist", "LiveEnv", "LiveEnvError", "gpu_inventory", "inspect_python"]

#: Environment variable that replaces ``nvidia-smi`` as the source of the GPU inventory.
GPU_INVENTORY_VAR = "RRA_GPU_INVENTORY"


class LiveEnvError(EnvLayerError):
    """The live environment could not be inspected."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class InstalledDist:
    """One installed distribution; ``direct_url`` is the parsed PEP 610 ``direct_url.json``."""

    name: str  # PEP 503-normalised
    version: str
    direct_url: dict[str, object] | None = None

    @property
    def is_local(self) -> bool:
        """Installed from a local directory or file rather than an index."""
        url = self.direct_url.get("url") if self.direct_url else None
        return isinstance(url, str) and url.startswith("file:")


@dataclass(frozen=True)
class LiveEnv:
    """An interpreter and the distributions it sees."""

    executable: str
    implementation: str
    python_version: str
    markers: dict[str, str]
    dists: dict[str, InstalledDist] = field(default_factory=dict)


@dataclass(frozen=True)
class Gpu:
    """One accelerator of the machine."""

    index: int
    name: str
    driver_version: str | None
    memory_total_mib: float | None
    cuda_version: str | None = None


# Runs inside the inspected interpreter: standard library only, any Python >= 3.8.
_PROBE = r"""
import json, os, platform, sys
import importlib.metadata as md
def fv(info):
    v = '{0.major}.{0.minor}.{0.micro}'.format(info)
    if info.releaselevel != 'final':
        v += info.releaselevel[0] + str(info.serial)
    return v
impl = sys.implementation.name
markers = {
    'implementation_name': impl,
    'implementation_version': fv(sys.implementation.version),
    'os_name': os.name,
    'platform_machine': platform.machine(),
    'platform_release': platform.release(),
    'platform_system': platform.system(),
    'platform_version': platform.version(),
    'python_full_version': platform.python_version(),
    'platform_python_implementation': platform.python_implementation(),
    'python_version': '.'.join(platform.python_version_tuple()[:2]),
    'sys_platform': sys.platform,
}
dists = []
for d in md.distributions():
    name = d.metadata['Name']
    if not name:
        continue
    try:
        du = d.read_text('direct_url.json')
        du = json.loads(du) if du else None
    except Exception:
        du = None
    dists.append({'name': name, 'version': d.version, 'direct_url': du})
print(json.dumps({'executable': sys.executable, 'implementation': impl,
                  'python_version': platform.python_version(), 'markers': markers, 'dists': dists}))
"""


def inspect_python(python: str | None = None, timeout: float = 60.0) -> LiveEnv:
    """Inspect the interpreter ``python`` (default: the one running this tool)."""
    from packaging.utils import canonicalize_name

    executable = python or sys.executable
    try:
        proc = subprocess.run([executable, "-I", "-c", _PROBE], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LiveEnvError(f"cannot run the interpreter {executable!r}: {exc}") from None
    if proc.returncode != 0:
        raise LiveEnvError(f"the interpreter {executable!r} failed to report its environment: "
                           f"{proc.stderr.strip()[-500:]}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise LiveEnvError(f"the interpreter {executable!r} printed something that is not JSON") from None
    dists: dict[str, InstalledDist] = {}
    for entry in report["dists"]:
        name = canonicalize_name(entry["name"])
        # The first one found on sys.path is the one that imports; later ones are shadowed.
        dists.setdefault(name, InstalledDist(name=name, version=entry["version"], direct_url=entry["direct_url"]))
    return LiveEnv(executable=report["executable"], implementation=report["implementation"],
                   python_version=report["python_version"], markers=report["markers"], dists=dists)


def gpu_inventory(timeout: float = 20.0) -> list[Gpu] | None:
    """The machine's GPUs; None when it cannot tell (no nvidia-smi and no override)."""
    override = os.environ.get(GPU_INVENTORY_VAR)
    if override is not None:
        return _parse_inventory(override)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    query = [smi, "--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader,nounits"]
    try:
        proc = subprocess.run(query, capture_output=True, text=True, timeout=timeout, check=False)
        header = subprocess.run([smi], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    found = re.search(r"CUDA Version:\s*([0-9.]+)", header.stdout)
    cuda = found.group(1) if found else None
    gpus = []
    for line in proc.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            continue
        try:
            memory: float | None = float(parts[3])
        except ValueError:
            memory = None
        gpus.append(Gpu(index=int(parts[0]), name=parts[1], driver_version=parts[2] or None,
                        memory_total_mib=memory, cuda_version=cuda))
    return gpus


def _parse_inventory(text: str) -> list[Gpu]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LiveEnvError(f"{GPU_INVENTORY_VAR} is not JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(data, list):
        raise LiveEnvError(f"{GPU_INVENTORY_VAR} must be a JSON list of GPUs, got {type(data).__name__}")
    gpus = []
    for number, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise LiveEnvError(f"{GPU_INVENTORY_VAR}[{number}] needs at least a string 'name'")
        memory = entry.get("memory_total_mib")
        driver = entry.get("driver_version")
        cuda = entry.get("cuda_version")
        gpus.append(Gpu(index=int(entry.get("index", number)), name=entry["name"],
                        driver_version=str(driver) if driver is not None else None,
                        memory_total_mib=float(memory) if isinstance(memory, (int, float)) else None,
                        cuda_version=str(cuda) if cuda is not None else None))
    return gpus
