"""``rra build RAW_REPO``: parse, call :mod:`rra_tools.builder.build`, render. Only click is
imported at module level."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..builder.build import StepRecord

__all__ = ["build_command"]


@click.command("build")
@click.argument("raw_repo", type=click.Path(file_okay=False))
@click.option("-o", "--output", "artifact", metavar="ARTIFACT", type=click.Path(file_okay=False), default=None,
              help="Artifact directory: RAW_REPO is cloned into it.  [default: RAW_REPO itself, in place]")
@click.option("--agent", metavar="CMD|NAME:MODEL_ID", default=None,
              help="What answers the build's decisions: an agent adapter and its model (claude-code, codex, "
              "gemini-cli or mini-swe-agent, e.g. 'claude-code:claude-sonnet-4-5'; installed with 'rra bench agents "
              "install NAME'), each decision its task, or a command run as 'CMD REQUEST_FILE' that writes the "
              "answer file the request names.  [default: none; stop at the first decision]")
@click.option("--agent-timeout", type=click.FloatRange(min=1), default=3600.0, show_default=True, metavar="SECONDS",
              help="Longest the agent may take for one answer.")
@click.option("--sandbox", type=click.Choice(["auto", "podman", "bwrap", "none"]), default="auto", show_default=True,
              help="Where the agent runs: a sandbox whose workspace is the artifact and whose only way out is the "
              "metering proxy (auto: Podman when usable, else bubblewrap), or 'none': unisolated, as yourself.")
@click.option("--model-upstream", "model_upstreams", multiple=True, metavar="PROVIDER=URL",
              help="Where the metering proxy sends the agent's model calls (anthropic, openai, gemini; repeatable; "
              "default: the providers' public endpoints), with the key from ANTHROPIC_API_KEY, OPENAI_API_KEY or "
              "GEMINI_API_KEY.")
@click.option("--price-table", "price_table", type=click.Path(exists=True, dir_okay=False),
              help="A price table (JSON) replacing the built-in dated one the proxy prices the agent's calls with.")
@click.option("--skip-lock", metavar="REASON", default=None,
              help="Do not lock the environment, and record why (the artifact is then not 'available').")
@click.option("--reference-runs", type=click.IntRange(min=0), default=3, show_default=True, metavar="N",
              help="Runs of each claim's launcher recorded as reference observations (0: none).")
@click.option("--max-repairs", type=click.IntRange(min=0), default=3, show_default=True, metavar="N",
              help="Repairs asked per launcher (and for the lock) before the build gives up.")
@click.option("--review-env", type=click.Choice(["locked", "current", "container"]), default="locked",
              show_default=True, help="Where the review re-runs the launchers: a fresh environment built from the "
              "lock, this interpreter, or the artifact's container image.")
@click.option("--build-env", type=click.Choice(["locked", "current"]), default="locked", show_default=True,
              help="Where the build's own runs (execute, reference) run: the environment built once from the "
              "lock (this interpreter when there is no lock), or this interpreter.")
@click.option("--upstream", metavar="URL@COMMIT", default=None,
              help="Upstream repository and full 40-hex commit, instead of git's remote 'origin' and HEAD.")
@click.option("--id", "artifact_id", default=None, help="Artifact id.  [default: from RAW_REPO's directory name]")
@click.option("--title", default=None, help="Artifact title.  [default: the paper's title, else the name]")
def build_command(raw_repo: str, artifact: str | None, agent: str | None, agent_timeout: float, sandbox: str,
                  model_upstreams: tuple[str, ...], price_table: str | None, skip_lock: str | None, reference_runs: int, max_repairs: int, review_env: str, build_env: str,
                  upstream: str | None,
                  artifact_id: str | None, title: str | None) -> None:
    """Build an artifact from a raw research repository: specify (draft rra.yaml), fill its
    placeholders, confirm candidate claims, lock the environment, execute every launcher
    (repairing failures, each repair recorded as a change), preserve (prove the patch series),
    record reference observations, write the guide, and review the artifact (every launcher
    re-run from a clean shell; the build fails when the review does not pass).

    Checkpoints: .rra/build/state.json in the artifact records each finished step; running the
    same command again resumes, without redoing the steps whose inputs did not change.

    Each decision (a placeholder, a candidate claim, a failing launcher or lock, an unexplained
    change) is written as a request file (schemas/rra-agent-request-1.0.schema.json) and
    answered by --agent (schemas/rra-agent-answer-1.0.schema.json): a coding agent through its
    adapter (--agent NAME:MODEL_ID), or a command (--agent CMD). Without an agent the
    build stops at the first decision, says what to do, and exits with status 3.

    The agent runs in a sandbox (--sandbox) whose only way out is the metering proxy: the tokens
    and cost of its model calls are measured there. At the end (and when it stops) it prints every
    step's wall time, decisions, and those tokens and cost (what the agent stated, for an agent
    run with --sandbox none). Exit status: 0 built, 1 failed, 2 usage error, 3 stopped at a
    decision."""
    import shlex
    import sys
    from pathlib import Path

    from ..builder.agent import DecisionNeeded
    from ..errors import RRAError
    from ..builder.build import BuildOptions, build, read_state

    raw = Path(raw_repo)
    target = Path(artifact) if artifact is not None else raw
    options = BuildOptions(raw=raw, artifact=target, upstream=upstream, artifact_id=artifact_id, title=title,
                           agent=agent, agent_timeout_s=agent_timeout, skip_lock=skip_lock,
                           reference_runs=reference_runs, max_repairs=max_repairs, review_env=review_env, build_env=build_env,
                           sandbox=sandbox, upstreams=model_upstreams,
                           price_table=None if price_table is None else Path(price_table))

    def progress(line: str) -> None:
        click.echo(f"build: {line}", err=True)

    try:
        result = build(options, progress)
    except DecisionNeeded as stop:
        state = read_state(target.resolve())
        if state is not None:
            _table(state[1])
        again = "rra " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["build"] else "rra build " + shlex.quote(raw_repo)
        click.echo(str(stop), err=True)
        click.echo(f"request: {stop.request}", err=True)
        click.echo(f"next: {stop.todo}", err=True)
        click.echo(f"then run again: {again}", err=True)
        sys.exit(int(stop.exit_status))
    except RRAError:
        # The report of what ran until the failure, then the error as every command shows it.
        try:
            state = read_state(target.resolve())
        except RRAError:
            state = None  # an unreadable state file: the error below says what failed
        if state is not None:
            _table(state[1])
        raise
    _table(result.steps)
    click.echo(f"built {result.artifact}: next, rra validate {shlex.quote(str(target))}")


def _table(steps: list[StepRecord]) -> None:
    """The build report: one row per step, then the totals."""
    from ..builder.build_report import render_report

    click.echo(render_report(steps), nl=False)
