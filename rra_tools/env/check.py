"""Compare a live environment with an artifact's lock and hardware block; yield every mismatch.

Codes RRA700-RRA799 are the environment range. They are not rules of ``rra validate`` (which is
static); their catalogue, :data:`ENV_RULES`, sits beside the validator's in
:mod:`rra_tools.validate.catalog`, the one catalog of codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..io.artifact import Artifact
from ..validate.catalog import ENV_RULES, EnvRule
from ..validate.diagnostics import DOCS_BASE_URL, Diagnostic
from .artifact import manifest_model
from .live import Gpu, LiveEnv
from .locks import LockError, LockFile, LockedPackage, read_lock
from .markers import marker_applies

__all__ = ["ENV_RULES", "EnvRule", "check_environment", "check_hardware", "check_interpreter", "check_packages"]


#: Installers and build tools a fresh virtual environment may hold without the lock naming them.
_TOOLING = frozenset({"pip", "setuptools", "wheel", "uv"})


def _diag(code: str, message: str, *, pointer: str = "", file: str | None = None, line: int | None = None,
          hint: str | None = None) -> Diagnostic:
    rule = ENV_RULES[code]
    return Diagnostic(code=code, name=rule.name, severity=rule.severity, message=message, pointer=pointer,
                      file=file, line=line, hint=hint, url=f"{DOCS_BASE_URL}/{code}")


def check_environment(artifact: Artifact, live: LiveEnv, gpus: list[Gpu] | None, *,
                      hardware: bool = True) -> list[Diagnostic]:
    """Every mismatch between ``live`` (+ ``gpus``) and the artifact's environment block and lock;
    ``hardware=False`` skips the accelerator, driver and CUDA checks."""
    from ..io.digest import sha256_file

    out = list(check_interpreter(artifact, live))
    lock_ref = artifact.manifest.environment.lock
    lock_path = artifact.lock_path()
    if lock_ref is not None and lock_path is not None:
        try:
            actual = sha256_file(lock_path)
        except OSError as exc:
            out.append(_diag("RRA700", f"cannot read the lock file {lock_ref.path!r}: {exc.strerror or exc}",
                             pointer="/environment/lock/path", hint="run 'rra lock' to write it"))
        else:
            if actual != lock_ref.sha256:
                out.append(_diag("RRA701", f"lock file {lock_ref.path!r} has sha256 {actual!r}, the manifest "
                                 f"records {lock_ref.sha256!r}", pointer="/environment/lock/sha256",
                                 hint="run 'rra lock' to re-record it, or restore the locked file"))
            try:
                lock = read_lock(lock_path, str(lock_ref.format), display=lock_ref.path)
            except LockError as exc:
                for problem in exc.problems:
                    out.append(_diag("RRA700", problem.message, file=lock_ref.path, line=problem.line))
            else:
                out.extend(check_packages(lock, live))
    if hardware:
        out.extend(check_hardware(artifact, gpus))
    return sorted(out, key=Diagnostic.sort_key)


def check_interpreter(artifact: Artifact, live: LiveEnv) -> Iterator[Diagnostic]:
    """The interpreter's implementation and version against ``environment.interpreter``."""
    wanted = manifest_model(artifact).environment.interpreter
    if wanted.name.lower() != live.implementation.lower():
        yield _diag("RRA702", f"interpreter is {live.implementation!r}, the manifest needs {wanted.name!r}",
                    pointer="/environment/interpreter/name")
    have = live.python_version.split(".")
    need = wanted.version.split(".")
    if have[: len(need)] != need:
        yield _diag("RRA702", f"Python is {live.python_version!r}, the manifest needs {wanted.version!r}",
                    pointer="/environment/interpreter/version",
                    hint=f"create the environment with Python {wanted.version} (rra env create --python ...)")


def _applies(package: LockedPackage, live: LiveEnv) -> bool:
    return marker_applies(package.marker, live.markers)


def check_packages(lock: LockFile, live: LiveEnv) -> Iterator[Diagnostic]:
    """Installed distributions against the lock: missing, other version, not in the lock."""
    locked_names: set[str] = set()
    for name, candidates in sorted(lock.by_name().items()):
        locked_names.add(name)
        if lock.format == "conda-lock":
            candidates = [p for p in candidates if p.manager == "pip"] or candidates
        applicable = [p for p in candidates if _applies(p, live)]
        if not applicable:
            continue
        package = applicable[0]
        if package.source == "conda" or package.version is None:
            yield _diag("RRA711", f"{name!r} ({package.source} package) is not compared with the live "
                        "environment", file=lock.path, line=package.line)
            continue
        installed = live.dists.get(name)
        versions = sorted({p.version for p in applicable if p.version})
        shown = " or ".join(repr(v) for v in versions)
        if installed is None:
            yield _diag("RRA703", f"{name} {shown} is locked but not installed", file=lock.path,
                        line=package.line, hint="run 'rra env create' for an environment built from the lock")
        elif not any(_same_version(installed.version, v) for v in versions):
            yield _diag("RRA704", f"{name} is {installed.version!r}, the lock pins {shown}", file=lock.path,
                        line=package.line)
    for name, dist in sorted(live.dists.items()):
        if name not in locked_names and name not in _TOOLING:
            yield _diag("RRA705", f"{name} {dist.version!r} is installed but not in the lock", file=lock.path)


def _same_version(a: str, b: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _norm_model(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower().replace("nvidia", "", 1))


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def check_hardware(artifact: Artifact, gpus: list[Gpu] | None) -> Iterator[Diagnostic]:
    """Accelerators, their memory, the driver and CUDA against ``hardware`` and ``cuda``."""
    environment = manifest_model(artifact).environment
    accelerators = environment.hardware.accelerators
    cuda = environment.cuda
    needs_gpu = bool(accelerators) or cuda is not None
    if not needs_gpu:
        return
    if gpus is None:
        yield _diag("RRA710", "the manifest needs accelerators, but nvidia-smi was not found to list them",
                    pointer="/environment/hardware/accelerators",
                    hint="install the NVIDIA driver utilities, or set RRA_GPU_INVENTORY for a dry check")
        return
    for index, wanted in enumerate(accelerators):
        pointer = f"/environment/hardware/accelerators/{index}"
        if str(wanted.vendor) != "nvidia":
            continue
        model = _norm_model(wanted.model)
        matching = [g for g in gpus if model and model in _norm_model(g.name)]
        if len(matching) < wanted.count:
            present = ", ".join(sorted({g.name for g in gpus})) or "none"
            yield _diag("RRA706", f"{wanted.count} x {wanted.model!r} needed, {len(matching)} found "
                        f"(present: {present})", pointer=pointer)
        if wanted.memory_gib is not None:
            # Cards sold as N GB report a little less than N GiB; 5 % slack keeps an 80GB A100 an 80 GiB card.
            for gpu in matching:
                if gpu.memory_total_mib is not None and gpu.memory_total_mib / 1024 < wanted.memory_gib * 0.95:
                    yield _diag("RRA707", f"GPU {gpu.index} ({gpu.name}) has {gpu.memory_total_mib / 1024:.1f} GiB, "
                                f"{wanted.memory_gib:g} GiB needed", pointer=f"{pointer}/memory_gib")
    if cuda is None or not gpus:
        return
    if cuda.min_driver is not None:
        for gpu in gpus:
            if gpu.driver_version and _version_tuple(gpu.driver_version) < _version_tuple(cuda.min_driver):
                yield _diag("RRA708", f"GPU {gpu.index} driver is {gpu.driver_version!r}, at least "
                            f"{cuda.min_driver!r} needed", pointer="/environment/cuda/min_driver")
                break
    versions = {g.cuda_version for g in gpus if g.cuda_version}
    for version in sorted(versions):
        if _version_tuple(version) < _version_tuple(cuda.min_version):
            yield _diag("RRA709", f"the driver supports CUDA {version!r}, at least {cuda.min_version!r} needed",
                        pointer="/environment/cuda/min_version")
