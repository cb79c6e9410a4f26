"""The artifact's own Python package (``environment.package``, RRA 1.1).

Many research repositories are installed with ``pip install .`` and run through console
scripts. Such an artifact names its package in ``environment.package`` (directory and
distribution name), and then:

- ``rra lock`` resolves the package's own requirements (its ``pyproject.toml``, ``setup.py`` or
  ``setup.cfg``, read by uv) together with its build requirements (``[build-system] requires``,
  else setuptools as PEP 517 prescribes), and appends the package to the lock as a ``directory``
  entry whose ``[packages.tool.rra] tree-sha256`` is the digest of its tree
  (:func:`package_tree_digest`);
- ``rra env create`` installs the locked packages hash-checked, then the package from a copy of
  its tree (so the build writes nothing into the artifact) with ``--no-deps --no-build-isolation
  --no-index``: nothing is fetched, the build uses the locked build requirements, and the tree's
  digest is checked against the lock first, on every build and every reuse;
- the SBOM carries the tree digest as the package's hash.

The tree digest is :func:`rra_tools.env.sbom.tree_digest` of the package directory without the
artifact's own files (manifest, lock, run records, guide, ``patches``, ``.rra``) and without
build outputs (``build``, ``dist``, ``*.egg-info``, which building or locking writes there).
"""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..io.read import bounded_toml
from ..io.artifact import Artifact, ArtifactError
from ..io.paths import resolve_inside
from .artifact import manifest_model
from .errors import EnvLayerError

__all__ = ["OwnPackageError", "PackageSource", "build_requirements", "lock_entry", "own_package",
           "package_inputs", "package_tree_digest", "staged_copy", "temporary_directory"]

#: What PEP 517 says a front end assumes when a project declares no build system.
DEFAULT_BUILD_REQUIRES = ("setuptools>=40.8.0",)


class OwnPackageError(ArtifactError, EnvLayerError):
    """The artifact's package cannot be located, locked or installed."""


@dataclass(frozen=True)
class PackageSource:
    """The declared package: its name and its directory inside the artifact."""

    name: str
    rel: str
    directory: Path


def own_package(artifact: Artifact) -> PackageSource | None:
    """The manifest's ``environment.package``, resolved inside the root; None when not declared."""
    package = manifest_model(artifact).environment.package
    if package is None:
        return None
    resolved = resolve_inside(artifact.root, package.path, kind="dir")
    if resolved.path is None:
        raise OwnPackageError(f"environment.package.path {package.path!r} is not a directory inside the artifact")
    if not any((resolved.path / name).is_file() for name in ("pyproject.toml", "setup.py", "setup.cfg")):
        raise OwnPackageError(f"environment.package.path {package.path!r} holds no pyproject.toml, setup.py or "
                              "setup.cfg", hint="point it at the directory 'pip install' would be given")
    return PackageSource(package.name, package.path, resolved.path)


def _excluded(artifact: Artifact) -> frozenset[Path]:
    model = manifest_model(artifact)
    paths = {artifact.manifest_path, artifact.root / "patches", artifact.root / ".rra", artifact.runs_dir}
    if model.environment.lock is not None:
        paths.add(artifact.root / model.environment.lock.path)
    if model.guide is not None:
        paths.add(artifact.root / model.guide.path)
    return frozenset(p.absolute() for p in paths)


def package_tree_digest(artifact: Artifact, source: PackageSource) -> str:
    """The digest of the package's tree (see the module docstring for what it leaves out)."""
    from .sbom import tree_digest

    return tree_digest(source.directory, _excluded(artifact), build_outputs=True)


def package_inputs(source: PackageSource) -> list[Path]:
    """The files uv reads the package's requirements from."""
    for name in ("pyproject.toml", "setup.py", "setup.cfg"):
        path = source.directory / name
        if path.is_file():
            if name == "pyproject.toml":
                try:
                    project = bounded_toml.loads(path.read_text(encoding="utf-8")).get("project")
                except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                    raise OwnPackageError(f"{path}: invalid TOML: {exc}") from None
                if not isinstance(project, dict) and (source.directory / "setup.py").is_file():
                    continue  # a pyproject.toml for tools only; the metadata is in setup.py
            return [path]
    return []


def build_requirements(source: PackageSource) -> list[str]:
    """``[build-system] requires`` of the package, else PEP 517's default (setuptools)."""
    pyproject = source.directory / "pyproject.toml"
    if pyproject.is_file():
        try:
            system = bounded_toml.loads(pyproject.read_text(encoding="utf-8")).get("build-system")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise OwnPackageError(f"{pyproject}: invalid TOML: {exc}") from None
        requires = system.get("requires") if isinstance(system, dict) else None
        if isinstance(requires, list) and all(isinstance(r, str) for r in requires):
            return list(requires)
    return list(DEFAULT_BUILD_REQUIRES)


def lock_entry(source: PackageSource, lock_dir: Path, tree: str) -> str:
    """The ``[[packages]]`` entry of the package in a pylock.toml written in ``lock_dir``."""
    import os

    rel = Path(os.path.relpath(source.directory, lock_dir)).as_posix()
    name = source.name.replace("\\", "\\\\").replace('"', '\\"')
    return (f'\n[[packages]]\nname = "{name}"\ndirectory = {{ path = "{rel}", editable = false }}\n'
            f'\n[packages.tool.rra]\n# The artifact\'s own package (environment.package): the digest of its tree.\n'
            f'tree-sha256 = "{tree}"\n')


def staged_copy(source: PackageSource, artifact: Artifact, into: Path) -> Path:
    """A copy of the package's tree under ``into`` to build from (a build writes build/ and
    *.egg-info next to the sources; the artifact stays untouched)."""
    excluded = _excluded(artifact)
    target = into / "src"

    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if (Path(directory) / n).absolute() in excluded or n in (".git", "build", "dist")
                or n.endswith(".egg-info") or n == "__pycache__"}

    shutil.copytree(source.directory, target, symlinks=True, ignore=ignore)
    return target


def temporary_directory() -> tempfile.TemporaryDirectory[str]:
    """Where a build stages its copy."""
    return tempfile.TemporaryDirectory(prefix="rra-own-package-")
