"""One cell run end to end: the metering proxy started, the command run in its sandbox with the
proxy as its only way out, the proxy's measurements and the sandbox's record returned.

This is what the benchmark's reproducer cells, ``rra bench reproduce``'s re-executions and the
builder's agent all call, so that every cell has the same shape (DESIGN.md, "Cells").

The environment inside is built here and only here: the cell's own variables, the names the
task set lets through from the evaluator's environment, the providers' base URLs pointing at
the proxy and dummy keys. The real keys stay in the evaluator, which hands them to the proxy.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..io.journal import JOURNAL_PATH, JOURNAL_VARIABLE
from ..model.cell import MeteredUsage, SandboxLimits, UsageDifference
from ..model.submission import Usage
from .proxy import KEY_VARIABLES, Budgets, MeteringProxy, ProxySettings, load_price_table, parse_upstreams
from .sandbox import (
    PROXY_PORT,
    SOCKET_NAME,
    Backend,
    CellCommand,
    SandboxExit,
    for_gpus,
    new_run_dir,
    resolve_backend,
    run_sandboxed,
)

__all__ = ["DEFAULT_LIMITS", "DUMMY_KEY", "CellOptions", "CellRun", "compare_usage", "make_cell_options",
           "run_cell_command"]

#: The key every agent holds inside a cell: the proxy swaps in the real one.
DUMMY_KEY = "rra-cell-dummy-key"

#: Defaults of the limits a task set leaves out (docs/bench.md#isolation).
DEFAULT_LIMITS = {"memory_mib": 16384, "pids": 4096, "disk_mib": 20480}

#: A stated figure further than this from the metered one is reported.
TOLERANCE = 0.01


@dataclass(frozen=True)
class CellOptions:
    """How every cell of a run is isolated and metered (``--sandbox``, ``--upstream``, the task set's
    ``sandbox`` settings). Picklable: Slurm jobs receive it."""

    backend: Backend
    requested: str
    upstreams: Mapping[str, str]
    price_file: Path | None = None
    pass_env: tuple[str, ...] = ()
    readonly: tuple[Path, ...] = ()
    allowed_tools: frozenset[str] = frozenset()


@dataclass
class CellRun:
    """What :func:`run_cell_command` measured: how the command ended, and the model calls."""

    exit: SandboxExit
    metered: MeteredUsage
    limit_reached: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The run journal's last digest as the proxy held it (None: no journal was kept).
    journal_head: str | None = None


def make_cell_options(sandbox: str = "auto", upstreams: Sequence[str] = (), price_file: Path | None = None, *,
                      pass_env: Sequence[str] = (), readonly: Sequence[Path] = (),
                      allowed_tools: Sequence[str] = ()) -> CellOptions:
    """Cell options for ``--sandbox``, ``--upstream`` and ``--price-table``, checked now: SandboxError
    when no sandbox of that kind can run here, ProxyError for a bad upstream or price table."""
    load_price_table(price_file)
    return CellOptions(backend=resolve_backend(sandbox), requested=sandbox, upstreams=parse_upstreams(upstreams),
                       price_file=price_file, pass_env=tuple(pass_env), readonly=tuple(readonly),
                       allowed_tools=frozenset(allowed_tools))


def _inside_env(options: CellOptions, backend: Backend, own: Mapping[str, str], base_url: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for name in options.pass_env:
        if name in os.environ:
            env[name] = os.environ[name]
    if backend.name == "none":
        # The host, unisolated: its PATH and HOME (nothing is hidden from such a cell anyway).
        env.update({k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ})
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "/usr/bin:/bin")])
    else:
        # A reproducer may call 'rra run': the rra of this interpreter comes first.
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    env.update(own)
    env.update({"ANTHROPIC_BASE_URL": base_url, "OPENAI_BASE_URL": f"{base_url}/v1",
                "GOOGLE_GEMINI_BASE_URL": base_url})
    for variable in KEY_VARIABLES.values():
        env[variable] = DUMMY_KEY
    return env


def run_cell_command(command: str, workspace: Path, *, options: CellOptions, env: Mapping[str, str],
                     limits: SandboxLimits, budgets: Budgets, logs: Path, call_log: Path,
                     hidden: Sequence[Path] = (), gpus: Sequence[int] = (),
                     stop: threading.Event | None = None, readonly: Sequence[Path] = (),
                     writable: Sequence[Path] = (), journal: Path | None = None,
                     journal_head: str | None = None) -> CellRun:
    """Run ``command`` in ``workspace`` in a sandbox of ``options``, its model calls metered into
    ``call_log`` under ``budgets``; ``env`` are the cell's own variables; ``hidden`` paths must stay
    invisible (the references, the benchmark directory); ``readonly`` and ``writable`` are shown
    besides ``options.readonly`` (an agent's installed tree; its transcript directory); ``journal``:
    the file the proxy keeps the cell's run journal in (outside the workspace; ``rra run`` inside
    commits each record to it), continued from ``journal_head`` when the cell ran a command before
    (its digest must still end the file). SandboxError, ProxyError or JournalError when the cell
    cannot be set up."""
    prices = load_price_table(options.price_file)
    keys = {provider: os.environ[variable] for provider, variable in KEY_VARIABLES.items() if variable in os.environ}
    settings = ProxySettings(upstreams=options.upstreams, keys=keys, prices=prices, call_log=call_log,
                             budgets=budgets, allowed_tools=options.allowed_tools, journal=journal,
                             journal_head=journal_head)
    backend = for_gpus(options.backend, options.requested) if gpus else options.backend
    run_dir = new_run_dir()
    sandboxed = backend.name != "none"
    proxy = (MeteringProxy(settings, unix_socket=run_dir / SOCKET_NAME) if sandboxed
             else MeteringProxy(settings, tcp=("127.0.0.1", 0)))
    with proxy:
        if sandboxed:
            base_url = f"http://127.0.0.1:{PROXY_PORT}"
        else:
            address = proxy.tcp_address
            assert address is not None  # started with tcp above
            base_url = f"http://{address[0]}:{address[1]}"
        inside = _inside_env(options, backend, env, base_url)
        if journal is not None:
            inside[JOURNAL_VARIABLE] = base_url + JOURNAL_PATH
        cell = CellCommand(command=command, workspace=workspace, env=inside,
                           limits=limits, readonly=(*options.readonly, *readonly), hidden=hidden, gpus=gpus,
                           proxy=True, writable=tuple(writable))
        ended = run_sandboxed(cell, backend, requested=options.requested, logs=logs, run_dir=run_dir,
                              limit_event=proxy.limit_event, stop=stop)
        metered = proxy.usage()
        reached = proxy.limit_reached
        head = proxy.journal_head
    if reached is not None and ended.stopped is None:
        # The command ended on its own after the proxy refused it (an agent that gives up on the
        # error) before the watch saw the budget: it ended because of the budget all the same.
        ended.stopped, ended.limit = "limit", "budget"
    return CellRun(ended, metered, reached, journal_head=head)


def compare_usage(stated: Usage | None, metered: MeteredUsage) -> list[UsageDifference]:
    """The stated figures (tokens, cost) that differ from the metered ones by more than 1 %."""
    if stated is None:
        return []
    pairs: list[tuple[str, float | None, float]] = [
        ("tokens", stated.tokens, float(metered.input_tokens + metered.output_tokens + metered.cache_read_tokens
                                        + metered.cache_write_tokens)),
        ("cost_usd", stated.cost_usd, metered.cost_usd)]
    found = []
    for name, said, measured in pairs:
        if said is None:
            continue
        if abs(said - measured) > TOLERANCE * max(abs(measured), 1e-9):
            found.append(UsageDifference(field=name, stated=float(said), metered=measured))
    return found
