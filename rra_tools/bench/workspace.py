"""A cell's workspace: a fresh directory holding the raw code or the refined artifact, the paper
and the task description, with no reference value in it.

- ``refined``: a copy of the artifact without its run records, without the files its launchers'
  declared outputs name (earlier results), without ``.git``, and with a manifest (``rra.json``)
  whose claims carry no reference observation (three placeholders valued at the paper's
  reported number, so that ``rra run`` accepts it; the reported number is in the paper anyway)
  and that claims no level.
- ``refined-without-...`` (an ablation): the refined copy above, then the parts the condition
  names removed from it (:mod:`.ablation`); what was removed and the tree digest of the result
  are returned (:class:`PreparedWorkspace`) and recorded in the cell's result.
- ``raw``: the files of the upstream commit (``git checkout-index`` from the repository the
  task or the manifest names; a URL is cloned once into the benchmark's cache).
- ``paper/``: the paper's file, when the task set names one; ``TASK.md`` and ``task.json``: the
  task (claim, metric, where in the paper, how the evaluator reads the number, the limits, where
  to write the submission) and nothing about the reference values.

:func:`snapshot` records every file's size, time and digest when the attempt starts (the
auditor's "present before"), and :func:`reference_pattern` finds the textual forms of reference
values, which :func:`leaks` looks for in every file of a workspace.
"""

from __future__ import annotations

import fcntl
import fnmatch
import functools
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..builder.patches import GitError, checkout_commit, git
from ..io.atomic import write_atomic
from ..io.digest import sha256_file
from ..model.bench_results import Transformation
from ..model.taskset import condition_parts
from .ablation import ablate, transformed_digest
from .errors import BenchError
from .taskset import LoadedTaskSet, ResolvedTask

__all__ = ["SUBMISSION_NAME", "FileState", "PreparedWorkspace", "RawSource", "leaks", "number_forms", "prepare_workspace",
           "raw_source", "reference_pattern", "snapshot", "task_description"]

#: The submission's file name in the workspace (RRA_BENCH_SUBMISSION names it too).
SUBMISSION_NAME = "submission.json"

#: Files larger than this are not scanned for reference values (they are hashed all the same).
MAX_SCAN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileState:
    """A workspace file when the attempt started: size, modification time (ns), SHA-256."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class RawSource:
    """Where the raw condition's code comes from: a repository (a directory or a URL) and a commit."""

    repository: str
    commit: str
    local: bool


def raw_source(taskset: LoadedTaskSet, task: ResolvedTask) -> RawSource:
    """The raw code of ``task``; BenchError when neither the task nor the manifest says where it is."""
    code = task.artifact.data.get("code")
    upstream = code.get("upstream") if isinstance(code, Mapping) else None
    up_url = upstream.get("url") if isinstance(upstream, Mapping) else None
    up_commit = upstream.get("commit") if isinstance(upstream, Mapping) else None
    raw = task.task.raw
    commit = (raw.commit if raw is not None else None) or (up_commit if isinstance(up_commit, str) else None)
    if raw is not None:
        repository = raw.repository
        local_path = taskset.path.parent / repository
        if "://" not in repository and not repository.startswith("git@"):
            if commit is None:
                raise BenchError(f"task {task.key}: 'raw' gives no commit and the manifest has no code.upstream",
                                 "give raw.commit")
            return RawSource(str(local_path.resolve()), commit, True)
        if commit is None:
            raise BenchError(f"task {task.key}: 'raw' gives no commit and the manifest has no code.upstream",
                             "give raw.commit")
        return RawSource(repository, commit, False)
    if not isinstance(up_url, str) or commit is None:
        raise BenchError(f"task {task.key}: the raw condition needs the upstream code, and the artifact's manifest "
                         "has no code.upstream", "give the task a 'raw' repository and commit, or run only "
                         "the refined condition")
    root = task.artifact.root
    if git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=root, check=False).returncode == 0:
        return RawSource(str(root.resolve()), commit, True)
    return RawSource(up_url, commit, False)


def _cached_clone(url: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / hashlib.sha256(url.encode()).hexdigest()[:32]
    with open(cache / ".lock", "a+b") as lock:
        # Cells may be prepared concurrently: one clone per URL, the others wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "HEAD").exists():
            scratch = target.with_name(target.name + ".partial")
            shutil.rmtree(scratch, ignore_errors=True)
            git(["clone", "--bare", "--quiet", url, str(scratch)], cwd=cache)
            scratch.rename(target)
    return target


def _checkout_raw(source: RawSource, target: Path, cache: Path) -> None:
    repository = Path(source.repository) if source.local else _cached_clone(source.repository, cache)
    try:
        checkout_commit(repository, source.commit, target)
    except GitError as exc:
        raise BenchError(f"cannot check out the raw code {source.commit} from {source.repository}: {exc}") from None


def _output_globs(task: ResolvedTask) -> list[str]:
    # A declared output's path is a template ('results/{seed}.json'): any file it could name is
    # an earlier result, and results are not handed to a reproducer.
    globs = []
    for launcher in task.artifact.manifest.launchers:
        for output in launcher.outputs:
            globs.append(re.sub(r"\{[^}]*\}", "*", output.path).strip("/").removeprefix("./"))
    return globs


def _without_references(data: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest with every claim's observations replaced by three placeholders valued at the
    paper's reported number (three, with the original seeds or repeats, so that ``rra run``'s own
    checks pass), and no claimed levels (a fresh workspace has no run records to meet them)."""
    manifest: dict[str, Any] = json.loads(json.dumps(data))
    manifest.pop("levels", None)
    for claim in manifest.get("claims", []):
        reference = claim.get("reference") or {}
        observations = list(reference.get("observations") or [])
        placeholders = []
        for i in range(3):
            original = observations[i] if i < len(observations) else {}
            placeholder: dict[str, Any] = {
                "value": claim.get("reported", {}).get("value", 0),
                "fingerprint": {"hardware": "withheld by the benchmark", "software": "withheld by the benchmark"}}
            placeholder.update({k: original[k] for k in ("seed", "repeat") if k in original})
            if "seed" not in placeholder and "repeat" not in placeholder:
                placeholder["seed"] = i
            placeholders.append(placeholder)
        claim["reference"] = {"observations": placeholders}
    return manifest


def _copy_refined(task: ResolvedTask, target: Path, without: tuple[str, ...] = ()) -> Transformation | None:
    artifact = task.artifact
    root = artifact.root
    runs = artifact.runs_dir.relative_to(root).as_posix()
    globs = _output_globs(task)
    manifest = artifact.manifest_path.name

    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = Path(directory).relative_to(root).as_posix()
        skipped = set()
        for name in names:
            path = name if rel == "." else f"{rel}/{name}"
            # .git: the history may hold the manifest with its observations in a later commit.
            if (name in ("__pycache__", ".git") or path in (runs, manifest)
                    or any(fnmatch.fnmatchcase(path, g) for g in globs)):
                skipped.add(name)
        return skipped

    shutil.copytree(root, target, symlinks=True, ignore=ignore)
    data = _without_references(artifact.data)
    removals = ablate(target, data, without)
    write_atomic(target / "rra.json", (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    if not without:
        return None
    return Transformation(without=list(without), tree_digest=transformed_digest(target),
                          removed=sorted(f for r in removals for f in r.files),
                          reverted=sorted(f for r in removals for f in r.reverted),
                          fields=[f for r in removals for f in r.fields])


def _task_description(taskset: LoadedTaskSet, task: ResolvedTask, condition: str, paper_file: str | None,
                      limits: Mapping[str, Any]) -> dict[str, Any]:
    claim = next(c for c in task.artifact.manifest.claims if c.id == task.task.claim)
    extract = {k: v for k, v in claim.extract._asdict().items() if v is not None}
    if "csv" in extract:
        extract["csv"] = {k: v for k, v in extract["csv"]._asdict().items() if v is not None}
    if "regex" in extract:
        extract["regex"] = extract["regex"]._asdict()
    manifest_claim = next(c for c in task.artifact.data.get("claims", []) if c.get("id") == claim.id)
    paper = task.artifact.data.get("paper", {})
    return {
        "task": task.key, "condition": condition, "taskset": taskset.model.id,
        "paper": {"title": paper.get("title"), "file": paper_file,
                  **{k: paper[k] for k in ("doi", "arxiv", "url", "year", "venue") if k in paper}},
        "claim": {"id": claim.id, "metric": claim.metric._asdict(), "paper_location": manifest_claim.get(
            "paper_location"), "precision": claim.reported.precision, "aggregate": claim.aggregate},
        # How the evaluator reads the number out of an output (so that raw-code reproducers know
        # what to produce); under 'refined', the manifest's launcher says the same.
        "extract": extract,
        "launcher": claim.launcher if condition_parts(condition) is not None and "launchers" not in (
            condition_parts(condition) or ()) else None,
        "limits": dict(limits),
        "submission": {"path": SUBMISSION_NAME, "schema": "schemas/rra-submission-1.0.schema.json"},
    }


_TASK_MD = """# Task {task}

Reproduce the number the paper reports for claim `{claim}` ({metric}, unit `{unit}`, {direction} is
better; {where}), from the {what} in this directory.

- The paper: {paper}.
- How the number is read from an output: `{extract}`.
- Limits: {limits}.

Write `{submission}` (schema `rra-submission-1.0`): one entry in `values` with `task: {task}`, the
`value`, and its `evidence` (the run record, the output file and the script, paths relative to this
directory). Declare every file of the given code you change in `changes`. Report what you used in
`usage` (tokens, cost_usd, wall_s, gpu_hours).
"""


def _render_task_md(description: Mapping[str, Any]) -> str:
    claim = description["claim"]
    metric = claim["metric"]
    paper = description["paper"]
    where = ", ".join(f"{k} {v}" for k, v in (claim.get("paper_location") or {}).items()) or "see the paper"
    condition = description["condition"]
    parts = condition_parts(condition)
    if parts is None:
        what = "upstream code at the commit the paper used"
    elif not parts:
        what = "refined artifact (rra.json; run its launcher with `rra run`)"
    else:
        what = (f"refined artifact without its {', '.join(parts)} (condition `{condition}`; rra.json"
                + ("" if "launchers" in parts else "; run its launcher with `rra run`") + ")")
    return _TASK_MD.format(
        task=description["task"], claim=claim["id"], metric=metric["name"], unit=metric["unit"],
        direction=metric["direction"], where=where, what=what,
        paper=f"paper/{paper['file']}" if paper.get("file") else repr(paper.get("title")),
        extract=json.dumps(description["extract"], sort_keys=True),
        limits=", ".join(f"{k} {v}" for k, v in description["limits"].items() if v is not None),
        submission=SUBMISSION_NAME)


@dataclass(frozen=True)
class PreparedWorkspace:
    """A prepared workspace: the task description written into it (as data) and, for an
    ablation, the transformation applied."""

    description: dict[str, Any]
    transformation: Transformation | None = None


def task_description(taskset: LoadedTaskSet, task: ResolvedTask, condition: str,
                     limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The task description (``task.json``) of ``task`` under ``condition``; ``limits`` are the
    attempt's (default: the task set's wall-clock and cost limits)."""
    paper = next(p for p in taskset.model.papers if p.id == task.paper)
    paper_file = Path(paper.file).name if paper.file is not None else None
    if limits is None:
        model = taskset.model.limits
        limits = {"wall_clock_s": model.wall_clock_s, "cost_usd": model.cost_usd}
    return _task_description(taskset, task, condition, paper_file, limits)


def prepare_workspace(taskset: LoadedTaskSet, task: ResolvedTask, condition: str, target: Path,
                      cache: Path, limits: Mapping[str, Any] | None = None) -> PreparedWorkspace:
    """Fill the new directory ``target`` for one attempt of ``task`` under ``condition``, within
    ``limits`` (:func:`task_description`)."""
    parts = condition_parts(condition)
    transformation = None
    if parts is not None:
        transformation = _copy_refined(task, target, parts)
    else:
        target.mkdir(parents=True)
        _checkout_raw(raw_source(taskset, task), target, cache)
    paper = next(p for p in taskset.model.papers if p.id == task.paper)
    if paper.file is not None:
        source = taskset.path.parent / paper.file
        (target / "paper").mkdir(exist_ok=True)
        shutil.copyfile(source, target / "paper" / source.name)
    description = task_description(taskset, task, condition, limits)
    write_atomic(target / "task.json", (json.dumps(description, indent=2) + "\n").encode())
    write_atomic(target / "TASK.md", _render_task_md(description).encode())
    return PreparedWorkspace(description, transformation)


def _files(root: Path) -> Iterable[tuple[str, Path, os.stat_result]]:
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(directory, name)
            info = path.lstat()
            if path.is_file() and not path.is_symlink():
                yield path.relative_to(root).as_posix(), path, info


def snapshot(root: Path) -> dict[str, FileState]:
    """Every regular file under ``root``: its size, modification time and digest."""
    return {rel: FileState(info.st_size, info.st_mtime_ns, sha256_file(path)) for rel, path, info in _files(root)}


@functools.lru_cache(maxsize=65536)
def number_forms(value: float, precision: int) -> frozenset[str]:
    """The textual forms of a reference value that are specific enough to look for: its shortest
    repr and its form at the reported precision, each with at least 3 significant digits.

    (Cached: the auditor asks for the same values many times.)

    >>> sorted(number_forms(0.4973, 2))
    ['0.4973']
    >>> sorted(number_forms(91.83, 1))
    ['91.8', '91.83']
    """
    forms = {repr(value), f"{value:.{max(precision, 0)}f}"}
    return frozenset(f for f in forms if len(f.lstrip("-").replace(".", "").lstrip("0")) >= 3)


def reference_pattern(values: Iterable[float], precision: int, exclude: Iterable[float] = ()) -> re.Pattern[bytes] | None:
    """A pattern matching any form of ``values`` standing alone as a number (not inside a longer
    one), except the forms of ``exclude`` (the paper's reported value, which the paper prints);
    None when no form is specific enough."""
    forms: set[str] = set()
    for value in values:
        forms |= number_forms(value, precision)
    for value in exclude:
        forms -= number_forms(value, precision)
    if not forms:
        return None
    alternatives = b"|".join(re.escape(f.encode()) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rb"(?<![0-9.])(?:" + alternatives + rb")(?![0-9])")


def leaks(root: Path, pattern: re.Pattern[bytes] | None, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(file, form) of each file under ``root`` (but ``skip``) in which ``pattern`` matches."""
    if pattern is None:
        return []
    skipped = set(skip)
    found = []
    for rel, path, info in _files(root):
        if rel in skipped or info.st_size > MAX_SCAN_BYTES:
            continue
        match = pattern.search(path.read_bytes())
        if match is not None:
            found.append((rel, match.group().decode()))
    return found
