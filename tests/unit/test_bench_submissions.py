"""Reading submissions entry by entry (the hand-checked plain shape agrees with the model), the
cell models' literal states, and the textual forms of reference values."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from rra_tools.bench.submissions import AnswerEntry, Entry, EvidencePaths, read_submission
from rra_tools.bench.workspace import number_forms, reference_pattern
from rra_tools.model.bench_results import AttemptState, StateName
from rra_tools.model.taskset import CONDITION_PATTERN, CodeCondition, condition_name


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "submission.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_literal_states_are_the_enums() -> None:
    assert set(get_args(StateName)) == {s.value for s in AttemptState}
    # A condition is a pattern-checked name: the two conditions and every ablation's name.
    assert all(re.fullmatch(CONDITION_PATTERN, c.value) for c in CodeCondition)
    assert re.fullmatch(CONDITION_PATTERN, condition_name(["guide", "repairs"]))
    assert not re.fullmatch(CONDITION_PATTERN, "refined-without-")


def test_entries_are_read_one_by_one(tmp_path: Path) -> None:
    values = [
        {"task": "p/e/a", "value": 1, "evidence": {"run_record": "runs/r/record.json", "output": "o.json"}},
        {"task": "p/e/b", "value": "0.5"},
        {"task": "p/e/c", "value": True},
        {"task": "p/e/d", "value": 0.25, "extra": 1},
        {"task": "p/e/e", "value": 0.1},
        {"task": "p/e/e", "value": 0.2},
        {"value": 3.0},
        {"task": "p/e/f", "value": 2.5, "evidence": {"run_record": ""}},
    ]
    read = read_submission(_write(tmp_path, {"submission_version": "1.0", "values": values}))
    assert read.error is None
    assert read.values["p/e/a"] == Entry("p/e/a", 1.0, EvidencePaths("runs/r/record.json", "o.json", None))
    # A string is an answer (RRA 1.2 kinds); scoring refuses it for a number claim with this detail.
    assert read.values["p/e/b"] == AnswerEntry("p/e/b", "0.5", None, 1)
    assert read.values["p/e/b"].not_a_number() == "values/1: value '0.5' is a string, not a JSON number"
    assert read.values["p/e/c"] == "values/2: value true is a boolean, not a number"
    assert read.values["p/e/d"] == ("values/3: entry is invalid (Value error, unknown field(s) ['extra']; "
                                    "extensions must start with 'x-')")
    assert read.values["p/e/e"] == "values/5: task 'p/e/e' is given twice"
    assert read.values["p/e/f"] == ("values/7: entry is invalid at /evidence/run_record: String should have at "
                                    "least 1 character")
    assert len(read.values) == 6  # the entry without a task names none


@pytest.mark.parametrize(("text", "error"), [
    ("{not json", "is not valid JSON: "),
    ("[1, 2]", "is a JSON list, not an object"),
    ('{"submission_version": "2.0"}', "is invalid at /submission_version: String should match pattern"),
    ('{"submission_version": "1.0", "values": {}}', "'values' is not a list"),
    ('{"submission_version": "1.0", "values": [{"task": "p/e/t", "value": NaN}]}', None),
])
def test_whole_file_errors(tmp_path: Path, text: str, error: str | None) -> None:
    read = read_submission(_write(tmp_path, text))
    if error is None:
        assert read.error is not None and read.error.startswith("is not valid JSON: NaN is not a JSON value")
    else:
        assert read.error is not None and read.error.startswith(error), read.error
    assert read_submission(tmp_path / "absent.json").error == "does not exist"


def test_reference_forms_stand_alone() -> None:
    assert number_forms(91.83, 1) == {"91.83", "91.8"}
    assert number_forms(0.5, 2) == frozenset()  # too few significant digits to name a value
    pattern = reference_pattern([0.4973], 4, exclude=[0.5])
    assert pattern is not None
    assert pattern.search(b"acc = 0.4973\n") and not pattern.search(b"acc = 10.49731") \
        and not pattern.search(b"v1.0.4973")
    assert reference_pattern([0.8125], 4, exclude=[0.8125]) is None
