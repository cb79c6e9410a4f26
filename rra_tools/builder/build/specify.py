"""Step **specify**: clone the raw repository (unless in place) and draft the manifest."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .context import Build
from .errors import BuildInputError
from .state import digest


#: Who and when the import commit of a plain directory is by: fixed, so that the commit depends
#: on the files alone and anyone importing the same archive gets the same commit.
_IMPORT_IDENTITY = {"GIT_AUTHOR_NAME": "rra build", "GIT_AUTHOR_EMAIL": "rra-build@localhost",
                    "GIT_AUTHOR_DATE": "1970-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "rra build",
                    "GIT_COMMITTER_EMAIL": "rra-build@localhost", "GIT_COMMITTER_DATE": "1970-01-01T00:00:00+0000"}
_IMPORT_MESSAGE = ("The directory as published, imported by rra build (no .git: an archive). The author, "
                   "committer and dates are fixed, so the same files give the same commit.\n")


def _raw_commit(raw: Path) -> str:
    """The raw repository's HEAD commit (a repository with none cannot be built); for a plain
    directory (an archive), the digest of the files it holds."""
    from ..detect.repo import is_raw_repo
    from ..patches import git

    if not is_raw_repo(raw):
        return "files:" + _listing_digest(raw)
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


def _listing_digest(raw: Path) -> str:
    """The digest of a plain directory's files as ``rra init`` lists them (names and contents)."""
    from ..detect.repo import RawRepo
    from ..patches import tree_digest, tree_entries

    listed = set(RawRepo.open(raw).files)
    return tree_digest({path: entry for path, entry in tree_entries(raw, ()).items() if path in listed})


def _import_plain(build: Build) -> str:
    """Make a plain directory (an archive: no ``.git``) a git repository the patch series can be
    made against: its files (those ``rra init`` lists: ``.gitignore`` honoured, caches and
    virtual environments left out) copied into the artifact, or, in place, the directory itself,
    committed once with a fixed identity and date. The commit, which the files alone determine."""
    import shutil

    from ..detect.repo import RawRepo
    from ..patches import git

    listing = RawRepo.open(build.raw).files
    if build.root != build.raw:
        if build.root.exists() and any(build.root.iterdir()):
            raise BuildInputError(f"{build.root} is not empty and holds no build state",
                                  "build into a new directory (-o), or resume a build in the directory it wrote")
        for name in listing:
            source, target = build.raw / name, build.root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():  # the link itself, never what it points at
                target.symlink_to(source.readlink())
            else:
                shutil.copy2(source, target)
    build.root.mkdir(parents=True, exist_ok=True)
    git(["init", "--quiet", "-b", "main"], cwd=build.root)
    if build.root == build.raw:
        _exclude_unlisted(build.root, listing)
    # The files listed, named on standard input: an archive may hold more than a command line
    # can (in place, the directory also holds what the listing leaves out: caches, environments).
    git(["add", "--pathspec-from-file=-", "--pathspec-file-nul"], cwd=build.root,
        stdin=b"".join(os.fsencode(name) + b"\0" for name in listing))
    git(["commit", "--quiet", "--no-gpg-sign", "--allow-empty", "-m", _IMPORT_MESSAGE], cwd=build.root,
        env=_IMPORT_IDENTITY)
    commit = git(["rev-parse", "HEAD"], cwd=build.root).stdout.decode().strip()
    build.progress(f"{build.raw} has no .git (an archive): its {len(listing)} file(s) committed as published in "
                   f"{build.root} as {commit[:12]} (a fixed author and date: the same files give the same commit)")
    return commit


def _exclude_unlisted(root: Path, listing: list[str]) -> None:
    """In place, the directory keeps what the listing left out (a virtual environment, caches):
    git is told to ignore it (``.git/info/exclude``, the repository's own, not a file of the code),
    so that it is neither committed nor taken for a change of the code afterwards."""
    tops = {name.split("/", 1)[0] for name in listing}
    lines = ["# rra build: what rra init's listing of this archive left out", "__pycache__/", "*.py[co]"]
    with os.scandir(root) as entries:
        lines += [f"/{entry.name}" for entry in entries if entry.name not in tops and entry.name != ".git"]
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..detect.repo import RawRepo, is_draftable, is_raw_repo, parse_upstream_option
    from ..draft import draft_manifest, write_draft
    from ..init import _slug

    record = build.steps["specify"]
    upstream = build.options.upstream
    if not is_raw_repo(build.raw):
        if not is_draftable(build.raw):
            raise BuildInputError(f"{build.raw} is empty or not a directory",
                                  "rra build starts from a repository or an archive's directory")
        commit = _import_plain(build)
        if upstream is not None:
            url, given = parse_upstream_option(upstream)
            if given != commit:
                record.note = (f"--upstream names commit {given[:12]}, which is not in the archive: the patches "
                               f"are made against its import {commit[:12]}")
            upstream = f"{url}@{commit}"
    elif build.root != build.raw:
        if RawRepo.open(build.raw).modified():
            record.note = "RAW_REPO has uncommitted changes; the artifact starts from its commit"
        if not (build.root / ".git").exists():
            _clone(build)
    draft = draft_manifest(build.root, upstream=upstream,
                           artifact_id=build.options.artifact_id or _slug(build.raw.name),
                           title=build.options.title, in_place=True)
    written = write_draft(draft, build.root)
    build.progress(f"wrote {build.rel(written[0])}: {len(draft.placeholders)} placeholder(s), "
                   f"{len(draft.candidates)} candidate claim(s)")
    if len(written) > 1:
        _record_drafted_requirements(build, build.rel(written[1]), str(draft.environment.source),
                                     draft.requirements_reason)
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
        # The commit the repository's texts are read at for the paper's numbers the agent gives
        # (builder/stated.py): before any answer has written a file.
        "published": _head(build.root),
    }


def _head(root: Path) -> str | None:
    from ..patches import git

    done = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=root, check=False)
    head = done.stdout.decode().strip()
    return head if done.returncode == 0 and head else None


def _record_drafted_requirements(build: Build, rel: str, source: str, reason: str | None = None) -> None:
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
            # rra init says why it wrote the file (a README's list, the code's imports, a conda
            # file, ...); the sentence below is only for a draft that gives no reason.
            rationale=reason or (f"The repository declares its requirements in {source}, which rra lock does "
                                 f"not read (it reads requirements.in, requirements.txt or pyproject.toml); rra "
                                 f"init translated them into {rel}, whose header lists what could not be "
                                 "translated."),
            evidence=f"rra init: the requirements found in {source}, in the order of its precedence rules"))
    except GitError:
        return
    build.progress(f"recorded change {recorded.id}: {recorded.patch} ({rel})")
