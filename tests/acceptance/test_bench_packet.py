"""Human reproducers through the real CLI: ``rra bench packet`` exports one packet per person and
task with conditions drawn from a recorded seed and no reference value in any packet; people
work in their packets (here: the tiny benchmark's scripted reproducers, run in each packet as a
person would); ``rra bench score --packets`` scores every assignment, a packet returned without
a submission included."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools.bench.packet import assign
from rra_tools.model.bench_results import BenchResults
from rra_tools.model.schema import generated_schemas

from ..bench_tiny import reproducer_commands, secret_pattern, tiny_artifact, tiny_taskset
from ..rra_cli import rra

PEOPLE = ("ann", "bob", "cy")


def _own_manifest(tmp: Path) -> Path:
    """The manifest a person writes for the raw code: the paper's value as its observations."""
    data: dict[str, Any] = json.loads((tmp / "tiny" / "rra.json").read_text())
    for claim in data["claims"]:
        claim["reference"] = {"observations": [{"value": 0.8125, "seed": i,
                                                "fingerprint": {"hardware": "mine", "software": "mine"}}
                                               for i in range(3)]}
    path = tmp / "mine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("packets")
    tiny_artifact(tmp / "tiny")
    taskset, references = tiny_taskset(tmp, repeats=1, limits={"wall_clock_s": 60})
    people = [a for p in PEOPLE for a in ("--person", p)]
    done = rra("bench", "packet", str(taskset), *people, "--seed", "7", "--references", str(references),
               "-o", str(tmp / "study"))
    return tmp, taskset, references, done


def test_packets_and_their_recorded_assignment(study: tuple[Path, Path, Path, Any]) -> None:
    tmp, taskset, references, done = study
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp / "study" / "packet-set.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(generated_schemas()["rra-packet-set-1.0.schema.json"])).validate(data)
    assert (data["seed"], data["people"], data["conditions"]) == (7, list(PEOPLE), ["raw", "refined"])
    got = [(a["person"], a["task"], a["condition"]) for a in data["assignments"]]
    assert got == assign(PEOPLE, ["p/t1/var", "p/t1/exact"], ["raw", "refined"], 7)
    # Each task's conditions are balanced to within one person.
    for task in ("p/t1/var", "p/t1/exact"):
        counts = Counter(c for _, t, c in got if t == task)
        assert sorted(counts.values()) == [1, 2], counts
    assert "[6/6] cy: p/t1/exact (" in done.stderr  # progress, one line per packet
    assert done.stdout.splitlines()[-1] == f"6 packet(s) for 3 person(s), seed 7: {tmp / 'study' / 'packet-set.json'}"
    for a in data["assignments"]:
        packet = tmp / "study" / a["packet"]
        task = json.loads((packet / "task.json").read_text())
        assert (task["task"], task["condition"]) == (a["task"], a["condition"])
        assert (packet / "rra.json").is_file() == (a["condition"] == "refined")
        assert (packet / "TASK.md").is_file() and (packet / "paper" / "paper.txt").is_file()
    # The same seed gives the same assignment; the command refuses to write over a packet set.
    again = rra("bench", "packet", str(taskset), *[a for p in PEOPLE for a in ("--person", p)], "--seed", "7",
                "-o", str(tmp / "again"))
    assert again.returncode == 0, again.stderr
    redo = json.loads((tmp / "again" / "packet-set.json").read_text(encoding="utf-8"))
    assert [(a["person"], a["task"], a["condition"]) for a in redo["assignments"]] == got
    over = rra("bench", "packet", str(taskset), "--person", "ann", "--seed", "1", "-o", str(tmp / "again"))
    assert over.returncode != 0
    assert over.stderr.startswith(f"error: {str(tmp / 'again')!r} is not empty; packets are written into a new "
                                  "directory\n"), over.stderr


def test_assignment_is_seeded_and_balanced() -> None:
    people = [f"p{i}" for i in range(10)]
    tasks = [f"a/b/t{i}" for i in range(8)]
    one = assign(people, tasks, ["raw", "refined"], 1)
    assert one == assign(people, tasks, ["raw", "refined"], 1)
    assert one != assign(people, tasks, ["raw", "refined"], 2)
    for task in tasks:
        assert Counter(c for _, t, c in one if t == task) == {"raw": 5, "refined": 5}
    # A person's conditions vary from task to task.
    assert all(len({c for p, _, c in one if p == person}) == 2 for person in people)


def test_no_reference_value_reaches_any_packet(study: tuple[Path, Path, Path, Any]) -> None:
    tmp, _, references, done = study
    assert done.returncode == 0, done.stderr
    pattern = secret_pattern()
    scanned = 0
    for directory, _, names in os.walk(tmp / "study" / "packets"):
        for name in names:
            path = Path(directory, name)
            assert not pattern.search(path.read_bytes().decode("utf-8", "replace")), f"{path} holds a reference value"
            scanned += 1
    assert scanned >= 6 * 4
    assert pattern.search(references.read_text())


def test_export_refuses_a_packet_that_would_leak(tmp_path: Path) -> None:
    root = tiny_artifact(tmp_path / "tiny")
    (root / "notes.txt").write_text("we measured 0.8129 last week\n", encoding="utf-8")
    taskset, references = tiny_taskset(tmp_path, repeats=1)
    done = rra("bench", "packet", str(taskset), "--person", "ann", "--seed", "3", "--condition", "refined",
               "--references", str(references), "-o", str(tmp_path / "study"))
    assert done.returncode != 0
    assert "would hold the reference value 0.8129 in 'notes.txt'; no packet was written" in done.stderr
    assert not (tmp_path / "study" / "packets").exists()


def _with_references(references: Path, values: tuple[float, ...]) -> None:
    """The variable task's hidden observations replaced by ``values``."""
    data = json.loads(references.read_text(encoding="utf-8"))
    entry = next(r for r in data["references"] if r["task"] == "p/t1/var")
    entry["observations"] = [{"value": v, "by": f"lab {i}", "machine": f"m{i}", "code": "raw"}
                             for i, v in enumerate(values)]
    references.write_text(json.dumps(data), encoding="utf-8")


#: A hidden value written in a file of the artifact, in each spelling the scan must know (none of
#: them is the exact spelling 0.8129 the scan looked for before issue 23 item 6), and the form
#: the refusal names. '0.812937' is a hidden value with more digits than the 4 the claim prints.
LEAKS = {
    "rounded at a precision between the full and the printed one": (
        "notes.txt", b"we measured 0.81294 last week\n", (0.812937, 0.8117, 0.8133), "0.81294"),
    "exponent form, as Python writes it": ("notes.txt", b"score=8.129e-01\n", (), "8.129e-01"),
    "exponent form, upper case, short exponent": ("notes.txt", b"score=8.129E-1\n", (), "8.129E-1"),
    "exponent form, as printf's %e writes it": ("log.txt", b"score 8.129000e-01\n", (), "8.129000e-01"),
    "exponent form, Fortran's": ("fort.7", b"  8.129D-01\n", (), "8.129D-01"),
    "percent of a fraction": ("README.md", b"| ours | 81.29% |\n", (), "81.29"),
    "percent in floating-point noise": ("r.json", b'{"acc": 81.28999999999999}\n', (), "81.28999999999999"),
    "fraction of a percent": ("r.json", b'{"acc": 0.008129}\n', (), "0.008129"),
    "decimal comma": ("ergebnis.csv", b"modell;genauigkeit\nwir;0,8129\n", (), "0,8129"),
    "no leading zero": ("r.tex", b"ours & .8129 \\\\\n", (), ".8129"),
    "trailing zeros": ("r.csv", b"run,score\n1,0.81290\n", (), "0.81290"),
    "float32 printed as a double": ("r.json", b'{"score": 0.8129000067710876}', (), "0.8129000067710876"),
    "a hidden negative value written without its sign": ("r.txt", b"nll 0.8129\n", (-0.8129, -0.8117, -0.8133),
                                                         "0.8129"),
    "hexadecimal float": ("r.txt", float.hex(0.8129).encode() + b"\n", (), float.hex(0.8129)),
    "binary double (NumPy .npy)": ("old/scores.npy", b"\x93NUMPY" + struct.pack("<d", 0.8129), (),
                                   "0.8129 (a binary double)"),
    "binary double (pickle)": ("old/scores.pkl", pickle.dumps({"score": 0.8129}), (), "0.8129 (a binary double)"),
    "UTF-16 text": ("results.txt", "score 0.8129\n".encode("utf-16"), (), "0.8129 (UTF-16)"),
}


@pytest.mark.parametrize("case", sorted(LEAKS))
def test_export_refuses_a_hidden_value_in_any_spelling(tmp_path: Path, case: str) -> None:
    name, content, values, form = LEAKS[case]
    root = tiny_artifact(tmp_path / "tiny")
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(content)
    taskset, references = tiny_taskset(tmp_path, repeats=1)
    if values:
        _with_references(references, values)
    done = rra("bench", "packet", str(taskset), "--person", "ann", "--seed", "3", "--condition", "refined",
               "--references", str(references), "-o", str(tmp_path / "study"))
    assert done.returncode != 0, done.stdout
    assert f"would hold the reference value {form} in {name!r}; no packet was written" in done.stderr, done.stderr
    assert not (tmp_path / "study" / "packets").exists()


#: What the paper prints is public in every spelling, and so is a hidden value's rounding that
#: equals it; nearby numbers are not the hidden values.
PUBLIC = {
    "the reported value with trailing zeros": (b"0.81250\n", ()),
    "the reported value as a percent": (b"81.25%\n", ()),
    "the reported value in exponent form": (b"8.125E-01\n", ()),
    "a hidden value rounded to the reported one": (b"0.8125\n", (0.81253, 0.8117, 0.8133)),
    "numbers that only begin like a hidden value": (b"0.81295 10.8129 812.9 8.129e-02 1,0,8129\n", ()),
}


@pytest.mark.parametrize("case", sorted(PUBLIC))
def test_export_accepts_public_and_nearby_numbers(tmp_path: Path, case: str) -> None:
    content, values = PUBLIC[case]
    root = tiny_artifact(tmp_path / "tiny")
    (root / "notes.txt").write_bytes(content)
    taskset, references = tiny_taskset(tmp_path, repeats=1)
    if values:
        _with_references(references, values)
    done = rra("bench", "packet", str(taskset), "--person", "ann", "--seed", "3", "--condition", "refined",
               "--references", str(references), "-o", str(tmp_path / "study"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "study" / "packets" / "ann" / "p" / "t1" / "var" / "notes.txt").read_bytes() == content


def test_a_cell_workspace_is_refused_on_the_same_spellings(tmp_path: Path) -> None:
    # rra bench run prepares a cell's workspace as a packet, and checks it the same way.
    root = tiny_artifact(tmp_path / "tiny")
    (root / "notes.txt").write_text("score 8.129E-01\n", encoding="utf-8")
    taskset, references = tiny_taskset(tmp_path, repeats=1)
    out = tmp_path / "out"
    done = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "--sandbox", "none",
               "--condition", "refined", "--reproducer", "idle=true")
    assert done.returncode == 0, done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    var = next(c for c in results.cells if c.cell.task == "p/t1/var")
    assert (var.state, var.infrastructure) == ("infrastructure_failure", "setup")
    assert var.detail == ("the prepared workspace holds the reference value 8.129E-01 in 'notes.txt'; the "
                          "reproducer was not started")


def test_returned_packets_are_scored_like_any_submission(study: tuple[Path, Path, Path, Any]) -> None:
    tmp, taskset, references, done = study
    assert done.returncode == 0, done.stderr
    commands = reproducer_commands(tmp, _own_manifest(tmp))
    data = json.loads((tmp / "study" / "packet-set.json").read_text(encoding="utf-8"))
    # ann works honestly, bob types the paper's number, cy never returns anything.
    for a in data["assignments"]:
        if a["person"] == "cy":
            continue
        packet = tmp / "study" / a["packet"]
        env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
               "RRA_BENCH_WORKSPACE": str(packet), "RRA_BENCH_TASK": str(packet / "task.json"),
               "RRA_BENCH_SUBMISSION": str(packet / "submission.json"), "RRA_BENCH_CONDITION": a["condition"]}
        command = commands["honest" if a["person"] == "ann" else "typist"]
        subprocess.run(command, shell=True, cwd=packet, env=env, check=True, timeout=300)  # noqa: S602
    scores = tmp / "scores.json"
    began = time.perf_counter()
    scored = rra("bench", "score", str(taskset), "--packets", str(tmp / "study"), "--references", str(references),
                 "-o", str(scores))
    took = time.perf_counter() - began
    assert scored.returncode == 0, scored.stderr
    results = BenchResults.model_validate_json(scores.read_text())
    assigned = {(a["person"], a["task"]): a["condition"] for a in data["assignments"]}
    assert {(c.cell.reproducer, c.cell.task): c.cell.condition for c in results.cells} == assigned
    states = {(c.cell.reproducer, c.cell.task): c.state for c in results.cells}
    assert states == {("ann", "p/t1/var"): "success", ("ann", "p/t1/exact"): "success",
                      ("bob", "p/t1/var"): "audit_violation", ("bob", "p/t1/exact"): "audit_violation",
                      ("cy", "p/t1/var"): "missing_value", ("cy", "p/t1/exact"): "missing_value"}
    # The auditor's own time, to the microsecond; its CPU time on one thread is within its wall time.
    audited = [c for c in results.cells if c.cell.reproducer != "cy"]
    for c in audited:
        assert c.audit_wall_s is not None and c.audit_cpu_s is not None
        assert (round(c.audit_wall_s, 6), round(c.audit_cpu_s, 6)) == (c.audit_wall_s, c.audit_cpu_s)
        assert c.audit_cpu_s <= c.audit_wall_s + 0.01 and c.audit_wall_s < took
    assert len({c.audit_wall_s for c in audited}) > 1
    cy = next(c for c in results.cells if c.cell.reproducer == "cy" and c.cell.task == "p/t1/var")
    assert cy.detail == "cy returned no submission in packets/cy/p/t1/var"
    assert "6" in scored.stdout and "2/6 cells succeeded" in scored.stdout
    # A packet set is scored only against the task set it was made from.
    other = tmp / "other.json"
    other.write_text(taskset.read_text().replace('"repeats": 1', '"repeats": 2'), encoding="utf-8")
    wrong = rra("bench", "score", str(other), "--packets", str(tmp / "study"), "--references", str(references))
    assert wrong.returncode != 0
    made = json.loads((tmp / "study" / "packet-set.json").read_text(encoding="utf-8"))["taskset_sha256"]
    assert (f"were made from task set 'tiny-bench' (sha256 {made[:12]}…), not from {str(other)!r}"
            in wrong.stderr), wrong.stderr
    both = rra("bench", "score", str(taskset), str(scores), "--packets", str(tmp / "study"))
    assert both.returncode == 2 and "give SUBMISSIONS or --packets, not both" in both.stderr


def test_an_ablation_packet_records_its_transformation(tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1)
    done = rra("bench", "packet", str(taskset), "--person", "ann", "--seed", "5", "--condition",
               "refined-without-launchers", "--references", str(references), "-o", str(tmp_path / "study"))
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "study" / "packet-set.json").read_text(encoding="utf-8"))
    assert {a["condition"] for a in data["assignments"]} == {"refined-without-launchers"}
    scores = tmp_path / "scores.json"
    scored = rra("bench", "score", str(taskset), "--packets", str(tmp_path / "study"), "--references",
                 str(references), "-o", str(scores))
    assert scored.returncode == 0, scored.stderr
    results = BenchResults.model_validate_json(scores.read_text())
    # Nobody worked in the packets: every assignment is a missing value, each with the
    # transformation its packet was made with.
    assert [(c.cell.condition, c.state) for c in results.cells] == [("refined-without-launchers", "missing_value")] * 2
    assert all(c.transformation is not None for c in results.cells)
