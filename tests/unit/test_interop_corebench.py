"""rra bench import corebench on a small file shaped like CORE-Bench's (tests/data/corebench: three
capsules, number, string and list answers, three runs each but one, capsules unpacked as
CodeOcean exports them): the task set and references it writes load, their kinds, the raw code
without results/, the questions it leaves out and why, scoring of the imported answers, and the
errors (a capsule missing from --code named)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.answers import AnswerInterval
from rra_tools.bench.scoring import score_value
from rra_tools.bench.submissions import read_submission
from rra_tools.bench import load_taskset, score_submissions
from rra_tools.bench.workspace import prepare_workspace
from rra_tools.cli.main import cli
from rra_tools.interop.corebench import CoreBenchError, import_corebench
from rra_tools.validate import validate_path

DATA = Path(__file__).resolve().parents[1] / "data" / "corebench"
FILE, CODE = DATA / "core_sample.json", DATA / "capsules"


@pytest.fixture()
def imported(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    import_corebench(FILE, CODE, out)
    return out


def test_the_import_loads_as_a_task_set_with_its_references(imported: Path) -> None:
    loaded = load_taskset(imported / "taskset.json", imported / "references.json")
    assert loaded.conditions == ("raw",)
    got = {t.key: (t.kind, t.source) for t in loaded.tasks}
    assert got == {
        "capsule-1000001/questions/q01": ("number", "references"),
        "capsule-1000001/questions/q02": ("string", "references"),
        "capsule-1000001/questions/q03": ("number", "references"),
        "capsule-1000001/questions/q04": ("list", "references"),
        "capsule-1000002/questions/q01": ("number", "references"),
        "capsule-1000002/questions/q02": ("set", "references"),
        "capsule-1000002/questions/q03": ("number", "references"),
    }
    tasks = {t.key: t for t in loaded.tasks}
    accuracy = tasks["capsule-1000001/questions/q01"]
    assert accuracy.values == (91.23, 91.05, 91.4) and accuracy.precision == 2
    assert accuracy.interval.low < 91.05 and accuracy.interval.high > 91.4
    optimiser = tasks["capsule-1000001/questions/q02"].interval
    assert isinstance(optimiser, AnswerInterval) and optimiser.expected == "AdamW"
    covariates = tasks["capsule-1000002/questions/q02"].interval
    assert isinstance(covariates, AnswerInterval) and covariates.expected == ("income", "age", "urban")
    # The public task set holds no answer; the manifests (private, beside the references) do.
    public = (imported / "taskset.json").read_text()
    assert "AdamW" not in public and "91.23" not in public and "urban" not in public


def test_the_manifests_are_valid_rra_1_2_artifacts(imported: Path) -> None:
    for capsule in ("capsule-1000001", "capsule-1000002"):
        result = validate_path(imported / "capsules" / capsule)
        assert [d.code for d in result.diagnostics if d.severity.label == "error"] == []
    manifest = json.loads((imported / "capsules" / "capsule-1000002" / "rra.json").read_text())
    assert manifest["environment"]["interpreter"] == {"name": "R", "version": "4"}
    assert manifest["launchers"][0]["argv"] == ["bash", "code/run.sh"]
    claim = manifest["claims"][1]
    assert (claim["kind"], claim["extract"]) == ("set", {"output": "report", "json_pointer":
                                                          "/Report the significant covariates of model 3."})


def test_the_raw_code_is_the_capsule_without_its_results(imported: Path, tmp_path: Path) -> None:
    loaded = load_taskset(imported / "taskset.json", imported / "references.json")
    task = loaded.tasks[0]
    target = tmp_path / "ws"
    prepare_workspace(loaded, task, "raw", target, tmp_path / "cache")
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == ["TASK.md", "code/run.sh", "data/README", "paper/capsule-1000001.md", "task.json"]
    assert "Run 'main.py'" in (target / "paper" / "capsule-1000001.md").read_text()
    # The same capsule gives the same commit: an import is reproducible.
    again = tmp_path / "again"
    import_corebench(FILE, CODE, again)
    assert (again / "taskset.json").read_bytes() == (imported / "taskset.json").read_bytes()


def test_questions_left_out_say_why(tmp_path: Path) -> None:
    done = import_corebench(FILE, CODE, tmp_path / "bench")
    assert (done.tasks, done.capsules, done.kinds) == (7, 2, {"number": 4, "string": 1, "list": 1, "set": 1})
    assert [(s.capsule, s.reason) for s in done.skipped] == [
        ("capsule-1000002", "run 2 gives another answer than run 1 ('Surrey' does not match 'Kent' (normalised: "
                            "'surrey' vs 'kent'))"),
        ("capsule-1000003", "2 run(s) answer it; a task needs 3 reference observations"),
    ]


def test_imported_answers_are_scored_by_match(imported: Path) -> None:
    loaded = load_taskset(imported / "taskset.json", imported / "references.json")
    cell = imported.parent / "cell" / "workspace"
    cell.mkdir(parents=True)
    submission = cell / "submission.json"
    submission.write_text(json.dumps({"submission_version": "1.0", "reproducer": "r", "condition": "raw", "values": [
        {"task": "capsule-1000001/questions/q02", "value": "adamw"},
        {"task": "capsule-1000001/questions/q04", "value": ["ResNet-18", "MobileNetV2", "VGG-11"]},
        {"task": "capsule-1000002/questions/q02", "value": ["urban", "Income", "age"]}]}))
    results = {r.cell.task: r for r in score_submissions(loaded, [submission], condition="raw")}
    # Matched (``inside``) by the imported answers; and, typed in with no run behind them, each is
    # an audit violation: the auditor traces answers as it traces numbers.
    assert [(results[t].inside, results[t].state, results[t].findings[0].kind) for t in (
        "capsule-1000001/questions/q02", "capsule-1000001/questions/q04", "capsule-1000002/questions/q02")] == [
        (True, "audit_violation", "hard_coded"), (False, "audit_violation", "hard_coded"),
        (True, "audit_violation", "hard_coded")]
    assert results["capsule-1000002/questions/q01"].state == "missing_value"
    # Scored without the audit, the mismatch says what differs.
    task = next(t for t in loaded.tasks if t.key == "capsule-1000001/questions/q04")
    entry = read_submission(submission).values["capsule-1000001/questions/q04"]
    assert score_value(task.key, task.interval, entry, [])[3] == (
        'element 1: "MobileNetV2" does not match "VGG-11" (texts normalised)')


def test_a_capsule_missing_from_code_is_named(tmp_path: Path) -> None:
    code = tmp_path / "code"
    shutil.copytree(CODE, code)
    shutil.rmtree(code / "capsule-1000002")
    with pytest.raises(CoreBenchError) as caught:
        import_corebench(FILE, code, tmp_path / "bench")
    assert str(caught.value) == (f"1 capsule(s) of the file are not in {str(code)!r}: 'capsule-1000002' "
                                 f"(looked for {str(code / 'capsule-1000002')!r})")
    assert not (tmp_path / "bench").exists()


@pytest.mark.parametrize("content, message", [
    ("{}", "is not a non-empty JSON list of capsules"),
    ('[{"capsule_id": "c/1"}]', "capsule 0: capsule_id 'c/1' is not an id (letters, digits, '.', '_', '-')"),
    ('[{"capsule_id": "c1", "capsule_title": "T", "task_prompt": "P", "results": {}}]',
     "capsule 0 (c1): results is not a non-empty list of objects (one per run)"),
    ('[{"capsule_id": "c1", "capsule_title": "", "task_prompt": "P", "results": [{}]}]',
     "capsule 0 (c1): capsule_title is not a non-empty string"),
    ("[1", "is not valid JSON: "),
])
def test_a_malformed_file_is_a_located_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "core.json"
    path.write_text(content)
    with pytest.raises(CoreBenchError) as caught:
        import_corebench(path, CODE, tmp_path / "bench")
    assert str(caught.value).startswith(f"CORE-Bench file {str(path)!r}: {message}")


def test_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    done = CliRunner().invoke(cli, ["bench", "import", "corebench", str(FILE), "--code", str(CODE), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == "7 task(s) from 2 capsule(s): 1 list, 4 number, 1 set, 1 string"
    assert f"task set: {out / 'taskset.json'}" in done.output
    again = CliRunner().invoke(cli, ["bench", "import", "corebench", str(FILE), "--code", str(CODE), "--out", str(out)])
    assert again.exit_code == 2
    assert f"error: output directory {str(out)!r} exists and is not empty" in again.output


def test_the_session_in_docs_bench_md_is_what_the_command_prints(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text(encoding="utf-8")
    (session,) = re.findall(r"```console\n\$ rra bench import corebench (.*?)\n(.*?)```", text, flags=re.S)
    args = session[0].split()
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    args = [str(repo / a) if a.startswith("tests/") else a for a in args]
    done = CliRunner().invoke(cli, ["bench", "import", "corebench", *args])
    assert done.exit_code == 0, done.output
    assert done.output == session[1]
