"""Checking a benchmark task set (``rra bench check``): every problem of the file, of its tasks
against their artifacts and of its private references file, each with a stable code
(RRA950-RRA999, :data:`~.catalog.TASKSET_RULES`), a location and a hint.

Like ``rra validate`` it is static and offline: it reads the task set, the references file and
the manifests of the artifacts named by a path, never runs anything and never pulls an
artifact named by an OCI reference (that one is checked when a benchmark pulls it, RRA959).
``rra bench run``, ``reproduce`` and ``score`` make this check before they start.

>>> from pathlib import Path
>>> check_taskset(Path("/nonexistent/tasks.yaml")).diagnostics[0].code
'RRA950'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..io.artifact import Artifact, ArtifactError, load_artifact
from ..io.errors import InputError, LoadError
from ..io.read.manifest import LoadedManifest, load_manifest_bytes, read_manifest_bytes
from ..model.taskset import MIN_OBSERVATIONS, TaskReferences, TaskSet
from .catalog import TASKSET_RULES
from .diagnostics import DOCS_BASE_URL, Diagnostic, pointer_text
from .result import ValidationResult

__all__ = ["NORM_OBSERVATIONS", "IdProblem", "check_taskset", "id_problems"]

#: Reference observations a task should have (spec/04-levels.md); fewer (but at least
#: :data:`~rra_tools.model.taskset.MIN_OBSERVATIONS`) is a warning.
NORM_OBSERVATIONS = 5

_SCHEMA_HINT = "see schemas/rra-taskset-1.0.schema.json and spec/07-task-sets.md"
_REFS_HINT = "see schemas/rra-bench-references-1.0.schema.json and spec/07-task-sets.md#the-private-references-file"


@dataclass
class _File:
    """One document being checked: where it is, its text and positions, and what it yields."""

    path: Path
    loaded: LoadedManifest | None = None
    found: list[Diagnostic] = field(default_factory=list)

    def add(self, code: str, message: str, at: tuple[str | int, ...] = (), hint: str | None = None) -> None:
        rule = TASKSET_RULES[code]
        position = self.loaded.position(at) if self.loaded is not None else None
        self.found.append(Diagnostic(
            code=code, name=rule.name, severity=rule.severity, message=message, pointer=pointer_text(at),
            file=str(self.path), line=position.line if position is not None else None,
            column=position.column if position is not None else None, hint=hint, url=f"{DOCS_BASE_URL}/{code}"))


def _read(doc: _File, code: str, what: str) -> Any:
    """The document's data, read with positions through the one loader (size cap, YAML/JSON
    bounds, duplicate keys); None, with a finding of ``code``, when it cannot be read."""
    try:
        doc.loaded = load_manifest_bytes(read_manifest_bytes(doc.path), path=doc.path, located=True)
    except InputError as exc:
        doc.add(code, exc.message.replace("a manifest is", f"a {what} is"), hint=exc.hint)
        return None
    except LoadError as exc:
        p = exc.problem
        doc.found.append(Diagnostic(code=code, name=TASKSET_RULES[code].name, severity=TASKSET_RULES[code].severity,
                                    message=f"{what} cannot be read: {p.message}", file=str(doc.path), line=p.line,
                                    column=p.column, hint=p.hint, url=f"{DOCS_BASE_URL}/{code}"))
        return None
    for problem in doc.loaded.problems:
        # Duplicate keys: the reader keeps the first value; the document is still wrong.
        doc.found.append(Diagnostic(code=code, name=TASKSET_RULES[code].name, severity=TASKSET_RULES[code].severity,
                                    message=problem.message, pointer=problem.pointer, file=str(doc.path),
                                    line=problem.line, column=problem.column, hint=problem.hint,
                                    url=f"{DOCS_BASE_URL}/{code}"))
    return doc.loaded.data


def _schema_code(loc: tuple[str | int, ...]) -> str:
    """The code of a schema error of the task set at ``loc``: repeats and limits have their own."""
    if loc[:1] == ("repeats",):
        return "RRA960"
    if loc[:1] == ("limits",):
        return "RRA961"
    return "RRA951"


def _model(doc: _File, model: type[BaseModel], data: Any, code: str | None, hint: str) -> Any:
    """``data`` validated as ``model``; None, with one finding per schema error, when it is not."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(part for part in error["loc"] if isinstance(part, (str, int)))
            # A union (a condition) names its branch in the location: the value is what is wrong.
            loc = tuple(p for p in loc if not (isinstance(p, str) and (p.startswith("function-") or p in (
                "str", "int", "float", "bool", "list", "dict", "literal['raw','refined']"))))
            shown = pointer_text(loc) or "/"
            doc.add(code or _schema_code(loc), f"at {shown}: {error['msg']}", loc, hint)
        return None


def _items(data: Any, key: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The mappings of the list ``data[key]`` with their index (nothing when it is not a list)."""
    items = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, Mapping):
                yield i, item


#: (pointer, message, hint) of one id used twice in a task set (RRA952).
IdProblem = tuple[tuple[str | int, ...], str, str]


def _duplicates(what: str, items: list[tuple[tuple[str | int, ...], Any]], where: str = "") -> list[IdProblem]:
    """RRA952 for every item of ``items`` ((location, id)) whose id an earlier one has."""
    first: dict[Any, tuple[str | int, ...]] = {}
    found: list[IdProblem] = []
    for at, ident in items:
        if not isinstance(ident, str):
            continue
        if ident in first:
            found.append((at, f"{what} {ident!r} is used twice{where} (first at {pointer_text(first[ident])})",
                          f"give each {what} a distinct id" if what != "condition" else
                          "list each condition once (an ablation's name is its parts in the order repairs, lock, "
                          "launchers, guide, whatever order they are listed in)"))
        else:
            first[ident] = at
    return found


@dataclass
class _Observations:
    """Where a task's reference observations come from and what they are."""

    source: str
    count: int
    without_provenance: int = 0


class _Artifacts:
    """Artifacts named by a path, loaded once each (a task set names one artifact many times)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.loaded: dict[str, Artifact | str] = {}

    def get(self, name: str) -> Artifact | str:
        held = self.loaded.get(name)
        if held is None:
            try:
                held = load_artifact(self.base / name)
            except ArtifactError as exc:
                held = str(exc)
            self.loaded[name] = held
        return held


def _references(path: Path, taskset_id: Any) -> tuple[_File, dict[str, tuple[int, int]]]:
    """The private references file checked (RRA962), and per task key its index and the number of
    its observations."""
    doc = _File(path)
    data = _read(doc, "RRA962", "references file")
    found: dict[str, tuple[int, int]] = {}
    if data is None:
        return doc, found
    model = _model(doc, TaskReferences, data, "RRA962", _REFS_HINT)
    if model is not None and isinstance(taskset_id, str) and model.taskset != taskset_id:
        doc.add("RRA962", f"the references file belongs to task set {model.taskset!r}, not {taskset_id!r}",
                ("taskset",), "check that the references file goes with this task set")
    seen: dict[str, int] = {}
    for i, entry in _items(data, "references"):
        task, observations = entry.get("task"), entry.get("observations")
        if not isinstance(task, str):
            continue
        if task in seen:
            doc.add("RRA962", f"task {task!r} is listed twice (first at /references/{seen[task]})",
                    ("references", i, "task"), "give each task's observations in one entry")
            continue
        seen[task] = i
        found[task] = (i, len(observations) if isinstance(observations, list) else 0)
    return doc, found


def check_taskset(path: str | Path, references: str | Path | None = None) -> ValidationResult:
    """Every finding of the task set at ``path`` (and of its private ``references`` file), most
    important first. ``unreadable`` when the task set cannot be read at all."""
    doc = _File(Path(path))
    result = ValidationResult(input=str(path), manifest=str(path))
    data = _read(doc, "RRA950", "task set")
    if data is None:
        result.unreadable = not any(d.line is not None for d in doc.found)
        result.diagnostics = sorted(doc.found, key=Diagnostic.sort_key)
        return result
    assert doc.loaded is not None
    result.source_text = doc.loaded.text
    model = _model(doc, TaskSet, data, None, _SCHEMA_HINT)
    refs_doc, private = (_references(Path(references), data.get("id") if isinstance(data, Mapping) else None)
                         if references is not None else (None, {}))
    _check_ids(doc, data, model)
    keys = _check_tasks(doc, data, private, references is not None)
    if refs_doc is not None:
        for key, (i, _) in private.items():
            if key not in keys:
                refs_doc.add("RRA963", f"task {key!r} is not a task of the task set",
                             ("references", i, "task"), "remove the entry, or correct its key "
                             "('<paper id>/<experiment id>/<task id>')")
    found = doc.found + (refs_doc.found if refs_doc is not None else [])
    result.diagnostics = sorted(found, key=Diagnostic.sort_key)
    return result


def id_problems(data: Any, model: TaskSet | None) -> list[IdProblem]:
    """RRA952: ids unique in their lists (papers, experiments of a paper, tasks of an experiment),
    reproducer names and conditions (those of ``model``, when the task set is one), in document
    order. ``rra bench check`` reports them all; loading a task set refuses the first."""
    found = _duplicates("paper id", [(("papers", i, "id"), p.get("id")) for i, p in _items(data, "papers")])
    for i, paper in _items(data, "papers"):
        found += _duplicates("experiment id", [(("papers", i, "experiments", j, "id"), e.get("id"))
                                               for j, e in _items(paper, "experiments")],
                             f" in paper {paper.get('id')!r}")
        for j, experiment in _items(paper, "experiments"):
            found += _duplicates("task id", [(("papers", i, "experiments", j, "tasks", k, "id"), t.get("id"))
                                             for k, t in _items(experiment, "tasks")],
                                 f" in {paper.get('id')}/{experiment.get('id')}")
    found += _duplicates("reproducer name", [(("reproducers", i, "name"), r.get("name"))
                                             for i, r in _items(data, "reproducers")])
    if model is not None:
        names = [c if isinstance(c, str) else c.name for c in model.conditions]
        found += _duplicates("condition", [(("conditions", i), name) for i, name in enumerate(names)])
    return found


def _check_ids(doc: _File, data: Any, model: TaskSet | None) -> None:
    for at, message, hint in id_problems(data, model):
        doc.add("RRA952", message, at, hint)


def _check_tasks(doc: _File, data: Any, private: Mapping[str, tuple[int, int]], split: bool) -> set[str]:
    """RRA953-RRA959 for every task; the keys of the tasks."""
    artifacts = _Artifacts(doc.path.parent)
    keys: set[str] = set()
    for i, paper in _items(data, "papers"):
        for j, experiment in _items(paper, "experiments"):
            for k, task in _items(experiment, "tasks"):
                at: tuple[str | int, ...] = ("papers", i, "experiments", j, "tasks", k)
                key = f"{paper.get('id')}/{experiment.get('id')}/{task.get('id')}"
                keys.add(key)
                _check_task(doc, at, key, task, artifacts, private, split)
    return keys


def _check_task(doc: _File, at: tuple[str | int, ...], key: str, task: Mapping[str, Any], artifacts: _Artifacts,
                private: Mapping[str, tuple[int, int]], split: bool) -> None:
    name, claim_id, given = task.get("artifact"), task.get("claim"), task.get("reference")
    if split and given is not None:
        doc.add("RRA958", f"task {key!r} carries reference values although a private references file is given",
                (*at, "reference"), "move the observations into the references file: the public part is what "
                "reproducers may read")
    observations: _Observations | None = None
    if isinstance(given, list):
        observations = _Observations("task", len(given))
    elif key in private:
        observations = _Observations("references", private[key][1])
    if not isinstance(name, str) or not isinstance(claim_id, str):
        return  # the schema finding says what is missing
    if name.startswith("oci://"):
        doc.add("RRA959", f"task {key!r}: artifact {name!r} is an OCI reference; its claim and observations are "
                "checked when the benchmark pulls it", (*at, "artifact"))
    else:
        artifact = artifacts.get(name)
        if isinstance(artifact, str):
            doc.add("RRA953", f"task {key!r}: artifact {name!r} cannot be used: {artifact}", (*at, "artifact"),
                    "give a directory, relative to the task-set file, that holds the artifact's rra.yaml")
            return
        claim = next((c for c in artifact.manifest.claims if c.id == claim_id), None)
        if claim is None:
            known = ", ".join(repr(c.id) for c in artifact.manifest.claims) or "none"
            doc.add("RRA954", f"task {key!r}: artifact {name!r} has no claim {claim_id!r} (it has {known})",
                    (*at, "claim"), "name a claim of the artifact's manifest")
            return
        if observations is None:
            observations = _Observations("manifest", len(claim.reference.observations),
                                         _without_provenance(artifact, claim_id))
    if observations is None:
        return
    where = {"task": "it gives", "references": "the references file gives",
             "manifest": f"claim {claim_id!r} has in its manifest"}[observations.source]
    obs_at = (*at, "reference") if observations.source == "task" else at
    if observations.count < MIN_OBSERVATIONS:
        if observations.source != "manifest":
            return  # the schemas ask for 3 in a task and in the references file: reported there (RRA951, RRA962)
        doc.add("RRA955", f"task {key!r} has {observations.count} reference observation(s) ({where}); at least "
                f"{MIN_OBSERVATIONS} are needed", obs_at, "give the task at least 3 (5 is the norm) independent "
                "reference observations, in the task or the references file")
    elif observations.count < NORM_OBSERVATIONS:
        doc.add("RRA956", f"task {key!r} has {observations.count} reference observations ({where}); "
                f"{NORM_OBSERVATIONS} are the norm", obs_at, "add independent observations: the acceptance "
                "interval of 3 is wide")
    if observations.without_provenance and observations.count >= MIN_OBSERVATIONS:
        doc.add("RRA957", f"task {key!r} takes its reference observations from claim {claim_id!r} of its "
                f"manifest, and {observations.without_provenance} of them say nothing of who made them, on which "
                "machine, from which code", obs_at, "give each observation a 'provenance' in the manifest, or give "
                "the task its own observations (with by, machine and code)")


def _without_provenance(artifact: Artifact, claim_id: str) -> int:
    """How many of the claim's reference observations in the manifest carry no provenance."""
    for claim in artifact.data.get("claims") or []:
        if isinstance(claim, Mapping) and claim.get("id") == claim_id:
            reference = claim.get("reference")
            observations = reference.get("observations") if isinstance(reference, Mapping) else None
            return sum(1 for o in observations or [] if isinstance(o, Mapping) and not o.get("provenance"))
    return 0
