"""Reading case files and turning one case into an artifact directory on disk."""

from __future__ import annotations

import copy
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..io.errors import LoadError
from ..io.read.manifest import load_manifest_bytes
from ..model.conformance import Case, CaseFile, PatchOp
from .errors import ConformanceLayerError

__all__ = ["CaseError", "LoadedCase", "apply_patch", "load_suite", "materialise", "select_cases", "suite_path"]


class CaseError(ConformanceLayerError):
    """A case file or case is malformed; the message names the file and case."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class LoadedCase:
    """A case and the file it came from (relative to the suite directory)."""

    case: Case
    file: str


#: The directory of the bundled suite. It covers every minor version of major 1: the cases of a
#: feature added after 1.0 declare that version and carry its tag (e.g. ``rra-1-1``).
SUITE_VERSION = "1.0"


def suite_path(version: str = SUITE_VERSION) -> Path:
    """The conformance suite of ``version`` in a wheel or a source checkout."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_conformance" / f"v{version}", package.parent / "conformance" / f"v{version}"):
        if candidate.is_dir():
            return candidate
    raise CaseError(f"conformance suite v{version} is not installed")


def load_suite(suite: Path) -> list[LoadedCase]:
    """Every case of the suite, in file then document order; ids are checked to be unique."""
    from pydantic import ValidationError

    loaded: list[LoadedCase] = []
    seen: dict[str, str] = {}
    for path in sorted((suite / "cases").glob("*.yaml")):
        rel = path.relative_to(suite).as_posix()
        try:
            data = load_manifest_bytes(path.read_bytes()).data
            case_file = CaseFile.model_validate(data)
        except LoadError as exc:
            raise CaseError(f"{rel}:{exc.problem.line}:{exc.problem.column}: {exc.problem.message}") from None
        except ValidationError as exc:
            raise CaseError(f"{rel}: {exc}") from None
        for case in case_file.cases:
            if case.id in seen:
                raise CaseError(f"{rel}: case id {case.id!r} is already used in {seen[case.id]}")
            seen[case.id] = rel
            sources = sum(x is not None for x in (case.base, case.manifest, case.manifest_text,
                                                  case.manifest_bytes_hex)) + case.no_manifest
            if sources != 1:
                raise CaseError(f"{rel}: case {case.id!r} must give exactly one of base, manifest, manifest_text, "
                                "manifest_bytes_hex, no_manifest")
            if case.patch and case.base is None:
                raise CaseError(f"{rel}: case {case.id!r} has a patch but no base")
            if case.layout is not None and case.base is None and case.manifest is None:
                raise CaseError(f"{rel}: case {case.id!r} packs an artifact (layout) and must give base or manifest")
            has_taskset = case.taskset is not None or case.taskset_text is not None
            if case.taskset is not None and case.taskset_text is not None:
                raise CaseError(f"{rel}: case {case.id!r} gives both taskset and taskset_text")
            if case.references is not None and not has_taskset:
                raise CaseError(f"{rel}: case {case.id!r} gives references but no taskset")
            if has_taskset and case.layout is not None:
                raise CaseError(f"{rel}: case {case.id!r} gives both a taskset and a layout")
            loaded.append(LoadedCase(case, rel))
    return loaded


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply_patch(document: Any, ops: list[PatchOp]) -> Any:
    """Apply RFC 6902 add/remove/replace operations to a copy of ``document``."""
    doc = copy.deepcopy(document)
    for op in ops:
        tokens = [_unescape(t) for t in op.path.split("/")[1:]]
        if not tokens:
            if op.op == "remove":
                raise CaseError("cannot remove the whole document")
            doc = copy.deepcopy(op.value)
            continue
        parent = doc
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op.op == "add":
                parent.insert(index, copy.deepcopy(op.value))
            elif op.op == "remove":
                del parent[index]
            else:
                parent[index] = copy.deepcopy(op.value)
        else:
            if op.op in ("remove", "replace") and last not in parent:
                raise CaseError(f"patch path {op.path!r} does not exist")
            if op.op == "remove":
                del parent[last]
            else:
                parent[last] = copy.deepcopy(op.value)
    return doc


def select_cases(cases: list[LoadedCase], *, ids: list[str] | None = None, tags: set[str] | None = None,
                 exclude_tags: set[str] | None = None) -> list[LoadedCase]:
    """The cases whose id matches one of ``ids`` (exact or a glob: ``oci-*``), that have any of
    ``tags`` and none of ``exclude_tags`` (each filter applies only when given).

    An id or pattern that matches no case is an error: a misspelt id would otherwise run nothing.
    """
    from fnmatch import fnmatchcase

    selected = cases
    if ids:
        unmatched = [i for i in ids if not any(fnmatchcase(c.case.id, i) for c in cases)]
        if unmatched:
            raise CaseError(f"no case has the id {', '.join(map(repr, unmatched))}; 'rra conformance list' shows them")
        selected = [c for c in selected if any(fnmatchcase(c.case.id, i) for i in ids)]
    if tags:
        selected = [c for c in selected if tags & set(c.case.tags)]
    if exclude_tags:
        selected = [c for c in selected if not exclude_tags & set(c.case.tags)]
    return selected


def materialise(suite: Path, loaded: LoadedCase, dest: Path) -> Path:
    """Write the case's artifact into the empty directory ``dest`` and return ``dest``."""
    case = loaded.case
    manifest: Any = case.manifest
    if case.base is not None:
        base_dir = suite / "bases" / case.base
        if not base_dir.is_dir():
            raise CaseError(f"{loaded.file}: case {case.id!r} names base {case.base!r}, which does not exist")
        shutil.copytree(base_dir, dest, symlinks=True, dirs_exist_ok=True)
        base_manifest = dest / "rra.yaml"
        manifest = load_manifest_bytes(base_manifest.read_bytes()).data
        base_manifest.unlink()
        try:
            manifest = apply_patch(manifest, case.patch)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise CaseError(f"{loaded.file}: case {case.id!r}: patch does not apply: {exc!r}") from None
    dest.mkdir(parents=True, exist_ok=True)
    for rel, text in case.files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # Bytes, not text mode: recorded digests depend on exact line endings.
        target.write_bytes(text.encode("utf-8"))
    for rel, link in case.symlinks.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link, target)
    out = dest / case.manifest_name
    if case.manifest_text is not None:
        out.write_bytes(case.manifest_text.encode("utf-8"))
    elif case.manifest_bytes_hex is not None:
        out.write_bytes(bytes.fromhex(case.manifest_bytes_hex))
    elif manifest is not None:
        # JSON is valid YAML 1.2 and leaves no room for a serialiser's quoting choices.
        out.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest
