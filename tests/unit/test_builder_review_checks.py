"""The review's checks one by one (rra_tools/builder/review/checks.py) on copies of
tests/fixtures/review/score: every RRA924 problem of an observation's run record, observations
past ones that name no record or a missing one, evidence that is a placeholder (RRA930), where
RRA938 points, the evidence chain of records that name no output or log, in seed and repeat
order, and the tolerance of a re-extracted value at its edges."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from rra_tools.builder.review.checks import challenge_choices, check_observations, close, trace_claim
from rra_tools.builder.review.findings import Findings
from rra_tools.io.artifact import load_artifact

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "review" / "score"
OBSERVATION = '- {value: 91.25, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: "cpython 3.11"}}'


@pytest.fixture
def art(tmp_path: Path) -> Path:
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    return root


def _edit(root: Path, old: str, new: str) -> None:
    manifest = root / "rra.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")


def _record(root: Path, name: str, **fields: Any) -> str:
    record = {"launcher": "score", "seed": 0, "exit_status": 0, "status": "completed",
              "metrics": {"accuracy": 91.25}, **fields}
    run = root / "runs" / "score" / name
    run.mkdir(parents=True)
    (run / "record.json").write_text(json.dumps(record), encoding="utf-8")
    return f"runs/score/{name}/record.json"


def _observations(root: Path, *records: str) -> list[tuple[str, str | None, str]]:
    """The first claim's observations 0, 1, ... naming ``records`` ('' names none); the findings."""
    text = (root / "rra.yaml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "{value: 91.2" in line][:5]
    for line, record in zip(lines, records):
        if record:
            text = text.replace(line, line.replace("{value:", f"{{run_record: {record}, value:"), 1)
    (root / "rra.yaml").write_text(text, encoding="utf-8")
    artifact = load_artifact(root)
    findings = Findings(artifact)
    check_observations(artifact, findings)
    return [(f["code"], f.get("pointer"), f["message"]) for f in findings.items]


def test_every_problem_of_an_observations_run_record(art: Path) -> None:
    (art / "runs").mkdir()
    (art / "runs" / "broken.json").write_text("{", encoding="utf-8")
    records = [
        "runs/broken.json",
        _record(art, "a", launcher="train"),
        _record(art, "b", exit_status=2, status="completed"),
        _record(art, "c", seed=1),  # observation 3 is seed 3's
        _record(art, "d", seed=4, metrics={"loss": 0.1}),
    ]
    found = _observations(art, *records)
    assert [(code, pointer) for code, pointer, _ in found] == [
        ("RRA924", f"/claims/0/reference/observations/{i}/run_record") for i in range(5)]
    assert [message for _, _, message in found] == [
        "claim 'accuracy', observation 0: run record 'runs/broken.json': run record 'runs/broken.json' is not valid "
        "JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        f"claim 'accuracy', observation 1: run record {records[1]!r}: it is a run of 'train', not of 'score'",
        f"claim 'accuracy', observation 2: run record {records[2]!r}: the run did not succeed (completed, exit 2)",
        f"claim 'accuracy', observation 3: run record {records[3]!r}: the run's seed is 1, the observation's 3",
        f"claim 'accuracy', observation 4: run record {records[4]!r}: the record holds no value of claim 'accuracy'",
    ]


def test_a_value_that_is_not_the_observations(art: Path) -> None:
    # observation 0 is 91.25; within 1e-9 relative it is the same number, past it it is not
    rel = _record(art, "a", metrics={"accuracy": 91.25 * (1 + 5e-10)})
    assert _observations(art, rel) == []
    (art / rel).write_text(json.dumps({"launcher": "score", "seed": 0, "exit_status": 0, "status": "completed",
                                       "metrics": {"accuracy": 91.2501}}), encoding="utf-8")
    assert _observations(art) == [
        ("RRA924", "/claims/0/reference/observations/0/run_record",
         f"claim 'accuracy', observation 0: run record {rel!r}: the record's value is 91.2501, the observation's "
         "91.25")]


def test_a_record_without_a_seed_agrees_with_any_observation(art: Path) -> None:
    assert _observations(art, _record(art, "a", seed=None)) == []


def test_observations_after_one_without_a_record_or_with_a_missing_one_are_checked(art: Path) -> None:
    bad = _record(art, "a", launcher="train", seed=2)
    found = _observations(art, "", "runs/score/nowhere/record.json", bad)
    assert [(code, pointer) for code, pointer, _ in found] == [
        ("RRA924", "/claims/0/reference/observations/2/run_record")]


@pytest.mark.parametrize("evidence", ["unknown", "n/a", "?", "Unknown.", "  ?  ", "TODO"])
def test_placeholder_evidence_of_a_change_is_challenged(art: Path, evidence: str) -> None:
    _edit(art, "launchers:\n", "changes:\n  - id: fix\n    kind: bug-fix\n    summary: a fix\n    rationale: it crashed\n"
                               f"    evidence: {json.dumps(evidence)}\n    alters_method: \"no\"\nlaunchers:\n")
    artifact = load_artifact(art)
    findings = Findings(artifact)
    challenge_choices(artifact, findings)
    assert [(f["code"], f.get("pointer"), f["message"]) for f in findings.items if f["code"] == "RRA930"] == [
        ("RRA930", "/changes/0/evidence", f"change 'fix': its evidence {evidence!r} says nothing that can be checked")]


def test_the_missing_guide_is_pointed_at_where_it_is_named(art: Path) -> None:
    def rra938() -> list[tuple[str | None, str]]:
        artifact = load_artifact(art)
        findings = Findings(artifact)
        challenge_choices(artifact, findings)
        return [(f.get("pointer"), f["message"]) for f in findings.items if f["code"] == "RRA938"]

    assert rra938() == [("", "the reproduction guide 'REPRODUCE.md' does not exist")]
    _edit(art, "levels:", "guide: {path: docs/HOWTO.md}\nlevels:")
    assert rra938() == [("/guide", "the reproduction guide 'docs/HOWTO.md' does not exist")]


def _run(root: Path, seed: int | None, repeat: int | None, *, outputs: Any = True, logs: Any = True,
         value: float = 0.9125) -> tuple[tuple[str, int | None, int | None], tuple[dict[str, Any], str]]:
    """An entry of 'best' (latest_successful): a record with its output and its stdout log."""
    name = f"{seed}-{repeat}"
    run = root / "runs" / "score" / name
    run.mkdir(parents=True)
    output = f"results/{name}/metrics.json"
    (root / output).parent.mkdir(parents=True)
    (root / output).write_text(json.dumps({"test": {"accuracy": value}}), encoding="utf-8")
    (run / "stdout.log").write_text(f"accuracy: {value}\n", encoding="utf-8")
    record: dict[str, Any] = {"launcher": "score", "seed": seed, "repeat": repeat, "exit_status": 0,
                              "status": "completed", "metrics": {"accuracy": value * 100, "printed-accuracy": value * 100}}
    if outputs is True:
        outputs = [{"id": "metrics", "path": output, "sha256": hashlib.sha256((root / output).read_bytes()).hexdigest()}]
    if logs is True:
        logs = [{"stream": "stdout", "path": "stdout.log",
                 "sha256": hashlib.sha256((run / "stdout.log").read_bytes()).hexdigest()}]
    record.update(outputs=outputs, logs=logs)
    return ("score", seed, repeat), (record, f"runs/score/{name}/record.json")


def _trace(root: Path, index: int, *runs: tuple[Any, Any]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    artifact = load_artifact(root)
    findings = Findings(artifact)
    steps = trace_claim(artifact, index, dict(runs), findings)
    return steps, [(f["code"], f["message"]) for f in findings.items]


def test_steps_follow_the_seeds_and_repeats_in_numeric_order(art: Path) -> None:
    steps, found = _trace(art, 0, _run(art, 10, None), _run(art, 2, None), _run(art, 0, None))
    assert found == [] and [s["seed"] for s in steps] == [0, 2, 10]
    assert all(s["ok"] for s in steps)
    steps, found = _trace(art, 1, _run(art, None, 3), _run(art, None, 1), _run(art, None, 12), _run(art, 4, 2))
    assert found == [] and [(s.get("seed"), s.get("repeat")) for s in steps] == [(None, 1), (None, 3), (None, 12),
                                                                                    (4, 2)]
    # a record without a seed (or a repeat) comes before seed (or repeat) 0
    steps, found = _trace(art, 0, _run(art, 0, 0), _run(art, None, 5), _run(art, 7, 0), _run(art, 7, None))
    assert found == [] and [(s.get("seed"), s.get("repeat")) for s in steps] == [(None, 5), (0, 0), (7, None),
                                                                                    (7, 0)]


@pytest.mark.parametrize(("outputs", "logs"), [([], []), (None, None), ([{"id": "metrics", "path": 5}],
                                                                         [{"stream": "stdout", "path": None}])])
def test_a_record_that_names_no_output_or_log_breaks_the_chain(art: Path, outputs: Any, logs: Any) -> None:
    runs = (_run(art, None, 2, outputs=outputs, logs=logs), _run(art, None, None, outputs=outputs, logs=logs))
    steps, found = _trace(art, 0, *runs)
    assert found == [("RRA921", "claim 'accuracy', noseed: the record names no output 'metrics'"),
                     ("RRA921", "claim 'accuracy', repeat 2: the record names no output 'metrics'")]
    assert [s["ok"] for s in steps] == [False, False]
    steps, found = _trace(art, 1, *runs)
    assert [code for code, _ in found] == ["RRA921", "RRA921"]
    assert found[1][1].startswith("claim 'printed-accuracy', repeat 2: the record names no ")
    assert "stdout" in found[1][1]


def test_the_tolerance_of_a_re_extracted_value() -> None:
    # the same computation on two machines: equal within 1e-9 relative, or 1e-12 absolute near 0
    assert close(91.25, 91.25 * (1 + 0.9e-9)) and not close(91.25, 91.25 * (1 + 1.1e-9))
    assert close(0.0, 0.9e-12) and not close(0.0, 1.1e-12)
    assert close(-3.0, -3.0) and not close(3.0, -3.0)


def test_each_patch_needs_a_change_record_by_id_or_by_path(art: Path) -> None:
    def patch(name: str, change: str | None) -> str:
        return f"    - {{path: patches/{name}, sha256: \"{'0' * 64}\"{f', change: {change}' if change else ''}}}\n"

    change = ("  - id: {id}\n    kind: bug-fix\n    summary: a fix\n    rationale: it crashed\n"
              "    evidence: \"ValueError: bad shape\"\n    alters_method: \"no\"\n{patch}")
    _edit(art, '  tree:\n    path: "."\n',
          '  upstream: {url: "https://example.org/score.git", commit: "1bf2dfebb28362c659ba4029598b4d34c6edfa64"}\n'
          "  patches:\n" + patch("1.patch", "by-id") + patch("2.patch", None) + patch("3.patch", None)
          + patch("4.patch", "nobody"))
    _edit(art, "launchers:\n", "changes:\n" + change.format(id="by-id", patch="")
          + change.format(id="by-path", patch="    patch: patches/3.patch\n") + "launchers:\n")
    artifact = load_artifact(art)
    findings = Findings(artifact)
    challenge_choices(artifact, findings)
    assert [(f.get("pointer"), f["message"]) for f in findings.items if f["code"] == "RRA932"] == [
        ("/code/patches/1", "patch 'patches/2.patch' has no change record"),
        ("/code/patches/3", "patch 'patches/4.patch' has no change record")]


def test_records_of_other_launchers_or_without_the_value_do_not_stop_the_chain(art: Path) -> None:
    other = (("train", 0, None), ({"launcher": "train", "seed": 0, "metrics": {"accuracy": 1.0}}, "runs/t/r.json"))
    key, (record, where) = _run(art, 1, None)
    empty = (("score", 0, None), ({**record, "seed": 0, "metrics": {"loss": 1.0}}, where))
    steps, found = _trace(art, 0, other, empty, (key, (record, where)))
    assert found == [] and [(s["seed"], s["ok"]) for s in steps] == [(1, True)]


def test_an_output_outside_the_artifact_or_gone(art: Path) -> None:
    outside = _run(art, 0, None, outputs=[{"id": "metrics", "path": "../elsewhere/metrics.json", "sha256": "0" * 64}])
    gone = _run(art, 1, None, outputs=[{"id": "metrics", "path": "results/gone/metrics.json", "sha256": "0" * 64}])
    good = _run(art, 2, None)
    steps, found = _trace(art, 0, outside, gone, good)
    assert found == [
        ("RRA921", "claim 'accuracy', seed 0: output 'metrics' '../elsewhere/metrics.json' named by the record is "
                   "not in the artifact"),
        ("RRA921", "claim 'accuracy', seed 1: output 'metrics' 'results/gone/metrics.json' named by the record is "
                   "not in the artifact")]
    assert [(s["seed"], s["ok"]) for s in steps] == [(0, False), (1, False), (2, True)]


def test_the_records_own_entry_is_followed_among_others(art: Path) -> None:
    key, (record, where) = _run(art, 0, None)
    (art / "runs" / "score" / "0-None" / "stderr.log").write_text("warning\n", encoding="utf-8")
    (art / "results" / "0-None" / "curve.csv").write_text("step,loss\n", encoding="utf-8")
    record["outputs"] = [{"id": "curve", "path": "results/0-None/curve.csv", "sha256": "0" * 64}, *record["outputs"]]
    record["logs"] = ["not an entry", {"stream": "stderr", "path": "stderr.log", "sha256": "0" * 64}, *record["logs"]]
    for claim in (0, 1):
        steps, found = _trace(art, claim, (key, (record, where)))
        assert found == [] and [s["ok"] for s in steps] == [True]
    assert [s["output"] for s in _trace(art, 1, (key, (record, where)))[0]] == ["runs/score/0-None/stdout.log"]


def test_an_output_changed_since_its_run(art: Path) -> None:
    run = _run(art, 0, None)
    digest = run[1][0]["outputs"][0]["sha256"]
    (art / "results" / "0-None" / "metrics.json").write_text(json.dumps({"test": {"accuracy": 0.9125}}) + "\n")
    steps, found = _trace(art, 0, run)
    assert found == [("RRA922", "claim 'accuracy', seed 0: 'results/0-None/metrics.json' has changed since the run "
                                f"(its SHA-256 is not the record's {digest[:12]}...)")]
    assert [(s["digest_ok"], s["ok"]) for s in steps] == [(False, False)]


def test_a_run_record_named_as_evidence_that_cannot_be_read(art: Path) -> None:
    run = art / "runs" / "score" / "0-x"
    run.mkdir(parents=True)
    (run / "record.json").write_text("[]", encoding="utf-8")
    _edit(art, "launchers:\n", "changes:\n  - id: fix\n    kind: bug-fix\n    summary: a fix\n    rationale: it crashed\n"
                               "    evidence: \"Fixed: runs/score/0-x/record.json\"\n    alters_method: \"no\"\n"
                               "launchers:\n")
    artifact = load_artifact(art)
    findings = Findings(artifact)
    challenge_choices(artifact, findings)
    assert [f["message"] for f in findings.items if f["code"] == "RRA930"] == [
        "change 'fix': its evidence names 'runs/score/0-x/record.json': run record "
        "'runs/score/0-x/record.json' is not an object with a 'launcher'"]


def _answer_artifact(root: Path) -> Path:
    """An artifact whose claim 'best' is a string (reported: 'a'), read from out/<run>/m.json."""
    root.mkdir(parents=True)
    observations = [{"value": "a", "repeat": i, "fingerprint": {"hardware": "x", "software": "sh"}} for i in range(3)]
    (root / "rra.json").write_text(json.dumps({
        "rra_version": "1.2", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False, "repeats": 3,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/m.json", "format": "json"}]}],
        "claims": [{"id": "best", "kind": "string", "paper_location": {"table": "1"}, "launcher": "emit",
                    "metric": {"name": "m", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": "/best"}, "reported": {"value": "a", "precision": 0},
                    "reference": {"observations": observations}}]}), encoding="utf-8")
    return root


def _answer_run(root: Path, repeat: int, body: str) -> tuple[Any, Any]:
    output = root / "out" / str(repeat) / "m.json"
    output.parent.mkdir(parents=True)
    output.write_text(body, encoding="utf-8")
    record = {"launcher": "emit", "seed": None, "repeat": repeat, "exit_status": 0, "status": "completed",
              "metrics": {}, "outputs": [{"id": "m", "path": f"out/{repeat}/m.json",
                                          "sha256": hashlib.sha256(output.read_bytes()).hexdigest()}]}
    return ("emit", None, repeat), (record, f"runs/emit/{repeat}/record.json")


def test_a_string_claims_chain_holds_only_with_its_answer_and_its_file_unchanged(tmp_path: Path) -> None:
    root = _answer_artifact(tmp_path / "art")
    same = _answer_run(root, 0, '{"best": "A."}')
    changed = _answer_run(root, 1, '{"best": "a"}')
    (root / "out" / "1" / "m.json").write_text('{"best": "a" }', encoding="utf-8")
    unreadable = _answer_run(root, 2, '{"other": 1}')
    steps, found = _trace(root, 0, same, changed, unreadable)
    assert [(s["repeat"], s.get("extracted_answer"), s.get("digest_ok"), s["ok"]) for s in steps] == [
        (0, "A.", True, True), (1, "a", False, False), (2, None, True, False)]
    assert [code for code, _ in found] == ["RRA922", "RRA923"]
    assert found[1][1].startswith("claim 'best', repeat 2: the claim's rule cannot read 'out/2/m.json': ")


def test_two_claims_that_read_the_same_value_are_an_error(art: Path) -> None:
    """RRA939: a baseline row given the model's extraction would be 'reproduced' by the model's number."""
    def rra939() -> list[tuple[str | None, str]]:
        artifact = load_artifact(art)
        findings = Findings(artifact)
        challenge_choices(artifact, findings)
        return [(f.get("pointer"), f["message"]) for f in findings.items if f["code"] == "RRA939"]

    assert rra939() == []  # the same number read from two outputs is two extractions
    text = (art / "rra.yaml").read_text(encoding="utf-8")
    claim = text[text.index("  - id: accuracy\n"):text.index("  - id: printed-accuracy\n")]
    baseline = claim.replace("id: accuracy", "id: baseline").replace('row: "Classifier"', 'row: "Baseline"')
    (art / "rra.yaml").write_text(text.replace(claim, claim + baseline, 1), encoding="utf-8")
    assert rra939() == [("/claims/1/extract", "claim 'baseline' reads the same value as claim 'accuracy' "
                         "(/claims/0): launcher 'score', the same extract and aggregate, so one run's number would "
                         "'reproduce' both")]
    # Another aggregate of the same values is another number.
    (art / "rra.yaml").write_text(text.replace(claim, claim + baseline.replace("aggregate: mean", "aggregate: max"),
                                               1), encoding="utf-8")
    assert rra939() == []
