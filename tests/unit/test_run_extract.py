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


def test_json_pointer_steps_and_their_messages() -> None:
    doc = {"a": [10, {"b": "x"}], "n": 3}
    assert json_pointer(doc, "/a/0") == 10 and json_pointer(doc, "/a/1/b") == "x"
    with pytest.raises(ExtractError, match=r"^JSON pointer 'a' does not start with '/'$"):
        json_pointer(doc, "a")
    with pytest.raises(ExtractError, match=r"^no array element '2' at '/a/2' \(length 2\)$"):
        json_pointer(doc, "/a/2")
    with pytest.raises(ExtractError, match=r"^no array element 'x' at '/a/x' \(length 2\)$"):
        json_pointer(doc, "/a/x")
    with pytest.raises(ExtractError, match=r"^no member 'c' at '/a/1/c'$"):
        json_pointer(doc, "/a/1/c")
    with pytest.raises(ExtractError, match=r"^'/n/x' steps into a int, not an object or array$"):
        json_pointer(doc, "/n/x")


@pytest.mark.parametrize(("text", "scale", "message"), [
    ('{"a": 1e400}', 1.0, "the value at '/a' is inf, not a finite number"),
    ('{"a": 1e300}', 1e10, "value 1e+300 times scale 10000000000.0 is not finite"),
    ('{"a": [' + "1, " * 30 + "1]}", 1.0, "the value at '/a' is [" + "1, " * 19 + "1,, not a number"),
    ('{"a": "' + "x" * 70 + '"}', 1.0, "the value at '/a' is '" + "x" * 60 + "', not a number"),
])
def test_values_that_are_not_finite_numbers(tmp_path: Path, text: str, scale: float, message: str) -> None:
    with pytest.raises(ExtractError) as info:
        _value(tmp_path, text, json_pointer="/a", scale=scale)
    assert str(info.value) == message


def test_csv_negative_row_index_and_where_columns(tmp_path: Path) -> None:
    assert _value(tmp_path, CSV, csv={"column": "acc", "row_index": -3}) == 0.5
    with pytest.raises(ExtractError, match=r"^has 3 data rows; row_index -4 is out of range$"):
        _value(tmp_path, CSV, csv={"column": "acc", "row_index": -4})
    with pytest.raises(ExtractError, match=r"^has no column 'run' named in 'where'$"):
        _value(tmp_path, CSV, csv={"column": "acc", "where": {"epoch": "1", "run": "a", "fold": "b"}})
    with pytest.raises(ExtractError, match=r"^has no column 'acc' \(columns: none\)$"):
        _value(tmp_path, "", csv={"column": "acc"})


def test_a_missing_output_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match=r"^cannot be read: No such file or directory$"):
        extract_value(tmp_path / "nothing.json", Extract(output="o", json_pointer="/a"))


def test_outputs_up_to_256_mib_are_read(tmp_path: Path) -> None:
    # Sparse files: the larger one is refused by its size alone; the one at the limit is read
    # (its NUL bytes are not JSON).
    path = tmp_path / "big"
    with open(path, "wb") as handle:
        handle.truncate(256 * 1024 * 1024 + 1)
    with pytest.raises(ExtractError, match=r"^is larger than 268435456 bytes$"):
        extract_value(path, Extract(output="o", json_pointer="/a"))
    with open(path, "r+b") as handle:
        handle.truncate(256 * 1024 * 1024)
    with pytest.raises(ExtractError, match=r"^is not valid JSON: Expecting value: line 1 column 1 \(char 0\)$"):
        extract_value(path, Extract(output="o", json_pointer="/a"))
