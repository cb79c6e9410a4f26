"""Which rule codes the suite covers, the codes no case can express (and why), and the classes
of cases (``required``, the optional features, ``optional``) that conformance is judged by.

The suite README's list of codes without a case is generated from here
(``python -m rra_tools._generate``), so it cannot drift from the cases.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cases import LoadedCase

__all__ = ["CLASS_TAGS", "FEATURE_TAGS", "NOT_EXPRESSIBLE", "covered_codes", "uncovered_block", "uncovered_codes"]

#: Tags of optional features: a validator that claims the feature passes every case with the tag.
FEATURE_TAGS = {
    "config": "validator configuration (spec/01-overview.md#validator-configuration)",
    "packaging": "the reader class of spec/05-packaging.md: packed artifacts in an OCI image layout",
}

#: Every case carries exactly one of these: the class its result is judged in.
CLASS_TAGS = frozenset({"required", "optional", *FEATURE_TAGS})

#: Rules no case can express, and why; each is tested elsewhere (named in the reason).
NOT_EXPRESSIBLE = {
    "RRA008": "only a caller's time budget triggers it (tests/unit/test_rules.py)",
    "RRA115": "every keyword of the 1.0 schema maps to RRA110-RRA114 (tests/unit/test_rule_docs.py)",
}


def covered_codes(cases: Iterable[LoadedCase]) -> set[str]:
    """The codes some case expects."""
    return {code for c in cases for code in c.case.expect.codes}


def uncovered_codes(rules: Iterable[str], cases: Iterable[LoadedCase]) -> list[str]:
    """The codes of ``rules`` that no case expects, sorted."""
    return sorted(set(rules) - covered_codes(cases))


def uncovered_block(rules: Iterable[str], cases: Iterable[LoadedCase]) -> str:
    """The README's generated paragraph: how many codes have no case, which, and why."""
    missing = uncovered_codes(rules, cases)
    if not missing:
        return "Every rule code has a case.\n"
    items = "".join(f"- `{code}`: {NOT_EXPRESSIBLE.get(code, 'no case yet')}.\n" for code in missing)
    count = "One code has" if len(missing) == 1 else f"{len(missing)} codes have"
    return f"{count} no case:\n\n{items}"
