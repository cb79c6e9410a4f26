"""Step **lock**: the PEP 751 lock; a lock that does not resolve is a *repair* decision."""

from __future__ import annotations

import hashlib
import re

from ...model.agent import DecisionKind
from .answers import LOG_TAIL, repair_answer
from .context import Build, readme_context
from .errors import BuildError
from .state import digest


#: The requirement files the lock reads, in rra lock's order.
_FILES = ("requirements.in", "requirements.txt", "pyproject.toml", "environment.yml", "environment.yaml")


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the requirement files, the interpreter and the lock."""
    root = build.root
    files = {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in _FILES if (root / name).is_file()}
    environment = build.artifact().data.get("environment") or {}
    return digest({"files": files, "interpreter": (environment.get("interpreter") or {}).get("version"),
                    "lock": (environment.get("lock") or {}).get("sha256"), "skip": build.options.skip_lock})


def _requirement_files(build: Build) -> str:
    """The requirement files the artifact has, as rra lock reads them (first one first)."""
    names = [name for name in _FILES if (build.root / name).is_file()]
    return ", ".join(names) if names else "none: no requirements.in, requirements.txt or pyproject.toml"


def _direct_references(build: Build) -> list[str]:
    """Requirements fetched from outside the package index (``pkg @ git+https://...``,
    ``git+https://...``, a URL): when one cannot be fetched, the index may well be reachable, and
    replacing it with a release from the index is a repair, not a reason to stop."""
    found = []
    # rra lock resolves the pip section of environment.yml too (env.resolve.declared_requirements):
    # a git requirement there (yx14/disentangler_opt: '- git+https://github.com/yx14/pymanopt.git')
    # is as much a direct reference as one in requirements.in.
    for name in (*_FILES[:2], "environment.yml", "environment.yaml"):
        path = build.root / name
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        conda = name.startswith("environment.")
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if conda:  # a YAML list item of the pip section: '- git+https://...'
                if not line.startswith("-"):
                    continue
                line = line[1:].strip()
                if not re.match(r"(git\+|hg\+|svn\+|bzr\+|\S+\s*@\s*(git\+|https?://))", line):
                    continue  # a conda channel URL is not a pip requirement
            if re.search(r"(^|\s|@\s*)(git\+|hg\+|svn\+|bzr\+|https?://|file:)", line):
                found.append(line)
    return found


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
            if "could not be reached" in message and not _direct_references(build):
                raise BuildError(f"the lock step failed: {message}",
                                 "fix that and run the build again, or skip the step with --skip-lock REASON "
                                 "(the artifact then has no lock and is not 'available')") from None
            # No requirements at all is a repair like a pin that does not resolve: the agent (or
            # the author) names the packages the code needs, in the file rra lock reads first.
            declared = _requirement_files(build)
            if repairs >= build.options.max_repairs:
                raise BuildError(f"the lock still does not resolve after {repairs} repair(s): {message}",
                                 f"edit {declared}, record the edit with 'rra change record', and run the build "
                                 "again, or skip the step with --skip-lock REASON") from None
            ident = f"repair-lock-{repairs + 1}"
            # A direct reference is the likely cause when the index was not reached or the error
            # is about fetching (git, a URL) rather than resolving versions.
            direct = [line for line in _direct_references(build)
                      if "could not be reached" in message or "git" in message.lower() or "url" in message.lower()]
            if direct:
                question = (f"a requirement fetched from outside the package index cannot be fetched ({direct[0]}): "
                            "replace it with a release from the index, or remove what the code does not need")
            elif "declares no requirements" in message:
                question = ("the artifact declares no requirements: write requirements.in with the packages its "
                            "code imports (one a line, pinned where the code needs a version)")
            else:
                question = (f"the requirements ({declared}) do not resolve: repair them (e.g. a pin that no longer "
                            "installs on this Python)")
            request = build.request(ident, DecisionKind.REPAIR, question,
                                    log_tail=message[-LOG_TAIL:], attempt=repairs + 1, context=readme_context(build))
            todo = (f"fix the requirements in {build.root / 'requirements.in'} (rra lock reads requirements.in "
                    f"first; now: {declared}) and record the fix with 'rra change record ID PATH... -C {build.root} "
                    f"--kind dependency-pin --rationale WHY --evidence TEXT --alters-method yes|no|unknown', or write "
                    f"the answer {build.answer_path(ident)}")
            repair_answer(build, request, todo, message[-LOG_TAIL:], None)
            repairs += 1
            record.outputs["repairs"] = repairs
            continue
        packages = len(read_lock(target, "pylock", display=rel).packages)
        update_lock_block(artifact.manifest_path, rel, "pylock", sha256_file(target))
        record.note = f"{rel}: {packages} package(s)"
        return
