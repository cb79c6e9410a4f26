"""``rra review`` through the real CLI, on a small artifact whose launcher runs in a fraction of a
second (``tests/fixtures/review/score``: a deterministic program that writes its accuracy as
JSON and prints it, an empty lock, five seeds, two claims with five reference observations
each: one read from the JSON output, one from the captured standard output).

The author's side is made as an author makes it: ``rra run --all --env locked`` and
``rra guide``. Each test then plants one fault of the kind a review exists to catch and checks
the finding, its code and where it is located.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "review" / "score"


def _records(root: Path) -> list[Path]:
    return sorted((root / "runs").rglob("record.json"))


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    """The fixture with the author's runs recorded and its guide written."""
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    ran = rra("run", str(root), "--all", "--env", "locked", "-q")
    assert ran.returncode == 0, ran.stderr
    guide = rra("guide", str(root))
    assert guide.returncode == 0, guide.stderr
    return root


def review(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Exit status, the JSON report written into the artifact (checked against its schema), and
    standard error."""
    from jsonschema import Draft202012Validator

    proc = rra("review", str(root), *args)
    report_file = root / ".rra" / "review" / "review.json"
    assert report_file.is_file(), proc.stderr
    report = json.loads(report_file.read_text(encoding="utf-8"))
    schema = json.loads((REPO / "schemas" / "rra-review-1.0.schema.json").read_text(encoding="utf-8"))
    problems = [e.message for e in Draft202012Validator(schema).iter_errors(report)]
    assert not problems, problems
    return proc.returncode, report, proc.stderr


def codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, report["findings"]
    return found[0]


def manifest_line(root: Path, text: str) -> int:
    lines = (root / "rra.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_a_sound_artifact_passes_the_review(artifact: Path) -> None:
    from jsonschema import Draft202012Validator

    before = _records(artifact)
    proc = rra("review", str(artifact))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("review passed: 0 error(s), 0 warning(s), 0 info; report: "
                                                   ".rra/review/")
    # Progress on standard error, one line as each run starts and one as it ends.
    assert proc.stderr.count("[review] run score seed ") == 5
    assert "[review] score seed 4: completed, exit 0, " in proc.stderr
    report = json.loads((artifact / ".rra" / "review" / "review.json").read_text(encoding="utf-8"))
    schema = json.loads((REPO / "schemas" / "rra-review-1.0.schema.json").read_text(encoding="utf-8"))
    assert not list(Draft202012Validator(schema).iter_errors(report))
    assert report["passed"] is True and report["clean_shell"] == "pass"
    assert report["environment"]["mode"] == "locked"
    assert report["findings"] == []
    assert report["levels"] == {"claimed": ["available", "functional", "reproduced"],
                                "recorded": ["available", "functional", "reproduced"],
                                "reviewed": ["available", "functional", "reproduced"]}
    assert [c["claim"] for c in report["claims"]] == ["accuracy", "printed-accuracy"]
    for claim in report["claims"]:
        assert claim["inside"] is True and claim["traced"] is True
        assert claim["recorded"] == pytest.approx(91.258) and claim["reviewed"] == pytest.approx(91.258)
        assert [step["ok"] for step in claim["trace"]] == [True] * 5
    # A claim read from standard output traces to the run's captured log.
    first = report["claims"][1]["trace"][0]
    assert first["output"] == first["record"].replace("record.json", "stdout.log") and first["digest_ok"] is True
    assert [(r["seed"], r["successful"], r["same_outputs"]) for r in report["runs"]] == [
        (s, True, True) for s in range(5)]
    # The review's runs went into its own directory; the author's records are untouched.
    assert _records(artifact) == before
    directory = artifact / report["directory"]
    assert len(list((directory / "work" / "runs").rglob("record.json"))) == 5
    # Of the copy the launchers ran in, only the evidence is kept: a pack would carry the rest twice.
    assert sorted(p.name for p in (directory / "work").iterdir()) == ["results", "rra.yaml", "runs"]
    assert len(list((directory / "work" / "results").rglob("metrics.json"))) == 5
    assert (directory / "review.json").read_bytes() == (artifact / ".rra" / "review" / "review.json").read_bytes()
    assert (directory / "review.md").read_text(encoding="utf-8").startswith("# Review of `score-fixture`: PASSED\n")


def test_review_catches_an_unsupported_change(artifact: Path) -> None:
    with (artifact / "rra.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write("changes:\n"
                       "  - id: faster-eval\n"
                       "    kind: performance\n"
                       "    summary: Evaluate on a subsample.\n"
                       "    rationale: The full test split is slow.\n"
                       "    evidence: none\n"
                       "    alters_method: unknown\n"
                       "    affects: {claims: [accuracy]}\n"
                       "  - id: seed-fix\n"
                       "    kind: bug-fix\n"
                       "    summary: Pass the seed through.\n"
                       "    rationale: The seed was ignored.\n"
                       "    evidence: The run record runs/score/9-missing/record.json shows it.\n"
                       "    alters_method: \"no\"\n")
    code, report, _ = review(artifact)
    assert code == 1
    assert report["passed"] is False and report["clean_shell"] == "pass"
    # The guide no longer describes the manifest either (RRA215, from rra validate).
    assert sorted(codes(report)) == ["RRA215", "RRA930", "RRA930", "RRA931"]
    unknown = finding(report, "RRA931")
    assert unknown["severity"] == "error"
    assert unknown["message"] == "change 'faster-eval' says alters_method: unknown"
    assert (unknown["file"], unknown["line"], unknown["pointer"]) == (
        "rra.yaml", manifest_line(artifact, "alters_method: unknown"), "/changes/0/alters_method")
    without = [f for f in report["findings"] if f["code"] == "RRA930"]
    assert [f["message"] for f in without] == [
        "change 'faster-eval': its evidence 'none' says nothing that can be checked",
        "change 'seed-fix': its evidence names 'runs/score/9-missing/record.json', which is not in the artifact"]
    assert [f["line"] for f in without] == [manifest_line(artifact, "evidence: none"),
                                            manifest_line(artifact, "evidence: The run record")]


def test_review_catches_an_out_of_interval_result(artifact: Path) -> None:
    # The code changes after the author's runs: it no longer gives the paper's number.
    script = artifact / "score.py"
    script.write_text(script.read_text(encoding="utf-8").replace("0.9125", "0.9025"), encoding="utf-8")
    code, report, stderr = review(artifact)
    assert code == 1, stderr
    assert [f["pointer"] for f in report["findings"] if f["code"] == "RRA901"] == ["/claims/0", "/claims/1"]
    outside = report["findings"][0]
    assert outside["code"] == "RRA901" and outside["severity"] == "error"
    assert outside["message"].startswith("claim 'accuracy': the review obtained 90.258")
    assert "outside the acceptance interval [91.208" in outside["message"]
    assert (outside["file"], outside["line"], outside["pointer"]) == ("rra.yaml", manifest_line(artifact, "- id: accuracy"),
                                                                      "/claims/0")
    assert outside["record"].startswith(report["directory"] + "/work/runs/score/0-")
    # Every run differs from the author's recorded run of the same seed, in both values and its output.
    assert codes(report).count("RRA903") == 10 and codes(report).count("RRA904") == 5
    assert report["levels"]["recorded"] == ["available", "functional", "reproduced"]
    assert report["levels"]["reviewed"] == ["available", "functional"]
    assert [(c["inside"], c["traced"]) for c in report["claims"]] == [(False, True), (False, True)]


def test_review_catches_a_placeholder(artifact: Path) -> None:
    manifest = artifact / "rra.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        '  year: 2026\n', '  year: 2026\n  venue: "TODO: venue of the paper"\n'), encoding="utf-8")
    code, report, _ = review(artifact, "--no-run")
    assert code == 1
    assert not (artifact / report["directory"] / "work").exists()
    placeholder = finding(report, "RRA214")
    assert placeholder["severity"] == "error"
    assert (placeholder["file"], placeholder["line"], placeholder["pointer"]) == (
        "rra.yaml", manifest_line(artifact, "TODO: venue"), "/paper/venue")
    assert report["clean_shell"] == "not-run" and report["runs"] == []


def test_review_without_a_lock_runs_nothing_unless_told(artifact: Path) -> None:
    manifest = artifact / "rra.yaml"
    text = manifest.read_text(encoding="utf-8")
    start = text.index("  lock:\n")
    end = text.index("  hardware:\n")
    manifest.write_text(text[:start] + text[end:], encoding="utf-8")
    code, report, _ = review(artifact)
    assert code == 1
    assert report["clean_shell"] == "not-run" and report["runs"] == []
    assert finding(report, "RRA910")["message"] == ("the manifest has no environment lock: no fresh environment can "
                                                    "be built, and nothing was run")
    assert "RRA911" not in codes(report)
    code, report, stderr = review(artifact, "--env", "current", "--keep-work")
    assert code == 1
    assert report["clean_shell"] == "pass", stderr
    assert (artifact / report["directory"] / "work" / "score.py").is_file()
    assert report["environment"] == {"mode": "current"}
    assert finding(report, "RRA910")["severity"] == "error"


def test_review_reports_a_failing_launcher_and_a_broken_trace(artifact: Path) -> None:
    # The author's output of seed 2 is edited after the run, and the program now fails for seed 3.
    (artifact / "results" / "seed-2" / "metrics.json").write_text('{"test": {"accuracy": 0.95}}\n')
    script = artifact / "score.py"
    script.write_text(script.read_text(encoding="utf-8").replace(
        "args = parser.parse_args()\n", "args = parser.parse_args()\nif args.seed == 3:\n    raise SystemExit(3)\n"),
        encoding="utf-8")
    code, report, stderr = review(artifact)
    assert code == 1
    assert "[review] score seed 3: completed, exit 3, " in stderr
    failed = finding(report, "RRA900")
    assert failed["message"].startswith("launcher 'score' seed 3 did not succeed from a clean shell (completed, exit 3)")
    assert failed["file"] == failed["record"] and failed["record"].endswith("/record.json")
    assert report["clean_shell"] == "fail"
    digest = finding(report, "RRA922")
    assert digest["message"].startswith("claim 'accuracy', seed 2: 'results/seed-2/metrics.json' has changed since "
                                        "the run")
    assert digest["record"].startswith("runs/score/2-")
    value = finding(report, "RRA923")
    assert value["message"] == ("claim 'accuracy', seed 2: re-extracting 'results/seed-2/metrics.json' gives 95.0, the "
                                "record says 91.27")
    # The printed value of seed 2 is in its log, which nobody edited: that claim still traces.
    assert [c["traced"] for c in report["claims"]] == [False, True]


def test_json_format_prints_the_report_written(artifact: Path) -> None:
    proc = rra("review", str(artifact), "--no-run", "-f", "json")
    assert proc.returncode == 1
    printed = json.loads(proc.stdout)
    assert printed == json.loads((artifact / ".rra" / "review" / "review.json").read_text(encoding="utf-8"))
    assert printed["clean_shell"] == "not-run" and printed["passed"] is False
    assert proc.stderr.startswith("[review] checking the manifest's choices")


def test_review_directory_must_be_new(artifact: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    proc = rra("review", str(artifact), "--no-run", "-o", str(taken))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: the review directory {str(taken)!r} already exists\n")


def test_review_checks_the_run_record_an_observation_names(artifact: Path) -> None:
    seed1 = sorted((artifact / "runs" / "score").glob("1-*/record.json"))[0].relative_to(artifact).as_posix()
    edit = (artifact / "rra.yaml").read_text(encoding="utf-8").replace(
        '        - {value: 91.25, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: "cpython 3.11"}}\n',
        '        - {value: 91.25, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: "cpython 3.11"}, '
        f'run_record: {seed1}}}\n', 1)
    (artifact / "rra.yaml").write_text(edit, encoding="utf-8")
    code, report, _ = review(artifact, "--no-run")
    assert code == 1
    mismatch = finding(report, "RRA924")
    assert mismatch["message"] == (f"claim 'accuracy', observation 0: run record {seed1!r}: the run's seed is 1, the "
                                   "observation's 0")
    assert (mismatch["pointer"], mismatch["line"]) == ("/claims/0/reference/observations/0/run_record",
                                                       manifest_line(artifact, "run_record:"))


def test_records_kept_at_the_artifact_root_are_not_copied(tmp_path: Path) -> None:
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    manifest = root / "rra.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(
        "levels: [", 'evidence: {run_records: "."}\nlevels: ['), encoding="utf-8")
    assert rra("run", str(root), "--all", "--env", "locked", "-q").returncode == 0
    assert rra("guide", str(root)).returncode == 0
    assert len(list((root / "score").glob("*/record.json"))) == 5
    code, report, stderr = review(root)
    assert code == 0, (stderr, report["findings"])
    # The review counted its own five runs, not the author's five copied along.
    work = root / report["directory"] / "work"
    assert len(list((work / "score").glob("*/record.json"))) == 5
    assert all(r["recorded"].startswith("score/") for r in report["runs"])


def _cite(root: Path, record: str) -> None:
    """Observation 0 of the first claim cites ``record``."""
    edit = (root / "rra.yaml").read_text(encoding="utf-8").replace(
        '        - {value: 91.25, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: "cpython 3.11"}}\n',
        '        - {value: 91.25, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: "cpython 3.11"}, '
        f'run_record: {record}}}\n', 1)
    (root / "rra.yaml").write_text(edit, encoding="utf-8")


def test_the_records_observations_cite_are_copied_so_the_levels_can_be_met(artifact: Path) -> None:
    # Without them the review's copy failed RRA303 (a cited file that does not exist), and its
    # levels read 'none' with no finding saying why.
    seed0 = sorted((artifact / "runs" / "score").glob("0-*/record.json"))[0]
    _cite(artifact, seed0.relative_to(artifact).as_posix())
    code, report, stderr = review(artifact)
    assert code == 0, (stderr, report["findings"])
    assert report["levels"]["reviewed"] == report["levels"]["recorded"] == ["available", "functional", "reproduced"]
    assert "RRA940" not in codes(report)
    work = root_work = artifact / report["directory"] / "work"
    copied = work / seed0.parent.relative_to(artifact)
    assert sorted(p.name for p in copied.iterdir()) == sorted(p.name for p in seed0.parent.iterdir())
    assert len(list((root_work / "runs" / "score").glob("*/record.json"))) == 6  # the review's 5 and the cited one


def test_a_review_that_meets_no_level_says_why(artifact: Path) -> None:
    _cite(artifact, "runs/score/nowhere/record.json")
    code, report, _ = review(artifact)
    assert report["levels"]["reviewed"] == []
    why = finding(report, "RRA940")
    assert why["severity"] == "warning" and why["file"] == f"{report['directory']}/work/rra.yaml"
    assert why["message"].startswith("the review's runs meet no level: its errors: RRA303 file "
                                     "'runs/score/nowhere/record.json' does not exist (at /claims/0/reference/"
                                     "observations/0/run_record)")
