"""``rra reference add`` and ``rra discrepancy add`` through the real command, on the preserve
fixture, with run records made by ``rra run`` (one of them moved away, as if copied from
another machine)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.preserve_fixture import make_artifact, repair
from tests.rra_cli import rra


def _artifact(tmp_path: Path, version: str) -> Path:
    root, _ = make_artifact(tmp_path / "init-scale")
    repair(root)
    manifest = root / "rra.yaml"
    text = manifest.read_text().replace('rra_version: "1.0"', f'rra_version: "{version}"')
    if version != "1.0":  # five independent runs of the deterministic launcher, told apart by repeat
        text = text.replace("    stochastic: false\n", "    stochastic: false\n    repeats: 5\n")
    manifest.write_text(text)
    return root


def _run(root: Path) -> Path:
    # --force: the manifest has one observation of the three the validator asks for; these runs
    # are what will make the other ones.
    done = rra("run", "--force", str(root), "train")
    assert done.returncode == 0, done.stderr
    return max((root / "runs" / "train").iterdir())


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    return _artifact(tmp_path, "1.1")


def test_runs_from_two_machines_become_observations_with_provenance(artifact: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "bob-copy"
    elsewhere.mkdir()
    copied = Path(shutil.move(str(_run(artifact)), elsewhere))
    local = _run(artifact)
    done = rra("reference", "add", str(local), "-C", str(artifact), "--by", "Ada Example", "--from", "refined",
               "--machine", "lab-a")
    assert done.returncode == 0, done.stderr
    rel = f"runs/train/{local.name}/record.json"
    first = json.loads((local / "record.json").read_text())["repeat"]
    assert done.stdout == f"claim rmse: observation 0.82 (seed or repeat {first}) from {rel}\n"
    done = rra("reference", "add", str(copied), "-C", str(artifact), "--by", "Bob Reproducer", "--from", "raw",
               "--machine", "lab-b")
    assert done.returncode == 0, done.stderr
    kept = f"runs/reference/Bob-Reproducer/train/{copied.name}"
    second = json.loads((copied / "record.json").read_text())["repeat"]
    second = second if second != first else min({0, 1, 2} - {first})  # a repeat index taken is replaced
    assert done.stdout == f"claim rmse: observation 0.82 (seed or repeat {second}) from {kept}/record.json\n"
    assert sorted(p.name for p in (artifact / kept).iterdir()) == ["record.json", "stderr.log", "stdout.log"]
    manifest = (artifact / "rra.yaml").read_text()
    assert "        # the authors' own run, from the paper's appendix\n" in manifest
    assert "            by: Bob Reproducer\n            code: raw\n" in manifest
    assert "            machine: lab-b\n" in manifest
    assert f"          repeat: {second}\n" in manifest
    check = rra("validate", str(artifact), "--ignore", "RRA404", "-f", "json")
    assert check.returncode == 0, check.stdout
    codes = [d["code"] for d in json.loads(check.stdout)["results"][0]["diagnostics"]]
    assert set(codes) <= {"RRA503"}, codes
    again = rra("reference", "add", str(local), "-C", str(artifact), "--by", "Ada Example", "--from", "refined")
    assert again.returncode == 2
    assert again.stderr == f"error: run record {rel!r} is already an observation of claim 'rmse'\n"


def test_a_1_0_manifest_keeps_provenance_in_an_extension(tmp_path: Path) -> None:
    root = _artifact(tmp_path, "1.0")
    run = _run(root)
    done = rra("reference", "add", str(run / "record.json"), "-C", str(root), "--by", "Ada", "--from", "refined")
    assert done.returncode == 0, done.stderr
    manifest = (root / "rra.yaml").read_text()
    assert "          x-provenance:\n            by: Ada\n            code: refined\n" in manifest
    assert "          seed: 1\n" in manifest  # the repeat index, as 1.0 has no 'repeat'


def test_a_failed_run_is_refused(artifact: Path) -> None:
    run = _run(artifact)
    record = json.loads((run / "record.json").read_text())
    record["exit_status"] = 1
    (run / "record.json").write_text(json.dumps(record))
    before = (artifact / "rra.yaml").read_bytes()
    done = rra("reference", "add", str(run), "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert done.returncode == 2
    assert done.stderr == (f"error: run record {str(run)!r} is 'completed' with exit status 1; only a completed "
                           "run that exited 0 is a reference observation\n")
    assert (artifact / "rra.yaml").read_bytes() == before


def test_a_record_of_another_launcher_is_refused(artifact: Path) -> None:
    run = _run(artifact)
    record = json.loads((run / "record.json").read_text())
    record["launcher"] = "prepare"
    (run / "record.json").write_text(json.dumps(record))
    done = rra("reference", "add", str(run), "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert done.returncode == 2
    assert done.stderr == f"error: run record {str(run)!r} is of launcher 'prepare', which no claim reads\n"


def test_a_record_of_another_manifest_is_refused_and_a_discrepancy_is_recorded(artifact: Path) -> None:
    run = _run(artifact)
    done = rra("discrepancy", "add", "epochs", "-C", str(artifact), "--paper-says", "The paper trains for 5 epochs.",
               "--code-does", "train.py defaults to 3 epochs.", "--follows", "code",
               "--rationale", "The released numbers come from the default.", "--impact", "None expected on RMSE.",
               "--claim", "rmse")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "recorded discrepancy epochs: the artifact follows the code (claims: rmse)\n"
    assert "  - id: epochs\n    paper_says: The paper trains for 5 epochs.\n" in (artifact / "rra.yaml").read_text()
    refused = rra("reference", "add", str(run), "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"error: run record {str(run)!r} was made on another version of the manifest: ")
    assert "hint: re-run the launcher on this artifact (rra run) and add the new record\n" in refused.stderr


def test_a_discrepancy_naming_an_unknown_claim_is_refused(artifact: Path) -> None:
    before = (artifact / "rra.yaml").read_bytes()
    done = rra("discrepancy", "add", "epochs", "-C", str(artifact), "--paper-says", "a", "--code-does", "b",
               "--follows", "paper", "--rationale", "c", "--impact", "d", "--claim", "accuracy")
    assert done.returncode == 2
    assert done.stderr == "error: claim 'accuracy' is not declared in the manifest (claims: 'rmse')\n"
    assert (artifact / "rra.yaml").read_bytes() == before


def test_the_launchers_run_folder_gives_its_newest_successful_record_or_all(artifact: Path) -> None:
    older, newer, failed = _run(artifact), _run(artifact), _run(artifact)
    record = json.loads((failed / "record.json").read_text())
    record["exit_status"], record["status"] = 1, "failed"
    (failed / "record.json").write_text(json.dumps(record))
    folder = artifact / "runs" / "train"
    done = rra("reference", "add", "runs/train", "-C", str(artifact), "--by", "Ada", "--from", "refined",
               cwd=artifact)
    assert done.returncode == 0, done.stderr
    # The newest run failed: the newest successful one is taken, and only it.
    assert done.stdout.splitlines() == [line for line in done.stdout.splitlines()
                                        if f"from runs/train/{newer.name}/record.json" in line]
    assert len(done.stdout.splitlines()) == 1
    again = rra("reference", "add", str(folder), "--all", "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert again.returncode == 0, again.stderr
    # --all: every successful record that is not an observation yet (the older one).
    assert [line.rsplit(" from ", 1)[1] for line in again.stdout.splitlines()] == [
        f"runs/train/{older.name}/record.json"]
    nothing = rra("reference", "add", str(folder), "--all", "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert (nothing.returncode, nothing.stderr) == (
        2, "error: every successful run record given is an observation already\n")


def test_a_run_folder_without_a_successful_record_is_refused(artifact: Path) -> None:
    run = _run(artifact)
    record = json.loads((run / "record.json").read_text())
    record["exit_status"], record["status"] = 2, "failed"
    (run / "record.json").write_text(json.dumps(record))
    folder = str(artifact / "runs" / "train")
    done = rra("reference", "add", folder, "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert done.returncode == 2
    assert done.stderr == (f"error: the 1 run(s) of {folder!r} include no completed run that exited 0\n"
                           "hint: run the launcher again (rra run) and add its record\n")
    empty = artifact / "runs" / "empty"
    empty.mkdir()
    done = rra("reference", "add", str(empty), "-C", str(artifact), "--by", "Ada", "--from", "refined")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {str(empty)!r} holds no record.json and no run directory with one\n")


def test_the_drafted_reported_value_is_set_aside_once_runs_are_observed(tmp_path: Path) -> None:
    # rra init writes a table's number as the claim's one observation (the schema asks for one);
    # it is the paper's value, not a run's. Kept beside the runs it widened their interval until
    # it held the paper's number whatever they gave; once two runs are observed it is taken out.
    root = _artifact(tmp_path, "1.1")
    manifest = root / "rra.yaml"
    text = manifest.read_text()
    drafted = '{value: 0.82, seed: 0, fingerprint: {hardware: "x86_64, 8 cores", software: "cpython 3.7"}}'
    assert drafted in text
    manifest.write_text(text.replace(drafted, '{value: 0.82, repeat: 0, fingerprint: {hardware: "not reported by '
                                              'the authors", software: "not reported by the authors"}}'))
    first = _run(root)
    done = rra("reference", "add", str(first), "-C", str(root), "--by", "Ada Example", "--from", "refined")
    assert done.returncode == 0, done.stderr
    assert "set aside" not in done.stdout  # one run: the drafted value still stands in
    second = _run(root)
    done = rra("reference", "add", str(second), "-C", str(root), "--by", "Ada Example", "--from", "refined")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == ("claim rmse: the drafted observation 0.82 (its reported value, no run) "
                                            "set aside: the paper's value is not an observation")
    assert "not reported by the authors" not in manifest.read_text()
    assert manifest.read_text().count("run_record: runs/train/") == 2
