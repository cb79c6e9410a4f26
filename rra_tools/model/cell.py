"""What a cell's record says of its isolation and of the model calls it made: the sandbox it ran
in (:class:`SandboxRecord`) and the usage the metering proxy measured (:class:`MeteredUsage`).

Both are measured from outside the cell (docs/bench.md#isolation); what a reproducer states of
itself stays in :class:`~rra_tools.model.submission.Usage` and is only compared with these.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import RRAModel, Sha256

__all__ = ["BACKENDS", "AgentRecord", "HandoverRecord", "MeteredUsage", "ReportedUsage", "SandboxLimits", "SandboxMount",
           "SandboxRecord", "UsageDifference"]

#: The sandbox backends a cell can run under; 'none' is the host itself, asked for explicitly.
BACKENDS = ("podman", "bwrap", "none")


class SandboxMount(RRAModel):
    """One host path made visible inside the sandbox."""

    source: str = Field(description="The host path.")
    target: str = Field(description="Where it appears inside the sandbox.")
    mode: Literal["ro", "rw"] = Field(description="'ro' (read-only) or 'rw'.")
    role: str = Field(description="Why it is there: workspace, hand-over, reproducer, system, proxy, rra, "
                      "transcript (an agent's transcript directory, read-write).")


class SandboxLimits(RRAModel):
    """The limits a cell ran under, and which of them the kernel enforced."""

    cpus: float | None = Field(default=None, gt=0, description="CPU time share, in CPUs.")
    memory_mib: int | None = Field(default=None, gt=0, description="Memory, MiB.")
    pids: int | None = Field(default=None, gt=0, description="Processes and threads at once.")
    wall_clock_s: float = Field(gt=0, description="Wall-clock seconds.")
    disk_mib: int | None = Field(default=None, gt=0, description="What the workspace may hold, MiB (and the "
                                 "largest file a process may write).")
    enforced_by: list[str] = Field(default_factory=list, description="How each limit was enforced, e.g. "
                                   "'cgroup-v1:memory', 'rlimit:fsize', 'watch:disk'.")


class SandboxRecord(RRAModel):
    """The sandbox a cell ran in, as the evaluator set it up."""

    backend: Literal["podman", "bwrap", "none"] = Field(description="The backend; 'none' is the host, unisolated.")
    requested: Literal["auto", "podman", "bwrap", "none"] = Field(description="What --sandbox asked for.")
    network: str = Field(description="'proxy-only' (own network namespace, the metering proxy's socket the only "
                         "way out) or 'host' (backend none).")
    mounts: list[SandboxMount] = Field(default_factory=list, description="Every host path visible inside.")
    limits: SandboxLimits
    devices: list[str] = Field(default_factory=list, description="Devices passed in: /dev/nvidia* paths (bwrap) "
                               "or CDI names (podman).")
    env: list[str] = Field(default_factory=list, description="Names of the variables set inside (values of keys "
                           "are dummies and not recorded).")
    escapes: list[str] = Field(default_factory=list, description="What the cell tried that the sandbox refused or "
                               "contained, as the evaluator saw it (a limit hit, a file type refused).")


class MeteredUsage(RRAModel):
    """The model calls of a cell as the metering proxy measured them from the upstream's answers."""

    calls: int = Field(ge=0, description="Calls answered by the upstream (retries not counted).")
    input_tokens: int = Field(ge=0, description="Input neither read from nor written to the prompt cache "
                              "(OpenAI and Google: the prompt less its cached part).")
    output_tokens: int = Field(ge=0, description="All output, reasoning included (Google: candidates + thoughts).")
    cache_read_tokens: int = Field(ge=0, description="Input read from the prompt cache.")
    cache_write_tokens: int = Field(ge=0, description="Input written to the prompt cache (Anthropic states it; "
                                    "OpenAI and Google do not).")
    reasoning_tokens: int = Field(ge=0, description="Reasoning tokens, where the upstream states them (part of "
                                  "output_tokens for OpenAI and Gemini).")
    cost_usd: float = Field(ge=0, allow_inf_nan=False, description="Cost from the price table.")
    price_table: str = Field(description="Name and date of the price table used, e.g. 'rra-prices 2026-12-01'.")
    retries: int = Field(default=0, ge=0, description="Upstream 429 and 5xx answers retried by the proxy.")
    refused: int = Field(default=0, ge=0, description="Calls the proxy refused (past a budget, unknown route).")
    waiting_s: float = Field(default=0, ge=0, description="Seconds spent waiting to retry (not working time).")
    unpriced_models: list[str] = Field(default_factory=list, description="Models the price table has no price "
                                       "for (their cost counts as 0).")
    call_log: str | None = Field(default=None, description="The call log (one JSON line per call), relative to "
                                 "the benchmark directory.")
    limit_reached: str | None = Field(default=None, description="The budget that ended the cell, when one did: "
                                      "tokens, cost_usd, calls or wall_s.")


class UsageDifference(RRAModel):
    """A figure the reproducer stated that differs from the metered one by more than 1 %."""

    field: str
    stated: float
    metered: float


class HandoverRecord(RRAModel):
    """The hand-over an agent was given: the template's version and the digest of the text rendered
    for the cell (the same text ``rra bench prompt`` prints)."""

    version: str = Field(description="Version of the hand-over template (rra_tools/agents/handover).")
    sha256: Sha256 = Field(description="SHA-256 of the rendered text (UTF-8), exactly as the agent received it.")
    path: str | None = Field(default=None, description="The rendered text as kept beside the workspace, relative to "
                             "the benchmark directory.")


class ReportedUsage(RRAModel):
    """The usage an agent program reports of itself (its JSON result, its events, its trajectory),
    read by the evaluator from the agent's output; compared with the metered usage, never used
    in its place."""

    input_tokens: int | None = Field(default=None, ge=0, description="Input tokens, without cache reads and writes.")
    output_tokens: int | None = Field(default=None, ge=0, description="Output tokens (reasoning included).")
    cache_read_tokens: int | None = Field(default=None, ge=0)
    cache_write_tokens: int | None = Field(default=None, ge=0)
    calls: int | None = Field(default=None, ge=0, description="Model calls, where the agent counts them.")
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False,
                                   description="Cost by the agent's own price list, where it states one.")
    source: str = Field(description="Where it was read, e.g. 'stdout: the result event'.")

    def tokens(self) -> int | None:
        """Every token together (input, cache reads and writes, output), as the metered total counts them."""
        parts = (self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens)
        if all(p is None for p in parts):
            return None
        return sum(p or 0 for p in parts)


class AgentRecord(RRAModel):
    """The coding agent that ran in a cell, through which adapter, and where its transcript is."""

    adapter: str = Field(description="The adapter: claude-code, codex, gemini-cli, mini-swe-agent.")
    version: str = Field(description="The agent's pinned version.")
    model: str = Field(description="The model it was told to use.")
    transcript: list[str] = Field(default_factory=list, description="Its transcript files (conversation, tool "
                                  "calls, results), relative to the benchmark directory; outside the workspace.")
    reported: ReportedUsage | None = Field(default=None, description="The usage it reported of itself, when it "
                                           "did (usage.stated of the cell).")
