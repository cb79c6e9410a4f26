"""The checks of ``rra review`` that need no run, through the library (``review_artifact`` with
``run=False``) on copies of ``tests/fixtures/review/score``; the runs and the CLI are tested in
``tests/acceptance/test_builder_review.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rra_tools.builder.review.artifact import ReviewError, ReviewOptions, review_artifact
from rra_tools.builder.review.checks import _evidence_problem
from rra_tools.builder.review.codes import REVIEW_CODES, review_codes_table
from rra_tools.io.artifact import load_artifact
from rra_tools.model.review_report import ReviewReport

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "review" / "score"
STATIC = ReviewOptions(run=False)


@pytest.fixture
def art(tmp_path: Path) -> Path:
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    return root


def edit(root: Path, old: str, new: str) -> None:
    manifest = root / "rra.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")


def found(report: ReviewReport) -> list[tuple[str, str | None, str]]:
    return [(f.code, f.pointer, f.message) for f in report.findings]


@pytest.mark.parametrize(("evidence", "problem"), [
    ("none", "its evidence 'none' says nothing that can be checked"),
    ("N/A.", "its evidence 'N/A.' says nothing that can be checked"),
    ("TODO: paste the log", "its evidence 'TODO: paste the log' says nothing that can be checked"),
    ("See logs/pip-install.log.", "its evidence names 'logs/pip-install.log', which is not in the artifact"),
    ("train.py: error: unrecognized arguments: --epoch 3", None),
    ("Run records score.py and results/ show it; https://example.org/a/b.json too", None),
    ("The upstream issue https://github.com/org/repo/issues/12.", None),
])
def test_evidence_that_says_nothing_or_names_a_missing_file(art: Path, evidence: str, problem: str | None) -> None:
    assert _evidence_problem(load_artifact(art), evidence) == problem


def test_an_existing_file_named_as_evidence_is_support(art: Path) -> None:
    (art / "logs").mkdir()
    (art / "logs" / "pip-install.log").write_text("error: no wheel\n")
    assert _evidence_problem(load_artifact(art), "See logs/pip-install.log.") is None


def test_a_run_record_named_as_evidence_must_show_a_successful_run(art: Path) -> None:
    run = art / "runs" / "score" / "0-20260101T000000.000000Z"
    run.mkdir(parents=True)
    record = {"launcher": "score", "seed": 0, "exit_status": 1, "status": "completed", "metrics": {}}
    (run / "record.json").write_text(json.dumps(record))
    rel = "runs/score/0-20260101T000000.000000Z/record.json"
    assert _evidence_problem(load_artifact(art), f"Before the fix: {rel}.") == (
        f"its evidence names the run record {rel!r}, whose run did not succeed (completed, exit 1)")
    record.update(exit_status=0)
    (run / "record.json").write_text(json.dumps(record))
    assert _evidence_problem(load_artifact(art), f"After the fix: {rel}.") is None


def test_static_review_of_an_artifact_without_runs_or_guide(art: Path) -> None:
    report = review_artifact(art, options=STATIC)
    # Nothing ran and the author has no records yet: the claim traces to nothing, and there is no guide.
    assert [f.code for f in report.findings] == ["RRA920", "RRA920", "RRA601", "RRA601", "RRA938"]
    assert report.clean_shell == "not-run" and report.passed is False
    assert report.levels.claimed == ["available", "functional", "reproduced"]
    assert report.levels.recorded == ["available"] and report.levels.reviewed == []
    assert (art / ".rra" / "review" / "review.json").is_file()


def test_undecided_discrepancy_seed_hardware_and_patch_challenges(art: Path) -> None:
    edit(art, '"--seed", "{seed}", "--out", "results/seed-{seed}/metrics.json"',
         '"--seed", "7", "--out", "results/metrics.json"')
    edit(art, "  hardware:\n    cpu_cores: 1\n    ram_gib: 1\n", "")
    with (art / "rra.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write("discrepancies:\n"
                       "  - id: split\n"
                       "    paper_says: The paper scores the validation split.\n"
                       "    code_does: score.py scores the test split.\n"
                       "    follows: code\n"
                       "    rationale: 'TODO: why the code is followed'\n"
                       "    impact: Unknown.\n")
    report = review_artifact(art, options=STATIC)
    codes = {code: (pointer, message) for code, pointer, message in found(report)}
    assert codes["RRA934"] == ("/discrepancies/0/rationale",
                               "discrepancy 'split': rationale is still a placeholder ('TODO: why the code is "
                               "followed'); the decision to follow the code is not explained")
    assert codes["RRA935"] == ("/discrepancies/0", "discrepancy 'split' names no claim")
    assert codes["RRA936"][0] == "/launchers/0/argv"
    assert codes["RRA936"][1] == "launcher 'score' declares seeds [0, 1, 2, 3, 4] but its argv never passes {seed}"
    assert codes["RRA937"] == ("/environment", "environment.hardware is not declared")
    # The placeholder is said once, by the review's more specific finding.
    assert "RRA214" not in codes
    line = next(i for i, text in enumerate((art / "rra.yaml").read_text().splitlines(), 1) if "TODO: why" in text)
    (undecided,) = [f for f in report.findings if f.code == "RRA934"]
    assert (undecided.file, undecided.line, undecided.severity) == ("rra.yaml", line, "error")


def test_patch_without_change_record_and_unproven_series(art: Path) -> None:
    patch = art / "patches" / "0001-fix.patch"
    patch.parent.mkdir()
    patch.write_text("--- a/score.py\n+++ b/score.py\n")
    import hashlib

    digest = hashlib.sha256(patch.read_bytes()).hexdigest()
    edit(art, '  tree:\n    path: "."\n',
         '  upstream: {url: "https://example.org/score.git", commit: "1bf2dfebb28362c659ba4029598b4d34c6edfa64"}\n'
         f'  patches:\n    - {{path: patches/0001-fix.patch, sha256: "{digest}"}}\n')
    report = review_artifact(art, options=STATIC)
    codes = {code: (pointer, message) for code, pointer, message in found(report)}
    assert codes["RRA932"] == ("/code/patches/0", "patch 'patches/0001-fix.patch' has no change record")
    assert codes["RRA933"][0] == "/code/patches"
    assert codes["RRA933"][1].startswith("the patch series cannot be proved: ")


def test_review_directory_that_exists_is_refused(art: Path, tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="already exists"):
        review_artifact(art, options=ReviewOptions(run=False, directory=tmp_path))


def test_unknown_environment_is_refused(art: Path) -> None:
    with pytest.raises(ReviewError, match="unknown review environment 'docker'"):
        review_artifact(art, options=ReviewOptions(env="docker"))


def test_every_code_is_in_the_review_range_and_documented() -> None:
    assert all("RRA900" <= code <= "RRA949" for code in REVIEW_CODES)
    assert review_codes_table() in (REPO / "docs" / "builder.md").read_text(encoding="utf-8")


def test_the_copy_for_review_leaves_out_what_a_pack_leaves_out(art: Path, tmp_path: Path) -> None:
    # One reading of .rraignore (rra_tools.io.tree.ignore_rules) for pack, validate and review:
    # negation, anchoring and '**' hold, and a comment that is not UTF-8 is no reason to stop.
    from rra_tools.builder.review.runs import copy_for_review
    from rra_tools.io.tree import walk_tree

    (art / ".rraignore").write_bytes(b"# notes in Latin-1: caf\xe9\n*.log\n!keep.log\n/data/\nscratch/**/tmp\n")
    for rel in ("a.log", "keep.log", "data/x.csv", "sub/data/y.csv", "scratch/a/b/tmp", "scratch/a/b/kept"):
        (art / rel).parent.mkdir(parents=True, exist_ok=True)
        (art / rel).write_text(rel, encoding="utf-8")
    work = tmp_path / "work"
    copy_for_review(load_artifact(art), work)
    copied = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())
    assert copied == [".rraignore", "keep.log", "requirements.lock", "rra.yaml", "score.py", "scratch/a/b/kept",
                      "sub/data/y.csv"]
    assert copied == sorted(rel for rel, entry in walk_tree(art) if entry.is_file())
