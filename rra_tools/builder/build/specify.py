"""Step **specify**: clone the raw repository (unless in place) and draft the manifest."""

from __future__ import annotations

import re
from pathlib import Path

from .context import Build
from .errors import BuildInputError
from .state import digest


def _raw_commit(raw: Path) -> str:
    """The raw repository's HEAD commit (a repository with none cannot be built)."""
    from ..patches import git

    done = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=raw, check=False)
    commit = done.stdout.decode().strip()
    if done.returncode != 0 or not commit:
        raise BuildInputError(f"{raw} has no commit yet", "commit the repository as published first: the build "
                         "records repairs as patches against a commit")
    return commit


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the raw repository, its commit and the build's options."""
    options = build.options
    return digest({"raw": str(build.raw), "commit": _raw_commit(build.raw), "upstream": options.upstream,
                    "id": options.artifact_id, "title": options.title})


def _clone(build: Build) -> None:
    from ..detect.repo import RawRepo
    from ..patches import git

    if build.root.exists() and any(build.root.iterdir()):
        raise BuildInputError(f"{build.root} is not empty and holds no build state",
                         "build into a new directory (-o), or resume a build in the directory it wrote")
    build.root.parent.mkdir(parents=True, exist_ok=True)
    git(["clone", "--quiet", "--no-hardlinks", str(build.raw), str(build.root)], cwd=build.root.parent)
    url, _ = RawRepo.open(build.raw).upstream()
    if url is not None:
        git(["remote", "set-url", "origin", url], cwd=build.root)
    else:  # the clone's origin is the local path, which is not where the code comes from
        git(["remote", "remove", "origin"], cwd=build.root)


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..detect.repo import RawRepo, is_raw_repo
    from ..draft import draft_manifest, write_draft
    from ..init import _slug

    if not is_raw_repo(build.raw):
        raise BuildInputError(f"{build.raw} is not the root of a git working tree",
                         "rra build starts from a git repository: clone it, or 'git init && git add -A && "
                         "git commit' it as published")
    record = build.steps["specify"]
    if build.root != build.raw:
        if RawRepo.open(build.raw).modified():
            record.note = "RAW_REPO has uncommitted changes; the artifact starts from its commit"
        if not (build.root / ".git").exists():
            _clone(build)
    draft = draft_manifest(build.root, upstream=build.options.upstream,
                           artifact_id=build.options.artifact_id or _slug(build.raw.name),
                           title=build.options.title, in_place=True)
    written = write_draft(draft, build.root)
    build.progress(f"wrote {build.rel(written[0])}: {len(draft.placeholders)} placeholder(s), "
                   f"{len(draft.candidates)} candidate claim(s)")
    if len(written) > 1:
        _record_drafted_requirements(build, build.rel(written[1]), str(draft.environment.source))
    record.outputs = {
        "candidates": [{"item": f.item, "value": str(f.value), **({"file": f.file} if f.file else {}),
                        **({"line": f.line} if f.line else {}), **({"note": f.note} if f.note else {}),
                        **({"claim": draft.written[i]} if i in draft.written else {})}
                       for i, f in enumerate(draft.candidates)],
        "claim_questions": [{"item": f.item, "value": str(f.value), **({"file": f.file} if f.file else {}),
                             **({"line": f.line} if f.line else {}), **({"note": f.note} if f.note else {})}
                            for f in draft.claim_questions],
        "readme_commands": [str(f.value) for f in draft.findings if f.item == "readme-command"],
        "assumed": list(draft.assumed),
    }


def _record_drafted_requirements(build: Build, rel: str, source: str) -> None:
    """The requirements file ``rra init`` wrote is a change of the code: record it, with why."""
    from ..changes import ChangeInput, record_change
    from ..patches import GitError

    upstream = (build.artifact().data.get("code") or {}).get("upstream") or {}
    if not re.fullmatch(r"[0-9a-f]{40}", str(upstream.get("commit", ""))):
        return  # no upstream commit to patch against; the preserve step says so
    try:
        recorded = record_change(build.root, ChangeInput(
            id="drafted-requirements", kind="config", alters_method="no", paths=(rel,),
            summary=f"{rel} drafted from {source} for rra lock",
            rationale=f"The repository declares its requirements in {source}, which rra lock does not read "
                      f"(it reads requirements.in, requirements.txt or pyproject.toml); rra init translated them "
                      f"into {rel}, whose header lists what could not be translated.",
            evidence=f"rra init: the requirements found in {source}, in the order of its precedence rules"))
    except GitError:
        return
    build.progress(f"recorded change {recorded.id}: {recorded.patch} ({rel})")
