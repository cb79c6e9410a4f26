"""One run of the build: its options, agent, state and progress, shared by every step."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...agents.cell import make_cell_options
from ...io.artifact import Artifact, load_artifact
from ...io.atomic import write_atomic
from ...model.agent import AgentRequest, DecisionKind
from ..agent import Agent, Asked, decision_paths
from .errors import BuildError
from .options import BuildOptions, Progress
from .state import STATE_FORMAT, STATE_PATH, STEPS, StepRecord, read_state

if TYPE_CHECKING:
    from ...run import RunOptions

#: Most decisions one step may ask before the build gives up (a loop guard).
MAX_DECISIONS = 500


class Build:
    """One run of the build: options, the agent, the state, progress."""

    def __init__(self, options: BuildOptions, progress: Progress) -> None:
        self.options = options
        self.raw = options.raw.resolve()
        self.root = options.artifact.resolve()
        self.progress = progress
        cell = None
        if options.agent is not None:
            cell = make_cell_options(options.sandbox, options.upstreams, options.price_table)
        self.agent = Agent(options.agent, timeout_s=options.agent_timeout_s, progress=progress, cell=cell)
        self.header: dict[str, Any] = {}
        self.steps = {name: StepRecord(name) for name in STEPS}
        self.current: StepRecord | None = None
        #: The environment the build's own runs use, by the lock's digest it was built from.
        self._environment: tuple[str | None, Path | None] | None = None
        #: Why the environment of the lock could not be built, when it could not (else None).
        self.environment_error: str | None = None

    # -- state ---------------------------------------------------------------------------------

    def load_state(self) -> bool:
        """Read the state file into this run; False when the artifact has none yet."""
        found = read_state(self.root) if self.root.is_dir() else None
        if found is None:
            return False
        self.header, records = found
        for record in records:
            if record.name in self.steps:
                self.steps[record.name] = record
        return True

    def save(self) -> None:
        """Write the state file and the build report (atomically)."""
        path = self.root / STATE_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"rra_build_state": STATE_FORMAT, **{k: v for k, v in self.header.items() if k != "rra_build_state"},
                "steps": [self.steps[name].to_json() for name in STEPS]}
        write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        from ..build_report import REPORT_PATH, render_report

        write_atomic(self.root / REPORT_PATH, render_report([self.steps[name] for name in STEPS]).encode("utf-8"))

    # -- helpers -------------------------------------------------------------------------------

    def run_options(self) -> RunOptions:
        """Options for the build's own runs (execute, reference): in the environment built from
        the manifest's lock (``--build-env locked``, the default; built once, cached by the lock's
        digest and reused), so that its records and the review's agree; in this interpreter when
        asked (``current``) or when the build has no lock (``--skip-lock``)."""
        from ...run import RunOptions
        from ...run import load_artifact as run_artifact
        from ...run.errors import ArtifactError

        lock = ((self.artifact().data.get("environment") or {}).get("lock") or {})
        sha = lock.get("sha256") if self.options.build_env == "locked" else None
        if self._environment is None or self._environment[0] != sha:
            if sha is None:
                self._environment = (None, None)
                if self.options.build_env == "locked":
                    self.progress("no lock: the build's runs use this interpreter's environment")
            else:
                from ...run.locked_env import locked_environment

                environment = self.artifact().data.get("environment") or {}
                version = (environment.get("interpreter") or {}).get("version")
                try:
                    created = locked_environment(run_artifact(self.root), str(version) if version else None)
                except ArtifactError as exc:
                    # Kept for the execute step, which asks for a repair of the requirements.
                    self.environment_error = str(exc)
                    raise BuildError(f"the environment of the lock cannot be built: {exc}",
                                     "repair the lock (rra lock), or run the build with --build-env current") from None
                self.environment_error = None
                self.progress(f"environment: {created.path} ({'reused' if created.reused else 'built'} from the "
                              f"lock, {created.packages} package(s), {_python_of(created.path, version)})")
                self._environment = (sha, created.path)
        return RunOptions(env_dir=self._environment[1])

    def artifact(self) -> Artifact:
        """The artifact as it is now on disk."""
        return load_artifact(self.root)

    def rel(self, path: Path) -> str:
        """``path`` relative to the artifact when inside it, else as given."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def ask(self, request: AgentRequest, todo: str) -> Asked:
        """Ask the agent for a decision, adding its wall time, tokens and cost to the current step."""
        record = self.current
        assert record is not None
        if len(record.decisions) >= MAX_DECISIONS:
            raise BuildError(f"step {record.name!r} asked {MAX_DECISIONS} decisions; giving up")
        asked = self.agent.ask(self.root, request, todo)
        usage = asked.answer.usage
        kind = request.kind.value if isinstance(request.kind, DecisionKind) else str(request.kind)
        entry: dict[str, Any] = {"id": request.id, "kind": kind, "source": asked.source,
                                 "wall_s": round(asked.wall_s, 3)}
        if asked.adapter is not None:
            name, version, model = asked.adapter
            request_path, _ = decision_paths(self.root, request.id)
            entry["agent"] = {"adapter": name, "version": version, "model": model,
                              "transcript": self.rel(request_path.with_name(
                                  request_path.name.replace(".request.json", ".transcript")))}
        metered = asked.metered
        if metered is not None:
            entry["metered"] = {"calls": metered.calls, "input_tokens": metered.input_tokens + metered.cache_read_tokens
                                + metered.cache_write_tokens, "output_tokens": metered.output_tokens,
                                "cost_usd": metered.cost_usd, "price_table": metered.price_table}
        if metered is not None and metered.calls:
            # Measured by the proxy: these count; what the agent stated is kept beside them.
            record.input_tokens += entry["metered"]["input_tokens"]
            record.output_tokens += metered.output_tokens
            record.cost_usd = round(record.cost_usd + metered.cost_usd, 6)
            record.usage_metered = True
            if asked.reported is not None:
                # An agent adapter's run: what the agent program reported of itself.
                reported = asked.reported
                figures = {"input_tokens": None if reported.input_tokens is None else reported.input_tokens + (
                    reported.cache_read_tokens or 0) + (reported.cache_write_tokens or 0),
                    "output_tokens": reported.output_tokens, "calls": reported.calls, "cost_usd": reported.cost_usd}
                entry["stated"] = {k: v for k, v in figures.items() if v is not None}
            elif usage is not None:
                entry["stated"] = {k: getattr(usage, k) for k in ("model", "input_tokens", "output_tokens", "cost_usd")
                                   if getattr(usage, k) is not None}
        elif usage is not None:
            for key in ("model", "input_tokens", "output_tokens", "cost_usd"):
                value = getattr(usage, key)
                if value is not None:
                    entry[key] = value
            record.input_tokens += usage.input_tokens or 0
            record.output_tokens += usage.output_tokens or 0
            record.cost_usd = round(record.cost_usd + (usage.cost_usd or 0.0), 6)
            record.usage_reported = record.usage_reported or any(
                v is not None for v in (usage.input_tokens, usage.output_tokens, usage.cost_usd))
        if asked.answer.give_up:
            request_path, answer_path = decision_paths(self.root, request.id)
            if answer_path.is_file():  # kept aside: the next run asks again
                answer_path.rename(answer_path.with_name(answer_path.name.replace(".answer.json", ".gave-up.json")))
            record.decisions.append({**entry, "gave_up": asked.answer.give_up})
            raise BuildError(f"the agent gave up on {request.id} ({request.question}): {asked.answer.give_up}",
                             f"decide it by hand: {todo}; the request is {request_path}")
        record.decisions.append(entry)
        return asked

    def applied(self, request: AgentRequest) -> None:
        """Keep an applied answer beside its request under another name, so that a later
        decision with the same id is asked again instead of answered by this one."""
        request_path, answer_path = decision_paths(self.root, request.id)
        if answer_path.is_file():
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
            answer_path.rename(answer_path.with_name(answer_path.name.replace(".answer.json",
                                                                              f".applied-{stamp}.json")))
        self.save()

    def request(self, ident: str, kind: DecisionKind, question: str, **fields: Any) -> AgentRequest:
        """A decision request of the current step."""
        _, answer = decision_paths(self.root, ident)
        assert self.current is not None
        return AgentRequest(rra_agent_request="1.0", id=ident, kind=kind, step=self.current.name, question=question,
                            artifact=str(self.root), manifest=self.artifact().manifest_path.name, answer=str(answer),
                            **fields)

    def answer_path(self, ident: str) -> Path:
        """Where the answer to decision ``ident`` is written."""
        return decision_paths(self.root, ident)[1]


def readme_context(build: Build) -> dict[str, str] | None:
    """The README's commands, as the context of a request (None when it has none)."""
    commands = build.steps["specify"].outputs.get("readme_commands") or []
    return {"readme_commands": "\n".join(commands)} if commands else None


def _python_of(env: Path, wanted: Any) -> str:
    """Which Python the environment has (its ``pyvenv.cfg``), and whether it is the manifest's."""
    try:
        config = (env / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "Python unknown"
    found = re.search(r"^version(?:_info)?\s*=\s*(\d+\.\d+)", config, re.M)
    have = found.group(1) if found else "unknown"
    if wanted and have != "unknown" and str(wanted).split(".")[:2] != have.split("."):
        return f"Python {have}: no Python {wanted} is installed here, so the lock's pins may not install"
    return f"Python {have}"
