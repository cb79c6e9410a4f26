"""``rra reference add RUN_RECORD...``: run records become reference observations of the claims
their launcher produces, with their provenance.

A record is a ``record.json`` file or a run directory holding one (as ``rra run`` writes them,
possibly copied from another machine). A launcher's run folder (``runs/<launcher>``, the folder
of run directories) gives its newest successful record (``completed`` with exit status 0, by the
time the run started), or every successful one with ``every`` (``--all``); a record of it that is
already an observation is then passed over. It is refused unless it is a valid run record of this
artifact (same id; its ``artifact_digest`` is the manifest's digest, see below), ``completed``
with exit status 0, of a launcher that claims read, with a value for at least one of them.
A record outside the artifact is copied, with the files of its run directory, to
``<evidence.run_records>/reference/<by>/<launcher>/<run directory name>/`` so that the
observation's ``run_record`` stays inside the artifact for the validator and the review.

Provenance: the observation's ``fingerprint`` comes from the record's host (hardware: CPU
architecture, CPU count, accelerators; software: interpreter and the digest of the installed
package set). In an RRA 1.1 manifest the observation gets ``provenance``: ``by`` (``--by``),
``code`` (``--from raw|refined``), ``revision`` (the upstream commit for raw code, the record's
artifact digest for refined code), ``machine`` (``--machine``, else the record's OS, CPU
architecture and CPU count, which need not tell two machines apart) and ``date`` (the day the run
started); a run of a launcher that is not stochastic is told apart by ``repeat`` (the record's,
else the next free index). A 1.0 manifest has no field for provenance: the same facts go into the
extension key ``x-provenance`` and the repeat index into ``seed``.

Digest: adding an observation changes the manifest, hence its digest, so a record made before
an earlier ``rra reference add`` would no longer match. A record is accepted when its
``artifact_digest`` equals the digest of the current manifest, or of the current manifest with
every observation that has a ``run_record`` and ``provenance`` or ``x-provenance`` (those this
command adds) removed: records of
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

from ..errors import ExitStatus
from ..io.artifact import Artifact, load_artifact
from ..io.read.manifest import manifest_digest
from .errors import BuilderLayerError
from .manifest_edit import edit_manifest

__all__ = ["AddedObservation", "ObservationError", "add_references", "fingerprint_of"]

MAX_RECORD_BYTES = 16 * 1024 * 1024


class ObservationError(BuilderLayerError):
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


def _successful(record: Any) -> bool:
    return str(getattr(record.status, "value", record.status)) == "completed" and record.exit_status == 0


def _expand(given: Path, every: bool, taken: set[str]) -> list[Path]:
    """The record files ``given`` names: itself, or, for a launcher's run folder (a directory of
    run directories), its newest successful record or (``every``) each successful one that is not
    an observation already (``taken``: resolved paths)."""
    if not given.is_dir() or (given / "record.json").exists():
        return [_record_file(given)]
    runs = sorted(p for p in given.glob("*/record.json") if p.is_file() and not p.is_symlink())
    if not runs:
        raise ObservationError(f"{str(given)!r} holds no record.json and no run directory with one",
                               "give a run record, a run directory, or a launcher's run folder (runs/LAUNCHER)")
    good = [(record.started, path) for path in runs if _successful(record := _load_record(_record_file(path)))]
    if not good:
        raise ObservationError(f"the {len(runs)} run(s) of {str(given)!r} include no completed run that exited 0",
                               "run the launcher again (rra run) and add its record")
    if every:
        return [path for _, path in sorted(good) if str(path.resolve()) not in taken]
    return [max(good)[1]]


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
            reference["observations"] = [o for o in reference["observations"] if not (
                isinstance(o, dict) and "run_record" in o and ("provenance" in o or "x-provenance" in o))]
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


def _version(data: Mapping[str, Any]) -> tuple[int, int]:
    match = re.fullmatch(r"([0-9]+)\.([0-9]+)", str(data.get("rra_version", "")))
    return (int(match.group(1)), int(match.group(2))) if match else (1, 0)


#: The fingerprint ``rra init`` gives the reported value it writes as a drafted claim's one
#: observation (builder/draft_claims.py): the schema asks for one before any run exists.
DRAFTED_STAND_IN = "not reported by the authors"


def is_untraced(observation: Any) -> bool:
    """Whether ``observation`` names no run record: nothing shows a run gave its value."""
    return isinstance(observation, Mapping) and not observation.get("run_record")


def is_drafted_stand_in(claim: Mapping[str, Any], observation: Any) -> bool:
    """Whether ``observation`` is the reported value a draft wrote as the claim's observation:
    its value, no run record, the draft's fingerprint. The paper's value is not an observation
    (spec/04-levels.md); once runs are observed it is taken out, else it would widen their
    interval until it holds the paper's number whatever the runs give. (An author's own
    untraced observations are theirs to keep here; a build sets aside every untraced one.)"""
    reported = claim.get("reported")
    fingerprint = observation.get("fingerprint") if isinstance(observation, Mapping) else None
    return (is_untraced(observation) and isinstance(reported, Mapping)
            and observation.get("value") == reported.get("value") and isinstance(fingerprint, Mapping)
            and fingerprint.get("hardware") == DRAFTED_STAND_IN)


def add_references(artifact_dir: str | Path, records: Sequence[str | Path], *, by: str,
                   origin: str, machine: str | None = None, every: bool = False,
                   set_aside: list[str] | None = None) -> list[AddedObservation]:
    """Turn ``records`` into observations (see the module docstring); all or nothing. A launcher's
    run folder among ``records`` gives its newest successful record, or each one with ``every``.
    A claim that then has two observations of runs loses the draft's stand-in for one
    (:func:`is_drafted_stand_in`); each such removal is said in ``set_aside``."""
    if not by.strip():
        raise ObservationError("--by is empty: say who ran these runs")
    if machine is not None and not machine.strip():
        raise ObservationError("--machine is empty: name the machine the runs were made on")
    if origin not in ("raw", "refined"):
        raise ObservationError(f"--from {origin!r} is not 'raw' or 'refined'")
    artifact = load_artifact(artifact_dir)
    claims = [c for c in artifact.data.get("claims") or [] if isinstance(c, Mapping)]
    digests = _base_digests(artifact)
    planned: list[tuple[Path, Any, list[str]]] = []
    seen_records: set[str] = set()
    taken = {str((artifact.root / str(o.get("run_record"))).resolve()) for c in claims
             for o in (c.get("reference") or {}).get("observations", []) if isinstance(o, Mapping)
             and isinstance(o.get("run_record"), str)}
    # A record picked from a launcher's run folder is named by its run directory.
    expanded = [(str(path.parent) if path.parent.parent == Path(given) else str(given), path)
                for given in records for path in _expand(Path(given), every, taken)]
    if not expanded:
        raise ObservationError("every successful run record given is an observation already")
    for shown, path in expanded:
        record = _load_record(path)
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
        modern = _version(artifact.data) >= (1, 1)
        # Index already taken per claim: seeds, and repeats (1.1) or repeat indexes kept as seeds (1.0).
        used = {c["id"]: {o.get("repeat" if modern else "seed") for o in (c.get("reference") or {}).get(
            "observations", [])} for c in claims}
        code = artifact.data.get("code") or {}
        upstream_commit = str((code.get("upstream") or {}).get("commit", ""))
        for path, record, values in planned:
            rel = _copy_run(artifact, path, by, record.launcher)
            if not rel.startswith("..") and (artifact.root / rel) != path.resolve():
                copied.append((artifact.root / rel).parent)
            for claim in values:
                if rel in existing.get(claim, []):
                    raise ObservationError(f"run record {rel!r} is already an observation of claim {claim!r}")
                provenance = {"by": by, "code": origin,
                              "revision": upstream_commit if origin == "raw" else record.artifact_digest,
                              "machine": machine or f"{record.host.os}, {record.host.machine}, "
                                                    f"{record.host.cpus} CPUs",
                              "date": record.started[:10]}
                observation: dict[str, Any] = {"value": record.metrics[claim]}
                seed = record.seed
                if seed is not None:
                    observation["seed"] = seed
                else:  # a launcher that is not stochastic: its runs are told apart by repeat index
                    repeat = getattr(record, "repeat", None)
                    if repeat is None or repeat in used[claim]:
                        repeat = next(i for i in range(len(used[claim]) + 1) if i not in used[claim])
                    used[claim].add(repeat)
                    seed = repeat
                    observation["repeat" if modern else "seed"] = repeat
                observation["fingerprint"] = fingerprint_of(record)
                observation["run_record"] = rel
                if modern:
                    if not provenance["revision"]:
                        del provenance["revision"]
                    observation["provenance"] = provenance
                else:
                    observation["x-provenance"] = provenance
                entries.append((claim, observation))
                added.append(AddedObservation(claim, record.metrics[claim], seed, rel))

        removed: list[str] = []

        def mutate(document: Any) -> None:
            removed.clear()
            for claim, observation in entries:
                target = next(c for c in document["claims"] if c.get("id") == claim)
                if target.get("reference") is None:
                    target["reference"] = {"observations": []}
                target["reference"]["observations"].append(observation)
            for claim in {claim for claim, _ in entries}:
                target = next(c for c in document["claims"] if c.get("id") == claim)
                observations = target["reference"]["observations"]
                runs = [o for o in observations if isinstance(o, Mapping) and o.get("run_record")]
                stand_ins = [o for o in observations if is_drafted_stand_in(target, o)]
                if stand_ins and len(runs) >= 2:
                    target["reference"]["observations"] = [o for o in observations if o not in stand_ins]
                    removed.append(f"claim {claim}: the drafted observation {stand_ins[0].get('value')} (its reported "
                                   "value, no run) set aside: the paper's value is not an observation")

        edit_manifest(artifact.manifest_path, mutate)
        if set_aside is not None:
            set_aside.extend(removed)
    except BaseException:
        for folder in copied:  # nothing copied without its observation
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return added
