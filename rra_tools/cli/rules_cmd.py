"""Rendering for ``rra rules`` and ``rra explain``; the click commands in :mod:`.main` print."""

from __future__ import annotations

import json
import re

from ..validate.catalog import ENV_RULES, REVIEW_RULES, RULES, TASKSET_RULES, Rule

__all__ = ["find_rule", "render_explain", "render_rules"]

_COLUMNS = ("CODE", "NAME", "SEVERITY", "ENABLED", "CHECKED BY", "SUMMARY")
_VALIDATE, _ENV_CHECK, _REVIEW, _BENCH_CHECK = "rra validate", "rra env check", "rra review", "rra bench check"


def _entries() -> list[dict[str, object]]:
    """Every code in code order: the validator's rules, ``rra env check``'s codes (RRA700-RRA799),
    ``rra review``'s (RRA900-RRA949) and ``rra bench check``'s (RRA950-RRA999), each with the command
    that reports it."""
    from ..validate.diagnostics import DOCS_BASE_URL

    items: dict[str, dict[str, object]] = {
        r.code: {"code": r.code, "name": r.name, "severity": r.severity.label, "enabled": r.enabled,
                 "status": r.status, "added": r.added, "section": r.section, "summary": r.summary,
                 "url": r.url, "checked_by": _VALIDATE} for r in RULES.values()}
    for e in ENV_RULES.values():
        # Environment checks run only when asked for ('rra env check'), always all of them.
        items[e.code] = {"code": e.code, "name": e.name, "severity": e.severity.label, "enabled": True,
                         "status": "stable", "added": "1.0", "section": e.section, "summary": e.summary,
                         "url": f"{DOCS_BASE_URL}/{e.code}", "checked_by": _ENV_CHECK}
    for r in REVIEW_RULES.values():
        items[r.code] = {"code": r.code, "name": r.name, "severity": r.severity.label, "enabled": True,
                         "status": "stable", "added": "1.1", "section": r.section, "summary": r.summary,
                         "url": f"{DOCS_BASE_URL}/{r.code}", "checked_by": _REVIEW}
    for t in TASKSET_RULES.values():
        items[t.code] = {"code": t.code, "name": t.name, "severity": t.severity.label, "enabled": True,
                         "status": "stable", "added": "1.1", "section": t.section, "summary": t.summary,
                         "url": f"{DOCS_BASE_URL}/{t.code}", "checked_by": _BENCH_CHECK}
    return [items[code] for code in sorted(items)]


def render_rules(fmt: str = "text") -> str:
    """Every code in code order, ``rra env check``'s and ``rra bench check``'s included: an aligned table (``text``) or a
    JSON list (``json``).

    >>> render_rules().splitlines()[0].split()
    ['CODE', 'NAME', 'SEVERITY', 'ENABLED', 'CHECKED', 'BY', 'SUMMARY']
    """
    entries = _entries()
    if fmt == "json":
        return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}; expected 'text' or 'json'")
    rows = [_COLUMNS, *((str(e["code"]), str(e["name"]), str(e["severity"]), "yes" if e["enabled"] else "no",
                         str(e["checked_by"]), str(e["summary"])) for e in entries)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
    lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]) for row in rows]
    return "\n".join(lines) + "\n"


def find_rule(selector: str) -> Rule | None:
    """The rule named by a code (any case) or by its name, or None."""
    rule = RULES.get(selector.strip().upper())
    if rule is not None:
        return rule
    return next((r for r in RULES.values() if r.name == selector.strip()), None)


#: A Markdown link: its text and its target.
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
#: The target of the rule pages' link to the example manifest, in docs/rules/README.md.
_EXAMPLE_MANIFEST = "README.md#the-example-manifest"


def _offline(page: str) -> str:
    """A rule page as ``rra explain`` prints it, outside any checkout: its relative links (to the
    spec, the docs, the rules index), dead where the page is not in docs/rules/, become their text
    (a section of the standard named with its version), and the example manifest that the page's
    example builds on is printed at its end. Web links are kept; code blocks are left alone.

    >>> _offline("See [part 2](../../spec/02-manifest.md#claims) and [RRA202](RRA202.md).").split(" of the ")[1]
    'RRA ... standard and RRA202.'
    """
    from .. import SPEC_VERSION

    needs_example = False

    def plain(match: re.Match[str]) -> str:
        nonlocal needs_example
        text, target = match.group(1), match.group(2)
        if target.startswith(("https://", "http://")):
            return match.group(0)
        if target == _EXAMPLE_MANIFEST:
            needs_example = True
            return f"{text} printed at the end"
        if target.startswith("../../spec/"):
            return f"{text} of the RRA {SPEC_VERSION} standard"
        return text

    lines, fenced = [], False
    for line in page.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        lines.append(line if fenced else _LINK.sub(plain, line))
    text = "\n".join(lines)
    if needs_example:
        from ..validate.rule_docs import example_manifest_section

        text = text.rstrip("\n") + "\n\n" + "\n".join(example_manifest_section()).rstrip("\n") + "\n"
    return text


def render_explain(code: str) -> str | None:
    """The documentation page of the rule ``code`` (a code or a rule name), or of a code of
    ``rra env check``, ``rra review`` or ``rra bench check``, as the package holds it and with no
    link that only works inside a checkout (:func:`_offline`); None when unknown."""
    page = _page(code)
    return None if page is None else _offline(page)


def _page(code: str) -> str | None:
    """The generated Markdown page of ``code`` (its links relative to docs/rules/), or None."""
    rule = find_rule(code)
    if rule is None:
        from ..validate.rule_docs import env_code_page, review_code_page, taskset_code_page

        wanted = code.strip()
        env = ENV_RULES.get(wanted.upper()) or next((r for r in ENV_RULES.values() if r.name == wanted), None)
        if env is not None:
            return env_code_page(env.code)
        review = REVIEW_RULES.get(wanted.upper()) or next((r for r in REVIEW_RULES.values() if r.name == wanted),
                                                          None)
        if review is not None:
            return review_code_page(review.code)
        task = TASKSET_RULES.get(wanted.upper()) or next((r for r in TASKSET_RULES.values() if r.name == wanted),
                                                         None)
        return None if task is None else taskset_code_page(task.code)
    from ..validate.rule_docs import rule_page

    return rule_page(rule.code)
