"""``rra change record`` and ``rra change verify``: repairs kept as a reviewed patch series.

``record_change`` takes what the working tree changed since the upstream commit plus the patches
already recorded (all of it, or only the paths given), writes it as the next patch
``patches/NNNN-<id>.patch`` and adds the patch (path, sha256, change) to ``code.patches`` and
one change record to ``changes``. A record without a rationale is refused: a repair nobody can
explain is not reviewable. ``verify_series`` applies the series in order to a clean checkout of
the upstream commit and compares the result with the artifact's code, tree digest against tree
digest (:func:`rra_tools.builder.patches.tree_digest`).
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..io.artifact import Artifact, load_artifact
from ..io.atomic import write_atomic
from ..io.unidiff import DiffProblem, parse_unified_diff
from .errors import BuilderLayerError
from .manifest_edit import edit_manifest, quoted
from .patches import (
    apply_patch,
    checkout_commit,
    diff_trees,
    index_tree,
    own_paths,
    repository_root,
    require_commit,
    tree_digest,
    tree_entries,
    work_tree_entries,
)

__all__ = ["ChangeError", "ChangeInput", "RecordedChange", "SeriesMismatch", "Verification", "record_change",
           "verify_series"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
KINDS = ("dependency-pin", "loader-repair", "bug-fix", "config", "path", "performance", "other")
ALTERS = ("yes", "no", "unknown")
#: At most this much of an evidence file is kept (its end: where the error usually is).
MAX_EVIDENCE_CHARS = 4000


class ChangeError(BuilderLayerError):
    """A change cannot be recorded as asked; nothing was written."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class SeriesMismatch(BuilderLayerError):
    """The patch series does not reproduce the artifact's code (or does not apply)."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None, differences: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.hint = hint
        #: The differing paths, each with why (``train.py (content differs)``), when the series
        #: applies but does not give the artifact's code; empty for the other mismatches.
        self.differences = list(differences)


@dataclass(frozen=True)
class ChangeInput:
    """What the author says about one change."""

    id: str
    kind: str
    rationale: str
    evidence: str
    alters_method: str
    summary: str | None = None
    paths: Sequence[str] = ()
    launchers: Sequence[str] = ()
    claims: Sequence[str] = ()


@dataclass(frozen=True)
class RecordedChange:
    """The patch written and the files it touches."""

    id: str
    patch: str
    sha256: str
    files: list[str]


def _upstream(artifact: Artifact) -> tuple[str, str]:
    code = artifact.data.get("code") or {}
    upstream = code.get("upstream") if isinstance(code, Mapping) else None
    if not isinstance(upstream, Mapping):
        raise ChangeError(f"{artifact.manifest_path}: code.upstream is not set; a patch series needs the upstream "
                          "URL and commit", "add code.upstream {url, commit} (rra init fills it from git)")
    commit = str(upstream.get("commit", ""))
    if re.fullmatch(r"[0-9a-f]{40}", commit) is None:
        raise ChangeError(f"{artifact.manifest_path}: code.upstream.commit {commit!r} is not a full 40-hex commit")
    return str(upstream.get("url", "")), commit


def _series(artifact: Artifact) -> list[tuple[str, str | None, Path]]:
    code = artifact.data.get("code") or {}
    entries = code.get("patches", []) if isinstance(code, Mapping) else []
    return [(str(p["path"]), p.get("sha256"), artifact.inside(str(p["path"]))) for p in entries]


def evidence_from_file(path: Path) -> str:
    """The end of a log file (at most MAX_EVIDENCE_CHARS characters) as evidence text."""
    try:
        text = path.read_text("utf-8", "replace")
    except OSError as exc:
        raise ChangeError(f"evidence file {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    text = text.strip()
    if not text:
        raise ChangeError(f"evidence file {str(path)!r} is empty")
    return text if len(text) <= MAX_EVIDENCE_CHARS else "[...]\n" + text[-MAX_EVIDENCE_CHARS:]


def _check_input(change: ChangeInput, data: Mapping[str, Any]) -> None:
    if not change.rationale.strip():
        raise ChangeError(f"change {change.id!r} has no rationale: a repair nobody can explain is not reviewable",
                          "say why the change was needed with --rationale TEXT")
    if not change.evidence.strip():
        raise ChangeError(f"change {change.id!r} has no evidence",
                          "give --evidence TEXT (an error it fixes, a run record path) or --evidence-file LOG")
    if _ID.fullmatch(change.id) is None:
        raise ChangeError(f"change id {change.id!r} is not valid: use 1-128 ASCII letters, digits, '.', '_' or '-', "
                          "starting with a letter or digit")
    if change.kind not in KINDS:
        raise ChangeError(f"change kind {change.kind!r} is not one of {', '.join(KINDS)}")
    if change.alters_method not in ALTERS:
        raise ChangeError(f"alters_method {change.alters_method!r} is not one of yes, no, unknown")
    if any(isinstance(c, Mapping) and c.get("id") == change.id for c in data.get("changes") or []):
        raise ChangeError(f"a change with id {change.id!r} is already recorded", "choose another id")
    launchers = {entry.get("id") for entry in data.get("launchers") or [] if isinstance(entry, Mapping)}
    claims = {entry.get("id") for entry in data.get("claims") or [] if isinstance(entry, Mapping)}
    for launcher in change.launchers:
        if launcher not in launchers:
            raise ChangeError(f"launcher {launcher!r} is not declared in the manifest")
    for claim in change.claims:
        if claim not in claims:
            raise ChangeError(f"claim {claim!r} is not declared in the manifest")


def record_change(artifact_dir: str | Path, change: ChangeInput) -> RecordedChange:
    """Write the next patch of the series and its change record (see the module docstring)."""
    artifact = load_artifact(artifact_dir)
    _check_input(change, artifact.data)
    root = repository_root(artifact.root)
    url, commit = _upstream(artifact)
    require_commit(root, commit, url)
    own = own_paths(artifact.manifest_path.name, artifact.data)
    for path in change.paths:
        rel = path.strip("/").removeprefix("./")
        if rel in own or any(rel.startswith(f"{o}/") for o in own):
            raise ChangeError(f"{path!r} is one of the artifact's own files, not code; it has no patch")
    series = _series(artifact)
    base = index_tree(root, commit, [p for _, _, p in series])
    new = index_tree(root, commit, [p for _, _, p in series], add=list(change.paths), own=own)
    patch_bytes, files = diff_trees(root, base, new)
    if not files:
        where = f" in {', '.join(change.paths)}" if change.paths else ""
        raise ChangeError(f"nothing to record{where}: the working tree equals the upstream commit with the "
                          f"{len(series)} recorded patch(es)", "make the repair in the working tree first")
    slug = re.sub(r"[^a-z0-9]+", "-", change.id.lower()).strip("-") or "change"
    rel_patch = f"patches/{len(series) + 1:04d}-{slug}.patch"
    patch_path = artifact.root / rel_patch
    patch_path.parent.mkdir(exist_ok=True)
    try:
        write_atomic(patch_path, patch_bytes, replace=False)
    except FileExistsError:
        raise ChangeError(f"{rel_patch} exists already and is not in code.patches",
                          "remove it or add it to code.patches") from None
    sha256 = hashlib.sha256(patch_bytes).hexdigest()

    def mutate(document: Any) -> None:
        code = document["code"]
        if "patches" not in code or code["patches"] is None:
            code["patches"] = []
        code["patches"].append({"path": rel_patch, "sha256": sha256, "change": change.id})
        record: dict[str, Any] = {"id": change.id, "kind": change.kind,
                                  "summary": change.summary or change.rationale.strip().splitlines()[0],
                                  "files": files, "patch": rel_patch, "rationale": change.rationale,
                                  "evidence": change.evidence,
                                  # quoted: YAML 1.1 readers take a bare 'no'/'yes' for a boolean
                                  "alters_method": quoted(change.alters_method)}
        if change.launchers or change.claims:
            record["affects"] = {"launchers": list(change.launchers), "claims": list(change.claims)}
        if "changes" not in document or document["changes"] is None:
            document["changes"] = []
        document["changes"].append(record)

    try:
        edit_manifest(artifact.manifest_path, mutate)
    except BaseException:
        patch_path.unlink(missing_ok=True)  # no patch without its record
        raise
    return RecordedChange(change.id, rel_patch, sha256, files)


@dataclass(frozen=True)
class Verification:
    """What ``rra change verify`` found: the patches applied and both tree digests."""

    patches: list[str]
    expected: str
    actual: str
    files: int
    differences: list[str] = field(default_factory=list)


def _check_files(artifact: Artifact) -> None:
    """Each change record's ``files`` are the paths its patch touches: SeriesMismatch naming the
    record otherwise (a record may not name one file and patch another)."""
    for change in artifact.data.get("changes") or []:
        if not isinstance(change, Mapping) or not isinstance(change.get("patch"), str):
            continue
        listed = change.get("files")
        if not isinstance(listed, list):
            continue
        path = artifact.inside(change["patch"])
        try:
            touched = set(parse_unified_diff(path.read_bytes()).paths)
        except (OSError, DiffProblem):
            continue  # the series check below names a missing or broken patch
        named = {str(f) for f in listed}
        if named != touched:
            raise SeriesMismatch(
                f"change {change.get('id')!r} lists files {sorted(named)} but its patch {change['patch']} touches "
                f"{sorted(touched)}", "record the change again ('rra change record') instead of editing its files")


def verify_series(artifact_dir: str | Path) -> Verification:
    """Apply the series to a clean checkout of the upstream commit and compare tree digests;
    SeriesMismatch naming the patch or the differing paths when they do not agree."""
    artifact = load_artifact(artifact_dir)
    root = repository_root(artifact.root)
    url, commit = _upstream(artifact)
    require_commit(root, commit, url)
    own = own_paths(artifact.manifest_path.name, artifact.data)
    series = _series(artifact)
    for rel, sha256, path in series:
        if not path.is_file():
            raise SeriesMismatch(f"patch {rel} listed in code.patches does not exist")
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != sha256:
            raise SeriesMismatch(f"patch {rel} was changed after it was recorded: sha256 {actual} differs from "
                                 f"code.patches' {sha256}", "record the change again instead of editing the patch")
    _check_files(artifact)
    with tempfile.TemporaryDirectory(prefix="rra-verify-") as scratch:
        checkout = Path(scratch) / "upstream"
        checkout.mkdir()
        checkout_commit(root, commit, checkout)
        for rel, _, path in series:
            problem = apply_patch(checkout, path)
            if problem is not None:
                raise SeriesMismatch(f"patch {rel} does not apply cleanly on {commit[:12]} with the patches before "
                                     f"it: {problem}")
        expected_entries = tree_entries(checkout, own)
    actual_entries = work_tree_entries(root, own)
    expected, actual = tree_digest(expected_entries), tree_digest(actual_entries)
    differences = sorted(path for path in expected_entries.keys() | actual_entries.keys()
                         if expected_entries.get(path) != actual_entries.get(path))
    result = Verification([rel for rel, _, _ in series], expected, actual, len(actual_entries), differences)
    if differences:
        def describe(path: str) -> str:
            if path not in actual_entries:
                return f"{path} (missing from the artifact)"
            if path not in expected_entries:
                return f"{path} (not produced by the series)"
            if expected_entries[path].sha256 == actual_entries[path].sha256:
                return f"{path} (mode differs)"
            return f"{path} (content differs)"

        shown = ", ".join(describe(p) for p in differences[:10])
        more = f" and {len(differences) - 10} more" if len(differences) > 10 else ""
        raise SeriesMismatch(f"the patch series does not reproduce the artifact's code: tree digest {expected} "
                             f"(upstream + {len(series)} patch(es)) differs from {actual} (artifact); differing "
                             f"path(s): {shown}{more}",
                             "record the remaining change with 'rra change record', or undo the edit",
                             [describe(p) for p in differences])
    return result
