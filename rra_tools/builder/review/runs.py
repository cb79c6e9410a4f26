"""The review's clean-shell runs: a fresh copy of the artifact, an environment built from the
lock (or the container image), every launcher run through :func:`rra_tools.run.run_plans`, and
the new runs compared with the author's recorded ones.

The copy is what a reviewer who received the artifact would hold: the artifact's files without
its version-control metadata, its run records, builder state (``.rra/``), caches and what
``.rraignore`` leaves out of a pack, and with every declared output of the planned runs removed,
so that each output the review reads was written by the review's own run. Its run-record
directory receives the review's records: the author's records are never written to. The one
exception are the run records the claims' reference observations cite (each with the logs of its
run directory): they are the evidence the levels are judged on, and without them no level of
the review's copy could be met (RRA303: a cited file that does not exist). The review's runs are
newer, so where both ran a seed the review's value is the one its results use.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...io.artifact import Artifact, load_artifact
from ...io.ignore import VCS_NAMES
from ...io.paths import resolve_inside
from ...io.tree import ignore_rules
from ...run.errors import ArtifactError, RunError
from ...run.local import RunOptions, RunResult, execute
from ...run.orchestrate import Executor, PlanHooks, PlanOutcome, Refused, Skipped, run_plans
from ...run.plan import RunPlan, plan_runs
from ...run.records import redact_values
from ...run.results import Key
from .checks import close
from .findings import Findings, compact

__all__ = ["CleanShellRuns", "compare_with_records", "copy_for_review", "prune_work", "run_clean_shell"]

#: Never copied into the review's copy: state and caches that a fresh checkout does not have.
_NOT_COPIED = frozenset({*VCS_NAMES, ".rra", "__pycache__", ".venv", ".tox", ".nox", ".mypy_cache",
                         ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"})


def copy_for_review(artifact: Artifact, work: Path) -> None:
    """Copy ``artifact`` into the new directory ``work`` as described in the module docstring
    (declared outputs are removed later, once the runs are planned)."""
    root = artifact.root
    runs = artifact.runs_dir
    skip_runs = runs.resolve() != root
    # The rules a pack and 'rra validate' apply (one parser, one reading of the file).
    rules = ignore_rules(root)
    # Records kept at the root itself (evidence.run_records: ".") sit in <launcher id>/<run>/.
    launcher_ids = {launcher.id for launcher in artifact.manifest.launchers}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        left: set[str] = set()
        for name in names:
            path = here / name
            if (name in _NOT_COPIED or (skip_runs and path == runs)
                    or (not skip_runs and here == root and name in launcher_ids
                        and next(path.glob("*/record.json"), None) is not None)
                    or rules.ignored(path.relative_to(root).as_posix(), path.is_dir() and not path.is_symlink())):
                left.add(name)
        return left

    shutil.copytree(root, work, symlinks=True, ignore=ignore)
    _copy_cited_records(artifact, work)


def cited_records(artifact: Artifact) -> list[str]:
    """The run records the claims' reference observations cite, in manifest order, once each."""
    cited: list[str] = []
    for claim in artifact.data.get("claims") or []:
        reference = claim.get("reference") if isinstance(claim, Mapping) else None
        for observation in (reference.get("observations") or []) if isinstance(reference, Mapping) else []:
            record = observation.get("run_record") if isinstance(observation, Mapping) else None
            if isinstance(record, str) and record not in cited:
                cited.append(record)
    return cited


def _copy_cited_records(artifact: Artifact, work: Path) -> None:
    """Copy into ``work`` each cited run record that exists in the artifact (and is not there
    yet): its whole run directory when it is a ``record.json`` under the run-record directory,
    else the file alone. A citation of nothing is left to the validator (RRA303)."""
    root = artifact.root.resolve()
    runs = artifact.runs_dir.resolve()
    for rel in cited_records(artifact):
        source = resolve_inside(root, rel, kind="file").path
        if source is None or (work / rel).exists():
            continue
        run_dir = source.parent
        if source.name == "record.json" and run_dir != runs and run_dir != root and run_dir.is_relative_to(runs):
            shutil.copytree(run_dir, work / run_dir.relative_to(root), symlinks=True, dirs_exist_ok=True)
        else:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / rel)


def prune_work(work: Artifact, plans: list[RunPlan]) -> None:
    """Leave in the review's copy only the evidence of its runs: the manifest, the run-record
    directory (records and logs) and the declared outputs the runs wrote. The rest is a copy of
    the author's files, which a pack of the artifact (``.rra/`` included) would carry twice."""
    root = work.root
    runs = work.runs_dir.relative_to(root).as_posix()
    # Records kept at the root itself sit in <launcher id>/<run>/.
    keep = {work.manifest_path.name, *([runs] if runs != "." else [launcher.id for launcher in work.manifest.launchers])}
    keep.update(rel for plan in plans for _, rel, _ in plan.outputs)

    def kept(rel: str) -> bool:
        return any(rel == k or rel.startswith(k + "/") or k.startswith(rel + "/") for k in keep)

    for directory, dirs, files in os.walk(root, topdown=False):
        for name in files + [d for d in dirs if (Path(directory) / d).is_symlink()]:
            path = Path(directory) / name
            if not kept(path.relative_to(root).as_posix()):
                path.unlink()
        here = Path(directory)
        if here != root and not kept(here.relative_to(root).as_posix()):
            try:
                here.rmdir()
            except OSError:  # not empty: something under it is kept
                pass


def _remove_outputs(plans: list[RunPlan], work: Path) -> None:
    for plan in plans:
        for _, rel, _ in plan.outputs:
            path = work / rel
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)


def _which(seed: int | None, repeat: int | None) -> str:
    return f"seed {seed}" if seed is not None else f"repeat {repeat}" if repeat is not None else "noseed"


@dataclass
class CleanShellRuns:
    """What the review's runs gave: the copy they ran in, the environment, the outcome."""

    work: Artifact | None = None
    #: The report's ``environment``: mode, and the environment's directory or image.
    environment: dict[str, str] = field(default_factory=lambda: {"mode": "locked"})
    outcome: PlanOutcome | None = None
    #: True when the runs were made (an environment was set up and the plans ran).
    ran: bool = False
    plans: list[RunPlan] = field(default_factory=list)


def _environment(work: Artifact, mode: str, plans: list[RunPlan], image: str | None, engine_url: str | None,
                 network: str | None, say: Callable[[str], None]) -> tuple[RunOptions, Executor, Any, str | None]:
    """Options and executor of the runs, the container engine to close (or None), and a detail;
    ArtifactError or RunError when the environment cannot be set up."""
    if mode == "container":
        from ...run import container

        engine, resolved = container.prepare(work, plans, image, engine_url)
        say(f"container engine: {engine.description}; image {resolved.reference} ({resolved.id})")
        options = container.ContainerOptions(image=image, network=network, engine=engine)
        return options, container.execute, engine, f"{resolved.reference} ({resolved.id})"
    if mode == "locked":
        from ...run.locked_env import locked_environment

        from ...io.artifact import load_artifact as load_document

        say("environment: building or reusing the one locked by the manifest ...")
        environment = load_document(work.root).data.get("environment") or {}
        version = (environment.get("interpreter") or {}).get("version") if isinstance(environment, dict) else None
        created = locked_environment(work, str(version) if version else None)
        say(f"environment: {created.path} ({'reused' if created.reused else 'built'}, {created.packages} package(s))")
        return RunOptions(env_dir=created.path), execute, None, str(created.path)
    return RunOptions(), execute, None, None


def run_clean_shell(artifact: Artifact, work_dir: Path, findings: Findings, *, mode: str, image: str | None,
                    engine_url: str | None, network: str | None, say: Callable[[str], None],
                    on_output: Callable[[str, bytes], None] | None = None,
                    on_stage: Callable[[str], None] | None = None) -> CleanShellRuns:
    """Copy the artifact into ``work_dir``, set up the environment, run every launcher with all
    its seeds (or repeats); findings RRA900 and RRA910-RRA912 for what went wrong. ``on_stage``
    hears what it starts doing ('copying the artifact', ...), for the message of a review that
    Ctrl-C stops."""
    stage = on_stage or (lambda _what: None)
    result = CleanShellRuns(environment={"mode": mode})
    lock = artifact.manifest.environment.lock
    # In a container the image is the environment; the lock is what the other modes build from.
    if lock is None and mode != "container":
        if mode == "locked":
            findings.at("RRA910", "the manifest has no environment lock: no fresh environment can be built, and "
                        "nothing was run", ("environment",),
                        hint="run 'rra lock' to pin the environment; 'rra review --env current' runs the launchers "
                             "in this interpreter meanwhile")
            return result
        findings.at("RRA910", "the manifest has no environment lock: the runs could not use a fresh environment",
                    ("environment",), hint="run 'rra lock' to pin the environment")
    elif lock is not None and mode == "current":
        findings.at("RRA912", f"the runs used this interpreter's environment, not one built from {lock.path!r}",
                    ("environment", "lock"), severity="warning",
                    hint="review with --env locked (the default) to build the environment from the lock")
    stage("copying the artifact")
    say(f"copying the artifact into {findings.rel(work_dir)} ...")
    try:
        copy_for_review(artifact, work_dir)
    except (OSError, shutil.Error, UnicodeDecodeError) as exc:
        findings.run("RRA911", f"the artifact cannot be copied for the review: {exc}", findings.rel(work_dir))
        return result
    work = load_artifact(work_dir)
    result.work = work
    try:
        plans = plan_runs(work, None)
    except (RunError, ArtifactError) as exc:
        findings.run("RRA900", f"the runs cannot be planned: {exc}", findings.rel(work_dir))
        return result
    _remove_outputs(plans, work_dir)
    result.plans = plans
    engine = None
    stage({"container": "preparing the container", "locked": "building the environment"}.get(
        mode, "setting up the environment"))
    try:
        options, executor, engine, detail = _environment(work, mode, plans, image, engine_url, network, say)
    except (RunError, ArtifactError) as exc:
        findings.run("RRA911", f"the review's environment cannot be set up: {exc}", findings.rel(work_dir))
        return result
    result.environment = compact(mode=mode, detail=detail)
    options.on_output = on_output

    def started(plan: RunPlan, i: int, total: int) -> None:
        shown = redact_values(list(plan.argv), plan.secret_values)
        say(f"run {plan.launcher.id} {_which(plan.seed, plan.repeat)} ({i}/{total}): {' '.join(shown)}")

    def finished(run: RunResult) -> None:
        r = run.record
        exit_text = "no exit status" if r["exit_status"] is None else f"exit {r['exit_status']}"
        say(f"{r['launcher']} {_which(r['seed'], r.get('repeat'))}: {r['status']}, {exit_text}, "
            f"{r['duration_s']:.1f} s")

    def skipped(skip: Skipped) -> None:
        say(f"skip {skip.plan.launcher.id} {_which(skip.plan.seed, skip.plan.repeat)}: {skip.reason}")

    def refused(refusal: Refused) -> None:
        say(f"cannot run {refusal.plan.launcher.id}: {refusal.error}")

    stage("running the launchers")
    try:
        result.outcome = run_plans(plans, options, executor=executor,
                                   hooks=PlanHooks(on_start=started, on_finish=finished, on_skip=skipped,
                                                   on_refused=refused))
    finally:
        if engine is not None:
            engine.close()
    result.ran = True
    _failures(result.outcome, findings)
    return result


def _failures(outcome: PlanOutcome, findings: Findings) -> None:
    for run in outcome.results:
        if run.successful:
            continue
        r = run.record
        said = "; ".join(r.get("messages") or []) or f"status {r['status']}"
        findings.run("RRA900", f"launcher {r['launcher']!r} {_which(r['seed'], r.get('repeat'))} did not succeed from "
                     f"a clean shell ({r['status']}, exit {r['exit_status']}): {said}", findings.rel(run.record_path),
                     hint="read stdout.log and stderr.log beside the record")
    for skip in outcome.skipped:
        findings.run("RRA900", f"launcher {skip.plan.launcher.id!r} {_which(skip.plan.seed, skip.plan.repeat)} was "
                     f"not run: {skip.reason}", None)
    for refusal in outcome.refused:
        findings.run("RRA900", f"launcher {refusal.plan.launcher.id!r} "
                     f"{_which(refusal.plan.seed, refusal.plan.repeat)} could not be set up: {refusal.error}", None)


def compare_with_records(runs: CleanShellRuns, best: Mapping[Key, tuple[Mapping[str, Any], str]],
                         findings: Findings) -> list[dict[str, Any]]:
    """Each review run against the author's newest successful record of the same launcher and
    seed (or repeat): values (RRA903), outputs (RRA904), a run the author never recorded (RRA905).
    Each run has the fields of :class:`rra_tools.model.review_report.ReviewRun`."""
    out: list[dict[str, Any]] = []
    outcome = runs.outcome
    if outcome is None or runs.work is None:
        return out
    stochastic = {launcher.id: launcher.stochastic for launcher in runs.work.manifest.launchers}
    for run in outcome.results:
        r = run.record
        key: Key = (r["launcher"], r["seed"], r.get("repeat"))
        where = findings.rel(run.record_path)
        held = best.get(key)
        if held is None and r["seed"] is None and stochastic.get(r["launcher"]) is False:
            # A launcher that is not stochastic runs the same argv whatever its repeat index: a
            # record of another repeat, or of a run made before repeats were declared (the
            # build's execute step), is the author's run to compare with.
            same_launcher = sorted((k for k in best if k[0] == r["launcher"] and k[1] is None),
                                   key=lambda k: -1 if k[2] is None else k[2])
            held = best[same_launcher[0]] if same_launcher else None
        what = f"launcher {r['launcher']!r} {_which(r['seed'], r.get('repeat'))}"
        same: bool | None = None
        if run.successful and held is None:
            findings.run("RRA905", f"{what}: the author's run records hold no successful run to compare with", where)
        elif run.successful and held is not None:
            recorded, recorded_where = held
            for claim, value in sorted((r.get("metrics") or {}).items()):
                old = (recorded.get("metrics") or {}).get(claim)
                if isinstance(old, (int, float)) and not isinstance(old, bool) and not close(float(old), value):
                    findings.run("RRA903", f"{what}: claim {claim!r} is {value!r} in the review's run, {old!r} in "
                                 f"the recorded run {recorded_where}", where)
            old_outputs = {o.get("id"): o.get("sha256") for o in recorded.get("outputs") or []}
            differing = [o["id"] for o in r.get("outputs") or []
                         if o["id"] in old_outputs and old_outputs[o["id"]] != o["sha256"]]
            same = not differing
            if differing:
                findings.run("RRA904", f"{what}: output(s) {', '.join(map(repr, differing))} differ from the recorded "
                             f"run {recorded_where}", where, severity="warning" if not stochastic.get(key[0]) else "info",
                             hint="a program that writes timestamps or unordered data differs on every run; one that "
                                  "should be deterministic is not")
        out.append({**compact(launcher=r["launcher"], seed=r["seed"], repeat=r.get("repeat"), status=r["status"],
                              exit_status=r["exit_status"]),
                    "successful": run.successful,
                    **compact(duration_s=r.get("duration_s"), record=where, recorded=None if held is None else held[1]),
                    "metrics": dict(r.get("metrics") or {}),
                    **compact(same_outputs=same,
                              detail=None if run.successful else "; ".join(r.get("messages") or []) or None)})
    for skip in outcome.skipped:
        out.append({**compact(launcher=skip.plan.launcher.id, seed=skip.plan.seed, repeat=skip.plan.repeat),
                    "status": "skipped", "successful": False, "metrics": {}, "detail": skip.reason})
    for refusal in outcome.refused:
        out.append({**compact(launcher=refusal.plan.launcher.id, seed=refusal.plan.seed, repeat=refusal.plan.repeat),
                    "status": "refused", "successful": False, "metrics": {}, "detail": str(refusal.error)})
    return out
