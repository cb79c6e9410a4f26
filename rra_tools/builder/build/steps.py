"""The steps in order, with checkpoints: which run, which are skipped, and restarts."""

from __future__ import annotations

import time
from collections.abc import Callable

from . import claims, execute, fill, guide, lock, preserve, reference, review, specify
from .context import Build
from .errors import BuildError, BuildInputError
from .options import BuildOptions, Progress
from .state import STEPS, BuildResult, StepRecord, digest, now

#: name -> (run the step, the digest of its inputs when it is done).
_STEP_FUNCTIONS: dict[str, tuple[Callable[[Build], None], Callable[[Build], str]]] = {
    "specify": (specify.run, specify.inputs),
    "fill": (fill.run, lambda b: b.steps["specify"].inputs),
    "claims": (claims.run, lambda b: digest([b.steps["specify"].inputs, "claims"])),
    "lock": (lock.run, lock.inputs),
    "execute": (execute.run, execute.inputs),
    "preserve": (preserve.run, preserve.inputs),
    "reference": (reference.run, reference.inputs),
    "guide": (guide.run, guide.inputs),
    "review": (review.run, review.inputs),
}


#: How often a step may send the build back to an earlier step whose inputs it changed.
_MAX_RESTARTS = 3


def _run_steps(build: Build, result: BuildResult) -> None:
    rerun = False
    restarts = 0
    index = 0
    while index < len(STEPS):
        name = STEPS[index]
        record = build.steps[name]
        run, inputs = _STEP_FUNCTIONS[name]
        if not rerun and record.status in ("done", "skipped") and record.inputs and record.inputs == inputs(build):
            build.progress(f"{name}: done earlier (finished {record.finished}); not redone")
            result.skipped.append(name)
            index += 1
            continue
        rerun = True
        _run_step(build, record, run)
        record.inputs = inputs(build)
        result.ran.append(name)
        # Every later step runs again: mark them so an interrupted build does not skip them.
        for later in STEPS[index + 1:]:
            if build.steps[later].status in ("done", "skipped"):
                build.steps[later].status = "pending"
        build.save()
        # A repair may change what an earlier step used (a requirement, the interpreter): that
        # step, and every one after it, runs again.
        changed = next((i for i, earlier in enumerate(STEPS[:index]) if build.steps[earlier].status == "done"
                        and build.steps[earlier].inputs != _STEP_FUNCTIONS[earlier][1](build)), None)
        if changed is not None:
            restarts += 1
            if restarts > _MAX_RESTARTS:
                raise BuildError(f"step {name!r} keeps changing the inputs of step {STEPS[changed]!r}; giving up")
            build.progress(f"{name} changed the inputs of {STEPS[changed]}: running it again")
            for later in STEPS[changed:]:
                build.steps[later].status = "pending"
            build.save()
            index = changed
            continue
        index += 1


def _run_step(build: Build, record: StepRecord, run: Callable[[Build], None]) -> None:
    """Run one step, adding its wall time to its record whether it finishes, stops or fails."""
    build.current = record
    record.status = "running"
    record.note = ""
    record.runs += 1
    started = time.monotonic()
    record.started = now()
    build.progress(f"{record.name}: running")
    try:
        run(build)
    except BaseException as exc:
        from ..agent import DecisionNeeded

        record.status = "stopped" if isinstance(exc, DecisionNeeded) else "failed"
        record.wall_s = round(record.wall_s + time.monotonic() - started, 3)
        if build.root.is_dir() and (build.root / ".git").exists():
            build.save()
        raise
    record.wall_s = round(record.wall_s + time.monotonic() - started, 3)
    record.finished = now()
    if record.status == "running":
        record.status = "done"
    build.progress(f"{record.name}: {record.status} in {time.monotonic() - started:.1f} s"
                   + (f" ({record.note})" if record.note else ""))


def build(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the build (see the module docstring); resumes from the artifact's state file."""
    state = Build(options, progress or (lambda _: None))
    resumed = state.load_state()
    if not resumed:
        state.header = {"raw": str(state.raw), "artifact": str(state.root), "created": now()}
    elif state.header.get("raw") != str(state.raw):
        raise BuildInputError(f"{state.root} was built from {state.header.get('raw')}, not {state.raw}",
                         "build into a new directory (-o)")
    specified = state.steps["specify"]
    if resumed and specified.status == "done" and specified.inputs != specify.inputs(state):
        raise BuildInputError(f"the raw repository {state.raw} or the build's options (--upstream, --id, --title) "
                         f"changed since {state.root} was specified from it",
                         "build into a new directory (-o), or remove the artifact and build again")
    result = BuildResult(state.root, [])
    _run_steps(state, result)
    result.steps = [state.steps[name] for name in STEPS]
    return result
