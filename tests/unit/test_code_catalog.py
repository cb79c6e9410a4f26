"""One code space: every code rra-tools reports is in the one rule catalog, once.

The catalog (rra_tools/validate/catalog.py) has four tables, the validator's rules, rra env
check's codes, rra review's own findings and rra bench check's codes. Two of them once defined
RRA900-RRA913 at the same time (rra explain RRA900 explained the task-set code, and a review code
was an "unknown rule"); these tests fail if that happens again, or if a module reports a code
that `rra rules` does not list.
"""

from __future__ import annotations

import re
from pathlib import Path

from rra_tools.builder.review.codes import REVIEW_CODES
from rra_tools.validate.catalog import ENV_RULES, REVIEW_RULES, RULES, TASKSET_RULES
from tests.rra_cli import rra

PACKAGE = Path(__file__).resolve().parents[2] / "rra_tools"
TABLES = {"RULES": RULES, "ENV_RULES": ENV_RULES, "REVIEW_RULES": REVIEW_RULES, "TASKSET_RULES": TASKSET_RULES}
# A range written in prose ("RRA900-RRA949", "RRA950 – RRA999", "RRA700 to RRA799") names no code.
_RANGE = re.compile(r"RRA\d{3}`?\s*(?:-|–|to)\s*`?RRA\d{3}")
_CODE = re.compile(r"\bRRA\d{3}\b")


def test_no_code_is_defined_by_two_catalogs() -> None:
    seen: dict[str, str] = {}
    clashes = []
    for table, codes in TABLES.items():
        for code in codes:
            if code in seen:
                clashes.append(f"{code} in {seen[code]} and {table}")
            seen[code] = table
    assert clashes == []


def test_no_name_is_given_to_two_codes() -> None:
    # rra explain takes a name as well as a code: a name must lead to one page.
    names = [rule.name for codes in TABLES.values() for rule in codes.values()]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_ranges_hold_their_codes() -> None:
    assert all("RRA700" <= code <= "RRA799" for code in ENV_RULES)
    assert all("RRA900" <= code <= "RRA949" for code in REVIEW_RULES)
    assert all("RRA950" <= code <= "RRA999" for code in TASKSET_RULES)


def test_review_codes_come_from_the_catalog() -> None:
    assert {code: (c.name, c.severity, c.summary) for code, c in REVIEW_CODES.items()} == {
        code: (r.name, r.severity.label, r.summary) for code, r in REVIEW_RULES.items()}


def _codes_in_the_package() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in {".py", ".toml"} and path.is_file():
            text = _RANGE.sub("", path.read_text(encoding="utf-8"))
            for code in _CODE.findall(text):
                found.setdefault(code, []).append(str(path.relative_to(PACKAGE.parent)))
    return found


def test_every_code_the_package_names_is_in_rra_rules() -> None:
    """Through the real command: each RRA code literal of the package (what any module emits or
    documents) is listed by rra rules."""
    listed = {line.split()[0] for line in rra("rules").stdout.splitlines()[1:]}
    found = _codes_in_the_package()
    assert {"RRA930", "RRA954", "RRA701", "RRA201"} <= set(found)
    unknown = {code: sorted(set(paths)) for code, paths in found.items() if code not in listed}
    assert unknown == {}


def test_explain_a_review_code() -> None:
    done = rra("explain", "RRA930")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# RRA930 — change-without-evidence\n")
    assert "- Reported by: `rra review`" in done.stdout
    assert rra("explain", "guide-missing").stdout.startswith("# RRA938 — guide-missing\n")
    task = rra("explain", "RRA950").stdout
    assert task.startswith("# RRA950 — taskset-unreadable\n")
