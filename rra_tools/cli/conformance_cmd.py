"""``rra conformance run``: select cases, run the implementation, print the table, write JUnit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import ExitStatus

__all__ = ["run_conformance"]


def run_conformance(*, impl: str | None, tags: str | None, strict_codes: bool, junit: str | None,
                    suite: str | None, timeout: float, verbose: bool) -> int:
    """Run the suite; return the exit code."""
    from ..conformance import command_impl, in_process_impl, load_suite, run_suite, suite_path
    from ..conformance.report import render_junit, render_table
    from ..conformance.runner import Outcome

    suite_dir = Path(suite) if suite else suite_path()
    cases = load_suite(suite_dir)
    if tags:
        wanted = {t.strip() for t in tags.split(",") if t.strip()}
        cases = [c for c in cases if wanted & set(c.case.tags)]
    if not cases:
        click.echo("error: no case matches the selection", err=True)
        return ExitStatus.USAGE
    implementation = command_impl(impl, timeout) if impl else in_process_impl
    total = len(cases)
    tty = sys.stderr.isatty()
    done: list[Outcome] = []

    def progress(outcome: Outcome) -> None:
        done.append(outcome)
        if tty:
            click.echo(f"\r{len(done)}/{total} {outcome.loaded.case.id[:60]:<60}", nl=False, err=True)

    outcomes = run_suite(suite_dir, cases, implementation, strict_codes=strict_codes, progress=progress)
    if tty:
        click.echo("\r" + " " * 70 + "\r", nl=False, err=True)
    click.echo(render_table(outcomes, verbose=verbose), nl=False)
    if junit:
        Path(junit).write_text(render_junit(outcomes), encoding="utf-8")
    return ExitStatus.OK if all(o.passed for o in outcomes) else ExitStatus.FINDINGS
