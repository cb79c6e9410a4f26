"""Candidate claims written into the draft (rra_tools.builder.draft_claims): which table cell goes
with which printed metric, which launcher, the value and precision as printed, and the TODOs."""

from __future__ import annotations

from typing import Any

from rra_tools.builder.detect.claims import metric_prints, table_numbers
from rra_tools.builder.draft_claims import EXTRACT_TODO, draft_claims
from rra_tools.builder.detect.findings import Finding

README = """\
| Model | Validation accuracy | Top-1 err. | Train time (s) | CIFAR-10 |
|---|---|---|---|---|
| ours | 93.1% | 6.9 | 1200 | 0.5 |
"""

TRAIN = """\
acc = 0.931
print(f"val_accuracy: {acc:.3f}")
print("loss = %.4f" % 0.2)
"""


def _launchers(*scripts: str) -> list[dict[str, Any]]:
    return [{"id": script.removesuffix(".py"), "argv": ["python", script], "seeds": [3]} for script in scripts]


def _candidates() -> list[Finding]:
    return [*table_numbers("README.md", README), *metric_prints("train.py", TRAIN)]


def test_a_cell_and_the_print_of_the_same_metric_are_one_claim() -> None:
    drafted = draft_claims(_candidates(), _launchers("prepare.py", "train.py"))
    accuracy = drafted.claims[0]
    assert accuracy["id"] == "ours-validation-accuracy"
    # 'Validation accuracy' and 'val_accuracy' end with the same word; train.py is the train launcher.
    assert (accuracy["launcher"], accuracy["extract"]) == ("train", {"stream": "stdout", "regex": {
        "pattern": r"val_accuracy:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)"}})
    assert accuracy["metric"] == {"name": "Validation accuracy", "unit": "%", "direction": "higher"}
    assert accuracy["reported"] == {"value": 93.1, "precision": 1}
    # A stochastic launcher: the authors' value is the observation of its first seed.
    [observation] = accuracy["reference"]["observations"]
    assert (observation["value"], observation["seed"], observation["provenance"]["by"]) == (
        93.1, 3, "the authors (README.md:3)")
    assert accuracy["description"].startswith("TODO: confirm the candidate claim 'ours / Validation accuracy = 93.1%' "
                                              "(README.md:3, a number in a results table)")
    # The print is written into that claim; the loss print matches no cell and is not written.
    assert drafted.written == {0: "ours-validation-accuracy", 1: "ours-top-1-err", 2: "ours-train-time-s",
                               3: "ours-cifar-10", 4: "ours-validation-accuracy"}


def test_what_no_print_shows_is_a_placeholder_and_the_assumptions_are_said() -> None:
    drafted = draft_claims(_candidates(), _launchers("prepare.py", "train.py"))
    error, time, dataset = drafted.claims[1:]
    assert error["metric"] == {"name": "Top-1 err.", "unit": "", "direction": "lower"}
    assert error["extract"] == {"stream": "stdout", "regex": {"pattern": EXTRACT_TODO}}
    assert error["launcher"] == "train"  # the last launcher, said among the assumptions
    assert time["metric"]["direction"] == "lower" and time["reported"] == {"value": 1200.0, "precision": 0}
    # A column that names no metric (a data set) leaves the metric's name a TODO.
    assert dataset["metric"]["name"] == "TODO: the metric of column 'CIFAR-10'"
    assert drafted.assumed[0] == ("claim ours-validation-accuracy: metric direction 'higher' (its name does not say "
                                  "lower is better)")
    assert drafted.assumed[1] == ("claim ours-top-1-err: launcher train (the last launcher: no print call of the "
                                  "metric names one), metric direction 'lower' (its name says lower is better)")
    assert drafted.assumed[3].endswith("metric direction 'higher' (the metric is not named)")


def test_a_deterministic_launcher_observation_is_repeat_0_and_ids_are_unique() -> None:
    cells = table_numbers("README.md", "| a | RMSE |\n|---|---|\n| x | 1.5e-3 |\n") * 2
    drafted = draft_claims(cells, [{"id": "main", "argv": ["python", "main.py"], "stochastic": False}])
    assert [c["id"] for c in drafted.claims] == ["x-rmse", "x-rmse-2"]
    assert drafted.claims[0]["reported"] == {"value": 0.0015, "precision": 1}
    assert drafted.claims[0]["reference"]["observations"][0]["repeat"] == 0
    # Without a launcher there is nothing a claim could name: nothing is written.
    assert draft_claims(cells, []).claims == []


RESULTS = "| Model | Accuracy |\n|---|---|\n| Baseline | 85.2 |\n| Ours | 91.29 |\n"
PRINTS = 'print(f"Accuracy: {acc:.2f}")\n'


def test_one_print_is_not_every_rows_extraction() -> None:
    # train.py prints one accuracy: it cannot be both the baseline's and the model's.
    cells = table_numbers("README.md", RESULTS)
    drafted = draft_claims([*cells, *metric_prints("train.py", PRINTS)], _launchers("train.py"))
    baseline, ours = drafted.claims
    for claim in (baseline, ours):
        pattern = claim["extract"]["regex"]["pattern"]
        assert pattern.startswith("TODO: the print at train.py:1 shows one value for 2 rows of this column; ")
    assert drafted.assumed[0].startswith("claim baseline-accuracy: extraction left as TODO: the print of 'Accuracy' "
                                         "(train.py:1) would read every row of column 'Accuracy' (README.md:4 and "
                                         "this one)")
    assert drafted.written == {0: "baseline-accuracy", 1: "ours-accuracy", 2: "baseline-accuracy"}


def test_a_print_goes_to_the_row_its_script_names() -> None:
    cells = table_numbers("README.md", RESULTS)
    regex = r"Accuracy:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)"
    drafted = draft_claims([*cells, *metric_prints("baseline.py", PRINTS)], _launchers("baseline.py", "model.py"))
    baseline, ours = drafted.claims
    assert (baseline["launcher"], baseline["extract"]["regex"]["pattern"]) == ("baseline", regex)
    assert ours["extract"]["regex"]["pattern"].startswith("TODO: the print at baseline.py:1 shows one value")
    # One script per row: each row gets its own script's print.
    both = [*cells, *metric_prints("baseline.py", PRINTS), *metric_prints("src/ours.py", PRINTS)]
    drafted = draft_claims(both, _launchers("baseline.py", "src/ours.py"))
    assert [(c["launcher"], c["extract"]["regex"]["pattern"]) for c in drafted.claims] == [
        ("baseline", regex), ("src/ours", regex)]
    assert drafted.written == {0: "baseline-accuracy", 1: "ours-accuracy", 2: "baseline-accuracy",
                               3: "ours-accuracy"}
