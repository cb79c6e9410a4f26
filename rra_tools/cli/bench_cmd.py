"""``rra bench``: parse, call :mod:`rra_tools.bench`, render.

Only click is imported at module level so that ``rra --help`` stays fast.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .bench_cache import artifact_cache as _artifacts

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..bench.executors.local import CellEvent
    from ..bench.executors.slurm import SlurmOptions
    from ..bench.taskset import ResolvedTask
    from ..model.bench_results import Attempt, BenchResults, CellResult

__all__ = ["bench", "render_cells", "render_table"]

_COLUMNS = ("TASK", "CLAIM", "INTERVAL", "CLASS", "ATTEMPTS")


def render_table(results: BenchResults) -> str:
    """One row per task (interval, class, each attempt's state and value), then the totals."""
    rows: list[tuple[str, ...]] = [_COLUMNS]
    for task in results.tasks:
        iv = task.interval
        cells = []
        for a in task.attempts:
            value = "" if a.value is None else f" {a.value:.6g}"
            cells.append(f"{a.state}{value}")
        rows.append((f"{task.paper}/{task.experiment}/{task.task}", task.claim,
                     f"[{iv.low:.6g}, {iv.high:.6g}]", iv.stability, "; ".join(cells)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]).rstrip() for row in rows]
    totals = results.totals
    counts = ", ".join(f"{state} {n}" for state, n in totals.states.items())
    rate = "n/a" if totals.success_rate is None else f"{100 * totals.success_rate:.1f} %"
    lines.append("")
    lines.append(f"{totals.states['success']}/{totals.attempts} attempts succeeded ({rate}): {counts}")
    return "\n".join(lines) + "\n"


def _rate(n: int, total: int) -> str:
    return "n/a" if total == 0 else f"{100 * n / total:.1f} %"


def render_cells(results: BenchResults) -> str:
    """One line per reproducer × condition (each state's count), the confirmed audit findings,
    then the totals."""
    lines = []
    for group in results.groups:
        t = group.totals
        counts = ", ".join(f"{state} {n}" for state, n in t.states.items() if n)
        lines.append(f"{group.reproducer} / {group.condition}: {t.states['success']}/{t.attempts} succeeded "
                     f"({_rate(t.states['success'], t.attempts)}): {counts}")
    confirmed = [(c, f) for c in results.cells for f in c.findings if f.confirmed]
    if confirmed:
        lines.append("")
        lines.append(f"audit violations ({len(confirmed)}):")
        for cell, finding in confirmed[:50]:
            lines.append(f"  {cell.cell.key}: {finding.kind}: {finding.detail}")
        if len(confirmed) > 50:
            lines.append(f"  ... and {len(confirmed) - 50} more (see the results file)")
    infra = [c for c in results.cells if c.state == "infrastructure_failure"]
    if infra:
        lines.append("")
        lines.append(f"infrastructure failures ({len(infra)}):")
        for cell in infra[:50]:
            lines.append(f"  {cell.cell.key}: {cell.infrastructure}: {cell.detail}")
    limited = [c for c in results.cells if c.state == "limit_reached"]
    if limited:
        lines.append("")
        lines.append(f"limits reached ({len(limited)}):")
        for cell in limited[:50]:
            lines.append(f"  {cell.cell.key}: {cell.detail}")
    unisolated = [c for c in results.cells if c.sandbox is not None and c.sandbox.backend == "none"]
    if unisolated:
        lines.append("")
        lines.append(f"warning: {len(unisolated)} cell(s) ran unisolated (--sandbox none): they could read the "
                     "references and reach the network")
    differing = [c for c in results.cells if c.usage is not None and c.usage.differences]
    if differing:
        lines.append("")
        lines.append(f"stated usage differs from the metered usage by more than 1 % ({len(differing)}):")
        for cell in differing[:50]:
            assert cell.usage is not None  # filtered above
            said = ", ".join(f"{d.field} stated {d.stated:g}, metered {d.metered:g}" for d in cell.usage.differences)
            lines.append(f"  {cell.cell.key}: {said}")
    totals = results.totals
    counts = ", ".join(f"{state} {n}" for state, n in totals.states.items())
    lines.append("")
    lines.append(f"{totals.states['success']}/{totals.attempts} cells succeeded "
                 f"({_rate(totals.states['success'], totals.attempts)}): {counts}")
    return "\n".join(lines) + "\n"


def _reproducers(given: tuple[str, ...]) -> dict[str, str]:
    import re

    parsed: dict[str, str] = {}
    for item in given:
        name, sep, command = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name) or not command.strip():
            raise click.BadParameter(f"{item!r} is not NAME=COMMAND (NAME: letters, digits, '.', '_', '-')",
                                     param_hint="'--reproducer'")
        if name in parsed:
            raise click.BadParameter(f"reproducer {name!r} is given twice", param_hint="'--reproducer'")
        parsed[name] = command
    return parsed


def _write_results(results: BenchResults, path: Path) -> None:
    from ..io.atomic import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (results.model_dump_json(indent=2, exclude_none=True) + "\n").encode())


@dataclass(frozen=True)
class _Execution:
    """Where a benchmark's cells run, from the options :func:`_execution_options` adds."""

    jobs: int | None
    memory_limit: int | None
    cache: str | None
    #: None: the local executor.
    slurm: SlurmOptions | None


#: The options of :func:`_execution_options`, by parameter name, in the order of --help.
_EXECUTION_PARAMS = ("jobs", "memory_limit", "executor", "partition", "account", "qos", "time_min", "cpus", "mem_gb",
                     "gpus", "gpu_type", "max_retries", "scratch", "cache")


def _execution_options(unit: str, memory_help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options ``rra bench reproduce`` and ``rra bench run`` share (executor, Slurm settings,
    concurrency, the OCI cache), handed to the command as one ``execution`` (:class:`_Execution`);
    ``unit`` names a cell in the help ('attempt' or 'cell')."""
    options = [
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help=f"{unit.capitalize()}s run at once (default: the number of CPU cores); GPU {unit}s also "
                     "wait for free devices. On Slurm: jobs of one array running at once (default: no limit)."),
        click.option("--memory-limit", "memory_limit", type=click.IntRange(min=16), default=None, metavar="MIB",
                     help=memory_help),
        click.option("--executor", type=click.Choice(["local", "slurm"]), default="local", show_default=True,
                     help=f"Run the {unit}s here (worker pool with GPU slots) or as Slurm job arrays (submitit; extra "
                     "'slurm'). Both keep results in OUTPUT/state: a benchmark resumes on either."),
        click.option("--partition", help="Slurm partition of the jobs (overrides the task set's; default: the "
                     "cluster's default)."),
        click.option("--account", help="Slurm account the jobs are charged to (overrides the task set's)."),
        click.option("--qos", help="Slurm quality of service of the jobs (overrides the task set's)."),
        click.option("--time", "time_min", type=click.IntRange(min=1), metavar="MIN",
                     help="Slurm time limit of each job, minutes (overrides the task set's; default: the "
                     + ("attempt's launchers' timeouts" if unit == "attempt" else "task set's wall-clock limit")
                     + " x 1.25 + 5)."),
        click.option("--cpus", type=click.IntRange(min=1),
                     help="CPUs per Slurm job (overrides the task set's; default: the most the task's launchers "
                     "ask for, else 1)."),
        click.option("--mem", "mem_gb", type=click.FloatRange(min=0, min_open=True), metavar="GB",
                     help="Memory per Slurm job, GB (overrides the task set's; default: the most ram_gib the task's "
                     "launchers ask for, else the partition's)."),
        click.option("--gpus", type=click.IntRange(min=0),
                     help="GPUs per Slurm job (overrides the task set's; default: the task's launchers')."),
        click.option("--gpu-type", "gpu_type", metavar="TYPE",
                     help="GRES type of the Slurm jobs' GPUs: --gres=gpu:TYPE:N (overrides the task set's)."),
        click.option("--max-retries", "max_retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help=f"Times a{'n' if unit[0] in 'aeiou' else ''} {unit} whose Slurm job died (cancelled, time "
                     "limit, OOM, node failure) is resubmitted."),
        click.option("--scratch", metavar="DIR",
                     help=f"Node-local directory for the {unit}s of Slurm jobs "
                     "(default: $SLURM_TMPDIR, $TMPDIR or /tmp)."),
        click.option("--cache", "cache", type=click.Path(file_okay=False),
                     help="Where artifacts named by an OCI reference are pulled, verified and kept, once per digest "
                     "(default: OUTPUT/artifacts)."),
    ]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> None:
            picked = {name: kwargs.pop(name) for name in _EXECUTION_PARAMS}
            command(execution=_execution(**picked), **kwargs)

        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _execution(jobs: int | None, memory_limit: int | None, executor: str, max_retries: int, cache: str | None,
               scratch: str | None, **resources: Any) -> _Execution:
    """The options checked together: Slurm's only with --executor slurm, --memory-limit only without."""
    if executor != "slurm":
        given = [f"--{name}" for name, value in (*_slurm_flags(resources), ("scratch", scratch)) if value is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)}: only for --executor slurm")
        return _Execution(jobs, memory_limit, cache, None)
    if memory_limit is not None:
        raise click.UsageError("--memory-limit: only for --executor local (on Slurm, --mem or the task set's mem_gb)")
    from ..bench.executors.slurm import SlurmOptions

    return _Execution(None, None, cache, SlurmOptions(**resources, max_retries=max_retries, scratch=scratch,
                                                      array_parallelism=jobs))


def _slurm_flags(resources: dict[str, Any]) -> list[tuple[str, Any]]:
    flags = {"time_min": "time", "mem_gb": "mem", "gpu_type": "gpu-type"}
    return [(flags.get(name, name), value) for name, value in resources.items()]


def _on_event(resumed: set[str]) -> Callable[[CellEvent], None]:
    """Progress of either executor on stderr; the keys of cells finished earlier go into ``resumed``."""

    def on_event(event: CellEvent) -> None:
        if event.kind == "resumed":
            resumed.add(event.key)
        elif event.kind == "started":
            gpus = f" on GPU {','.join(map(str, event.devices))}" if event.devices else ""
            again = f" (again: it was killed mid-run {event.restarted} time(s))" if event.restarted else ""
            click.echo(f"[{event.done}/{event.total}] {event.key}: started{gpus}{again}", err=True)
        elif event.kind == "submitted" and event.data is not None:
            again = f" (again: its job died {event.restarted} time(s))" if event.restarted else ""
            click.echo(f"{event.key}: submitted as Slurm job {event.data['slurm_job']}{again}", err=True)
        elif event.kind == "requeued" and event.data is not None:
            click.echo(f"{event.key}: {event.data['detail']}: infrastructure failure "
                       f"({event.data['kind']}), submitting it again", err=True)
        elif event.kind == "interrupted":
            click.echo(f"[{event.done}/{event.total}] {event.key}: interrupted (it runs again on resume)", err=True)

    return on_event


def _cell_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of a cell's sandbox and metering proxy (docs/bench.md#isolation)."""
    options = [
        click.option("--sandbox", type=click.Choice(["auto", "podman", "bwrap", "none"]), default="auto",
                     show_default=True,
                     help="Where each cell runs: a sandbox with no network but the metering proxy (auto: Podman when "
                     "usable, else bubblewrap), or 'none': on this machine, unisolated (recorded and flagged)."),
        click.option("--upstream", "upstreams", multiple=True, metavar="PROVIDER=URL",
                     help="Where the metering proxy sends a provider's calls (anthropic, openai, gemini; repeatable; "
                     "default: the providers' public endpoints), with the key from ANTHROPIC_API_KEY, OPENAI_API_KEY "
                     "or GEMINI_API_KEY."),
        click.option("--price-table", "price_table", type=click.Path(exists=True, dir_okay=False),
                     help="A price table (JSON) replacing the built-in dated one the proxy prices calls with."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _telling_sandbox(each: Callable[[CellEvent], None], backend: str, asked: str,
                     what: str) -> Callable[[CellEvent], None]:
    """``each``, after saying once where the cells run, when the first one starts (an error before
    that stays the only output)."""
    told: list[bool] = []

    def on_event(event: CellEvent) -> None:
        if not told and event.kind in ("started", "submitted"):
            told.append(True)
            if backend == "none":
                click.echo(f"warning: --sandbox none: the {what} run on this machine unisolated (they can read the "
                           "references, other cells and your home, and reach the network); every cell is flagged",
                           err=True)
            else:
                click.echo(f"sandbox: {backend} (--sandbox {asked}); model calls leave only through the metering "
                           "proxy", err=True)
        each(event)

    return on_event


@click.group("bench")
def bench() -> None:
    """Benchmark whether papers reproduce: task sets scored against reference intervals."""


def _check_first(taskset: str, references: str | None) -> None:
    """The task set checked as 'rra bench check' checks it; its errors (all of them, located) are
    printed and stop the command before anything starts (BenchError: exit status 2). Warnings
    and information are left to 'rra bench check'."""
    from ..bench.errors import BenchError
    from ..validate.diagnostics import Severity
    from ..validate.reporters import render
    from ..validate.result import ValidationReport
    from ..validate.taskset import check_taskset

    result = check_taskset(taskset, references)
    result.diagnostics = [d for d in result.diagnostics if d.severity == Severity.ERROR]
    if result.diagnostics:
        click.echo(render(ValidationReport([result]), "text"), err=True, nl=False)
        raise BenchError(f"task set {taskset!r} has {len(result.diagnostics)} error(s); 'rra bench check' lists them")


@bench.command("check")
@click.argument("taskset", type=click.Path(dir_okay=False))
@click.option("--references", type=click.Path(dir_okay=False),
              help="The private references file, checked with the task set.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format, as 'rra validate' writes it.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--fail-on", "fail_on", type=click.Choice(["error", "warning", "info"]), default="error",
              show_default=True, help="Lowest severity that makes the exit status 1.")
def check_command(taskset: str, references: str | None, fmt: str, output: str | None, fail_on: str) -> None:
    """Check a task set without running anything: its schema, its ids, each task against its
    artifact (the artifact loads, the claim exists, at least 3 reference observations, 5 as the
    norm, each with provenance), its limits, and the private references file (RRA950-RRA999,
    'rra rules'). Artifacts named by an OCI reference are not pulled.

    Exit status: 0 clean (nothing at or above --fail-on), 1 findings, 2 the task set cannot be
    read. 'rra bench run', 'reproduce' and 'score' make this check before they start.
    """
    import sys
    from pathlib import Path

    from ..errors import ExitStatus
    from ..validate.diagnostics import Severity
    from ..validate.reporters import render
    from ..validate.result import ValidationReport
    from ..validate.taskset import check_taskset

    report = ValidationReport([check_taskset(taskset, references)])
    text = render(report, fmt)
    if output is not None:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    if report.any_unreadable:
        sys.exit(ExitStatus.USAGE)
    sys.exit(ExitStatus.FINDINGS if report.fails(Severity.parse(fail_on)) else ExitStatus.OK)



@bench.command("reproduce")
@click.argument("taskset", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False),
              help="Directory for the workspaces and results.json (default: bench-<task set id>).")
@_execution_options("attempt", "Address-space limit of each launcher of a CPU-only attempt, MiB (RLIMIT_AS); "
                   "also the memory of its sandbox.")
@_cell_options
def reproduce_command(taskset: str, output: str | None, execution: _Execution, sandbox: str,
                      upstreams: tuple[str, ...], price_table: str | None) -> None:
    """Run each task's launcher in fresh copies of its artifact and score every attempt.

    Writes OUTPUT/results.json (schemas/rra-bench-results-1.0.schema.json) and prints a table.
    Every attempt is counted: success, outside_interval, missing_value, program_failure or
    infrastructure_failure. Each attempt runs in a sandbox (--sandbox): its copy of the artifact,
    no network, the leased GPUs only. Finished attempts are kept in OUTPUT/state/: run the same command
    again after an interruption and only the attempts without a result run (an attempt that was
    killed mid-run runs again and is marked restarted).
    """
    from pathlib import Path

    from ..bench import load_taskset, reproduce
    from ..bench.cells import cell_options
    from ..io.atomic import write_atomic

    _check_first(taskset, None)
    loaded = load_taskset(taskset, artifacts=_artifacts(execution.cache, output))
    out = Path(output if output is not None else f"bench-{loaded.model.id}")

    options = cell_options(loaded, sandbox, upstreams, None if price_table is None else Path(price_table))
    resumed: set[str] = set()
    on_event = _telling_sandbox(_on_event(resumed), options.backend.name, sandbox, "launchers")

    def progress(task: ResolvedTask, attempt: Attempt) -> None:
        seed = "" if attempt.seed is None else f" seed {attempt.seed}"
        key = f"{task.key}/attempt-{attempt.number}"
        done = " (finished earlier)" if key in resumed else ""
        click.echo(f"{task.key} attempt {attempt.number}{seed}: {attempt.state}{done}", err=True)

    results = reproduce(loaded, out, progress, jobs=execution.jobs, memory_limit_mib=execution.memory_limit,
                        on_event=on_event, slurm=execution.slurm, options=options)
    path = out / "results.json"
    write_atomic(path, (results.model_dump_json(indent=2, exclude_none=True) + "\n").encode())
    click.echo(render_table(results), nl=False)
    click.echo(f"results: {path}")


@bench.command("report")
@click.argument("results", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False),
              help="Directory for report.json, report.html and report.md (default: 'report' beside RESULTS).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--resamples", type=click.IntRange(min=100, max=100000), default=2000, show_default=True,
              help="Bootstrap resamples of papers.")
@click.option("--review-time", "review_time", type=click.Path(exists=True, dir_okay=False),
              help="Hours people spent reviewing artifacts and reproductions (schemas/rra-review-time-1.0.schema.json).")
@click.option("--gpu-hour-usd", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Price of a GPU-hour in the full cost.")
@click.option("--cpu-hour-usd", type=click.FloatRange(min=0), default=0.05, show_default=True,
              help="Price of a CPU-hour (the auditor's time) in the full cost.")
@click.option("--human-hour-usd", type=click.FloatRange(min=0), default=50.0, show_default=True,
              help="Price of an hour of human review in the full cost.")
@click.option("--agent-hour-usd", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Price of a wall-clock hour of a builder agent or a reproducer, on top of the cost it states.")
def report_command(results: str, output: str | None, seed: int, resamples: int, review_time: str | None,
                   gpu_hour_usd: float, cpu_hour_usd: float, human_hour_usd: float, agent_hour_usd: float) -> None:
    """Write the report of a benchmark's RESULTS (results.json of rra bench reproduce, run or score).

    report.json (schemas/rra-bench-report-1.0.schema.json), a self-contained report.html with
    plots drawn by matplotlib as inline SVG, and a Markdown summary report.md: success rates by
    reproducer x condition, stable vs variable tasks and per paper, with bootstrap confidence
    intervals that resample papers (Wilson intervals where those have no spread); an
    accuracy-cost Pareto plot per reproducer and condition; paired per-task differences between
    conditions and the best-worst reproducer spread; cost and time per condition; infrastructure
    failures; audit findings counted by kind, confirmed ones with their evidence; the full cost (construction from the artifacts' build records,
    the reproducers' usage, GPU-hours, the auditor's time, human review time) and the break-even
    number of reuses of the refined artifacts, with the prices assumed. Needs the extra 'report'
    (numpy and matplotlib).
    """
    from pathlib import Path

    from ..bench.report.build import write_report
    from ..model.bench_cost import CostPrices

    path = Path(results)
    out = Path(output) if output is not None else path.parent / "report"
    prices = CostPrices(gpu_hour_usd=gpu_hour_usd, cpu_hour_usd=cpu_hour_usd, human_hour_usd=human_hour_usd,
                        agent_hour_usd=agent_hour_usd)
    report, written = write_report(path, out, seed=seed, resamples=resamples, prices=prices,
                                   review_time=Path(review_time) if review_time is not None else None)
    o = report.overall.rate
    rate = "n/a" if o.rate is None else f"{100 * o.rate:.1f} %"
    click.echo(f"{o.successes}/{o.cells} cells succeeded ({rate}); {len(report.infrastructure)} infrastructure "
               f"failure(s); {sum(f.confirmed for f in report.findings)} confirmed audit violation(s)")
    if report.full_cost is not None:
        overall = report.full_cost.break_even[0]
        click.echo(f"break-even (all artifacts): {overall.verdict}")
    for file in written:
        click.echo(f"wrote {file}")


@bench.command("run")
@click.argument("taskset", type=click.Path(exists=True, dir_okay=False))
@click.option("--reproducer", "reproducers", multiple=True, metavar="NAME=CMD",
              help="A reproducer: a shell command run in each workspace, or NAME=agent:AGENT:MODEL, a coding agent "
              "run through its adapter with the hand-over as its prompt ('rra bench agents'); repeatable; adds to or "
              "replaces the task set's reproducers of that name.")
@click.option("--references", type=click.Path(exists=True, dir_okay=False),
              help="The private references file (read by the evaluator only).")
@click.option("--condition", "conditions", multiple=True, metavar="CONDITION",
              help="Run only these conditions (repeatable; default: the task set's): raw, refined, or an ablation "
              "refined-without-PART[-PART...] (parts: repairs, lock, launchers, guide).")
@click.option("-o", "--output", "output", type=click.Path(file_okay=False),
              help="Benchmark directory: cells/<key>/ (workspace, logs, result), state/ and results.json "
              "(default: bench-<task set id>).")
@_execution_options("cell", "Memory of each cell's sandbox, MiB, when the task set's limits give none (default "
                   "16384; with --sandbox none: the address space, ulimit -v).")
@_cell_options
def run_command(taskset: str, reproducers: tuple[str, ...], references: str | None, conditions: tuple[str, ...],
                output: str | None, execution: _Execution, sandbox: str, upstreams: tuple[str, ...],
                price_table: str | None) -> None:
    """Hand each task to each reproducer, under each condition, 'repeats' times.

    Each cell (task x condition x reproducer x repeat) gets a fresh workspace holding the raw code
    (the upstream commit) or the refined artifact, the paper and the task description, never a
    reference value. The reproducer runs there within the task set's limits and writes
    submission.json (schemas/rra-submission-1.0.schema.json); each value is audited and scored:
    success, outside_interval, missing_value, parse_failure, audit_violation or
    infrastructure_failure. Writes OUTPUT/results.json and prints a summary. Finished cells are
    kept in OUTPUT/state/: run the same command again after an interruption and only the cells
    without a result run.
    """
    from pathlib import Path

    from ..bench import collect_results, load_taskset, plan_run, run_benchmark
    from ..bench.cells import cell_options
    from ..bench.taskset import with_conditions

    parsed = _reproducers(reproducers)
    _check_first(taskset, references)
    loaded = load_taskset(taskset, references, artifacts=_artifacts(execution.cache, output))
    if conditions:
        loaded = with_conditions(loaded, conditions)
    out = Path(output if output is not None else f"bench-{loaded.model.id}")
    options = cell_options(loaded, sandbox, upstreams, None if price_table is None else Path(price_table))
    plan = plan_run(loaded, out, parsed, options)
    resumed: set[str] = set()
    on_event = _telling_sandbox(_on_event(resumed), options.backend.name, sandbox, "reproducers")

    def progress(result: CellResult) -> None:
        value = "" if result.value is None else f" {result.value:.6g}"
        done = " (finished earlier)" if result.cell.key in resumed else ""
        click.echo(f"{result.cell.key}: {result.state}{value}{done}", err=True)

    cells = run_benchmark(plan, jobs=execution.jobs, memory_limit_mib=execution.memory_limit, on_event=on_event,
                          on_cell=progress, slurm=execution.slurm)
    results = collect_results(loaded, cells, "run")
    path = plan.out / "results.json"
    _write_results(results, path)
    click.echo(render_cells(results), nl=False)
    click.echo(f"results: {path}")


@bench.command("score")
@click.argument("taskset", type=click.Path(exists=True, dir_okay=False))
@click.argument("submissions", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--references", type=click.Path(exists=True, dir_okay=False),
              help="The private references file (read by the evaluator only).")
@click.option("--condition", default="refined", show_default=True, metavar="CONDITION",
              help="Condition of submissions that do not say theirs: raw, refined or refined-without-PART[-PART...].")
@click.option("--packets", type=click.Path(exists=True, file_okay=False),
              help="Score the packets 'rra bench packet' wrote into this directory instead: each person's "
              "submission.json in each packet, against its task, under the condition assigned.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              help="Write the results here (default: bench-<task set id>-scores.json).")
@click.option("--cache", "cache", type=click.Path(file_okay=False),
              help="Where artifacts named by an OCI reference are pulled, verified and kept, once per digest "
              "(default: bench-<task set id>/artifacts).")
def score_command(taskset: str, submissions: tuple[str, ...], references: str | None, condition: str,
                  output: str | None, cache: str | None, packets: str | None) -> None:
    """Score and audit submissions made elsewhere, each against every task of TASKSET.

    Each value is traced to evidence in the directory that holds its submission (the workspace);
    a task without a value is missing_value, an unreadable submission or entry a parse_failure.
    With --packets DIR, the submissions are those people wrote into the packets of rra bench
    packet, one task each (a packet without one is missing_value).
    """
    from pathlib import Path

    from ..bench import collect_results, load_taskset, score_submissions

    if packets is not None and submissions:
        raise click.UsageError("give SUBMISSIONS or --packets, not both")
    if packets is None and not submissions:
        raise click.UsageError("no SUBMISSION given (or --packets DIR)")

    from ..bench.taskset import with_conditions

    _check_first(taskset, references)
    loaded = load_taskset(taskset, references, artifacts=_artifacts(cache, None))
    condition = with_conditions(loaded, [condition]).conditions[0]

    def progress(path: Path, results: list[CellResult]) -> None:
        ok = sum(1 for r in results if r.state == "success")
        click.echo(f"{path}: {ok}/{len(results)} succeeded", err=True)

    if packets is not None:
        from ..bench.packet import score_packets

        cells = score_packets(loaded, Path(packets))
    else:
        cells = score_submissions(loaded, [Path(s) for s in submissions], condition, progress)
    results = collect_results(loaded, cells, "score")
    path = Path(output if output is not None else f"bench-{loaded.model.id}-scores.json")
    _write_results(results, path)
    click.echo(render_cells(results), nl=False)
    click.echo(f"results: {path}")


# The human side of the benchmark (audit-eval, packets) lives in its own module.
from .bench_study_cmd import audit_eval_command, packet_command  # noqa: E402

bench.add_command(audit_eval_command)
bench.add_command(packet_command)

# The coding agents (adapters, their installs) and the hand-over they receive.
from .bench_agents_cmd import agents_group, prompt_command  # noqa: E402

bench.add_command(agents_group)
bench.add_command(prompt_command)

# Inspect AI interop: an eval log's RRA verdicts as a results file.
from .bench_inspect_cmd import import_inspect_command  # noqa: E402

bench.add_command(import_inspect_command)

# Other benchmarks' task files as task sets (CORE-Bench).
from .bench_import_cmd import import_group  # noqa: E402

bench.add_command(import_group)
