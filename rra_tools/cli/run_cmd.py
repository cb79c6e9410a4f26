"""``rra run`` and ``rra results``: parse, call :mod:`rra_tools.run`, render, pick the exit code.

Only click is imported at module level so that ``rra --help`` stays fast. What a run does and
says is in :mod:`.run_exec`, without click.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..errors import ExitStatus
from .run_exec import unfinished_lines, execute_runs

if TYPE_CHECKING:
    from ..run.results import ClaimResult, Results

__all__ = ["render_results", "results_command", "run_command"]


def _split_args(args: tuple[str, ...], run_all: bool) -> tuple[str, str | None]:
    if run_all:
        if len(args) > 1:
            raise click.UsageError("with --all, give at most the ARTIFACT directory")
        return (args[0] if args else "."), None
    if len(args) == 1:
        return _one_argument(args[0])
    if len(args) == 2:
        return args[0], args[1]
    raise click.UsageError("give a LAUNCHER (optionally after the ARTIFACT directory), or --all")


def _launcher_ids(artifact: str) -> list[str] | None:
    """The launcher ids of the artifact ``artifact``, or None when it cannot be loaded."""
    from ..errors import RRAError
    from ..run import load_artifact

    try:
        return [launcher.id for launcher in load_artifact(artifact).manifest.launchers]
    except RRAError:
        return None


def _one_argument(arg: str) -> tuple[str, str | None]:
    """``rra run ARG``: a launcher of the current directory's artifact, or the ARTIFACT itself.

    ARG is a launcher when the current directory's manifest declares it. Otherwise, when it names
    an existing directory or file (``.`` included), it is the artifact: its only launcher runs,
    and an artifact with several launchers is a usage error that names them."""
    import shlex
    from pathlib import Path

    from ..io.paths import MANIFEST_NAMES

    here = any((Path(".") / name).is_file() for name in MANIFEST_NAMES)
    if (here and arg in (_launcher_ids(".") or [])) or not Path(arg).exists():
        return ".", arg
    ids = _launcher_ids(arg)
    if ids is None:
        from ..run import load_artifact

        load_artifact(arg)  # raises the reason it cannot be loaded (the CLI reports it, exit status 2)
    if ids is not None and len(ids) == 1:
        return arg, ids[0]
    shown = shlex.quote(arg)
    example = f"rra run {shown} {shlex.quote(ids[0]) if ids else 'LAUNCHER'}"
    known = f" (its launchers: {', '.join(ids)})" if ids else ""
    raise click.UsageError(f"{arg!r} is the artifact; give the launcher to run after it: {example}{known}, "
                           f"or run them all: rra run {shown} --all")


@click.command("run")
@click.argument("args", nargs=-1, metavar="[ARTIFACT] [LAUNCHER]")
@click.option("--seed", type=int, default=None, help="Run this seed.  [default: the launcher's first seed]")
@click.option("--all-seeds", is_flag=True,
              help="Run every seed the launcher declares (a seedless launcher: each of its repeats).")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Override a parameter (checked against its type and choices); repeatable.")
@click.option("--all", "run_all", is_flag=True, help="Run every launcher, dependencies first, with all its seeds.")
@click.option("-q", "--quiet", is_flag=True, help="Do not stream the launcher's output (it is still logged).")
@click.option("--executor", type=click.Choice(["local", "container"]), default="local", show_default=True,
              help="Run as a local process, or in the artifact's container image through a Docker "
                   "Engine API (Docker, or Podman's compatible service).")
@click.option("--image", metavar="REF", default=None,
              help="Container image to run instead of the manifest's environment.image (container executor).")
@click.option("--engine-url", metavar="URL", default=None,
              help="Address of the container engine, e.g. unix:///run/podman/podman.sock.  "
                   "[default: $RRA_CONTAINER_HOST, else $DOCKER_HOST, else unix:///var/run/docker.sock]")
@click.option("--network", metavar="MODE", default=None,
              help="Give the container this network ('bridge', 'host', a network name).  [default: none]")
@click.option("--env", "env", type=click.Choice(["current", "locked"]), default="current", show_default=True,
              help="Python packages of a local run: this interpreter's environment, or the one "
                   "'rra env create' builds from the manifest's lock (cached by the lock's digest).")
@click.option("--force", is_flag=True,
              help="Run even when the manifest has errors (they are printed as warnings).")
def run_command(args: tuple[str, ...], seed: int | None, all_seeds: bool, params: tuple[str, ...],
                run_all: bool, quiet: bool, executor: str, image: str | None, engine_url: str | None,
                network: str | None, env: str, force: bool) -> None:
    """Run a launcher from a clean shell and write a run record per run.

    One argument is a launcher of the current directory's artifact, or else an artifact
    directory ('rra run .'), whose only launcher runs. Each run gets a new directory
    runs/<launcher>/<seed>-<UTC time>/ holding record.json,
    stdout.log and stderr.log. With --executor container each run is a fresh container of the
    artifact's image: the artifact mounted read-only, the declared outputs' directories
    writable, no network. A manifest with errors (those 'rra validate' finds in the manifest
    itself, levels aside) is not run unless --force. Exit status: 0 when every run completed
    with exit status 0, 1 otherwise, 2 for a usage error, an unusable manifest or one with
    errors, or (container executor) an
    unreachable engine, a missing image or GPUs the engine cannot provide.
    """
    if seed is not None and all_seeds:
        raise click.UsageError("give --seed or --all-seeds, not both")
    if executor != "container" and (image or engine_url or network):
        raise click.UsageError("--image, --engine-url and --network need --executor container")
    if executor == "container" and env == "locked":
        raise click.UsageError("--env locked is for local runs; a container run uses its image's packages")
    artifact, launcher = _split_args(args, run_all)
    sys.exit(execute_runs(artifact, launcher, seed, all_seeds, params, quiet, executor, image, engine_url,
                          network, env, force))


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _answer_lines(c: ClaimResult) -> list[str]:
    """A string, set or list claim: its reported answer, the answer its records give, the match."""
    from ..answers import answer_text

    verdict = {True: "matches", False: "DOES NOT MATCH", None: "no verdict"}[c.inside]
    lines = [f"claim {c.claim} (launcher {c.launcher}, kind {c.kind})",
             f"  reported  {'-' if c.expected is None else answer_text(c.expected)}",
             f"  obtained  {'-' if c.answer is None else answer_text(c.answer)}",
             f"  verdict   {verdict}" + (f" ({c.problem})" if c.problem else "")]
    for seed, status, record, older in c.not_counted:
        counted = "an older successful run is counted instead" if older else "not counted"
        lines.append(f"  NOT OK    {'noseed' if seed is None else f'seed {seed}'}: its latest run is {status} "
                     f"({record}); {counted}")
    return lines


def render_results(results: Results, fmt: str) -> str:
    """The results as text or JSON."""
    if fmt == "json":
        import json

        return json.dumps(results.as_dict(), indent=2) + "\n"
    lines = []
    for c in results.claims:
        if c.kind != "number":
            lines.extend(_answer_lines(c))
            continue
        unit = f" {c.unit}" if c.unit else ""
        lines.append(f"claim {c.claim} (launcher {c.launcher}, {c.aggregate} over {len(c.values)} run(s))")
        lines.append(f"  reported  {c.reported:.{c.precision}f}{unit}")
        if c.interval is not None:
            kind = "stable" if c.interval.stable else "variable"
            lines.append(f"  interval  [{_num(c.interval.low)}, {_num(c.interval.high)}] ({kind}, "
                         f"n={c.interval.n})")
        else:
            lines.append("  interval  -")
        values = ", ".join(f"{s if s is not None else f'repeat {n}' if n is not None else 'noseed'}: {_num(v)}"
                           for s, n, v, _ in c.values) or "none"
        lines.append(f"  values    {values}")
        lines.append(f"  obtained  {_num(c.obtained)}{unit}")
        verdict = {True: "inside", False: "OUTSIDE", None: "no verdict"}[c.inside]
        lines.append(f"  verdict   {verdict}" + (f" ({c.problem})" if c.problem else ""))
        for seed, status, record, older in c.not_counted:
            counted = "an older successful run is counted instead" if older else "not counted"
            lines.append(f"  NOT OK    {'noseed' if seed is None else f'seed {seed}'}: its latest run is {status} "
                         f"({record}); {counted}")
    if not results.claims:
        lines.append("no claims")
    lines.append(f"run records: {results.records}" + (f" ({results.unsuccessful} did not succeed)"
                                                      if results.unsuccessful else ""))
    lines.extend(unfinished_lines(results.unfinished))
    lines.append(f"levels claimed: {', '.join(results.levels_claimed) or 'none'}; "
                 f"met: {', '.join(results.levels_met) or 'none'}")
    return "\n".join(lines) + "\n"


@click.command("results")
@click.argument("artifact", default=".", type=click.Path(exists=True))
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def results_command(artifact: str, fmt: str) -> None:
    """Per claim: reported value, acceptance interval, obtained values, inside or outside; and
    the levels the artifact meets.

    Obtained values come from the newest successful run record of each (launcher, seed), or of
    each (launcher, repeat) for a seedless launcher; a seed
    whose newest run did not succeed is listed as NOT OK. A run directory that a killed rra run
    left without a record is finished as interrupted. Exit status: 0 when every claim is inside
    its interval, 1 otherwise, 2 for an unusable manifest.
    """
    from ..run import load_artifact
    from ..run.results import collect_results

    results = collect_results(load_artifact(artifact))
    click.echo(render_results(results, fmt), nl=False)
    sys.exit(ExitStatus.OK if all(c.inside for c in results.claims) else ExitStatus.FAILED)
