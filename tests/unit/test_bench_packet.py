"""Packets through the library (rra_tools/bench/packet.py): the recorded assignment of a seed
never changes, a person named twice is named in the refusal, the kept state reads back as the
packet was made, and a packet whose state file is gone or spoilt is still scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rra_tools.bench import BenchError, load_taskset
from rra_tools.bench.packet import PACKET_SET_NAME, _kept, assign, export_packets, score_packets
from rra_tools.bench.workspace import snapshot
from rra_tools.model.packet import PacketSet

from ..bench_tiny import tiny_artifact, tiny_taskset


def test_a_seed_gives_the_assignment_it_gave_when_recorded() -> None:
    # A packet set records its seed so that anyone can draw the same assignment again, with any
    # later version: the draw itself must never change.
    got = assign(["ann", "bob", "cy", "dee"], ["a/b/t1", "a/b/t2", "a/b/t3"], ["raw", "refined"], 7)
    assert got == [
        ("ann", "a/b/t1", "raw"), ("ann", "a/b/t2", "raw"), ("ann", "a/b/t3", "refined"),
        ("bob", "a/b/t1", "refined"), ("bob", "a/b/t2", "refined"), ("bob", "a/b/t3", "raw"),
        ("cy", "a/b/t1", "refined"), ("cy", "a/b/t2", "refined"), ("cy", "a/b/t3", "raw"),
        ("dee", "a/b/t1", "raw"), ("dee", "a/b/t2", "raw"), ("dee", "a/b/t3", "refined")]
    # With three conditions, the order in which they are handed round counts too.
    three = assign(["ann", "bob", "cy"], ["a/b/t1", "a/b/t2"], ["raw", "refined", "refined-without-guide"], 1)
    assert three == [
        ("ann", "a/b/t1", "raw"), ("ann", "a/b/t2", "raw"),
        ("bob", "a/b/t1", "refined"), ("bob", "a/b/t2", "refined-without-guide"),
        ("cy", "a/b/t1", "refined-without-guide"), ("cy", "a/b/t2", "refined")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, PacketSet]:
    tmp = tmp_path_factory.mktemp("packets")
    tiny_artifact(tmp / "tiny")
    path, references = tiny_taskset(tmp, repeats=1)
    taskset = load_taskset(path, references)
    made = export_packets(taskset, ["ann", "bob"], tmp / "study", seed=3, conditions=["refined"])
    return tmp, path, made


def test_a_person_named_twice_is_named(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    path, references = tiny_taskset(tmp_path, repeats=1)
    taskset = load_taskset(path, references)
    for people in (["ann", "bob", "bob"], ["bob", "ann", "cy", "ann"]):
        twice = people[-1]
        with pytest.raises(BenchError, match=f"^person '{twice}' is named twice$"):
            export_packets(taskset, people, tmp_path / "study", seed=1)
    assert not (tmp_path / "study").exists()


def test_the_packet_set_file_is_the_returned_one(exported: tuple[Path, Path, PacketSet]) -> None:
    tmp, _, made = exported
    # Kept beside the packets and read by people too: the model's JSON, indented by two.
    text = (tmp / "study" / PACKET_SET_NAME).read_text(encoding="utf-8")
    assert text == made.model_dump_json(indent=2) + "\n"


def test_the_kept_state_reads_back_as_the_packet_was_made(exported: tuple[Path, Path, PacketSet]) -> None:
    tmp, _, made = exported
    for a in made.assignments:
        before, transformation = _kept(tmp / "study" / "state" / a.person / f"{a.task}.json")
        assert before == snapshot(tmp / "study" / a.packet)
        assert transformation is None
    assert _kept(tmp / "study" / "state" / "nobody.json") == (None, None)


def test_a_packet_whose_state_is_gone_or_spoilt_is_still_scored(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    path, references = tiny_taskset(tmp_path, repeats=1)
    taskset = load_taskset(path, references)
    made = export_packets(taskset, ["ann"], tmp_path / "study", seed=3, conditions=["refined"])
    first, second = made.assignments
    (tmp_path / "study" / "state" / "ann" / f"{first.task}.json").unlink()
    (tmp_path / "study" / "state" / "ann" / f"{second.task}.json").write_text(json.dumps({"before": [1]}))
    results = score_packets(taskset, tmp_path / "study")
    assert [(r.cell.task, r.state) for r in results] == [(first.task, "missing_value"), (second.task, "missing_value")]
    # each assignment is one cell: the person as reproducer, the condition assigned, repeat 1
    assert {(r.cell.reproducer, r.cell.condition, r.cell.repeat) for r in results} == {("ann", "refined", 1)}
