"""Rendering for ``rra rules`` and ``rra explain``; the click commands in :mod:`.main` print."""

from __future__ import annotations

import json

from ..validate.catalog import ENV_RULES, RULES, Rule

__all__ = ["find_rule", "render_explain", "render_rules"]

_COLUMNS = ("CODE", "NAME", "SEVERITY", "ENABLED", "SUMMARY")


def _row(rule: Rule) -> tuple[str, str, str, str, str]:
    return rule.code, rule.name, rule.severity.label, "yes" if rule.enabled else "no", rule.summary


def render_rules(fmt: str = "text") -> str:
    """Every rule in code order: an aligned table (``text``) or a JSON list (``json``).

    >>> render_rules().splitlines()[0].split()
    ['CODE', 'NAME', 'SEVERITY', 'ENABLED', 'SUMMARY']
    """
    rules = [RULES[code] for code in sorted(RULES)]
    if fmt == "json":
        items = [{"code": r.code, "name": r.name, "severity": r.severity.label, "enabled": r.enabled,
                  "status": r.status, "added": r.added, "section": r.section, "summary": r.summary,
                  "url": r.url} for r in rules]
        return json.dumps(items, indent=2, ensure_ascii=False) + "\n"
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}; expected 'text' or 'json'")
    rows = [_COLUMNS, *(_row(r) for r in rules)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]) for row in rows]
    return "\n".join(lines) + "\n"


def find_rule(selector: str) -> Rule | None:
    """The rule named by a code (any case) or by its name, or None."""
    rule = RULES.get(selector.strip().upper())
    if rule is not None:
        return rule
    return next((r for r in RULES.values() if r.name == selector.strip()), None)


def render_explain(code: str) -> str | None:
    """The documentation page of the rule ``code`` (a code or a rule name), or of a code of
    ``rra env check``; None when unknown."""
    rule = find_rule(code)
    if rule is None:
        from ..validate.rule_docs import env_code_page

        wanted = code.strip()
        env = ENV_RULES.get(wanted.upper()) or next((r for r in ENV_RULES.values() if r.name == wanted), None)
        return None if env is None else env_code_page(env.code)
    from ..validate.rule_docs import rule_page

    return rule_page(rule.code)
