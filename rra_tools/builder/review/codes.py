"""The codes of ``rra review``'s own findings (RRA900-RRA949).

A review also reports every finding of ``rra validate`` on the artifact under the validator's
codes (RRA214 for a placeholder left, RRA215 for a guide out of sync, RRA501 for a stochastic
launcher without seeds, RRA601 for a claimed level that is not met, ...); the codes below are
for what only a review can see: what re-running, comparing and tracing show, and the choices it
challenges. They are defined in the one rule catalog (``validate/catalog.py``, ``REVIEW_RULES``);
this module gives them the review's shape. They are documented in ``docs/builder.md`` (the table
there is generated from :data:`REVIEW_CODES` by ``python -m rra_tools._generate``) and in
``docs/rules/``. Codes are never reused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...validate.catalog import REVIEW_RULES

__all__ = ["REVIEW_CODES", "ReviewCode", "review_code", "review_codes_table"]


@dataclass(frozen=True)
class ReviewCode:
    """One kind of review finding."""

    code: str
    name: str
    #: 'error' (the review fails), 'warning' or 'info'.
    severity: str
    summary: str


#: Every code of ``rra review``, by code: the entries of the one rule catalog
#: (:data:`rra_tools.validate.catalog.REVIEW_RULES`), so ``rra rules`` and ``rra explain`` know them.
REVIEW_CODES: dict[str, ReviewCode] = {
    r.code: ReviewCode(r.code, r.name, r.severity.label, r.summary) for r in REVIEW_RULES.values()}


def review_code(code: str) -> ReviewCode:
    """The review code ``code``; KeyError naming it otherwise."""
    try:
        return REVIEW_CODES[code]
    except KeyError:
        raise KeyError(f"unknown review code {code!r}") from None


def review_codes_table() -> str:
    """The Markdown table of every review code (generated into docs/builder.md)."""
    rows = ["| Code | Name | Severity | Meaning |", "|---|---|---|---|"]
    rows.extend(f"| `{c.code}` | `{c.name}` | {c.severity} | {c.summary} |" for c in REVIEW_CODES.values())
    return "\n".join(rows) + "\n"
