"""Which rule codes the suite covers, the codes no case can express (and why), and the classes
of cases (``required``, the optional features, ``optional``) that conformance is judged by.

The suite README's list of codes without a case is generated from here
(``python -m rra_tools._generate``), so it cannot drift from the cases.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cases import LoadedCase

__all__ = ["CLASS_TAGS", "FEATURE_TAGS", "NOT_EXPRESSIBLE", "PINNED_SECTIONS", "covered_codes", "pinned_block",
           "uncovered_block", "uncovered_codes"]

#: Tags of optional features: a validator that claims the feature passes every case with the tag.
FEATURE_TAGS = {
    "config": "validator configuration (spec/01-overview.md#validator-configuration)",
    "packaging": "the reader class of spec/05-packaging.md: packed artifacts in an OCI image layout",
    "taskset": "the task-set checker of spec/07-task-sets.md: benchmark task sets and their references files",
}

#: Every case carries exactly one of these: the class its result is judged in.
CLASS_TAGS = frozenset({"required", "optional", *FEATURE_TAGS})

#: Rules no case can express, and why; each is tested elsewhere (named in the reason).
NOT_EXPRESSIBLE = {
    "RRA008": "only a caller's time budget triggers it (tests/unit/test_rules.py)",
    "RRA115": "every keyword of the 1.0 schema maps to RRA110-RRA114 (tests/unit/test_rule_docs.py)",
}


def covered_codes(cases: Iterable[LoadedCase]) -> set[str]:
    """The codes some case expects (as an error or warning, or as information)."""
    return {code for c in cases for code in [*c.case.expect.codes, *(c.case.expect.info or [])]}


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


#: The sections where RRA 1.1 pinned what implementations of 1.0 were known to do differently
#: (spec/03-versioning.md#fields-and-versions): its cases of these sections settle, as required
#: behaviour of a 1.1 manifest, edge cases that the 'optional' class only recommends for 1.0.
PINNED_SECTIONS = ("spec/02-manifest.md#numbers", "spec/02-manifest.md#regular-expressions")


def pinned_block(cases: Iterable[LoadedCase]) -> str:
    """The README's generated table of the RRA 1.1 cases that pin interoperability edge cases."""
    rows = [c for c in cases if "rra-1-1" in c.case.tags and set(c.case.sections) & set(PINNED_SECTIONS)]
    if not rows:
        return "No RRA 1.1 case pins an edge case yet.\n"
    lines = ["| Case | Section | Expected | What it pins |", "|---|---|---|---|"]
    for loaded in rows:
        case = loaded.case
        section = next(s for s in case.sections if s in PINNED_SECTIONS).split("#")[1]
        expected = case.expect.verdict + "".join(f", `{code}`" for code in case.expect.codes)
        description = case.description.replace("|", "\\|")  # a '|' would end the cell
        lines.append(f"| `{case.id}` | {section} | {expected} | {description} |")
    return "\n".join(lines) + "\n"
