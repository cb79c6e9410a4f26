"""Where a repository, as published, states a claim's reported number (rra_tools/builder/stated.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rra_tools.builder.stated import printed, stated_at, unstated_claims


def _repo(root: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@a",
           "PATH": "/usr/bin:/bin", "HOME": str(root)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "published"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.parametrize(("value", "precision", "text"), [
    (91.29, 2, "91.29"), (0.95, 3, "0.950"), (-1.5, 1, "1.5"), (12, 0, "12"), (float("nan"), 2, None),
    (True, 0, None), ("0.9", 1, None)])
def test_printed_is_the_number_as_the_paper_prints_it(value: object, precision: int, text: str | None) -> None:
    assert printed(value, precision) == text


def test_a_number_is_found_between_non_digits_only(tmp_path: Path) -> None:
    commit = _repo(tmp_path, {
        "README.md": "# Results\n\n| model | acc |\n|---|---|\n| ours | 191.29 |\n| base | 91.295 |\n",
        "docs/table.tex": "ours & 0.950 \\\\\n",
        "results/paper.csv": "model,rmse\nours,1.5\n",
        "rra.yaml": "reported: {value: 77.7}\n",
        "notes.py": "# 42.42 in a comment of the code is not a statement of the paper\n"})
    assert stated_at(tmp_path, commit, "91.29") is None  # only in 191.29 and 91.295
    assert stated_at(tmp_path, commit, "191.29") == "README.md:5"
    assert stated_at(tmp_path, commit, "0.950") == "docs/table.tex:1"
    assert stated_at(tmp_path, commit, "1.5") == "results/paper.csv:2"
    assert stated_at(tmp_path, commit, "77.7") is None  # rra's own manifest restates, never states
    assert stated_at(tmp_path, commit, "42.42") is None  # code is not a text of the paper
    assert stated_at(tmp_path, "0" * 40, "191.29") is None  # an unreadable commit is no evidence


def test_a_number_at_the_end_of_a_sentence_is_found(tmp_path: Path) -> None:
    commit = _repo(tmp_path, {"README.md": "The model reaches 0.931.\nIt took 3.5h.\n"})
    assert stated_at(tmp_path, commit, "0.931") == "README.md:1"
    assert stated_at(tmp_path, commit, "3.5") == "README.md:2"


def test_files_written_after_the_commit_are_not_read(tmp_path: Path) -> None:
    commit = _repo(tmp_path, {"README.md": "no numbers\n"})
    (tmp_path / "RESULTS.md").write_text("accuracy 0.577716\n", encoding="utf-8")
    assert stated_at(tmp_path, commit, "0.577716") is None


def test_only_new_or_changed_values_are_checked(tmp_path: Path) -> None:
    commit = _repo(tmp_path, {"README.md": "| a | 0.82 |\n"})
    claims = [{"id": "kept", "reported": {"value": 0.5, "precision": 1}},
              {"id": "stated", "reported": {"value": 0.82, "precision": 2}},
              {"id": "invented", "reported": {"value": 0.9129, "precision": 4}},
              {"id": "text", "kind": "string", "reported": {"value": "cat", "precision": 0}}]
    assert unstated_claims(tmp_path, commit, claims, {"kept": 0.5}) == [("invented", "0.9129")]
    assert unstated_claims(tmp_path, commit, claims, {"kept": 0.4}) == [("kept", "0.5"), ("invented", "0.9129")]


def test_a_number_of_one_significant_digit_counts_only_as_a_table_cell(tmp_path: Path) -> None:
    # An agent could restate a claim at precision 0 (reported 1 for the paper's 0.944): '1' is in
    # almost any README's prose, so it counts only where a table gives it as a result.
    commit = _repo(tmp_path, {
        "README.md": "Step 1: install. Use a learning rate of 0.5 for 7 epochs.\n",
        "results.csv": "model,errors,gap\nours,3,-0.5\n",
        "table.tex": "ours & 7 \\\\\n",
        "docs/notes.md": "| model | k |\n|---|---|\n| ours | 1 |\n"})
    assert stated_at(tmp_path, commit, "1") == "docs/notes.md:3"
    assert stated_at(tmp_path, commit, "3") == "results.csv:2"
    assert stated_at(tmp_path, commit, "0.5") == "results.csv:2"
    assert stated_at(tmp_path, commit, "7") == "table.tex:1"
    assert stated_at(tmp_path, commit, "2") is None
    # Two significant digits are read anywhere, as before.
    commit = _repo(tmp_path / "prose", {"README.md": "We reach 44 clusters.\n"})
    assert stated_at(tmp_path / "prose", commit, "44") == "README.md:1"
