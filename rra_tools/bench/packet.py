"""Human reproducers: task packets (``rra bench packet``) and their scoring (``rra bench score
--packets``).

:func:`assign` gives each person every task, under one condition each, at random from a seed:
for each task in turn, the people are shuffled and given the conditions in turn from a random
offset, so that each task's conditions are balanced to within one person and each person's
conditions vary from task to task. The same seed, people, task set and conditions always give
the same assignment (Python's ``random.Random``, whose sequence for a seed is stable).

:func:`export_packets` writes, under the packet set's directory::

    packet-set.json                      who got what, the seed, the method (PacketSet)
    packets/<person>/<task key>/         hand these out: one packet per assignment
    state/<person>/<task key>.json       kept by the evaluator: the packet's files when made

Each packet is prepared exactly as a cell's workspace (raw code or refined artifact, the paper,
TASK.md, task.json) and checked to hold no reference value; export refuses otherwise.
:func:`score_packets` reads each packet's ``submission.json`` and audits and scores it like a
cell's: the window runs from the export to the scoring, and the snapshot in ``state/`` is what
was present before.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..answers import Answer
from ..io.atomic import write_atomic
from ..model.bench_results import AttemptState, CellResult
from ..model.packet import Assignment, PacketSet
from .audit.auditor import AuditContext, audit_submission, number_or_none
from .errors import BenchError
from .scoring import score_value
from .submissions import read_submission
from .taskset import LoadedTaskSet, with_conditions
from .workspace import SUBMISSION_NAME, FileState, leaks, prepare_workspace, reference_pattern, snapshot

__all__ = ["PACKET_SET_NAME", "METHOD", "assign", "export_packets", "load_packet_set", "score_packets"]

#: The packet set's file in its directory.
PACKET_SET_NAME = "packet-set.json"
METHOD = ("per task, in task-set order: the people shuffled (random.Random(seed)) and given the conditions in "
          "turn from a random offset; each task's conditions balanced to within one person")


def assign(people: Sequence[str], tasks: Sequence[str], conditions: Sequence[str], seed: int) -> list[tuple[str, str, str]]:
    """(person, task, condition) for every person and task, drawn from ``seed`` (see the module
    docstring); sorted by person, then task order."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible draw, not a secret
    drawn: dict[tuple[str, str], str] = {}
    for task in tasks:
        order = list(people)
        rng.shuffle(order)
        offset = rng.randrange(len(conditions))
        for i, person in enumerate(order):
            drawn[(person, task)] = conditions[(i + offset) % len(conditions)]
    return [(person, task, drawn[(person, task)]) for person in people for task in tasks]


def export_packets(taskset: LoadedTaskSet, people: Sequence[str], out: Path, *, seed: int,
                   conditions: Sequence[str] | None = None,
                   on_packet: Callable[[int, int, Assignment], None] | None = None) -> PacketSet:
    """Assign and write every packet under ``out`` (a new or empty directory); the packet set.
    ``on_packet`` is called after each packet with its number, the count and its assignment.
    BenchError when ``out`` is not empty, a person is named twice, or a packet would hold a
    reference value."""
    if len(set(people)) != len(people):
        twice = next(p for p in people if list(people).count(p) > 1)
        raise BenchError(f"person {twice!r} is named twice")
    if out.exists() and any(out.iterdir()):
        raise BenchError(f"{str(out)!r} is not empty; packets are written into a new directory",
                         "give -o a new directory")
    chosen = list(with_conditions(taskset, conditions).conditions if conditions else taskset.conditions)
    tasks = {t.key: t for t in taskset.tasks}
    drawn = assign(people, list(tasks), chosen, seed)
    exported = time.time()
    assignments = []
    for person, key, condition in drawn:
        task = tasks[key]
        rel = f"packets/{person}/{key}"
        target = out / rel
        made = prepare_workspace(taskset, task, condition, target, out / ".cache" / "raw")
        claim = next(c for c in task.artifact.manifest.claims if c.id == task.task.claim)
        leaked = leaks(target, reference_pattern(task.values, task.precision, [claim.reported.value],
                                                 claim.extract.scale))
        if leaked:
            shutil.rmtree(out / "packets")
            raise BenchError(f"the packet of {person} for {key} ({condition}) would hold the reference value "
                             f"{leaked[0][1]} in {leaked[0][0]!r}; no packet was written",
                             "remove the reference value from the artifact or the raw code")
        state = out / "state" / person / f"{key}.json"
        state.parent.mkdir(parents=True, exist_ok=True)
        transformation = None if made.transformation is None else made.transformation.model_dump(exclude_none=True)
        write_atomic(state, (json.dumps({"before": {rel: [s.size, s.mtime_ns, s.sha256] for rel, s in
                                                    snapshot(target).items()},
                                         "transformation": transformation}) + "\n").encode())
        assignments.append(Assignment(person=person, task=key, condition=condition, packet=rel))
        if on_packet is not None:
            on_packet(len(assignments), len(drawn), assignments[-1])
    shutil.rmtree(out / ".cache", ignore_errors=True)
    packet_set = PacketSet(packet_set_version="1.0", taskset=taskset.model.id,
                           taskset_sha256=hashlib.sha256(taskset.path.read_bytes()).hexdigest(), seed=seed,
                           method=METHOD, people=list(people), conditions=chosen, exported=exported,
                           assignments=assignments)
    write_atomic(out / PACKET_SET_NAME, (packet_set.model_dump_json(indent=2) + "\n").encode())
    return packet_set


def load_packet_set(directory: Path) -> PacketSet:
    """The packet set in ``directory``; BenchError when there is none or it is not one."""
    from pydantic import ValidationError

    path = directory / PACKET_SET_NAME
    try:
        return PacketSet.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise BenchError(f"{str(directory)!r} holds no {PACKET_SET_NAME}",
                         "give the directory 'rra bench packet -o' wrote") from None
    except (OSError, ValidationError) as exc:
        raise BenchError(f"{str(path)!r} is not a packet set: {exc}") from None


def _kept(path: Path) -> tuple[dict[str, FileState] | None, dict[str, object] | None]:
    """The packet's files as made and the ablation's transformation, from the kept state file
    (None, None when it is gone: the packet is then audited without a snapshot)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        before = {rel: FileState(int(v[0]), int(v[1]), str(v[2])) for rel, v in data["before"].items()}
        return before, data.get("transformation")
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None, None


def score_packets(taskset: LoadedTaskSet, directory: Path) -> list[CellResult]:
    """One result per assignment of the packet set in ``directory``: the person's submission in
    the packet audited and scored against its task alone (reproducer: the person; condition: the
    one assigned; repeat 1). BenchError when the packet set was made from another task set."""
    packets = load_packet_set(directory)
    digest = hashlib.sha256(taskset.path.read_bytes()).hexdigest()
    if packets.taskset != taskset.model.id or packets.taskset_sha256 != digest:
        raise BenchError(f"the packets in {str(directory)!r} were made from task set {packets.taskset!r} "
                         f"(sha256 {packets.taskset_sha256[:12]}…), not from {str(taskset.path)!r}",
                         "score them with the task-set file they were made from")
    tasks = {t.key: t for t in taskset.tasks}
    ended = time.time()
    results = []
    for a in packets.assignments:
        task = tasks[a.task]
        workspace = directory / a.packet
        path = workspace / SUBMISSION_NAME
        cell = {"task": a.task, "condition": a.condition, "reproducer": a.person, "repeat": 1}
        read = read_submission(path)
        before, transformation = _kept(directory / "state" / a.person / f"{a.task}.json")
        common: dict[str, object] = {"workspace": a.packet}
        if transformation is not None:
            common["transformation"] = transformation
        detail: str | None
        if read.error is not None:
            if not path.exists():
                state, detail = AttemptState.MISSING_VALUE.value, f"{a.person} returned no submission in {a.packet}"
            else:
                state, detail = AttemptState.PARSE_FAILURE.value, f"the submission {read.error}"
                common["submission"] = f"{a.packet}/{SUBMISSION_NAME}"
            results.append(CellResult.model_validate({"cell": cell, "state": state, "detail": detail, **common}))
            continue
        ctx = AuditContext(workspace, before=before, started=packets.exported, ended=ended)
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        evidence: dict[str, float | Answer] = {}
        found = audit_submission(read, {a.task: task}, ctx, evidence).get(a.task, [])
        common.update({"audit_wall_s": round(time.perf_counter() - wall0, 6),
                       "audit_cpu_s": round(time.thread_time() - cpu0, 6)})
        state, value, inside, detail = score_value(a.task, task.interval, read.values.get(a.task), found,
                                                   evidence.get(a.task))
        results.append(CellResult.model_validate({
            "cell": cell, "state": state, "value": value, "inside": inside, "detail": detail, "findings": found,
            "evidence_value": number_or_none(evidence.get(a.task)),
            "usage": None if read.usage is None else {"stated": read.usage.model_dump(exclude_none=True)}, "submission": f"{a.packet}/{SUBMISSION_NAME}", **common}))
    return results
