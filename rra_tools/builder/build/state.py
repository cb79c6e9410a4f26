"""The build's state file: the steps, their records (checkpoints and the build report) and how it is read."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import BuildError

#: The steps of a build, in order.
STEPS = ("specify", "fill", "claims", "lock", "execute", "preserve", "reference", "guide", "review")


#: The state file (checkpoints and the build report), relative to the artifact.
STATE_PATH = ".rra/build/state.json"


STATE_FORMAT = "1.0"


@dataclass
class StepRecord:
    """One step in the state file: its last outcome and what it has cost, all runs together."""

    name: str
    #: 'pending', 'done', 'skipped' (done without doing: see ``note``), 'stopped' (at a decision)
    #: or 'failed'.
    status: str = "pending"
    #: Digest of the step's inputs when it finished ('' until then).
    inputs: str = ""
    started: str | None = None
    finished: str | None = None
    #: Wall-clock seconds spent in the step, over every run of the build (stopped runs too).
    wall_s: float = 0.0
    runs: int = 0
    decisions: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    #: Whether the agent stated tokens or cost for any answer of the step.
    usage_reported: bool = False
    #: Whether the metering proxy measured the model calls of an answer of the step (its tokens
    #: and cost then count, not what the agent stated).
    usage_metered: bool = False
    note: str = ""
    #: What the step found or made that later steps (and the report) use.
    outputs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record as written to the state file."""
        return {key: getattr(self, key) for key in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StepRecord:
        """A record read back from the state file (unknown keys ignored)."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


@dataclass
class BuildResult:
    """What one run of the build did: the steps it ran and skipped, and the whole state."""

    artifact: Path
    steps: list[StepRecord]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def now() -> str:
    """The time now, UTC, as the state file writes it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_state(artifact: Path) -> tuple[dict[str, Any], list[StepRecord]] | None:
    """The header and step records of the state file of ``artifact``, or None when it has none."""
    path = artifact / STATE_PATH
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
        header = {k: v for k, v in data.items() if k != "steps"}
        steps = [StepRecord.from_json(s) for s in data["steps"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"the build state {path} cannot be read: {exc}",
                         "remove it to start the build over (every step then runs again)") from None
    if data.get("rra_build_state") != STATE_FORMAT:
        raise BuildError(f"the build state {path} is of format {data.get('rra_build_state')!r}, not "
                         f"{STATE_FORMAT!r}", "remove it to start the build over")
    return header, steps
