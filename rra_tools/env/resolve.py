"""Writing a PEP 751 ``pylock.toml`` with uv: from declared requirements, or from a live environment.

uv does the resolving and the hashing (``uv pip compile --generate-hashes --format pylock.toml``);
this module only gathers the inputs, runs it, and records the result. See docs/environment.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import ExitStatus
from ..io.read import bounded_toml
from ..io.read.bounded_yaml import YamlBoundsError, load_yaml
from ..io.artifact import Artifact
from ..io.atomic import write_atomic
from .artifact import manifest_model
from .errors import EnvLayerError
from .live import inspect_python

__all__ = ["LockResult", "ResolveError", "UvNotFound", "declared_requirements", "find_uv", "lock_from_env",
           "lock_from_requirements"]

_NETWORK_HINTS = ("dns error", "error sending request", "failed to fetch", "connection refused", "network",
                  "could not connect", "timed out", "offline", "tcp connect error")


class ResolveError(EnvLayerError):
    """Resolution or hashing failed; the message says why and what to do."""

    exit_status = ExitStatus.FAILED


class UvNotFound(ResolveError):
    """uv is neither importable (the 'env' extra) nor on PATH: an installation problem, not a
    failed resolution."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class LockResult:
    """What a lock run wrote."""

    text: str
    #: Distributions recorded without hashes (installed from a local directory), by name.
    unhashed: tuple[str, ...] = ()
    #: Where the requirements came from (file names), for the report.
    sources: tuple[str, ...] = ()


def find_uv() -> str:
    """Path of the uv executable: the ``uv`` Python package's binary, else ``uv`` on PATH."""
    try:
        import uv

        found: str = uv.find_uv_bin()
        return found
    except (ImportError, FileNotFoundError, AttributeError):
        pass
    on_path = shutil.which("uv")
    if on_path is None:
        # Worded as the CLI's message for every missing extra (rra_tools.cli.extras), plus the
        # PATH fallback that only uv has.
        raise UvNotFound("this command needs the optional extra 'env' ('uv' cannot be imported and there is no "
                           "uv on PATH); install it with: pip install 'rra-tools[env]'")
    return on_path


def declared_requirements(artifact: Artifact) -> tuple[list[Path], list[str], list[str]]:
    """What the artifact declares: requirements.in or requirements.txt and pyproject.toml (given to
    uv as they are, so their own relative paths and options keep working), plus the ``pip:``
    section of environment.yml. Returns (input files, extra requirements, names of the sources)."""
    root = artifact.root
    files: list[Path] = []
    extra: list[str] = []
    sources: list[str] = []
    for name in ("requirements.in", "requirements.txt"):
        if (root / name).is_file():
            files.append(root / name)
            sources.append(name)
            break
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = bounded_toml.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ResolveError(f"{pyproject}: invalid TOML: {exc}") from None
        project = data.get("project", {})
        if isinstance(project, dict) and (project.get("dependencies") or "dependencies" in project.get("dynamic", [])):
            files.append(pyproject)
            sources.append("pyproject.toml")
    for name in ("environment.yml", "environment.yaml"):
        path = root / name
        if path.is_file():
            try:
                # The bounded loader: aliases, depth and size within limits (a billion laughs
                # in the repository's environment.yml is refused, not expanded).
                env = load_yaml(path.read_text(encoding="utf-8"), str(path)) or {}
            except YamlBoundsError as exc:
                raise ResolveError(f"invalid YAML: {exc}") from None
            except UnicodeDecodeError as exc:
                raise ResolveError(f"{path}: invalid YAML: {exc}") from None
            dependencies = env.get("dependencies", []) if isinstance(env, dict) else []
            for dep in dependencies if isinstance(dependencies, list) else []:
                if isinstance(dep, dict) and isinstance(dep.get("pip"), list):
                    # A requirement is a string; anything else there is not one.
                    extra.extend(d for d in dep["pip"] if isinstance(d, str))
                    sources.append(f"{name} (pip section)")
            break
    return files, extra, sources


def _run_uv(args: list[str], what: str) -> None:
    try:
        proc = subprocess.run([find_uv(), *args], capture_output=True, text=True, timeout=1800, check=False,
                              env={**os.environ, "UV_NO_PROGRESS": "1"})
    except subprocess.TimeoutExpired:
        raise ResolveError(f"{what}: uv did not finish within 30 minutes") from None
    if proc.returncode != 0:
        detail = proc.stderr.strip()[-2000:]
        if any(h in detail.lower() for h in _NETWORK_HINTS):
            raise ResolveError(f"{what} needs the package index, which could not be reached; "
                               f"connect to it (or set UV_INDEX_URL to a reachable mirror) and retry.\n{detail}")
        raise ResolveError(f"{what} failed:\n{detail}")


def _compile(files: list[Path], requirements: list[str], extra_args: list[str], what: str) -> str:
    with tempfile.TemporaryDirectory(prefix="rra-lock-") as tmp:
        inputs = [str(f) for f in files]
        if requirements:
            source = Path(tmp) / "requirements.in"
            source.write_text("\n".join(requirements) + "\n", encoding="utf-8")
            inputs.append(str(source))
        target = Path(tmp) / "pylock.toml"
        _run_uv(["pip", "compile", *inputs, "--generate-hashes", "--format", "pylock.toml", "--quiet",
                 "--no-header", "-o", str(target), *extra_args], what)
        text = target.read_text(encoding="utf-8")
    header = (f"# PEP 751 lock written by 'rra lock' with uv ({what}).\n"
              "# Regenerate with 'rra lock'; the manifest records this file's sha256.\n")
    return header + text


def lock_from_requirements(artifact: Artifact, out: Path, python_version: str | None = None) -> LockResult:
    """Resolve the artifact's declared requirements for every platform (``--universal``) and write ``out``."""
    from .own_package import (PackageSource, build_requirements, lock_entry, own_package, package_inputs,
                              package_tree_digest, staged_copy, temporary_directory)

    files, requirements, sources = declared_requirements(artifact)
    package = own_package(artifact)
    staging = temporary_directory()
    if package is not None:
        # Its own requirements (read by uv from a copy: reading setup.py metadata writes *.egg-info
        # next to it) and what building it needs (installed later without build isolation).
        copy = PackageSource(package.name, package.rel, staged_copy(package, artifact, Path(staging.name)))
        own_files = {f.name for f in package_inputs(copy)}
        files = [f for f in files if not (f.parent == package.directory and f.name in own_files)]
        files += package_inputs(copy)
        requirements += build_requirements(package)
        sources.append(f"package {package.name} ({package.rel})")
    if not files and not requirements:
        staging.cleanup()
        raise ResolveError(f"{artifact.root} declares no requirements (requirements.txt, pyproject.toml "
                           "[project.dependencies] or environment.yml pip section); use --from-env to "
                           "capture an installed environment instead")
    version = python_version or manifest_model(artifact).environment.interpreter.version
    try:
        text = _compile(files, requirements, ["--universal", "--python-version", version],
                        f"resolving {', '.join(sources)} for Python {version}")
    finally:
        staging.cleanup()
    if package is not None:
        # After resolving: uv may write <name>.egg-info into the tree, which the digest leaves out.
        text += lock_entry(package, out.parent, package_tree_digest(artifact, package))
    write_atomic(out, text.encode("utf-8"))
    return LockResult(text=text, sources=tuple(sources))


def lock_from_env(out: Path, python: str | None = None) -> LockResult:
    """Pin every distribution installed in ``python``'s environment at its installed version, with the
    index's hashes for that interpreter and platform; local installs are recorded as directories."""
    live = inspect_python(python)
    pinned = [f"{d.name}=={d.version}" for d in sorted(live.dists.values(), key=lambda d: d.name) if not d.is_local]
    local = [d for d in sorted(live.dists.values(), key=lambda d: d.name) if d.is_local]
    if pinned:
        text = _compile([], pinned, ["--no-deps", "--python", live.executable],
                        f"capturing the environment of {live.executable} (Python {live.python_version})")
    else:
        text = f'lock-version = "1.0"\ncreated-by = "rra-tools"\nrequires-python = "=={live.python_version}"\n'
    for dist in local:
        info = dist.direct_url or {}
        url = str(info.get("url", ""))
        path = url.removeprefix("file://")
        dir_info = info.get("dir_info")
        editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
        try:
            shown = os.path.relpath(path, out.parent)
        except ValueError:
            shown = path
        kind = "directory" if isinstance(dir_info, dict) else "archive"
        entry = f'\n[[packages]]\nname = {_toml_str(dist.name)}\nversion = {_toml_str(dist.version)}\n'
        if kind == "directory":
            entry += f"directory = {{ path = {_toml_str(shown)}, editable = {'true' if editable else 'false'} }}\n"
        else:
            from ..io.digest import sha256_file

            try:
                digest = sha256_file(Path(path))
            except OSError:
                raise ResolveError(f"{dist.name} {dist.version} was installed from {url!r}, which is gone; "
                                   "its hash cannot be recorded") from None
            entry += f"archive = {{ path = {_toml_str(shown)}, hashes = {{ sha256 = {_toml_str(digest)} }} }}\n"
        text += entry
    write_atomic(out, text.encode("utf-8"))
    return LockResult(text=text, unhashed=tuple(d.name for d in local))


def _toml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
