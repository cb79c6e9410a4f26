"""Step **lock**: the PEP 751 lock; a lock that does not resolve is a *repair* decision."""

from __future__ import annotations

import hashlib

from ...model.agent import DecisionKind
from .answers import LOG_TAIL, repair_answer
from .context import Build, readme_context
from .errors import BuildError
from .state import digest


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the requirement files, the interpreter and the lock."""
    root = build.root
    names = ("requirements.in", "requirements.txt", "pyproject.toml", "environment.yml", "environment.yaml")
    files = {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in names if (root / name).is_file()}
    environment = build.artifact().data.get("environment") or {}
    return digest({"files": files, "interpreter": (environment.get("interpreter") or {}).get("version"),
                    "lock": (environment.get("lock") or {}).get("sha256"), "skip": build.options.skip_lock})


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ...env.artifact import update_lock_block
    from ...env.locks import read_lock
    from ...env.resolve import ResolveError, lock_from_requirements
    from ...io.digest import sha256_file

    record = build.steps["lock"]
    if build.options.skip_lock is not None:
        record.status = "skipped"
        record.note = f"skipped: {build.options.skip_lock}"
        return
    repairs = record.outputs.setdefault("repairs", 0)
    while True:
        artifact = build.artifact()
        lock = (artifact.data.get("environment") or {}).get("lock") or {}
        rel = str(lock["path"]) if lock.get("format") == "pylock" and lock.get("path") else "pylock.toml"
        target = artifact.inside(rel)
        try:
            lock_from_requirements(artifact, target)
        except ResolveError as exc:
            message = str(exc)
            if "could not be reached" in message or "declares no requirements" in message:
                raise BuildError(f"the lock step failed: {message}",
                                 "fix that and run the build again, or skip the step with --skip-lock REASON "
                                 "(the artifact then has no lock and is not 'available')") from None
            if repairs >= build.options.max_repairs:
                raise BuildError(f"the lock still does not resolve after {repairs} repair(s): {message}") from None
            ident = f"repair-lock-{repairs + 1}"
            request = build.request(ident, DecisionKind.REPAIR, "the declared requirements do not resolve: repair "
                                    "them (e.g. a pin that no longer installs on this Python)",
                                    log_tail=message[-LOG_TAIL:], attempt=repairs + 1, context=readme_context(build))
            todo = (f"fix the requirements in {build.root} and record the fix with 'rra change record ID PATH... "
                    f"-C {build.root} --kind dependency-pin --rationale WHY --evidence TEXT --alters-method "
                    f"yes|no|unknown', or write the answer {build.answer_path(ident)}")
            repair_answer(build, request, todo, message[-LOG_TAIL:], None)
            repairs += 1
            record.outputs["repairs"] = repairs
            continue
        packages = len(read_lock(target, "pylock", display=rel).packages)
        update_lock_block(artifact.manifest_path, rel, "pylock", sha256_file(target))
        record.note = f"{rel}: {packages} package(s)"
        return
