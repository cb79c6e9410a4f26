"""``rra lock``, ``rra env check|create`` and ``rra sbom``: parse options, call rra_tools.env, render.

Only click is imported at module level; the library is imported inside each command.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import ExitStatus

__all__ = ["env", "lock", "sbom"]

_ARTIFACT = click.argument("artifact", default=".", type=click.Path(exists=False))
_PYTHON = click.option("--python", "python", metavar="PYTHON", default=None,
                       help="Interpreter of the environment to use.  [default: the one running rra]")


@click.command()
@_ARTIFACT
@click.option("--from-env", is_flag=True,
              help="Capture the installed environment (of --python) instead of resolving the declared requirements.")
@click.option("--format", "fmt", type=click.Choice(["pylock"]), default="pylock", show_default=True,
              help="Lock format to write (PEP 751).")
@click.option("-o", "--output", default=None, metavar="PATH",
              help="Lock file, relative to the artifact.  [default: the manifest's pylock path, else pylock.toml]")
@click.option("--python-version", default=None, metavar="X.Y",
              help="Python to resolve for.  [default: environment.interpreter.version]")
@_PYTHON
def lock(artifact: str, from_env: bool, fmt: str, output: str | None, python_version: str | None,
         python: str | None) -> None:
    """Write the artifact's PEP 751 lock with uv and record its sha256 in the manifest."""
    from pathlib import Path

    from ..env.artifact import update_lock_block
    from ..io.artifact import load_artifact
    from ..env.locks import read_lock
    from ..env.resolve import lock_from_env, lock_from_requirements
    from ..io.digest import sha256_file

    loaded = load_artifact(Path(artifact))
    current = loaded.manifest.environment.lock
    rel = output or (current.path if current is not None and str(current.format) == "pylock" else "pylock.toml")
    target = loaded.inside(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if from_env:
        result = lock_from_env(target, python)
    else:
        result = lock_from_requirements(loaded, target, python_version)
    parsed = read_lock(target, "pylock", display=rel)
    digest = sha256_file(target)
    update_lock_block(loaded.manifest_path, rel, fmt, digest)
    click.echo(f"wrote {rel}: {len(parsed.packages)} packages, sha256 {digest}")
    if result.sources:
        click.echo(f"resolved from: {', '.join(result.sources)}")
    for name in result.unhashed:
        click.echo(f"warning: {name} is installed from a local directory; recorded without hashes", err=True)
    click.echo(f"recorded environment.lock in {loaded.manifest_path.name}")


@click.group()
def env() -> None:
    """Check a live environment against the lock, or build one from it."""


@env.command("check")
@_ARTIFACT
@_PYTHON
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--no-gpu", is_flag=True, help="Skip the accelerator, driver and CUDA checks.")
def env_check(artifact: str, python: str | None, fmt: str, no_gpu: bool) -> None:
    """Compare interpreter, installed packages and GPUs with the manifest and lock; exit 1 on errors."""
    from pathlib import Path

    from ..io.artifact import load_artifact
    from ..env.check import check_environment
    from ..env.live import gpu_inventory, inspect_python
    from ..validate.diagnostics import Severity

    loaded = load_artifact(Path(artifact))
    live = inspect_python(python)
    gpus = None if no_gpu else gpu_inventory()
    diagnostics = check_environment(loaded, live, gpus, hardware=not no_gpu)
    errors = sum(1 for d in diagnostics if d.severity >= Severity.ERROR)
    if fmt == "json":
        import json

        payload: dict[str, Any] = {
            "artifact": loaded.manifest.id, "python": live.executable, "python_version": live.python_version,
            "diagnostics": [{"code": d.code, "name": d.name, "severity": d.severity.label, "message": d.message,
                             "pointer": d.pointer, "file": d.file, "line": d.line, "hint": d.hint, "url": d.url}
                            for d in diagnostics],
            "errors": errors,
            "warnings": sum(1 for d in diagnostics if d.severity == Severity.WARNING),
        }
        click.echo(json.dumps(payload, indent=2))
    else:
        for d in diagnostics:
            where = f"{d.file}:{d.line}: " if d.file and d.line else (f"{d.file}: " if d.file else "")
            click.echo(f"{where}{d.severity.label} {d.code} [{d.name}] {d.message}"
                       + (f" (at {d.pointer})" if d.pointer else ""))
            if d.hint:
                click.echo(f"  hint: {d.hint}")
        click.echo(f"{live.executable} (Python {live.python_version}) vs {loaded.manifest.id}: "
                   f"{errors} error(s), {len(diagnostics) - errors} other finding(s)")
    sys.exit(ExitStatus.FINDINGS if errors else ExitStatus.OK)


@env.command("create")
@_ARTIFACT
@click.option("--python", "python", metavar="PYTHON", default=None,
              help="Interpreter (path or version) to build on.  [default: the running one when it is "
              "environment.interpreter's version, else that version, found by uv]")
@click.option("--cache-dir", default=None, type=click.Path(file_okay=False),
              help="Cache directory.  [default: $RRA_CACHE_DIR, else ~/.cache/rra]")
def env_create(artifact: str, python: str | None, cache_dir: str | None) -> None:
    """Build a virtual environment from the lock (hash-checked), or reuse the cached one; print its path."""
    from pathlib import Path

    from ..env.artifact import manifest_model
    from ..env.create import CreateError, create_env
    from ..io.artifact import load_artifact

    loaded = load_artifact(Path(artifact))
    ref = loaded.manifest.environment.lock
    lock_path = loaded.lock_path()
    if ref is None or lock_path is None:
        raise CreateError(f"{loaded.manifest_path.name} names no lock (environment.lock); run 'rra lock' first")
    if python is None:
        # The running interpreter when it is the declared one; else let uv find the declared version.
        wanted = manifest_model(loaded).environment.interpreter.version.split(".")
        running = [str(v) for v in sys.version_info[: len(wanted)]]
        chosen = sys.executable if running == wanted else ".".join(wanted)
    else:
        chosen = python
    built = create_env(lock_path, str(ref.format), python=chosen,
                       cache=Path(cache_dir) if cache_dir else None, expected_sha256=ref.sha256,
                       display=ref.path, artifact=loaded)
    state = "reused" if built.reused else "built"
    click.echo(f"{state} {built.path} ({built.packages} packages from {ref.path}, sha256 {built.lock_sha256[:16]})",
               err=True)
    click.echo(str(built.python))


@click.command()
@_ARTIFACT
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write the SBOM to this file.  [default: standard output]")
def sbom(artifact: str, output: str | None) -> None:
    """Write the artifact's CycloneDX 1.6 JSON SBOM (deterministic; SOURCE_DATE_EPOCH sets the time)."""
    from pathlib import Path

    from ..io.artifact import load_artifact
    from ..io.atomic import write_atomic
    from ..env.sbom import sbom_for

    text = sbom_for(load_artifact(Path(artifact)))
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(Path(output), text.encode("utf-8"))
