"""``rra review``: parse, call :func:`rra_tools.builder.review.artifact.run_review` (the report as plain
data, so that the command never imports pydantic), render, exit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import ExitStatus

__all__ = ["review"]


@click.command()
@click.argument("artifact", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--env", "env", type=click.Choice(["locked", "current", "container"]), default="locked",
              show_default=True,
              help="Where the launchers run: a fresh environment built from the manifest's lock, this "
                   "interpreter's environment (reported as RRA912; for an artifact without a lock, which is "
                   "RRA910 either way), or the artifact's container image.")
@click.option("--image", metavar="REF", default=None, help="Container image instead of environment.image (--env container).")
@click.option("--engine-url", metavar="URL", default=None, help="Container engine address (--env container).")
@click.option("--network", metavar="MODE", default=None, help="Container network (--env container).  [default: none]")
@click.option("--no-run", is_flag=True, help="Check without running the launchers (the review then cannot pass).")
@click.option("-o", "--output", "directory", type=click.Path(file_okay=False), default=None,
              help="The review's directory (runs and report); it must not exist.  "
                   "[default: ARTIFACT/.rra/review/<UTC time>]")
@click.option("--keep-work", is_flag=True,
              help="Keep the whole copy the launchers ran in, not only the run records, logs and outputs.")
@click.option("-v", "--verbose", is_flag=True, help="Stream the launchers' output to the terminal (it is logged anyway).")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="What to print on standard output: the findings and the verdict, or the JSON report.")
def review(artifact: str, env: str, image: str | None, engine_url: str | None, network: str | None, no_run: bool,
           directory: str | None, keep_work: bool, verbose: bool, fmt: str) -> None:
    """Review an artifact independently: re-run every launcher from a clean shell in a fresh copy
    and an environment built from the lock, compare the runs with the recorded ones and with the
    claims' acceptance intervals, trace every claim to a run record, an output file and a
    re-extracted value, and challenge the choices without support (changes without evidence,
    alters_method: unknown, undecided discrepancies, seeds, hardware, placeholders, the patch
    series, the guide).

    Writes review.json and review.md into the review's directory and into ARTIFACT/.rra/review/.
    Progress goes to standard error, one line per run. Exit status: 0 when the review passes (no
    error finding, every run succeeded), 1 when it does not, 2 for an unusable artifact or a
    usage error, 130 when Ctrl-C stopped it (its directory is removed; no report is written).
    """
    if env != "container" and (image or engine_url or network):
        raise click.UsageError("--image, --engine-url and --network need --env container")
    from ..builder.review.artifact import ReviewOptions, run_review
    from ..builder.review.text import finding_line

    def progress(text: str) -> None:
        click.echo(f"[review] {text}", err=True)

    def output(stream: str, chunk: bytes) -> None:
        target = sys.stdout if stream == "stdout" and fmt == "text" else sys.stderr
        target.buffer.write(chunk)
        target.flush()

    options = ReviewOptions(env=env, image=image, engine_url=engine_url, network=network, run=not no_run,
                            directory=Path(directory) if directory else None, keep_work=keep_work, on_output=output if verbose else None)
    # The plain report, not the pydantic model: importing pydantic would cost a third of a second.
    report = run_review(Path(artifact), options=options, progress=progress)
    if fmt == "json":
        import json

        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for finding in report["findings"]:
            click.echo(finding_line(finding))
        c, levels = report["counts"], report["levels"]
        click.echo(f"clean shell: {report['clean_shell']}; levels met with the review's runs: "
                   f"{', '.join(levels['reviewed']) or 'none'} (claimed: {', '.join(levels['claimed']) or 'none'})")
        click.echo(f"{'review passed' if report['passed'] else 'review FAILED'}: {c['error']} error(s), "
                   f"{c['warning']} warning(s), {c['info']} info; report: {report['directory']}/review.md")
    sys.exit(ExitStatus.OK if report["passed"] else ExitStatus.FINDINGS)
