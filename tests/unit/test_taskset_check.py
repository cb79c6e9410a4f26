"""The task-set check (``rra bench check``, rra_tools/validate/taskset.py): every code's documented
example reports that code and nothing else, every fix is clean, and the important messages are
exact. The examples are whole task sets (rra_tools/validate/rules/taskset.toml) whose artifact
``a/`` is the rule pages' example manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rra_tools.validate.catalog import RULES, TASKSET_RULES
from rra_tools.validate.rule_docs import BASE_FILES, BASE_MANIFEST, RuleDoc, load_docs
from rra_tools.validate.taskset import check_taskset

from ..rra_cli import rra

DOCS = load_docs()


def _write(root: Path, doc: RuleDoc, taskset: str) -> tuple[Path, Path | None]:
    for rel, text in {**{f"a/{k}": v for k, v in BASE_FILES.items()}, "a/rra.yaml": BASE_MANIFEST,
                      **doc.files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    path = root / "tasks.yaml"
    path.write_text(taskset, encoding="utf-8")
    references = root / "references.yaml"
    return path, references if references.is_file() else None


def test_the_range_is_its_own() -> None:
    assert all(code.startswith("RRA9") and len(code) == 6 for code in TASKSET_RULES)
    assert not set(TASKSET_RULES) & set(RULES)
    assert len({r.name for r in TASKSET_RULES.values()}) == len(TASKSET_RULES)


@pytest.mark.parametrize("code", sorted(TASKSET_RULES))
def test_example_reports_its_code_and_nothing_else(tmp_path: Path, code: str) -> None:
    path, references = _write(tmp_path, DOCS[code], DOCS[code].example)
    result = check_taskset(path, references)
    assert {d.code for d in result.diagnostics} == {code}, [(d.code, d.message) for d in result.diagnostics]
    assert all(d.line is not None for d in result.diagnostics), "every finding is located"


@pytest.mark.parametrize("code", sorted(TASKSET_RULES))
def test_fix_is_clean(tmp_path: Path, code: str) -> None:
    path, references = _write(tmp_path, DOCS[code], DOCS[code].fix)
    result = check_taskset(path, references)
    assert [(d.code, d.message) for d in result.diagnostics] == []


def test_every_problem_is_reported_at_once_with_its_place(tmp_path: Path) -> None:
    doc = RuleDoc("", "", "", "")
    taskset = DOCS["RRA954"].example.replace('id: demo\n', 'id: demo\nrepeats: 0\n') + (
        "          - id: top1\n            artifact: missing\n            claim: top1-ls\n")
    path, _ = _write(tmp_path, doc, taskset)
    result = check_taskset(path)
    shown = [(d.code, d.line, d.column, d.message) for d in result.diagnostics]
    # Errors in the order of the file (the reader's first), each at its value.
    assert shown == [
        ("RRA960", 3, 10, "at /repeats: Input should be greater than or equal to 1"),
        ("RRA954", 11, 20, "task 'paper/table-2/top1': artifact 'a' has no claim 'top5' (it has 'top1-ls')"),
        ("RRA952", 18, 17, "task id 'top1' is used twice in paper/table-2 (first at /papers/0/experiments/0/tasks/0/id)"),
        ("RRA953", 19, 23, f"task 'paper/table-2/top1': artifact 'missing' cannot be used: cannot open "
         f"'{tmp_path / 'missing'}': No such file or directory"),
    ]


def test_rra_bench_check_exit_codes_and_formats(tmp_path: Path) -> None:
    path, _ = _write(tmp_path, RuleDoc("", "", "", ""), DOCS["RRA954"].fix)
    done = rra("bench", "check", str(path))
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "1 input(s) checked: 1 clean; 0 error(s), "
                                                                   "0 warning(s), 0 info")
    path.write_text(DOCS["RRA954"].example, encoding="utf-8")
    done = rra("bench", "check", str(path), "--format", "json")
    assert done.returncode == 1
    [found] = json.loads(done.stdout)["results"][0]["diagnostics"]
    assert (found["code"], found["line"], found["column"]) == ("RRA954", 10, 20)
    done = rra("bench", "check", str(tmp_path / "nope.yaml"))
    assert done.returncode == 2
    assert "RRA950" in done.stdout


def test_bench_commands_check_the_task_set_before_they_start(tmp_path: Path) -> None:
    path, _ = _write(tmp_path, RuleDoc("", "", "", ""), DOCS["RRA954"].example)
    (tmp_path / "submission.json").write_text("{}", encoding="utf-8")
    for argv in (("bench", "reproduce", str(path), "-o", str(tmp_path / "out")),
                 ("bench", "run", str(path), "-o", str(tmp_path / "out")),
                 ("bench", "score", str(path), str(tmp_path / "submission.json"))):
        done = rra(*argv)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"{path}:10:20: error[RRA954] task 'paper/table-2/top1': artifact 'a' has "
                                      "no claim 'top5' (it has 'top1-ls')\n"), done.stderr
        assert done.stderr.endswith(f"error: task set {str(path)!r} has 1 error(s); 'rra bench check' lists them\n")
    assert not (tmp_path / "out").exists()


def test_the_session_in_docs_bench_md_is_what_the_command_prints(tmp_path: Path) -> None:
    _write(tmp_path, RuleDoc("", "", "", ""), DOCS["RRA954"].example)
    done = rra("bench", "check", "tasks.yaml", cwd=tmp_path)
    text = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text(encoding="utf-8")
    assert f"```console\n$ rra bench check tasks.yaml\n{done.stdout}```" in text
