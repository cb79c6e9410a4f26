"""Reading a task set: the file through the limited YAML/JSON readers, the model, and every
task resolved against its artifact (the artifact loads, the claim exists, at least 3 reference
observations) before anything runs.

A task set may come in two files: the public part (papers, experiments, tasks, no reference
values) and the private references file (:class:`~rra_tools.model.taskset.TaskReferences`) that
only the evaluator reads; :func:`load_taskset` merges them. A task's observations come from the
task itself, else from the private file, else from the claim in the artifact's manifest."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..answers import Answer, AnswerError, AnswerInterval, answer_mismatch, parse_answer
from ..intervals import Interval, acceptance_interval
from ..io.artifact import Artifact, load_artifact
from ..io.errors import InputError, LoadError
from ..io.read.manifest import load_manifest_bytes, read_manifest_bytes
from ..model.claims import ClaimValue
from ..model.taskset import (
    MIN_OBSERVATIONS,
    PARTS,
    BenchObservation,
    CodeCondition,
    Task,
    TaskReferences,
    TaskSet,
    condition_name,
)
from ..run.errors import ArtifactError
from ..validate.diagnostics import pointer_text
from ..validate.taskset import id_problems
from .artifacts import ArtifactCache, is_reference
from .errors import BenchError

__all__ = ["LoadedTaskSet", "ResolvedTask", "conditions_of", "load_taskset", "read_document", "with_conditions"]


@dataclass(frozen=True)
class ResolvedTask:
    """A task with its artifact loaded and its acceptance interval computed."""

    paper: str
    experiment: str
    task: Task
    artifact: Artifact
    launcher: str
    interval: Interval
    #: 'task' when the task carries its observations, 'references' when the private file gave
    #: them, 'manifest' when the claim's were used.
    source: str
    #: The reference values the interval comes from (the evaluator's secret in reproducer mode).
    values: tuple[float, ...] = ()
    #: The claim's reported precision (decimal places): the textual forms of values and the
    #: tolerance of a submitted value against its extraction.
    precision: int = 0
    #: The manifest digest of an artifact named by an OCI reference (its tree is the cache's).
    digest: str | None = None
    #: The claim's kind (RRA 1.2): 'number', or 'string', 'set', 'list', whose ``interval`` is an
    #: :class:`~rra_tools.answers.AnswerInterval` (the expected answer) and ``values`` empty.
    kind: str = "number"

    @property
    def key(self) -> str:
        """paper/experiment/task: unique within the task set."""
        return f"{self.paper}/{self.experiment}/{self.task.id}"


@dataclass(frozen=True)
class LoadedTaskSet:
    """A task set and its tasks, resolved."""

    path: Path
    model: TaskSet
    tasks: list[ResolvedTask]
    #: The names of the conditions to run, in order: 'conditions' then the ablations 'factorial'
    #: adds (:func:`conditions_of`); empty: those of the model.
    conditions: tuple[str, ...] = field(default=())
    #: The private references file read with it: a path no cell may see.
    references: Path | None = None

    def __post_init__(self) -> None:
        if not self.conditions:
            object.__setattr__(self, "conditions", conditions_of(self.model))


def _read(path: Path, what: str = "task set") -> object:
    shown = str(path)
    # The task set is read like a manifest (the one loader: size cap, YAML/JSON bounds,
    # duplicate keys); only the model that checks it differs.
    try:
        loaded = load_manifest_bytes(read_manifest_bytes(path), path=path)
    except InputError as exc:
        raise BenchError(exc.message.replace("a manifest is", f"a {what} is"), exc.hint) from None
    except LoadError as exc:
        p = exc.problem
        where = f"{shown}:{p.line}:{p.column}" if p.line is not None else shown
        raise BenchError(f"{what} {where}: {p.message}") from None
    if loaded.problems:
        problem = loaded.problems[0]
        raise BenchError(f"{what} {shown}: {problem.message}", problem.hint)
    return loaded.data


def read_document(path: Path, what: str) -> object:
    """A benchmark's YAML or JSON input file (``what`` names it in errors), read through the one
    manifest loader: its bounds and messages; BenchError when it cannot be read."""
    return _read(path, what)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = "/".join(str(part) for part in error["loc"])
    return f"at /{loc}: {error['msg']}" if loc else str(error["msg"])


def _duplicates(ids: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:
            return ident
        seen.add(ident)
    return None


def _references(path: Path, model: TaskSet) -> dict[str, list[BenchObservation]]:
    data = _read(path, "references file")
    try:
        refs = TaskReferences.model_validate(data)
    except ValidationError as exc:
        raise BenchError(f"references file {str(path)!r} is invalid {_first_error(exc)}",
                         "see schemas/rra-bench-references-1.0.schema.json and docs/bench.md") from None
    if refs.taskset != model.id:
        raise BenchError(f"references file {str(path)!r} belongs to task set {refs.taskset!r}, not {model.id!r}")
    dup = _duplicates(r.task for r in refs.references)
    if dup is not None:
        raise BenchError(f"references file {str(path)!r}: task {dup!r} is listed twice")
    return {r.task: list(r.observations) for r in refs.references}


def conditions_of(model: TaskSet) -> tuple[str, ...]:
    """The names of ``model``'s conditions: those 'conditions' lists, then every combination of the
    'factorial' parts not listed already (fewest parts removed first, parts in canonical order)."""
    names = [c if isinstance(c, str) else c.name for c in model.conditions]
    if model.factorial:
        crossed = [p for p in PARTS if p in set(model.factorial)]
        for size in range(len(crossed) + 1):
            for removed in itertools.combinations(crossed, size):
                name = condition_name(removed)
                if name not in names:
                    names.append(name)
    return tuple(names)


def with_conditions(loaded: LoadedTaskSet, names: Iterable[str]) -> LoadedTaskSet:
    """``loaded`` running the conditions ``names`` instead of its own ('raw', 'refined' or an
    ablation 'refined-without-PART[-PART...]', its parts in any order); BenchError for any other."""
    chosen: list[str] = []
    for name in names:
        parts = None if name in ("raw", "refined") else name.removeprefix("refined-without-").split("-")
        if parts is not None and (not name.startswith("refined-without-") or not set(parts) <= set(PARTS)
                                  or len(set(parts)) != len(parts)):
            raise BenchError(f"unknown condition {name!r}", "a condition is 'raw', 'refined' or "
                             f"'refined-without-PART[-PART...]' with parts among {', '.join(PARTS)}, each once")
        canonical = name if parts is None else condition_name(parts)
        if canonical not in chosen:
            chosen.append(canonical)
    return dataclasses.replace(loaded, conditions=tuple(chosen))


def _line(path: Path, pointer: str) -> str:
    """' (line L, column C)' of the value at the JSON ``pointer`` in the task set, read again
    with positions (only for an error: a valid task set is read without them)."""
    try:
        loaded = load_manifest_bytes(read_manifest_bytes(path), path=path, located=True)
    except (InputError, LoadError):  # pragma: no cover - it was read a moment ago
        return ""
    keys = tuple(int(k) if k.isdigit() else k for k in pointer.strip("/").split("/"))
    position = loaded.position(keys)
    return "" if position is None else f" (line {position.line}, column {position.column})"


_CONDITION_HELP = "a condition is 'raw', 'refined' or {refined: {without: [PART, ...]}}"


def _check_parts(items: object, where: str) -> tuple[str, str] | None:
    """(pointer, message) of the first unknown or repeated part in the list ``items`` at ``where``."""
    if not isinstance(items, list):
        return None  # the model says what it should be
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if isinstance(item, str) and item not in PARTS:
            return f"{where}/{i}", f"unknown part {item!r}; the parts are {', '.join(PARTS)}"
        if isinstance(item, str) and item in seen:
            return f"{where}/{i}", f"part {item!r} is listed twice (also at {where}/{seen[item]})"
        if isinstance(item, str):
            seen[item] = i
    return None


def _check_conditions(data: object) -> tuple[str, str] | None:
    """(pointer, message) of the first problem of the task set's 'conditions' and 'factorial' that
    the model would report less plainly (its condition is a union: each branch's error would show)."""
    if not isinstance(data, Mapping):
        return None
    conditions = data.get("conditions")
    if isinstance(conditions, list):
        for i, item in enumerate(conditions):
            at = f"/conditions/{i}"
            if isinstance(item, str) and item not in (CodeCondition.RAW.value, CodeCondition.REFINED.value):
                return at, f"unknown condition {item!r}; {_CONDITION_HELP}"
            if isinstance(item, Mapping):
                other = sorted(str(k) for k in item if k != "refined" and not str(k).startswith("x-"))
                if other:
                    return at, f"unknown key {other[0]!r} in an ablation; {_CONDITION_HELP}"
                spec = item.get("refined")
                without = spec.get("without") if isinstance(spec, Mapping) else None
                if not isinstance(without, list) or not without:
                    return f"{at}/refined", "an ablation needs {without: [PART, ...]} with at least one part"
                problem = _check_parts(without, f"{at}/refined/without")
                if problem is not None:
                    return problem
            elif not isinstance(item, str):
                return at, f"{item!r} is not a condition; {_CONDITION_HELP}"
    return _check_parts(data.get("factorial"), "/factorial")


def load_taskset(path: str | Path, references: str | Path | None = None, *,
                 artifacts: ArtifactCache | Callable[[TaskSet], ArtifactCache] | None = None) -> LoadedTaskSet:
    """Read and check the task set at ``path`` (and its private ``references`` file, when given);
    BenchError naming the file and the problem.

    A task whose artifact is an OCI reference (``oci://...``) is pulled into ``artifacts`` (a
    cache, or a function of the task set that makes one) once per digest; without one it is an
    error."""
    path = Path(path)
    data = _read(path)
    problem = _check_conditions(data)
    if problem is not None:
        raise BenchError(f"task set {str(path)!r} is invalid at {problem[0]}: {problem[1]}{_line(path, problem[0])}",
                         "see schemas/rra-taskset-1.0.schema.json and docs/bench.md#ablations")
    try:
        model = TaskSet.model_validate(data)
    except ValidationError as exc:
        raise BenchError(f"task set {str(path)!r} is invalid {_first_error(exc)}",
                         "see schemas/rra-taskset-1.0.schema.json and docs/bench.md") from None
    private = _references(Path(references), model) if references is not None else {}
    # One check of ids with `rra bench check` (RRA952): the first problem, located.
    duplicated = id_problems(data, model)
    if duplicated:
        at, message, hint = duplicated[0]
        shown = pointer_text(at)
        raise BenchError(f"task set {str(path)!r} is invalid at {shown}: {message}{_line(path, shown)}", hint)
    tasks: list[ResolvedTask] = []
    cache = artifacts(model) if callable(artifacts) else artifacts
    for paper in model.papers:
        for experiment in paper.experiments:
            tasks.extend(_resolve(path, paper.id, experiment.id, task, private, cache) for task in experiment.tasks)
    unknown = sorted(set(private) - {t.key for t in tasks})
    if unknown:
        raise BenchError(f"references file {str(references)!r} names task {unknown[0]!r}, which the task set "
                         "does not have")
    return LoadedTaskSet(path, model, tasks, references=None if references is None else Path(references).resolve())


def _resolve(path: Path, paper: str, experiment: str, task: Task,
             private: dict[str, list[BenchObservation]], cache: ArtifactCache | None) -> ResolvedTask:
    name = f"task {paper}/{experiment}/{task.id}"
    digest = None
    if is_reference(task.artifact):
        if cache is None:
            raise BenchError(f"{name}: artifact {task.artifact!r} is an OCI reference and no cache directory "
                             "was given", "pass --cache DIR (rra bench) or an ArtifactCache (load_taskset)")
        try:
            fetched = cache.fetch(task.artifact)
        except BenchError as exc:
            raise BenchError(f"{name}: {exc}", exc.hint) from None
        directory, digest = fetched.root, fetched.digest
    else:
        directory = path.parent / task.artifact
    try:
        artifact = load_artifact(directory)
    except ArtifactError as exc:
        raise BenchError(f"{name}: artifact {task.artifact!r}: {exc}", exc.hint) from None
    claim = next((c for c in artifact.manifest.claims if c.id == task.claim), None)
    if claim is None:
        known = ", ".join(repr(c.id) for c in artifact.manifest.claims) or "none"
        raise BenchError(f"{name}: artifact {task.artifact!r} has no claim {task.claim!r} (it has {known})")
    key = f"{paper}/{experiment}/{task.id}"
    raw: list[ClaimValue]
    if task.reference is not None:
        raw, source = [o.value for o in task.reference], "task"
    elif key in private:
        raw, source = [o.value for o in private[key]], "references"
    elif claim.kind != "number":
        raw, source = _manifest_answers(artifact, task.claim), "manifest"
    else:
        raw, source = [o.value for o in claim.reference.observations], "manifest"
    if len(raw) < MIN_OBSERVATIONS:
        raise BenchError(f"{name}: claim {task.claim!r} has {len(raw)} reference observation(s) in its "
                         f"manifest; a task needs at least {MIN_OBSERVATIONS}",
                         "give the task its own 'reference' observations")
    precision = claim.reported.precision
    if claim.kind != "number":
        answers = _answer_interval(name, claim.kind, raw, precision, source)
        return ResolvedTask(paper, experiment, task, artifact, claim.launcher, answers, source, (), precision, digest,
                            claim.kind)
    values: list[float] = []
    for i, value in enumerate(raw):
        if not isinstance(value, float):
            raise BenchError(f"{name}: reference observation {i} ({_where(source)}) is {value!r}, not a number: "
                             f"claim {task.claim!r} is of kind number", "give the claim's kind in its manifest, or "
                             "numbers as observations")
        values.append(value)
    interval = acceptance_interval(values, precision)
    return ResolvedTask(paper, experiment, task, artifact, claim.launcher, interval, source, tuple(values),
                        precision, digest)


def _where(source: str) -> str:
    return {"task": "in the task set", "references": "in the references file"}.get(source, "in the manifest")


def _manifest_answers(artifact: Artifact, claim_id: str) -> list[ClaimValue]:
    """The observed answers of a string, set or list claim, as the manifest writes them (the run
    path's view holds numbers only)."""
    claims = artifact.data.get("claims") if isinstance(artifact.data, Mapping) else None
    for claim in claims if isinstance(claims, list) else []:
        if isinstance(claim, Mapping) and claim.get("id") == claim_id:
            reference = claim.get("reference")
            observations = reference.get("observations") if isinstance(reference, Mapping) else None
            return [o["value"] for o in observations if isinstance(o, Mapping) and "value" in o] \
                if isinstance(observations, list) else []
    return []


def _answer_interval(name: str, kind: str, raw: list[ClaimValue], precision: int, source: str) -> AnswerInterval:
    """The expected answer of a task whose claim is of ``kind`` (string, set, list): the answer
    its reference observations give, each the same (spec/02-manifest.md#kinds); BenchError
    naming the observation that does not fit the kind or gives another answer."""
    answers: list[Answer] = []
    for i, value in enumerate(raw):
        try:
            answers.append(parse_answer(value, kind))
        except AnswerError as exc:
            raise BenchError(f"{name}: reference observation {i} ({_where(source)}) is no answer of kind {kind}: "
                             f"{exc}") from None
    expected = answers[0]
    for i, answer in enumerate(answers[1:], start=1):
        why = answer_mismatch(kind, expected, answer, precision)
        if why is not None:
            raise BenchError(f"{name}: reference observation {i} ({_where(source)}) gives another answer than "
                             f"observation 0: {why}", "a task whose claim is not a number is scored by one expected "
                             "answer: its observations must agree")
    return AnswerInterval.of(kind, expected, precision, len(answers))
