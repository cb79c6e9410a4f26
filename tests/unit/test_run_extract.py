"""Metric extraction: JSON pointer, CSV cell, regex; malformed outputs give messages, not crashes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rra_tools.model.claims import Extract
from rra_tools.run.extract import ExtractError, extract_value, json_pointer


def _value(tmp_path: Path, text: str | bytes, **rule: Any) -> float:
    path = tmp_path / "out"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return extract_value(path, Extract(output="o", **rule))


def test_json_pointer_rfc6901() -> None:
    doc = {"a/b": {"m~n": [10, 20]}, "": 1}
    assert json_pointer(doc, "/a~1b/m~0n/1") == 20
    assert json_pointer(doc, "/") == 1
    assert json_pointer(doc, "") == doc
    with pytest.raises(ExtractError, match=r"^no array element '01' at '/a~1b/m~0n/01' \(length 2\)$"):
        json_pointer(doc, "/a~1b/m~0n/01")
    with pytest.raises(ExtractError, match=r"^no member 'x' at '/x'$"):
        json_pointer(doc, "/x")


def test_json_with_scale(tmp_path: Path) -> None:
    assert _value(tmp_path, '{"test": {"accuracy": 0.97}}', json_pointer="/test/accuracy", scale=100) == \
        pytest.approx(97.0)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "is not valid JSON: "),
    ('{"a": "high"}', "the value at '/a' is 'high', not a number"),
    ('{"a": true}', "the value at '/a' is true, not a number"),
    ('{"a": NaN}', "is not valid JSON: NaN is not a JSON value"),
    ('{"b": 1}', "no member 'a' at '/a'"),
    (b"\xff\xfe", "is not UTF-8 text (byte 0)"),
])
def test_malformed_json(tmp_path: Path, text: str | bytes, message: str) -> None:
    with pytest.raises(ExtractError) as info:
        _value(tmp_path, text, json_pointer="/a")
    assert str(info.value).startswith(message)


CSV = "epoch,split,acc\n1,val,0.5\n2,val,0.6\n2,test,0.7\n"


def test_csv_row_index_and_where(tmp_path: Path) -> None:
    assert _value(tmp_path, CSV, csv={"column": "acc"}) == 0.7
    assert _value(tmp_path, CSV, csv={"column": "acc", "row_index": 0}) == 0.5
    assert _value(tmp_path, CSV, csv={"column": "acc", "where": {"epoch": "2", "split": "val"}}) == 0.6


@pytest.mark.parametrize(("rule", "message"), [
    ({"column": "loss"}, "has no column 'loss' (columns: 'epoch', 'split', 'acc')"),
    ({"column": "acc", "row_index": 5}, "has 3 data rows; row_index 5 is out of range"),
    ({"column": "acc", "where": {"epoch": "2"}}, "has 2 rows matching {'epoch': '2'}; exactly one is needed"),
    ({"column": "split", "row_index": 0}, "column 'split' of row 0 is 'val', not a number"),
])
def test_csv_errors(tmp_path: Path, rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ExtractError) as info:
        _value(tmp_path, CSV, csv=rule)
    assert str(info.value) == message


LOG = "epoch 1 acc=0.50\nepoch 2 acc=0.75\nfinal acc=0.80\n"


def test_regex_first_and_last(tmp_path: Path) -> None:
    assert _value(tmp_path, LOG, regex={"pattern": r"acc=([0-9.]+)"}) == 0.80
    assert _value(tmp_path, LOG, regex={"pattern": r"acc=([0-9.]+)", "occurrence": "first"}) == 0.50
    assert _value(tmp_path, LOG, regex={"pattern": r"^epoch (\d) acc=([0-9.]+)$", "group": 2}) == 0.75


def test_regex_errors(tmp_path: Path) -> None:
    with pytest.raises(ExtractError) as info:
        _value(tmp_path, LOG, regex={"pattern": r"loss=(\d+)"})
    assert str(info.value) == "has no match for regex " + repr(r"loss=(\d+)")
    with pytest.raises(ExtractError, match=r"^regex 'acc=\(x\)' has no group 2$"):
        _value(tmp_path, LOG, regex={"pattern": r"acc=(x)", "group": 2})


def test_directory_is_not_a_metrics_file(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match=r"^is a directory, not a file$"):
        extract_value(tmp_path, Extract(output="o", json_pointer="/a"))
