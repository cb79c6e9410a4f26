"""The spellings of a hidden reference value (rra_tools/bench/workspace.py, issue 23 item 6):
what leak_forms lists for a claim's precision and scale, what leak_pattern finds with them, and
what it leaves alone."""

from __future__ import annotations

import struct

import pytest

from rra_tools.bench.workspace import leak_forms, leak_pattern, number_forms, reference_pattern


def _finds(pattern_of: tuple[float, ...], text: bytes, precision: int = 4, scale: float = 1.0,
           exclude: tuple[float, ...] = ()) -> bool:
    pattern = reference_pattern(pattern_of, precision, exclude, scale)
    assert pattern is not None
    return pattern.search(text) is not None


def test_every_rounding_from_the_full_value_down_to_the_printed_precision() -> None:
    forms = leak_forms(3.1279456, 2)
    assert {"3.1279456", "3.127946", "3.12795", "3.1279", "3.128", "3.13"} <= forms
    assert "3.1" not in forms  # below the printed precision (and too few digits)
    # both ways of rounding a half: 0.81285 is 0.8128 to even and 0.8129 half up
    assert {"0.8128", "0.8129"} <= leak_forms(0.81285, 4)


def test_percent_fraction_and_the_claims_scale() -> None:
    forms = leak_forms(94.4444, 2)
    assert {"94.4444", "94.444", "94.44", "0.944444", "0.9444", "9444.44", "9444.4", "9444", "9,444.44"} <= forms
    assert "0.944" not in forms  # past what the printed precision moves to
    # a scale other than 100: the value as the output it is read from holds it
    assert {"3127.9", "3128"} <= leak_forms(3.1279, 1, 0.001)
    assert "3127.9" not in leak_forms(3.1279, 1)


def test_only_specific_spellings() -> None:
    assert leak_forms(0.5, 3) == frozenset()
    assert leak_forms(100.0, 1) == frozenset()  # 100, 1.0, 10000: one significant digit
    assert leak_forms(float("nan"), 2) == leak_forms(0.0, 2) == frozenset()
    assert "0.81" not in leak_forms(0.8129, 2)


def test_the_public_value_and_what_equals_it_are_left_out() -> None:
    forms = leak_forms(0.81253, 4, exclude=(0.8125,))
    assert "0.81253" in forms and "8.1253e-01" in forms
    assert not {"0.8125", "81.25", "8.125e-01", "0,8125", ".8125"} & forms
    assert not _finds((0.81253,), b"0.81250 and 81.250% and 8.125000E-01", exclude=(0.8125,))


@pytest.mark.parametrize("text", [
    b"0.8129", b"score: 0.8129,", b"0.81290000", b"0.81289999999999996", b"8.129e-01", b"8.129E-1", b"8.1290e-001",
    b"8.129d-01", b"8.1289999999e-01", b"81.29%", b"81.29 %", b"81.28999999999999", b"0.008129", b"8.129e-3",
    b"0,8129", b";0,8129;", b".8129", b"-0.8129", b'"0.8129"', b"0x1.a0346dc5d6388p-1",
    struct.pack("<d", 0.8129), struct.pack(">d", 0.8129), "0.8129".encode("utf-16-le"),
])
def test_spellings_found(text: bytes) -> None:
    assert _finds((0.8129,), text), text


@pytest.mark.parametrize("text", [
    b"0.8128", b"0.81291", b"0.812901", b"10.8129", b"1.0.8129", b"8129", b"812.9", b"8.129e-02", b"8.129e+02",
    b"81.3", b"0.813", b"1,0,8129", b"0.8125",
])
def test_spellings_not_found(text: bytes) -> None:
    assert not _finds((0.8129,), text), text


def test_whole_numbers_and_thousands() -> None:
    for text in (b"1235 ms", b"1235.0", b"1234.9999999", b"1,234.6", b"1 234,6", b"1.234,6", b"1_234.6",
                 "1\u202f234.6".encode()):
        assert _finds((1234.6,), text, precision=0), text
    for text in (b"12350", b"1235.5", b"1,235.5", b"1 235,5"):
        assert not _finds((1234.6,), text, precision=0), text


def test_a_pattern_is_none_when_nothing_is_specific() -> None:
    assert leak_pattern([]) is None
    assert reference_pattern([0.5], 3) is None


def test_number_forms_is_unchanged() -> None:
    # the auditor relies on it
    assert number_forms(0.4973, 2) == frozenset({"0.4973"})
    assert number_forms(91.83, 1) == frozenset({"91.8", "91.83"})
