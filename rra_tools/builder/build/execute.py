"""Step **execute**: every launcher run once; a failing one is a *repair* decision."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...io.artifact import Artifact, load_artifact
from ...io.atomic import write_atomic
from ...io.ignore import IGNORE_FILE
from ...model.agent import DecisionKind
from .answers import LOG_TAIL, log_tail, repair_answer
from .context import Build, readme_context
from .errors import BuildError
from .state import digest


def _core(data: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest without what runs do not depend on (change records, observations, guide,
    review, levels), so that later steps adding those do not invalidate the execute step."""
    core = {k: v for k, v in data.items() if k not in ("changes", "guide", "review", "levels")}
    code = dict(core.get("code") or {})
    code.pop("patches", None)
    core["code"] = code
    core["claims"] = [{k: v for k, v in c.items() if k != "reference"} for c in data.get("claims") or []
                      if isinstance(c, Mapping)]
    # The reference step raises a launcher's repeats to number its reference runs.
    core["launchers"] = [{k: v for k, v in launcher.items() if k != "repeats"}
                         for launcher in data.get("launchers") or [] if isinstance(launcher, Mapping)]
    return core


def code_digest(build: Build, artifact: Artifact) -> str:
    """Digest of the artifact's code: its work tree, the artifact's own files left out."""
    from ..patches import own_paths, tree_digest, work_tree_entries

    return tree_digest(work_tree_entries(build.root, own_paths(artifact.manifest_path.name, artifact.data)))


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the manifest's core and the code."""
    artifact = build.artifact()
    return digest({"manifest": _core(artifact.data), "code": code_digest(build, artifact)})


def _run_launcher(build: Build, launcher_id: str) -> tuple[bool, dict[str, Any]]:
    """Run ``launcher_id`` once (its first seed); (successful, facts for a repair request)."""
    from ...run import plan_runs, run_plans

    artifact = load_artifact(build.root)
    from ...run import load_artifact as run_artifact

    plans = plan_runs(run_artifact(artifact.root), launcher_id)[:1]
    build.progress(f"running {launcher_id}: {' '.join(plans[0].argv)}")
    outcome = run_plans(plans, build.run_options())
    if outcome.interrupted:
        raise BuildError(f"the run of {launcher_id} was interrupted", "run the build again to resume")
    for refused in outcome.refused:
        return False, {"argv": list(refused.plan.argv), "log_tail": str(refused.error)}
    result = outcome.results[0]
    facts = {"argv": list(result.record.get("argv") or plans[0].argv), "exit_status": result.record.get("exit_status"),
             "status": result.record.get("status"), "run_record": build.rel(result.record_path)}
    if result.successful:
        return True, facts
    facts["log_tail"] = log_tail(result.directory, result.record)
    kept = _set_aside(build, launcher_id, result.directory)
    facts["run_record"] = build.rel(kept / "record.json")
    facts["stderr_log"] = str(kept / "stderr.log")
    return False, facts


#: Where a failed attempt's run directory is kept, relative to the artifact.
ATTEMPTS = ".rra/build/attempts"
_IGNORE_LINE = f"/{ATTEMPTS}/"


def _set_aside(build: Build, launcher_id: str, directory: Path) -> Path:
    """Move a failed run out of the run records into :data:`ATTEMPTS`: it stays the repair's
    evidence, but levels, ``rra results`` and a pack see only the runs of the repaired code.
    ``.rraignore`` leaves the attempts out of a pack; deleting its line packs them."""
    target = build.root / ATTEMPTS / launcher_id / directory.name
    target.parent.mkdir(parents=True, exist_ok=True)
    directory.rename(target)
    ignore = build.root / IGNORE_FILE
    text = ignore.read_text(encoding="utf-8") if ignore.is_file() else ""
    if _IGNORE_LINE not in text.splitlines():
        comment = "# rra build: failed attempts, kept as the evidence of repairs; delete the next line to pack them\n"
        write_atomic(ignore, (text + ("\n" if text and not text.endswith("\n") else "") + comment
                              + _IGNORE_LINE + "\n").encode("utf-8"))
    build.progress(f"{launcher_id}: failed attempt kept in {build.rel(target)} (not a run record)")
    return target


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ...run import launcher_order
    from ...run import load_artifact as run_artifact

    record = build.steps["execute"]
    repairs: dict[str, int] = record.outputs.setdefault("repairs", {})
    runs: dict[str, str] = record.outputs.setdefault("runs", {})
    # The inputs each launcher's last successful run had: a launcher whose inputs are the same
    # is not run again (a change record touching one script re-runs only what imports it).
    ran_with: dict[str, str] = record.outputs.setdefault("launcher_inputs", {})
    order = [launcher.id for launcher in launcher_order(run_artifact(build.root))]
    cached: list[tuple[int, dict[str, str]]] = []

    def inputs_now() -> dict[str, str]:
        # Hashing the work tree costs a read of every file: it is done again only after a
        # decision of this step (a repair may write code; a run's outputs are not code).
        key = len(record.decisions)
        if not cached or cached[0][0] != key:
            cached[:] = [(key, _current_inputs(build))]
        return cached[0][1]

    # A repair of a later launcher may change the code an earlier one ran: go round again until
    # every launcher's last run had its present inputs (at most once more per launcher).
    for round_ in range(len(order) + 1):
        stale = _stale(build, order, inputs_now(), runs, ran_with, report=round_ == 0)
        if not stale:
            return
        for launcher in order:
            if not (launcher in stale and _stale(build, [launcher], inputs_now(), runs, ran_with, report=False)):
                continue
            if _execute_one(build, launcher, repairs, runs, ran_with, inputs_now):
                # The repair changed what the lock is made from: the build locks again and comes
                # back here, so that the next attempt runs in the repaired environment.
                build.progress(f"{launcher}: the repair changed the requirements: locking again before the next "
                               "attempt")
                return
    raise BuildError("the launchers' inputs keep changing as they are repaired; giving up",
                     "look at the change records of this build's repairs")


def _current_inputs(build: Build) -> dict[str, str]:
    from ..patches import own_paths, work_tree_entries
    from .launcher_inputs import launcher_inputs

    artifact = build.artifact()
    # Bytecode caches are written by the runs themselves, not code anyone changed.
    entries = {path: entry for path, entry in work_tree_entries(
        build.root, own_paths(artifact.manifest_path.name, artifact.data)).items()
        if "__pycache__/" not in f"/{path}" and not path.endswith(".pyc")}
    sources: dict[str, bytes] = {}
    for path in entries:
        if path.endswith(".py"):
            try:
                sources[path] = (build.root / path).read_bytes()
            except OSError:
                continue
    return launcher_inputs(artifact.data, entries, sources)


def _stale(build: Build, launchers: list[str], current: dict[str, str], runs: dict[str, str],
           ran_with: dict[str, str], *, report: bool) -> list[str]:
    """The launchers that must run: never run successfully, or their inputs (``current``) changed
    since; ``report`` says which are not run again."""
    stale = []
    for launcher in launchers:
        previous = runs.get(launcher)
        if previous and ran_with.get(launcher) == current.get(launcher) and (build.root / previous).is_file():
            if report:
                build.progress(f"{launcher}: not run again: its inputs did not change since {previous}")
        else:
            stale.append(launcher)
    return stale


def _relock_needed(build: Build) -> bool:
    """Whether a repair changed the inputs of the finished lock step (requirements, interpreter)."""
    from . import lock

    done = build.steps["lock"]
    return done.status == "done" and bool(done.inputs) and done.inputs != lock.inputs(build)


def _execute_one(build: Build, launcher: str, repairs: dict[str, int], runs: dict[str, str],
                 ran_with: dict[str, str], inputs_now: Callable[[], dict[str, str]]) -> bool:
    """Run ``launcher`` until it succeeds, asking for a repair after each failure; True when a
    repair changed the requirements, so that the lock must be made again first."""
    while True:
        try:
            ok, facts = _run_launcher(build, launcher)
        except BuildError:
            if build.environment_error is None:
                raise
            _repair_environment(build, build.environment_error)
            if _relock_needed(build):
                return True
            continue
        if ok:
            runs[launcher] = facts["run_record"]
            ran_with[launcher] = inputs_now()[launcher]
            build.progress(f"{launcher}: ok ({facts['run_record']})")
            build.save()
            return False
        done = repairs.get(launcher, 0)
        if done >= build.options.max_repairs:
            raise BuildError(f"launcher {launcher!r} still fails after {done} repair(s); last run: "
                             f"{facts.get('run_record', 'not started')}", facts.get("log_tail"))
        ident = f"repair-{launcher}-{done + 1}"
        shown = " ".join(facts["argv"])
        request = build.request(
            ident, DecisionKind.REPAIR,
            f"launcher {launcher!r} fails ({shown}, exit status {facts.get('exit_status')}): repair it",
            launcher=launcher, argv=facts["argv"], exit_status=facts.get("exit_status"),
            status=facts.get("status"), run_record=facts.get("run_record"), log_tail=facts.get("log_tail"),
            attempt=done + 1, context=readme_context(build))
        log = facts.get("stderr_log", "LOG")
        todo = (f"make launcher {launcher!r} work: fix the code in {build.root} and record each fix with "
                f"'rra change record ID PATH... -C {build.root} --kind KIND --rationale WHY --evidence-file "
                f"{log} --alters-method yes|no|unknown', or change the launcher in the manifest; or write the "
                f"answer {build.answer_path(ident)}")
        repair_answer(build, request, todo, facts.get("log_tail") or "", launcher)
        repairs[launcher] = done + 1
        build.save()
        if _relock_needed(build):
            return True


def _repair_environment(build: Build, error: str) -> None:
    """Ask for a repair of the requirements when the environment of the lock cannot be built
    (a pin with no wheel for this Python that fails to build from source, a lock for a Python
    that is not installed): the same *repair* decision as a lock that does not resolve."""
    record = build.steps["execute"]
    done = int(record.outputs.get("environment_repairs", 0))
    if done >= build.options.max_repairs:
        raise BuildError(f"the environment of the lock still cannot be built after {done} repair(s): {error}",
                         "repair the requirements by hand, or run the build with --build-env current")
    ident = f"repair-environment-{done + 1}"
    request = build.request(
        ident, DecisionKind.REPAIR, "the environment of the lock cannot be built: repair the requirements (e.g. "
        "pins that have no wheel for the interpreter and fail to build from source) or the interpreter version",
        log_tail=error[-LOG_TAIL:], attempt=done + 1, context=readme_context(build))
    todo = (f"fix the requirements in {build.root / 'requirements.in'} (or the interpreter version) and record the "
            f"fix with 'rra change record ID PATH... -C {build.root} --kind dependency-pin --rationale WHY "
            f"--evidence TEXT --alters-method yes|no|unknown', or write the answer {build.answer_path(ident)}")
    repair_answer(build, request, todo, error[-LOG_TAIL:], None)
    record.outputs["environment_repairs"] = done + 1
    build.save()
