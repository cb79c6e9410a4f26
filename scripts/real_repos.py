"""Take the real-repository corpus of issue 24 through ``rra build`` with a scripted author.

Not part of the test suite: it needs the real repositories (extracted as plain directories, see
docs/builder-corpus.md) and PyPI for the locks, and it takes minutes per repository.

Usage::

    python scripts/real_repos.py --raw-root DIR --out-root DIR [--corpus scripts/real_repos/corpus.json]
        [--only NAME ...] [--limit-s 900] [--json results.json]

For each repository of the corpus it runs::

    rra build RAW -o OUT --sandbox none \\
        --agent "python scripts/real_repos_agent.py scripts/real_repos/NAME.answers.json"

again while the build stops at a decision whose answer it can still take (exit status 3; at most
``--max-runs`` runs), and prints per repository: the levels reached (the review's, else ``rra
validate``'s), the decisions asked (ids and kinds, from ``.rra/build/state.json``), the hand
edits of ``rra.yaml`` (always 0: this driver edits nothing; every change comes through a
decision), the build runs, the wall time and what stopped it (the first step not done, its note,
and the scripted author's ``give_up`` when it had no answer).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_RRA = ROOT / ".venv" / "bin" / "rra"
STATE = Path(".rra/build/state.json")
REVIEW = Path(".rra/review/review.json")
STEPS = ("specify", "fill", "claims", "lock", "execute", "preserve", "reference", "guide", "review")
STOPPED_AT_DECISION = 3


@dataclass
class Outcome:
    """What the build of one repository came to."""

    name: str
    commit: str
    shapes: list[str]
    levels: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    hand_edits: int = 0
    build_runs: int = 0
    wall_s: float = 0.0
    exit_status: int | None = None
    steps: dict[str, str] = field(default_factory=dict)
    stopped: str = ""


def _kill(process: subprocess.Popen[bytes]) -> None:
    """End the build and everything it started (its own process group)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def _run(argv: list[str], log: Path, limit_s: float, env: dict[str, str]) -> int | None:
    """Run ``argv`` with its output appended to ``log``; its exit status, or None past ``limit_s``."""
    with log.open("ab") as out:
        out.write(("$ " + shlex.join(argv) + "\n").encode())
        out.flush()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env,
                                   start_new_session=True)
        try:
            return process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            _kill(process)
            out.write(f"\n[real_repos] stopped after {limit_s:.0f} s (the driver's limit)\n".encode())
            return None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _levels(out: Path, rra: str) -> list[str]:
    """The levels the review's runs meet, else those ``rra validate`` finds recorded."""
    review = _json(out / REVIEW)
    if isinstance(review, dict):
        levels = review.get("levels", {})
        return list(levels.get("reviewed") or levels.get("recorded") or [])
    if not (out / "rra.yaml").is_file():
        return []
    done = subprocess.run([rra, "validate", "-f", "json", str(out)], capture_output=True, text=True, check=False)
    try:
        [result] = json.loads(done.stdout)["results"]
    except (ValueError, KeyError, TypeError):
        return []
    return list(result.get("levels", {}).get("met", []))


def _requests(log_dir: Path) -> list[dict[str, Any]]:
    path = log_dir / "requests.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _last_lines(path: Path, count: int) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in lines[-count:] if line.strip())


def _steps(state: Any) -> dict[str, dict[str, Any]]:
    """The state file's step records by name."""
    if not isinstance(state, dict):
        return {}
    return {record["name"]: record for record in state.get("steps", []) if isinstance(record, dict)}


def _error(log: Path) -> str:
    """The build's last ``error:`` line, and its hint."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    found = [i for i, line in enumerate(lines) if line.startswith("error:")]
    if not found:
        return ""
    text = lines[found[-1]].strip()
    return text


def _cause(log_tail: object) -> str:
    """The telling line of a failing run's or lock's log tail: the last one that is not rra's frame."""
    if not isinstance(log_tail, str):
        return ""
    lines = [line.strip() for line in log_tail.splitlines() if line.strip()]
    telling = [line for line in lines if not line.startswith(("---", "process exited", "^"))]
    return telling[-1][:220] if telling else ""


def _stopped(state: Any, requests: list[dict[str, Any]], log: Path, status: int | None) -> str:
    """One line on what stopped the build."""
    if status == 0:
        return "built"
    steps = _steps(state)
    if status is None:
        running = next((name for name in STEPS if steps.get(name, {}).get("status") not in ("done", "skipped")), "?")
        return f"the driver's time limit, in step {running}"
    where = next((f"{name} {steps[name]['status']}" for name in STEPS
                  if steps.get(name, {}).get("status") in ("stopped", "failed")), "")
    parts = [where] if where else []
    gave_up = [r for r in requests if r.get("outcome") in ("give_up", "no_answer")]
    if gave_up:
        last = gave_up[-1]
        cause = _cause(last.get("log_tail"))
        said = "no scripted answer for" if last["outcome"] == "no_answer" else "the scripted author gave up on"
        parts.append(f"{said} {last['id']}" + (f" ({cause})" if cause else ""))
    else:
        error = _error(log)
        if error:
            parts.append(error[:300])
    return "; ".join(parts) or f"exit status {status}: {_last_lines(log, 3)}"


def build_one(entry: dict[str, Any], args: argparse.Namespace) -> Outcome:
    """Build one corpus entry and read what came of it."""
    name = entry["name"]
    raw = Path(args.raw_root) / entry.get("dir", name)
    out = Path(args.out_root) / name
    logs = Path(args.out_root) / f"{name}.logs"
    outcome = Outcome(name=name, commit=entry.get("commit", ""), shapes=list(entry.get("shapes", [])))
    if not raw.is_dir():
        outcome.stopped = f"{raw} is missing: extract the repository first (docs/builder-corpus.md)"
        return outcome
    for path in (out, logs):
        if path.exists():
            shutil.rmtree(path)
    logs.mkdir(parents=True)
    answers = HERE / "real_repos" / f"{name}.answers.json"
    agent = shlex.join([sys.executable, str(HERE / "real_repos_agent.py"), str(answers)])
    argv = [args.rra, "build", str(raw), "-o", str(out), "--sandbox", "none", "--agent", agent,
            *entry.get("build_args", [])]
    env = {**os.environ, "RRA_REAL_REPOS_LOG": str(logs)}
    log = logs / "build.log"
    started = time.monotonic()
    status: int | None = None
    for _ in range(args.max_runs):
        left = args.limit_s - (time.monotonic() - started)
        if left <= 0:
            status = None
            break
        outcome.build_runs += 1
        status = _run(argv, log, left, env)
        if status != STOPPED_AT_DECISION:
            break
    outcome.wall_s = round(time.monotonic() - started, 1)
    outcome.exit_status = status
    state = _json(out / STATE)
    steps = _steps(state)
    for step in STEPS:
        record = steps.get(step, {})
        outcome.steps[step] = record.get("status", "pending")
        outcome.decisions += [f"{d['id']} ({d['kind']})" for d in record.get("decisions", [])]
    requests = _requests(logs)
    asked = {d.split(" ")[0] for d in outcome.decisions}
    outcome.decisions += [f"{r['id']} ({r['kind']}, gave up)" for r in requests
                          if r.get("outcome") in ("give_up", "no_answer") and r["id"] not in asked]
    outcome.levels = _levels(out, args.rra)
    outcome.stopped = _stopped(state, requests, log, status)
    return outcome


def _table(outcomes: list[Outcome]) -> str:
    head = ("| repo | commit | shape | levels | steps done | decisions | hand edits | build runs | wall s "
            "| what stopped it |")
    rows = [head, "|" + "---|" * 10]
    for o in outcomes:
        decisions = f"{len(o.decisions)}: " + ", ".join(o.decisions) if o.decisions else "0"
        done = [step for step in STEPS if o.steps.get(step) in ("done", "skipped")]
        rows.append(f"| {o.name} | {o.commit[:10]} | {', '.join(o.shapes)} | {', '.join(o.levels) or 'none'} | "
                    f"{len(done)}/{len(STEPS)} | {decisions} | {o.hand_edits} | {o.build_runs} | {o.wall_s} "
                    f"| {o.stopped} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Build every selected corpus entry; print the table (and write it as JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", default=str(HERE / "real_repos" / "corpus.json"))
    parser.add_argument("--raw-root", required=True, help="where the repositories are extracted")
    parser.add_argument("--out-root", required=True, help="where the artifacts and logs go (emptied per repository)")
    parser.add_argument("--only", nargs="*", default=None, help="names of the corpus entries to build")
    parser.add_argument("--limit-s", type=float, default=900.0, help="wall-time limit per repository")
    parser.add_argument("--max-runs", type=int, default=4, help="build runs per repository at most")
    parser.add_argument("--rra", default=str(DEFAULT_RRA))
    parser.add_argument("--json", default=None, help="write the outcomes here as JSON")
    args = parser.parse_args(argv)
    corpus = json.loads(Path(args.corpus).read_text(encoding="utf-8"))
    entries = [e for e in corpus["repositories"] if args.only is None or e["name"] in args.only]
    Path(args.out_root).mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    for entry in entries:
        print(f"== {entry['name']}", flush=True)
        outcome = build_one(entry, args)
        print(f"   levels {outcome.levels or 'none'}; {len(outcome.decisions)} decisions; "
              f"{outcome.build_runs} runs; {outcome.wall_s} s; {outcome.stopped}", flush=True)
        outcomes.append(outcome)
        if args.json:
            Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n", encoding="utf-8")
    print(_table(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
