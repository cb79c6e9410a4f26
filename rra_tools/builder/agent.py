"""Decisions of ``rra build``: request files, the ``--agent CMD`` hook, and answer files.

At a decision point the builder writes an :class:`~rra_tools.model.agent.AgentRequest` to
``.rra/build/decisions/<id>.request.json``. Then:

- an answer already at ``<id>.answer.json`` (written by a person, or left by an earlier agent
  run) is used as it is;
- else, with an agent command, the command runs as ``CMD... REQUEST_PATH``, with
  ``RRA_AGENT_REQUEST`` and ``RRA_AGENT_ANSWER`` naming both files in its environment, and must
  write the answer file; its output goes to ``<id>.agent.log``. By default it runs in a cell's
  sandbox (:mod:`rra_tools.agents`): the artifact directory is its workspace (read-write), a file
  named in ``CMD`` (a relative path means what it meant to the user) is shown read-only, and its
  model calls leave only through the metering proxy, whose figures become the decision's cost
  (the call log is kept as ``<id>.model-calls.jsonl``). With ``--sandbox none`` it runs in the
  current directory with the user's environment, as before;
- else, with an agent adapter (``--agent NAME:MODEL_ID``, NAME one of
  :data:`~rra_tools.agents.adapters.ADAPTERS` but ``command``), the decision becomes a task for
  that coding agent: the builder's hand-over (:func:`~rra_tools.agents.handover.render_build_handover`:
  the request's path and content, the answer's schema, where to write it) is its prompt, and the
  adapter's :meth:`~rra_tools.agents.adapters.Adapter.launch` runs the real agent program in the
  cell's sandbox (or unisolated with ``--sandbox none``) with the artifact as its workspace, its
  installed tree read-only, its transcript directory (a temporary directory outside the artifact)
  read-write and its model calls through the metering proxy. Afterwards the hand-over, the
  transcript and the call log are copied beside the request (``<id>.handover.md``,
  ``<id>.transcript/``, ``<id>.agent.log``, ``<id>.model-calls.jsonl``), and the usage the agent
  program reported of itself is kept as the decision's ``stated`` usage (the metered figures count);
- else the build stops (:class:`DecisionNeeded`) and says what to do.

Answers are validated against the published schema (through the pydantic model); a bad answer
is an :class:`AnswerInvalid` naming the file and the field.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..agents.adapters import ADAPTERS, Adapter, AdapterError, AgentCell, installed
from ..agents.adapters import tree as agent_tree
from ..agents.cell import DEFAULT_LIMITS, CellOptions, run_cell_command
from ..agents.handover import render_build_handover
from ..agents.sandbox import SandboxExit
from ..agents.proxy import Budgets
from ..errors import ExitStatus, RRAError
from ..io.atomic import write_atomic
from ..model.agent import AgentAnswer, AgentRequest
from ..model.cell import MeteredUsage, ReportedUsage, SandboxLimits
from .errors import BuilderLayerError

__all__ = ["AgentFailed", "Agent", "AnswerInvalid", "Asked", "DecisionNeeded", "decision_paths", "parse_agent",
           "read_answer", "slug"]

#: Where the request and answer files of a build live, relative to the artifact.
DECISIONS_DIR = ".rra/build/decisions"
#: How much of the agent's output an error shows.
_TAIL = 2000


class DecisionNeeded(BuilderLayerError):
    """The build stopped at a decision nobody answered; ``request`` and ``answer`` are the files,
    ``todo`` says what to do by hand."""

    exit_status = ExitStatus.STOPPED

    def __init__(self, message: str, *, step: str, request: Path, answer: Path, todo: str) -> None:
        super().__init__(message)
        self.step = step
        self.request = request
        self.answer = answer
        self.todo = todo
        self.hint = f"{todo}; then run the build again"


class AgentFailed(BuilderLayerError):
    """The agent command could not be run, failed, or wrote no answer."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class AnswerInvalid(BuilderLayerError):
    """An answer file is not a valid answer to its request; nothing of it was applied."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint or "see docs/builder.md#the-agent-hook and schemas/rra-agent-answer-1.0.schema.json"


def slug(text: str) -> str:
    """A file-name-safe form of a decision id."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:120] or "decision"


def decision_paths(root: Path, ident: str) -> tuple[Path, Path]:
    """The request and answer files of decision ``ident``."""
    folder = root / DECISIONS_DIR
    return folder / f"{slug(ident)}.request.json", folder / f"{slug(ident)}.answer.json"


def read_answer(path: Path, request: AgentRequest) -> AgentAnswer:
    """The answer in ``path``, validated, and answering ``request``; AnswerInvalid otherwise."""
    from pydantic import ValidationError

    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise AnswerInvalid(f"answer {path}: cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise AnswerInvalid(f"answer {path}: not JSON: {exc}") from None
    try:
        answer = AgentAnswer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"]) or "(the document)"
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        raise AnswerInvalid(f"answer {path}: field '{where}': {first['msg']}{more}") from None
    if answer.request != request.id:
        raise AnswerInvalid(f"answer {path}: field 'request': {answer.request!r} is not the id of the request "
                            f"it answers, {request.id!r}")
    return answer


@dataclass(frozen=True)
class Asked:
    """One decision answered: the answer, where it came from, and how long it took."""

    answer: AgentAnswer
    #: 'agent' (the command ran), or 'file' (an answer file was already there).
    source: str
    wall_s: float
    #: The model calls the metering proxy measured, when the agent ran in a cell.
    metered: MeteredUsage | None = None
    #: An agent adapter's run: its name, version and model, and the usage the agent program
    #: reported of itself (None when it reported none).
    adapter: tuple[str, str, str] | None = None
    reported: ReportedUsage | None = None


def parse_agent(command: str) -> tuple[Adapter, str] | None:
    """The adapter and model ``--agent NAME:MODEL_ID`` names, or None when ``command`` is a
    command (no adapter's name before the first ':', or a space in it). AdapterError when the
    adapter cannot use the model.

    >>> adapter, model = parse_agent("mini-swe-agent:openai/gpt-5-mini")
    >>> adapter.name, model
    ('mini-swe-agent', 'openai/gpt-5-mini')
    >>> parse_agent("python agent.py"), parse_agent("./my-agent:v2"), parse_agent("command:x")
    (None, None, None)
    """
    name, sep, model = command.strip().partition(":")
    if not sep or name == "command" or name not in ADAPTERS or not model or any(c.isspace() for c in model):
        return None
    adapter = ADAPTERS[name]
    adapter.check_model(model)
    return adapter, model


class Agent:
    """Asks decisions: from answer files already written, then from the agent command, if any."""

    def __init__(self, command: str | None, *, timeout_s: float = 3600.0,
                 progress: Callable[[str], None] | None = None, cell: CellOptions | None = None) -> None:
        #: The agent adapter and model of ``--agent NAME:MODEL_ID``, else None.
        self.adapter = parse_agent(command) if command else None
        self.argv = shlex.split(command) if command else None
        if command is not None and not self.argv:
            raise AgentFailed("--agent is empty: give the command that answers the builder's requests")
        self.command = command
        self.timeout_s = timeout_s
        self.progress = progress or (lambda _: None)
        #: The sandbox and proxy the command runs in; None or backend 'none': unisolated.
        self.cell = cell

    def ask(self, root: Path, request: AgentRequest, todo: str) -> Asked:
        """The answer to ``request`` (see the module docstring)."""
        request_path, answer_path = decision_paths(root, request.id)
        request_path.parent.mkdir(parents=True, exist_ok=True)
        data = request.model_dump(mode="json", exclude_none=True)
        write_atomic(request_path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        started = time.monotonic()
        if answer_path.is_file():
            return Asked(read_answer(answer_path, request), "file", 0.0)
        if self.argv is None:
            raise DecisionNeeded(f"stopped at step '{request.step}': {request.question}",
                                 step=request.step, request=request_path, answer=answer_path, todo=todo)
        self.progress(f"asking the agent: {request.question}")
        log = request_path.with_name(request_path.name.replace(".request.json", ".agent.log"))
        if self.adapter is not None:
            return self._ask_adapter(root, request, request_path, answer_path, log, started)
        if self.cell is not None and self.cell.backend.name != "none":
            metered = self._ask_in_cell(root, request_path, answer_path, log)
            wall = time.monotonic() - started
            return Asked(read_answer(answer_path, request), "agent", wall, metered)
        env = {**os.environ, "RRA_AGENT_REQUEST": str(request_path), "RRA_AGENT_ANSWER": str(answer_path)}
        try:
            with open(log, "wb") as out:
                done = subprocess.run([*self.argv, str(request_path)], env=env, stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=subprocess.STDOUT, timeout=self.timeout_s, check=False)
        except FileNotFoundError:
            raise AgentFailed(f"the agent command {self.argv[0]!r} was not found",
                              "give --agent a command on PATH or a path to an executable") from None
        except PermissionError:
            raise AgentFailed(f"the agent command {self.argv[0]!r} is not executable") from None
        except subprocess.TimeoutExpired:
            raise AgentFailed(f"the agent did not answer {request_path} within {self.timeout_s:g} s; its output "
                              f"is in {log}") from None
        wall = time.monotonic() - started
        if done.returncode != 0:
            raise AgentFailed(f"the agent exited with status {done.returncode} on {request_path}:\n"
                              f"{_tail(log)}", f"its whole output is in {log}")
        if not answer_path.is_file():
            raise AgentFailed(f"the agent exited 0 but wrote no answer to {answer_path}",
                              "the agent writes its answer to the path in the request's 'answer' field "
                              "(also in $RRA_AGENT_ANSWER)")
        return Asked(read_answer(answer_path, request), "agent", wall)

    def _ask_in_cell(self, root: Path, request_path: Path, answer_path: Path, log: Path) -> MeteredUsage:
        """Run the command in a cell (module docstring); what the proxy metered."""
        assert self.argv is not None and self.cell is not None  # checked by ask()
        argv = [_resolved(word) for word in self.argv]
        readonly = [Path(w) for w in argv if os.path.isabs(w) and os.path.isfile(w) and not w.startswith("/usr/")]
        scratch = Path(tempfile.mkdtemp(prefix="rra-build-cell-"))
        try:
            # No disk quota: the workspace is the author's repository, data and all.
            limits = SandboxLimits(wall_clock_s=self.timeout_s, memory_mib=DEFAULT_LIMITS["memory_mib"],
                                   pids=DEFAULT_LIMITS["pids"])
            ran = run_cell_command(shlex.join([*argv, str(request_path)]), root, options=self.cell,
                                   env={"RRA_AGENT_REQUEST": str(request_path), "RRA_AGENT_ANSWER": str(answer_path)},
                                   limits=limits, budgets=Budgets(), logs=scratch,
                                   call_log=scratch / "model-calls.jsonl", readonly=readonly)
            # Copied in only now: while it ran, the agent could have rewritten anything in its workspace.
            with open(log, "wb") as out:
                for name in ("reproducer.stdout.log", "reproducer.stderr.log"):
                    if (scratch / name).is_file():
                        out.write((scratch / name).read_bytes())
            if (scratch / "model-calls.jsonl").is_file():
                shutil.copyfile(scratch / "model-calls.jsonl", log.with_name(log.name.replace(
                    ".agent.log", ".model-calls.jsonl")))
        except RRAError as exc:
            raise AgentFailed(f"the agent's sandbox could not be set up: {exc}",
                              "give --sandbox none to run the agent unisolated") from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        _check_ended(ran.exit, request_path, answer_path, log, self.timeout_s)
        return ran.metered


    def _ask_adapter(self, root: Path, request: AgentRequest, request_path: Path, answer_path: Path, log: Path,
                     started: float) -> Asked:
        """Run the agent adapter on the decision (module docstring)."""
        assert self.adapter is not None
        adapter, model = self.adapter
        if self.cell is None:
            raise AgentFailed(f"--agent {adapter.name}:{model} needs a cell (its sandbox and metering proxy)")
        if not installed(adapter):
            raise AgentFailed(f"the agent {adapter.name} {adapter.version} is not installed (no complete tree at "
                              f"{agent_tree(adapter)})", f"run 'rra bench agents install {adapter.name}'")
        handover = render_build_handover(json.loads(request_path.read_text(encoding="utf-8")), str(request_path))
        stem = request_path.name.replace(".request.json", "")
        kept = request_path.with_name(f"{stem}.transcript")
        scratch = Path(tempfile.mkdtemp(prefix="rra-build-agent-"))
        try:
            transcript = scratch / "transcript"
            transcript.mkdir()
            cell = AgentCell(prompt=handover.text, model=model, workspace=root, transcript=transcript,
                             stdout=scratch / "reproducer.stdout.log", tree=agent_tree(adapter))
            try:
                launch = adapter.launch(cell)
                limits = SandboxLimits(wall_clock_s=self.timeout_s, memory_mib=DEFAULT_LIMITS["memory_mib"],
                                       pids=DEFAULT_LIMITS["pids"])
                env = {"RRA_AGENT_REQUEST": str(request_path), "RRA_AGENT_ANSWER": str(answer_path), **launch.env}
                ran = run_cell_command(launch.command, root, options=self.cell, env=env, limits=limits,
                                       budgets=Budgets(), logs=scratch, call_log=scratch / "model-calls.jsonl",
                                       readonly=launch.readonly, writable=launch.writable)
            except (AdapterError, RRAError) as exc:
                raise AgentFailed(f"the agent {adapter.name} could not be started in its sandbox: {exc}",
                                  "give --sandbox none to run the agent unisolated") from None
            reported = adapter.reported_usage(cell)
            # Copied in only now: while it ran, the agent could have rewritten anything in its workspace.
            write_atomic(request_path.with_name(f"{stem}.handover.md"), handover.text.encode("utf-8"))
            with open(log, "wb") as out:
                for name in ("reproducer.stdout.log", "reproducer.stderr.log"):
                    if (scratch / name).is_file():
                        out.write((scratch / name).read_bytes())
            if (scratch / "model-calls.jsonl").is_file():
                shutil.copyfile(scratch / "model-calls.jsonl", request_path.with_name(f"{stem}.model-calls.jsonl"))
            shutil.rmtree(kept, ignore_errors=True)
            for found in adapter.transcript(cell):
                if found.is_relative_to(transcript):
                    target = kept / found.relative_to(transcript)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(found, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        _check_ended(ran.exit, request_path, answer_path, log, self.timeout_s)
        return Asked(read_answer(answer_path, request), "agent", time.monotonic() - started, ran.metered,
                     (adapter.name, adapter.version, model), reported)


def _check_ended(ended: SandboxExit, request_path: Path, answer_path: Path, log: Path, timeout_s: float) -> None:
    """AgentFailed when the cell's command did not end well or wrote no answer."""
    if ended.stopped == "setup":
        raise AgentFailed(f"the agent's sandbox could not start it: {ended.setup_error}",
                          "give --sandbox none to run the agent unisolated")
    if ended.stopped == "timeout":
        raise AgentFailed(f"the agent did not answer {request_path} within {timeout_s:g} s; its output is in {log}")
    if ended.stopped is not None:
        raise AgentFailed(f"the agent was stopped ({ended.limit or ended.stopped}) on {request_path}:\n"
                          f"{_tail(log)}", f"its whole output is in {log}")
    if ended.exit_status != 0:
        raise AgentFailed(f"the agent exited with status {ended.exit_status} on {request_path}:\n"
                          f"{_tail(log)}", f"its whole output is in {log}")
    if not answer_path.is_file():
        raise AgentFailed(f"the agent exited 0 but wrote no answer to {answer_path}",
                          "the agent writes its answer to the path in the request's 'answer' field "
                          "(also in $RRA_AGENT_ANSWER)")


def _resolved(word: str) -> str:
    """``word`` as an absolute path when it names a file relative to the current directory (so that
    it means inside the sandbox what it meant to the user), else unchanged."""
    if word.startswith("-") or os.path.isabs(word) or not os.path.isfile(word):
        return word
    return os.path.abspath(word)


def _tail(path: Path) -> str:
    try:
        text = path.read_text("utf-8", "replace").strip()
    except OSError:
        return "(no output)"
    return (text if len(text) <= _TAIL else "[...]\n" + text[-_TAIL:]) or "(no output)"

