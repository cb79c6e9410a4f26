"""The review report as Markdown (``review.md``), rendered from the JSON report alone."""

from __future__ import annotations

from ..model.review_report import ReviewFinding, ReviewReport

__all__ = ["finding_line", "render_review"]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def finding_line(f: ReviewFinding) -> str:
    """One finding as a line: ``file:line: severity CODE (name) message``."""
    where = f.file or f.record or ""
    if where and f.line:
        where = f"{where}:{f.line}"
    return f"{where + ': ' if where else ''}{f.severity} {f.code} ({f.name}) {f.message}"


def render_review(report: ReviewReport) -> str:
    """The whole report as a Markdown page."""
    verdict = "PASSED" if report.passed else "FAILED"
    c = report.counts
    lines = [
        f"# Review of `{report.artifact_id}`: {verdict}",
        "",
        f"- Reviewed by {report.tool.name} {report.tool.version} from {report.started} to {report.ended}",
        f"- Manifest `{report.manifest}`, digest `{report.artifact_digest}`",
        f"- Clean-shell re-run: **{report.clean_shell}** (environment: {report.environment.mode}"
        + (f", {report.environment.detail}" if report.environment.detail else "") + ")",
        f"- Findings: {c.error} error(s), {c.warning} warning(s), {c.info} info",
        f"- Runs and this report: `{report.directory}`",
        "",
        "## Levels",
        "",
        "| | available | functional | reproduced |",
        "|---|---|---|---|",
    ]
    for label, levels in (("claimed", report.levels.claimed), ("met with the author's records", report.levels.recorded),
                          ("met with the review's runs", report.levels.reviewed)):
        marks = " | ".join("yes" if level in levels else "-" for level in ("available", "functional", "reproduced"))
        lines.append(f"| {label} | {marks} |")
    lines += ["", "## Findings", ""]
    if report.findings:
        lines += ["| Severity | Code | Where | Finding |", "|---|---|---|---|"]
        for f in report.findings:
            where = f.file or f.record or ""
            if where and f.line:
                where = f"{where}:{f.line}"
            hint = f" *{_cell(f.hint)}*" if f.hint else ""
            lines.append(f"| {f.severity} | `{f.code}` {f.name} | `{_cell(where)}` | {_cell(f.message)}{hint} |"
                         if where else f"| {f.severity} | `{f.code}` {f.name} | | {_cell(f.message)}{hint} |")
    else:
        lines.append("None.")
    lines += ["", "## Claims", ""]
    if report.claims:
        lines += ["| Claim | Reported | Interval | Recorded | Reviewed | Inside | Traced |", "|---|---|---|---|---|---|---|"]
        for claim in report.claims:
            interval = "-" if claim.interval_low is None else f"[{_num(claim.interval_low)}, {_num(claim.interval_high)}]"
            inside = {True: "yes", False: "**no**", None: "-"}[claim.inside]
            lines.append(f"| `{claim.claim}` | {_num(claim.reported)} | {interval} | {_num(claim.recorded)} | "
                         f"{_num(claim.reviewed)} | {inside} | {'yes' if claim.traced else '**no**'} |")
        lines.append("")
        for claim in report.claims:
            if not claim.trace:
                continue
            lines.append(f"Evidence of `{claim.claim}`:")
            lines.append("")
            for step in claim.trace:
                digest = {True: "digest ok", False: "digest differs", None: "digest not checked"}[step.digest_ok]
                lines.append(f"- `{step.record}` -> `{step.output or '?'}` ({digest}) -> "
                             f"{_num(step.extracted_value)} (record: {_num(step.recorded_value)})"
                             f"{'' if step.ok else ' **broken**'}")
            lines.append("")
    else:
        lines += ["No claims.", ""]
    lines += ["## Clean-shell runs", ""]
    if report.runs:
        lines += ["| Launcher | Run | Status | Time (s) | Same outputs as recorded | Record |", "|---|---|---|---|---|---|"]
        for run in report.runs:
            which = (f"seed {run.seed}" if run.seed is not None else
                     f"repeat {run.repeat}" if run.repeat is not None else "noseed")
            status = run.status + ("" if run.exit_status is None else f" (exit {run.exit_status})")
            same = {True: "yes", False: "no", None: "-"}[run.same_outputs]
            duration = "-" if run.duration_s is None else f"{run.duration_s:.2f}"
            record = f"`{run.record}`" if run.record else _cell(run.detail or "")
            lines.append(f"| `{run.launcher}` | {which} | {status} | {duration} | {same} | {record} |")
    else:
        lines.append("Nothing was run.")
    return "\n".join(lines).rstrip("\n") + "\n"
