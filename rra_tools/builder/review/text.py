"""The review report as Markdown (``review.md``), rendered from the JSON report alone (plain data
with the fields of :class:`rra_tools.model.review_report.ReviewReport`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["finding_line", "render_review"]


def _num(value: object) -> str:
    """A number as the tables show it; an answer (a string claim's string, a set or list claim's
    list, RRA 1.2) as a table cell."""
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.6g}"
    import json

    return _cell(json.dumps(value, ensure_ascii=False))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _where(f: Mapping[str, Any]) -> str:
    where = str(f.get("file") or f.get("record") or "")
    return f"{where}:{f['line']}" if where and f.get("line") else where


def finding_line(f: Mapping[str, Any]) -> str:
    """One finding as a line: ``file:line: severity CODE (name) message``."""
    where = _where(f)
    return f"{where + ': ' if where else ''}{f['severity']} {f['code']} ({f['name']}) {f['message']}"


def render_review(report: Mapping[str, Any]) -> str:
    """The whole report as a Markdown page."""
    verdict = "PASSED" if report["passed"] else "FAILED"
    c, env, tool = report["counts"], report["environment"], report["tool"]
    lines = [
        f"# Review of `{report['artifact_id']}`: {verdict}",
        "",
        f"- Reviewed by {tool['name']} {tool['version']} from {report['started']} to {report['ended']}",
        f"- Manifest `{report['manifest']}`, digest `{report['artifact_digest']}`",
        f"- Clean-shell re-run: **{report['clean_shell']}** (environment: {env['mode']}"
        + (f", {env['detail']}" if env.get("detail") else "") + ")",
        f"- Findings: {c['error']} error(s), {c['warning']} warning(s), {c['info']} info",
        f"- Runs and this report: `{report['directory']}`",
        "",
        "## Levels",
        "",
        "| | available | functional | reproduced |",
        "|---|---|---|---|",
    ]
    levels_of = report["levels"]
    for label, levels in (("claimed", levels_of["claimed"]), ("met with the author's records", levels_of["recorded"]),
                          ("met with the review's runs", levels_of["reviewed"])):
        marks = " | ".join("yes" if level in levels else "-" for level in ("available", "functional", "reproduced"))
        lines.append(f"| {label} | {marks} |")
    lines += ["", "## Findings", ""]
    if report["findings"]:
        lines += ["| Severity | Code | Where | Finding |", "|---|---|---|---|"]
        for f in report["findings"]:
            where = _where(f)
            hint = f" *{_cell(f['hint'])}*" if f.get("hint") else ""
            shown = f"`{_cell(where)}`" if where else ""
            lines.append(f"| {f['severity']} | `{f['code']}` {f['name']} | {shown} | {_cell(f['message'])}{hint} |")
    else:
        lines.append("None.")
    lines += ["", "## Claims", ""]
    if report["claims"]:
        lines += ["| Claim | Reported | Interval | Recorded | Reviewed | Inside | Traced |", "|---|---|---|---|---|---|---|"]
        for claim in report["claims"]:
            low = claim.get("interval_low")
            interval = "-" if low is None else f"[{_num(low)}, {_num(claim.get('interval_high'))}]"
            inside = {True: "yes", False: "**no**", None: "-"}[claim.get("inside")]
            lines.append(f"| `{claim['claim']}` | {_num(claim['reported'])} | {interval} | "
                         f"{_num(claim.get('recorded'))} | {_num(claim.get('reviewed'))} | {inside} | "
                         f"{'yes' if claim['traced'] else '**no**'} |")
        lines.append("")
        for claim in report["claims"]:
            if not claim["trace"]:
                continue
            lines.append(f"Evidence of `{claim['claim']}`:")
            lines.append("")
            for step in claim["trace"]:
                digest = {True: "digest ok", False: "digest differs", None: "digest not checked"}[step.get("digest_ok")]
                # A string, set or list claim's step holds the answer read, records holding none.
                got = (_num(step.get("extracted_answer")) if step.get("recorded_value") is None else
                       f"{_num(step.get('extracted_value'))} (record: {_num(step['recorded_value'])})")
                lines.append(f"- `{step['record']}` -> `{step.get('output') or '?'}` ({digest}) -> {got}"
                             f"{'' if step['ok'] else ' **broken**'}")
            lines.append("")
    else:
        lines += ["No claims.", ""]
    lines += ["## Clean-shell runs", ""]
    if report["runs"]:
        lines += ["| Launcher | Run | Status | Time (s) | Same outputs as recorded | Record |", "|---|---|---|---|---|---|"]
        for run in report["runs"]:
            seed, repeat = run.get("seed"), run.get("repeat")
            which = f"seed {seed}" if seed is not None else f"repeat {repeat}" if repeat is not None else "noseed"
            status = run["status"] + ("" if run.get("exit_status") is None else f" (exit {run['exit_status']})")
            same = {True: "yes", False: "no", None: "-"}[run.get("same_outputs")]
            duration = "-" if run.get("duration_s") is None else f"{run['duration_s']:.2f}"
            record = f"`{run['record']}`" if run.get("record") else _cell(run.get("detail") or "")
            lines.append(f"| `{run['launcher']}` | {which} | {status} | {duration} | {same} | {record} |")
    else:
        lines.append("Nothing was run.")
    return "\n".join(lines).rstrip("\n") + "\n"
