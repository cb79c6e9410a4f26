"""``rra conformance run`` and ``list``: select cases, run the implementation, print the table,
write JUnit; or list what a selection holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import ExitStatus

if TYPE_CHECKING:
    from ..conformance import LoadedCase

__all__ = ["list_conformance", "run_conformance"]


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _selected(ids: str | None, tags: str | None, exclude_tags: str | None,
              suite: str | None) -> tuple[Path, list[LoadedCase]]:
    """The suite directory and the selected cases; CaseError (exit 2) when the suite is broken
    or the selection is empty."""
    from ..conformance import load_suite, select_cases, suite_path
    from ..conformance.cases import CaseError

    suite_dir = Path(suite) if suite else suite_path()
    cases = select_cases(load_suite(suite_dir), ids=_split(ids), tags=set(_split(tags)),
                         exclude_tags=set(_split(exclude_tags)))
    if not cases:
        raise CaseError("no case matches the selection")
    return suite_dir, cases


def list_conformance(*, ids: str | None, tags: str | None, exclude_tags: str | None, suite: str | None,
                     fmt: str) -> int:
    """Print the selected cases; return the exit code."""
    _, cases = _selected(ids, tags, exclude_tags, suite)
    if fmt == "json":
        rows = [{"id": c.case.id, "file": c.file, "verdict": str(c.case.expect.verdict),
                 "codes": c.case.expect.codes, "tags": c.case.tags, "description": c.case.description}
                for c in cases]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return ExitStatus.OK
    width = max(len(c.case.id) for c in cases)
    for c in cases:
        expect = str(c.case.expect.verdict) + (f" {','.join(c.case.expect.codes)}" if c.case.expect.codes else "")
        click.echo(f"{c.case.id:<{width}}  {expect:<24}  [{', '.join(c.case.tags)}]  {c.case.description}")
    click.echo(f"{len(cases)} case(s)")
    return ExitStatus.OK


def run_conformance(*, impl: str | None, ids: str | None, tags: str | None, exclude_tags: str | None,
                    strict_codes: bool, junit: str | None, suite: str | None, timeout: float, jobs: int,
                    verbose: bool) -> int:
    """Run the suite; return the exit code (failures of 'optional' cases do not count)."""
    from ..conformance import command_impl, in_process_impl, run_suite
    from ..conformance.report import blocking_failures, render_junit, render_table
    from ..conformance.runner import Outcome

    suite_dir, cases = _selected(ids, tags, exclude_tags, suite)
    try:
        implementation = command_impl(impl, timeout) if impl else in_process_impl
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--impl") from None
    total = len(cases)
    tty = sys.stderr.isatty()
    done: list[Outcome] = []

    def progress(outcome: Outcome) -> None:
        done.append(outcome)
        if tty:
            click.echo(f"\r{len(done)}/{total} {outcome.loaded.case.id[:60]:<60}", nl=False, err=True)

    outcomes = run_suite(suite_dir, cases, implementation, strict_codes=strict_codes, progress=progress, jobs=jobs)
    if tty:
        click.echo("\r" + " " * 70 + "\r", nl=False, err=True)
    click.echo(render_table(outcomes, verbose=verbose), nl=False)
    if junit:
        Path(junit).write_text(render_junit(outcomes), encoding="utf-8")
    return ExitStatus.FINDINGS if blocking_failures(outcomes) else ExitStatus.OK
