"""Render conformance outcomes: a pass/fail table by tag, and JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from .runner import Outcome

__all__ = ["OPTIONAL", "blocking_failures", "render_table", "render_junit"]

#: The tag of interoperability cases: failing one is reported, but does not fail the run.
OPTIONAL = "optional"


def blocking_failures(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """The failed cases that make the run fail: every failure but those of 'optional' cases."""
    return [o for o in outcomes if not o.passed and OPTIONAL not in o.tags]


def render_table(outcomes: Sequence[Outcome], *, verbose: bool = False) -> str:
    """Failures (or every case with ``verbose``), a table of counts per tag, and the total."""
    lines: list[str] = []
    for o in outcomes:
        if verbose or not o.passed:
            mark = "PASS" if o.passed else "WARN" if OPTIONAL in o.tags else "FAIL"
            lines.append(f"{mark} {o.loaded.case.id} ({o.loaded.file}){': ' + o.message if o.message else ''}")
    if lines:
        lines.append("")
    tags = sorted({t for o in outcomes for t in o.tags})
    width = max([len("tag"), *(len(t) for t in tags)])
    lines.append(f"{'tag':<{width}}  {'cases':>5}  {'passed':>6}  {'failed':>6}  {'pass':>6}")
    for tag in tags:
        selected = [o for o in outcomes if tag in o.tags]
        passed = sum(o.passed for o in selected)
        lines.append(f"{tag:<{width}}  {len(selected):>5}  {passed:>6}  {len(selected) - passed:>6}  "
                     f"{100.0 * passed / len(selected):>5.1f}%")
    total = len(outcomes)
    passed = sum(o.passed for o in outcomes)
    share = 100.0 * passed / total if total else 0.0
    lines.append(f"{'all':<{width}}  {total:>5}  {passed:>6}  {total - passed:>6}  {share:>5.1f}%")
    warned = total - passed - len(blocking_failures(outcomes))
    if warned:
        lines.append(f"{warned} optional case(s) failed: an interoperability recommendation, not a conformance failure")
    return "\n".join(lines) + "\n"


def render_junit(outcomes: Sequence[Outcome], name: str = "rra-conformance") -> str:
    """JUnit XML: one testsuite per case file, one testcase per case."""
    root = ET.Element("testsuites", name=name, tests=str(len(outcomes)),
                      failures=str(sum(not o.passed for o in outcomes)))
    by_file: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_file.setdefault(o.loaded.file, []).append(o)
    for file, group in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=file, tests=str(len(group)),
                              failures=str(sum(not o.passed for o in group)),
                              time=f"{sum(o.seconds for o in group):.3f}")
        for o in group:
            case = ET.SubElement(suite, "testcase", classname=file.removesuffix(".yaml").replace("/", "."),
                                 name=o.loaded.case.id, time=f"{o.seconds:.3f}")
            ET.SubElement(case, "properties").extend(
                [ET.Element("property", name="tags", value=",".join(o.tags)),
                 ET.Element("property", name="description", value=o.loaded.case.description)])
            if not o.passed:
                failure = ET.SubElement(case, "failure", message=o.message[:500], type="conformance")
                failure.text = o.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
