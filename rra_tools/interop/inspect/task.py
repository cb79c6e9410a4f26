"""The Inspect side (imports ``inspect_ai``): the sandbox environment ``rra``, the scorer
``rra_verdict`` and the Task of a task set (:func:`build_task`). Importing this module registers
the sandbox environment with Inspect.

A sample's metadata names its cell (``rra_cell``) and how to plan its benchmark again
(``rra_taskset``, ``rra_references``, ``rra_out``, ``rra_sandbox``, ``rra_reproducer``,
``rra_conditions``): ``sample_init`` prepares the cell's workspace from it, and the scorer judges
that workspace. The scorer's metadata holds the cell result (``rra_cell_result``) that
:mod:`.results` reads back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, overload

import anyio.to_thread
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import (
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentSpec,
    SandboxUserUnsupportedError,
    sandbox,
    sandboxenv,
)

from ...bench.agent_cells import handover_for
from .cell import SampleCell, bench_for, default_out, judge, prepare, run_in_cell, split_conditions, workspace_path

__all__ = ["RESULT_KEY", "RRASandbox", "build_task", "rra_verdict"]

#: The key of a score's metadata that holds the cell result.
RESULT_KEY = "rra_cell_result"


def _bench_of(metadata: dict[str, Any]) -> Any:
    return bench_for(metadata["rra_taskset"], metadata.get("rra_references") or None,
                     tuple(metadata.get("rra_conditions") or ()), metadata["rra_out"],
                     metadata.get("rra_sandbox", "auto"), metadata["rra_reproducer"])


@sandboxenv(name="rra")
class RRASandbox(SandboxEnvironment):
    """An RRA cell as an Inspect sandbox: its workspace prepared by RRA, each ``exec`` one command
    in RRA's sandbox (bubblewrap or Podman, or none, as the task asked) over that workspace."""

    def __init__(self, sample: SampleCell) -> None:
        super().__init__()
        self.sample = sample

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        """Prepare the sample's cell (a fresh workspace, checked to hold no reference value)."""
        data: dict[str, Any] = dict(metadata)
        bench = _bench_of(data)
        sample = await anyio.to_thread.run_sync(prepare, bench, data["rra_cell"])
        return {"default": cls(sample)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        """Keep the cell's directory: its workspace, logs and result are the record."""

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,  # noqa: A002
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        """Run ``cmd`` in the cell's sandbox; TimeoutError past ``timeout`` (or the task set's limit)."""
        if user is not None:
            raise SandboxUserUnsupportedError("the rra sandbox runs every command as the cell's one user")
        ran = await anyio.to_thread.run_sync(lambda: run_in_cell(self.sample, cmd, stdin=input, cwd=cwd, env=env,
                                                                  timeout=timeout))
        if ran.stopped == "timeout":
            raise TimeoutError(f"{cmd[:1]} ran past its time limit in the rra sandbox")
        if ran.stopped == "setup":
            return ExecResult(False, 126, ran.stdout, f"{ran.stderr}{ran.detail or ''}")
        code = ran.exit_status if ran.exit_status is not None else 1
        return ExecResult(code == 0, code, ran.stdout, ran.stderr)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write ``file`` in the workspace (parents made)."""
        path = workspace_path(self.sample, file)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(contents, str):
            path.write_text(contents, encoding="utf-8")
        else:
            path.write_bytes(contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read ``file`` from the workspace."""
        path = workspace_path(self.sample, file)
        if text:
            with open(path, encoding="utf-8", newline="") as handle:
                return handle.read()
        return path.read_bytes()


@scorer(metrics=[accuracy()])
def rra_verdict() -> Scorer:
    """RRA's verdict on the sample's workspace: the auditor and the task's interval
    (:func:`rra_tools.bench.cells.judge_cell`); C for success, I for every other state."""

    async def score(state: TaskState, target: Target) -> Score:
        env = sandbox().as_type(RRASandbox)
        result = await anyio.to_thread.run_sync(judge, env.sample)
        data = json.loads(result.model_dump_json(exclude_none=True))
        return Score(value=CORRECT if str(result.state) == "success" else INCORRECT,
                     answer=None if result.value is None else repr(result.value),
                     explanation=f"{result.state}: {result.detail}" if result.detail else str(result.state),
                     metadata={RESULT_KEY: data})

    return score


def build_task(taskset: str, references: str | None, conditions: Sequence[str] | str | None, *,
               out: str | None, sandbox: str, reproducer: str, solver: Any = None) -> Task:
    """See :func:`rra_tools.interop.inspect.rra_task`."""
    wanted = split_conditions(conditions)
    out = out or default_out()
    bench = bench_for(taskset, references, wanted, out, sandbox, reproducer)
    samples = []
    for cell in bench.cells():
        handover = handover_for(bench.taskset, cell.task, str(cell.condition), bench.specs.get(reproducer))
        samples.append(Sample(id=cell.key, input=handover.text, metadata={
            "rra_task": cell.task, "rra_condition": str(cell.condition), "rra_cell": cell.key,
            "rra_repeat": cell.repeat, "rra_taskset": taskset, "rra_references": references or "",
            "rra_conditions": list(wanted), "rra_out": out, "rra_sandbox": sandbox, "rra_reproducer": reproducer,
            "rra_handover_sha256": handover.sha256}))
    extra: dict[str, Any] = {} if solver is None else {"solver": solver}
    return Task(dataset=MemoryDataset(samples, name=bench.taskset.model.id), scorer=rra_verdict(),
                sandbox=SandboxEnvironmentSpec("rra"), name=f"rra-{bench.taskset.model.id}",
                metadata={"rra_taskset": taskset, "rra_out": out}, **extra)
