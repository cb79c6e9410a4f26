"""Run both layers over one parsed manifest and turn findings into located diagnostics."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..io.errors import Problem
from ..io.read.source import SourceDocument
from .catalog import RULES
from .config import Config
from .context import Context, Finding
from .diagnostics import Diagnostic, pointer_text
from .result import ValidationResult
from .schema_layer import check_schema, check_version

__all__ = ["diagnostic_from_problem", "run_layers"]


def run_layers(doc: SourceDocument, root: Path | None, config: Config, result: ValidationResult,
               deadline: float | None = None) -> None:
    """Validate ``doc`` (found at ``result.manifest``) and append every diagnostic to ``result``.

    With a ``deadline`` (a ``time.monotonic()`` value) validation stops when it passes and the
    result says so (RRA008): an unfinished check is never reported as clean.
    """
    file = result.manifest
    for problem in doc.problems:
        if config.enabled(RULES[problem.code]):
            _add(result, diagnostic_from_problem(problem, file, config))
    data = doc.data
    findings: list[Finding] = []
    proceed = True
    if isinstance(data, Mapping):
        version_findings, proceed = check_version(data)
        findings.extend(version_findings)
    if proceed:
        findings.extend(check_schema(data, doc.values, doc.text, integers_in_range=doc.integers_in_range))
    if proceed and isinstance(data, Mapping):
        ctx = Context(data=data, root=root, deadline=deadline, text=doc.text)
        findings.extend(_semantic(ctx, config))
        if ctx.expired():
            findings.append(Finding("RRA008", "validation stopped: the time budget was exhausted before every "
                                    "check ran", (), "raise the budget or validate the artifact offline"))
        from .rules.levels import levels_met

        claimed = data.get("levels")
        known = ("available", "functional", "reproduced")
        result.levels_claimed = [c for c in claimed if c in known] if isinstance(claimed, list) else []
        # Levels judged on unfinished checks would be a guess.
        result.levels_met = [] if ctx.expired() else levels_met(ctx)
    for finding in findings:
        rule = RULES[finding.code]
        if not config.enabled(rule):
            continue
        severity = config.severity.get(rule.code, finding.severity if finding.severity is not None else rule.severity)
        where, line, column = file, None, None
        if finding.file is not None:
            # A file of the tree (a symbolic link): named by its path, without a line to quote.
            where = finding.file if root is None else os.path.normpath(os.path.join(root, finding.file))
        else:
            position = doc.position(finding.pointer)
            if position is not None:
                line, column = position.line, position.column
                # A finding about a whole block (a mapping or list) points at the key that opens it.
                if position.key_line is not None and (finding.at_key or _is_block(data, finding.pointer)):
                    line, column = position.key_line, position.key_column
        _add(result, Diagnostic(rule.code, rule.name, severity, finding.message, pointer_text(finding.pointer),
                                where, line, column, finding.hint, rule.url))
    result.diagnostics.sort(key=Diagnostic.sort_key)


def _is_block(data: object, pointer: tuple[str | int, ...]) -> bool:
    node = data
    for part in pointer:
        try:
            node = node[part]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, (Mapping, list))


def _semantic(ctx: Context, config: Config) -> Iterable[Finding]:
    from .rules import load_all

    for chk in load_all():
        if ctx.expired():
            return
        if any(config.enabled(RULES[code]) for code in chk.codes):
            yield from chk.run(ctx)


def diagnostic_from_problem(problem: Problem, file: str | None, config: Config) -> Diagnostic:
    """A diagnostic for a problem met while reading the input."""
    rule = RULES[problem.code]
    return Diagnostic(rule.code, rule.name, config.severity_of(rule), problem.message, problem.pointer, file,
                      problem.line, problem.column, problem.hint, rule.url)


def _add(result: ValidationResult, diagnostic: Diagnostic) -> None:
    result.diagnostics.append(diagnostic)
