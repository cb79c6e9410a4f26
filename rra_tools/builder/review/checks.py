"""What a review checks without running anything: the choices it challenges and the evidence
chain of each claim (run record -> output file -> re-extracted value).

The manifest is read as plain data (``Artifact.data``, schema-valid) so that every finding can
name the JSON pointer of the value it is about.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...answers import Answer, AnswerError, answer_mismatch, answer_text, parse_answer
from ...io.artifact import Artifact
from ...io.digest import sha256_file
from ...guide_text import guide_path
from ...io.paths import resolve_inside
from ...io.read.run_records import is_successful, read_run_record
from ...model.manifest_view import ClaimSpec
from ...run.extract import ExtractError, extract_answer, extract_value
from ...run.results import Key, as_finite
from ...validate.rules.unfinished import PLACEHOLDER
from .findings import Findings, compact

__all__ = ["challenge_choices", "check_observations", "close", "reported_answer", "trace_claim"]

#: Evidence that says nothing a reviewer could check (compared lower-case, without end punctuation).
_EMPTY_EVIDENCE = frozenset({"", "-", "--", "?", "n/a", "na", "none", "nothing", "no evidence", "unknown", "null",
                             "not available", "see above", "see below", "trust me", "obvious", "it works",
                             "works", "works now", "tested", "done"})
#: A token of evidence text that names a file of the artifact: a relative path with a directory
#: and a file extension (``runs/train/0-.../record.json``, ``logs/pip.log``, ``tests/test_x.py``).
_PATH_TOKEN = re.compile(r"^(?![a-z][a-z0-9+.-]*://)[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.@+-]+)+\.[A-Za-z0-9]{1,8}$")
_SEED = re.compile(r"(?<!\{)\{seed\}")


def close(a: float, b: float) -> bool:
    """Equal up to binary rounding (the same computation on two machines)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _unfinished(value: Any) -> bool:
    return isinstance(value, str) and PLACEHOLDER.match(value) is not None


def _evidence_problem(artifact: Artifact, evidence: str) -> str | None:
    text = evidence.strip()
    if text.lower().rstrip(".!") in _EMPTY_EVIDENCE or _unfinished(text):
        return f"its evidence {evidence!r} says nothing that can be checked"
    for raw in text.split():
        token = raw.strip("`'\"()[]<>,;:")
        token = token.rstrip(".")
        if not _PATH_TOKEN.match(token):
            continue
        resolved = resolve_inside(artifact.root, token, kind="any").path
        if resolved is None:
            return f"its evidence names {token!r}, which is not in the artifact"
        if resolved.name == "record.json":
            # A run record given as evidence must show a run that worked.
            record = read_run_record(artifact.root, resolved)
            if isinstance(record, str):
                return f"its evidence names {token!r}: {record}"
            if not is_successful(record):
                return (f"its evidence names the run record {token!r}, whose run did not succeed "
                        f"({record.get('status')}, exit {record.get('exit_status')})")
    return None


def challenge_choices(artifact: Artifact, findings: Findings) -> None:
    """Challenge every choice of the manifest that has no support (codes RRA930-RRA939, except
    RRA933, which :func:`rra_tools.builder.review.review_artifact` reports from the series check)."""
    data = artifact.data
    changes = data.get("changes") or []
    for i, change in enumerate(changes):
        ident = change.get("id")
        problem = _evidence_problem(artifact, str(change.get("evidence", "")))
        if problem is not None:
            findings.at("RRA930", f"change {ident!r}: {problem}", ("changes", i, "evidence"),
                        hint="quote the error the change fixes, or name the run record or log that shows it works "
                             "('rra change record --evidence-file LOG')")
        if change.get("alters_method") == "unknown":
            findings.at("RRA931", f"change {ident!r} says alters_method: unknown", ("changes", i, "alters_method"),
                        hint="decide whether the change can move the paper's numbers: compare runs with and without "
                             "it, then say \"yes\" (naming the claims in affects) or \"no\"")
    by_patch = {c.get("patch") for c in changes if c.get("patch")}
    ids = {c.get("id") for c in changes}
    for i, patch in enumerate((data.get("code") or {}).get("patches") or []):
        if patch.get("change") in ids or patch.get("path") in by_patch:
            continue
        findings.at("RRA932", f"patch {patch.get('path')!r} has no change record", ("code", "patches", i),
                    hint="record why it was made: 'rra change record' writes the patch and its record together")
    for i, item in enumerate(data.get("discrepancies") or []):
        for field in ("rationale", "paper_says", "impact"):
            if _unfinished(item.get(field)):
                findings.at("RRA934", f"discrepancy {item.get('id')!r}: {field} is still a placeholder "
                            f"({item.get(field)!r}); the decision to follow the {item.get('follows')} is not "
                            "explained", ("discrepancies", i, field),
                            hint="write what the paper says, why the artifact follows the side it follows, and the "
                                 "expected impact")
        if not item.get("claims"):
            findings.at("RRA935", f"discrepancy {item.get('id')!r} names no claim", ("discrepancies", i),
                        hint="list the claims it may move in claims (rra discrepancy add --claim ID)")
    for i, launcher in enumerate(data.get("launchers") or []):
        if launcher.get("stochastic", True) and launcher.get("seeds") and not any(
                _SEED.search(str(arg)) for arg in launcher.get("argv") or []):
            findings.at("RRA936", f"launcher {launcher.get('id')!r} declares seeds {launcher.get('seeds')} but its "
                        "argv never passes {seed}", ("launchers", i, "argv"),
                        hint="pass the seed to the program (e.g. --seed {seed}), or set stochastic: false if it "
                             "reads none")
    environment = data.get("environment") or {}
    if not environment.get("hardware"):
        findings.at("RRA937", "environment.hardware is not declared", ("environment",),
                    hint="declare the machine the numbers came from: accelerators, CPU cores, RAM")
    _shared_extractions(data, findings)
    guide = guide_path(data)
    if resolve_inside(artifact.root, guide, kind="file").path is None:
        findings.at("RRA938", f"the reproduction guide {guide!r} does not exist",
                    ("guide",) if "guide" in data else (), hint="run 'rra guide' to write it")


def _shared_extractions(data: Mapping[str, Any], findings: Findings) -> None:
    """RRA939 for each claim that reads the same value as an earlier one: the same launcher,
    extraction (source, method and its arguments) and aggregate, so that one run's number would
    'reproduce' both."""
    first: dict[str, tuple[int, Any]] = {}
    for i, claim in enumerate(data.get("claims") or []):
        if not isinstance(claim, Mapping) or not isinstance(claim.get("extract"), Mapping):
            continue
        key = json.dumps([claim.get("launcher"), _plain_data(claim["extract"]), claim.get("aggregate", "mean")],
                         sort_keys=True, default=str)
        if key not in first:
            first[key] = (i, claim.get("id"))
            continue
        j, other = first[key]
        findings.at("RRA939", f"claim {claim.get('id')!r} reads the same value as claim {other!r} (/claims/{j}): "
                    f"launcher {claim.get('launcher')!r}, the same extract and aggregate, so one run's number "
                    "would 'reproduce' both", ("claims", i, "extract"),
                    hint="give each claim the extraction of its own number (its own output, pointer, CSV row or "
                         "regex), or remove the claim that the run does not compute")


def _plain_data(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {str(k): _plain_data(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain_data(v) for v in node]
    return node


def _order(key: Key) -> tuple[int, int]:
    return -1 if key[1] is None else key[1], -1 if key[2] is None else key[2]


def _seed_text(seed: int | None, repeat: int | None) -> str:
    return f"seed {seed}" if seed is not None else f"repeat {repeat}" if repeat is not None else "noseed"


def trace_claim(artifact: Artifact, index: int, best: Mapping[Key, tuple[Mapping[str, Any], str]],
                findings: Findings) -> list[dict[str, Any]]:
    """The evidence chain of claim number ``index`` through each of the author's newest successful
    records of its launcher that holds a value (``best``: :func:`rra_tools.run.results.latest_successful`);
    findings RRA920-RRA923 for the links that do not hold. Each step has the fields of
    :class:`rra_tools.model.review_report.TraceStep`."""
    claim = artifact.manifest.claims[index]
    rule = claim.extract
    answers = claim.kind != "number"
    expected_answer = reported_answer(artifact, index) if answers else None
    steps: list[dict[str, Any]] = []
    for (launcher, seed, repeat), (record, where) in sorted(best.items(), key=lambda kv: _order(kv[0])):
        if launcher != claim.launcher:
            continue
        metrics = record.get("metrics")
        value = as_finite(metrics.get(claim.id)) if isinstance(metrics, Mapping) else None
        if value is None and not answers:
            continue
        what = f"claim {claim.id!r}, {_seed_text(seed, repeat)}"
        run_dir = (artifact.root / where).parent
        file_rel: str | None = None
        expected: Any = None
        if rule.stream is not None:
            entry = next((e for e in record.get("logs") or [] if isinstance(e, Mapping)
                          and e.get("stream") == rule.stream), None)
            if entry is not None and isinstance(entry.get("path"), str):
                file_rel = (run_dir / entry["path"]).relative_to(artifact.root).as_posix()
                expected = entry.get("sha256")
        else:
            entry = next((e for e in record.get("outputs") or [] if isinstance(e, Mapping)
                          and e.get("id") == rule.output), None)
            if entry is not None and isinstance(entry.get("path"), str):
                file_rel, expected = entry["path"], entry.get("sha256")
        step: dict[str, Any] = compact(record=where, seed=seed, repeat=repeat)
        source = f"log of its {rule.stream}" if rule.stream is not None else f"output {rule.output!r}"
        if file_rel is None:
            findings.run("RRA921", f"{what}: the record names no {source}", where)
            steps.append({**step, **compact(recorded_value=value), "ok": False})
            continue
        step["output"] = file_rel
        resolved = resolve_inside(artifact.root, file_rel, kind="any")
        path = resolved.path
        if path is None or not path.exists():
            findings.run("RRA921", f"{what}: {source} {file_rel!r} named by the record is not in the artifact",
                         where, hint="keep the outputs of the runs the claims count, or run the launcher again")
            steps.append({**step, **compact(recorded_value=value), "ok": False})
            continue
        digest_ok: bool | None = None
        if path.is_file():
            digest_ok = sha256_file(path) == expected
            if not digest_ok:
                findings.run("RRA922", f"{what}: {file_rel!r} has changed since the run (its SHA-256 is not the "
                             f"record's {str(expected)[:12]}...)", where,
                             hint="an output path without {seed} is overwritten by the next seed's run; give each "
                                  "run its own output path, or run the launcher again")
        if answers:
            steps.append({**step, **compact(digest_ok=digest_ok),
                          **_answer_step(what, path, file_rel, claim, expected_answer, digest_ok, where, findings)})
            continue
        assert value is not None
        extracted: float | None = None
        try:
            extracted = extract_value(path, rule)
        except ExtractError as exc:
            findings.run("RRA923", f"{what}: the claim's rule cannot read {file_rel!r}: {exc}", where)
        if extracted is not None and not close(extracted, value):
            findings.run("RRA923", f"{what}: re-extracting {file_rel!r} gives {extracted!r}, the record says "
                         f"{value!r}", where)
        ok = bool(digest_ok is not False and extracted is not None and close(extracted, value))
        steps.append({**step, **compact(digest_ok=digest_ok), "recorded_value": value,
                      **compact(extracted_value=extracted), "ok": ok})
    if not steps:
        findings.at("RRA920", f"claim {claim.id!r}: no successful run record of launcher {claim.launcher!r} holds a "
                    f"{'run of it' if answers else 'value'}", ("claims", index),
                    hint=f"run it ('rra run . {claim.launcher} --all-seeds') and keep the records")
    return steps


def reported_answer(artifact: Artifact, index: int) -> Answer | None:
    """The reported answer of string, set or list claim number ``index``, as the manifest writes it."""
    claims = artifact.data.get("claims")
    raw = claims[index] if isinstance(claims, list) and index < len(claims) else None
    reported = raw.get("reported") if isinstance(raw, Mapping) else None
    try:
        return parse_answer(reported.get("value") if isinstance(reported, Mapping) else None,
                            artifact.manifest.claims[index].kind)
    except AnswerError:
        return None


def _answer_step(what: str, path: Path, file_rel: str, claim: ClaimSpec, expected: Answer | None,
                 digest_ok: bool | None, where: str, findings: Findings) -> dict[str, Any]:
    """The last links of a string, set or list claim's chain: the claim's rule reads an answer from
    the file (RRA923 when it cannot), which matches the reported one (RRA923 when it does not)."""
    try:
        got = extract_answer(path, claim.extract, claim.kind)
    except ExtractError as exc:
        findings.run("RRA923", f"{what}: the claim's rule cannot read {file_rel!r}: {exc}", where)
        return {"ok": False}
    why = None if expected is None else answer_mismatch(claim.kind, expected, got, claim.reported.precision)
    if why is not None:
        findings.run("RRA923", f"{what}: {file_rel!r} gives {answer_text(got)}, not the reported answer: {why}", where)
    return {"extracted_answer": list(got) if isinstance(got, tuple) else got,
            "ok": bool(digest_ok is not False and expected is not None and why is None)}


def check_observations(artifact: Artifact, findings: Findings) -> None:
    """Each reference observation's run_record, when named: a successful run of the claim's
    launcher, with the observation's seed (or repeat) and value (RRA924)."""
    for ci, claim in enumerate(artifact.data.get("claims") or []):
        observations = (claim.get("reference") or {}).get("observations") or []
        for oi, obs in enumerate(observations):
            rel = obs.get("run_record")
            if not isinstance(rel, str):
                continue
            pointer = ("claims", ci, "reference", "observations", oi, "run_record")
            resolved = resolve_inside(artifact.root, rel, kind="file")
            if resolved.path is None:
                continue  # rra validate reports a missing file (RRA303) or one outside the root
            record = read_run_record(artifact.root, resolved.path)
            problem = None
            if isinstance(record, str):
                problem = record
            elif record.get("launcher") != claim.get("launcher"):
                problem = f"it is a run of {record.get('launcher')!r}, not of {claim.get('launcher')!r}"
            elif not is_successful(record):
                problem = f"the run did not succeed ({record.get('status')}, exit {record.get('exit_status')})"
            elif record.get("seed") is not None and obs.get("seed") != record.get("seed"):
                problem = f"the run's seed is {record.get('seed')!r}, the observation's {obs['seed']!r}"
            else:
                metrics = record.get("metrics")
                got = as_finite(metrics.get(claim.get("id"))) if isinstance(metrics, Mapping) else None
                if got is None:
                    problem = f"the record holds no value of claim {claim.get('id')!r}"
                elif not close(got, float(obs.get("value", math.nan))):
                    problem = f"the record's value is {got!r}, the observation's {obs.get('value')!r}"
            if problem is not None:
                findings.at("RRA924", f"claim {claim.get('id')!r}, observation {oi}: run record {rel!r}: {problem}",
                            pointer)
