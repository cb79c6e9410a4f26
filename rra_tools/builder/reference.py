"""``rra reference add RUN_RECORD...``: run records become reference observations of the claims
their launcher produces, with their provenance.

A record is a ``record.json`` file or a run directory holding one (as ``rra run`` writes them,
possibly copied from another machine). It is refused unless it is a valid run record of this
artifact (same id; its ``artifact_digest`` is the manifest's digest, see below), ``completed``
with exit status 0, of a launcher that claims read, with a value for at least one of them.
A record outside the artifact is copied, with the files of its run directory, to
``<evidence.run_records>/reference/<by>/<launcher>/<run directory name>/`` so that the
observation's ``run_record`` stays inside the artifact for the validator and the review.

Provenance: the observation's ``fingerprint`` comes from the record's host (hardware: CPU
architecture, CPU count, accelerators; software: interpreter and the digest of the installed
package set). Who ran it (``--by``), from which code (``--from raw|refined``) and on which
machine (the record's OS and CPU architecture) go into the extension key ``x-provenance`` of
the observation, because the RRA 1.0 ``Observation`` model has no field for them yet.

Digest: adding an observation changes the manifest, hence its digest, so a record made before
an earlier ``rra reference add`` would no longer match. A record is accepted when its
``artifact_digest`` equals the digest of the current manifest, or of the current manifest with
every observation that carries ``x-provenance`` (those this command added) removed: records of
runs made on the artifact as it was before any reference was added are all accepted, in one
call or several.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus, RRAError
from ..io.artifact import Artifact, load_artifact
from ..io.manifest import manifest_digest
from .manifest_edit import edit_manifest

__all__ = ["AddedObservation", "ObservationError", "add_references", "fingerprint_of"]

MAX_RECORD_BYTES = 16 * 1024 * 1024


class ObservationError(RRAError):
    """A run record cannot become a reference observation; nothing was written."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class AddedObservation:
    """One observation written: claim, value, seed (or repeat index) and its record's path."""

    claim: str
    value: float
    seed: int
    run_record: str


def _record_file(given: Path) -> Path:
    path = given / "record.json" if given.is_dir() else given
    if path.is_symlink() or not path.is_file():
        raise ObservationError(f"run record {str(given)!r} is not a record.json file or a run directory holding one")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ObservationError(f"run record {str(path)!r} is larger than {MAX_RECORD_BYTES} bytes")
    return path


def _load_record(path: Path) -> Any:
    from pydantic import ValidationError

    from ..model.run_record import RunRecord

    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ObservationError(f"run record {str(path)!r} is not readable JSON: {exc}") from None
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise ObservationError(f"run record {str(path)!r} is not a valid run record: {first['msg']} at {where!r}") from None


def fingerprint_of(record: Any) -> dict[str, str]:
    """Hardware and software fingerprint of the record's host."""
    host = record.host
    hardware = f"{host.machine}, {host.cpus} CPUs"
    if host.gpus:
        models: dict[str, int] = {}
        for gpu in host.gpus:
            models[gpu.model] = models.get(gpu.model, 0) + 1
        hardware += ", " + ", ".join(f"{n}x {model}" for model, n in models.items())
    software = f"{host.python}, {host.packages} packages sha256:{host.packages_digest}"
    return {"hardware": hardware, "software": software}


def _base_digests(artifact: Artifact) -> set[str]:
    stripped = copy.deepcopy(dict(artifact.data))
    for claim in stripped.get("claims") or []:
        reference = claim.get("reference") if isinstance(claim, dict) else None
        if isinstance(reference, dict) and isinstance(reference.get("observations"), list):
            reference["observations"] = [o for o in reference["observations"]
                                         if not (isinstance(o, dict) and "x-provenance" in o)]
    return {artifact.digest, manifest_digest(stripped)}


def _copy_run(artifact: Artifact, record_path: Path, by: str, launcher: str) -> str:
    """The record's path relative to the root: as it is when inside the artifact, else after
    copying its run directory (regular files only) under runs/reference/<by>/<launcher>/."""
    root = artifact.root
    real = record_path.resolve()
    if real.is_relative_to(root):
        return real.relative_to(root).as_posix()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", by).strip("-.") or "someone"
    source = record_path.parent
    target = artifact.runs_dir / "reference" / slug / launcher / source.name
    if target.exists():
        raise ObservationError(f"{target.relative_to(root).as_posix()} exists already: this run was added before")
    target.mkdir(parents=True)
    files = [record_path] if record_path.name != "record.json" else sorted(
        p for p in source.rglob("*") if p.is_file() and not p.is_symlink())
    for path in files:
        destination = target / (path.relative_to(source) if path.is_relative_to(source) else Path("record.json"))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
    return (target / "record.json").relative_to(root).as_posix()


def add_references(artifact_dir: str | Path, records: Sequence[str | Path], *, by: str,
                   origin: str) -> list[AddedObservation]:
    """Turn ``records`` into observations (see the module docstring); all or nothing."""
    if not by.strip():
        raise ObservationError("--by is empty: say who ran these runs")
    if origin not in ("raw", "refined"):
        raise ObservationError(f"--from {origin!r} is not 'raw' or 'refined'")
    artifact = load_artifact(artifact_dir)
    claims = [c for c in artifact.data.get("claims") or [] if isinstance(c, Mapping)]
    digests = _base_digests(artifact)
    planned: list[tuple[Path, Any, list[str]]] = []
    seen_records: set[str] = set()
    for given in records:
        path = _record_file(Path(given))
        record = _load_record(path)
        shown = str(given)
        if record.artifact_id != artifact.data.get("id"):
            raise ObservationError(f"run record {shown!r} is of artifact {record.artifact_id!r}, not "
                                 f"{artifact.data.get('id')!r}")
        if record.artifact_digest not in digests:
            raise ObservationError(f"run record {shown!r} was made on another version of the manifest: its "
                                 f"artifact_digest {record.artifact_digest} is not {artifact.digest}",
                                 "re-run the launcher on this artifact (rra run) and add the new record")
        status = str(getattr(record.status, "value", record.status))
        if status != "completed" or record.exit_status != 0:
            raise ObservationError(f"run record {shown!r} is {status!r} with exit status {record.exit_status}; only a "
                                 "completed run that exited 0 is a reference observation")
        mine = [c["id"] for c in claims if c.get("launcher") == record.launcher]
        if not mine:
            raise ObservationError(f"run record {shown!r} is of launcher {record.launcher!r}, which no claim reads")
        values = [claim for claim in mine if claim in record.metrics]
        if not values:
            raise ObservationError(f"run record {shown!r} has no value for claim(s) {', '.join(mine)} of launcher "
                                 f"{record.launcher!r}", "check the claims' extraction with 'rra results'")
        key = str(path.resolve())
        if key in seen_records:
            raise ObservationError(f"run record {shown!r} is given twice")
        seen_records.add(key)
        planned.append((path, record, values))

    existing = {c["id"]: [o.get("run_record") for o in (c.get("reference") or {}).get("observations", [])]
                for c in claims}
    added: list[AddedObservation] = []
    copied: list[Path] = []
    try:
        entries: list[tuple[str, dict[str, Any]]] = []
        used_seeds = {c["id"]: {o.get("seed") for o in (c.get("reference") or {}).get("observations", [])}
                      for c in claims}
        for path, record, values in planned:
            rel = _copy_run(artifact, path, by, record.launcher)
            if not rel.startswith("..") and (artifact.root / rel) != path.resolve():
                copied.append((artifact.root / rel).parent)
            for claim in values:
                if rel in existing.get(claim, []):
                    raise ObservationError(f"run record {rel!r} is already an observation of claim {claim!r}")
                seed = record.seed
                if seed is None:  # a deterministic launcher: the repeat index
                    seed = next(i for i in range(len(used_seeds[claim]) + 1) if i not in used_seeds[claim])
                used_seeds[claim].add(seed)
                observation = {"value": record.metrics[claim], "seed": seed, "fingerprint": fingerprint_of(record),
                               "run_record": rel,
                               "x-provenance": {"by": by, "from": origin,
                                                "machine": f"{record.host.os}, {record.host.machine}",
                                                "started": record.started}}
                entries.append((claim, observation))
                added.append(AddedObservation(claim, record.metrics[claim], seed, rel))

        def mutate(document: Any) -> None:
            for claim, observation in entries:
                target = next(c for c in document["claims"] if c.get("id") == claim)
                if target.get("reference") is None:
                    target["reference"] = {"observations": []}
                target["reference"]["observations"].append(observation)

        edit_manifest(artifact.manifest_path, mutate)
    except BaseException:
        for folder in copied:  # nothing copied without its observation
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return added
