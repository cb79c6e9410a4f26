"""The two shapes of real research repositories that RRA 1.1 was made for, through the real
``rra validate``, ``rra run`` and ``rra results``: no shell wrapper, no invented seeds.

- ``tests/data/real-repos/rmse-to-stdout``: a seeded training script that prints
  ``RMSE: 0.8019`` and writes no metrics file; the claim reads standard output.
- ``tests/data/real-repos/tables-seedless``: a deterministic program (it reads no seed) that
  prints table rows such as ``sepal length | 23%``; the launcher is seedless with 3 repeats and
  the observations name their repeat.

And secrets (spec/02-manifest.md#secrets): a launcher that prints its credentials leaves no
trace of them in records, logs or anywhere in the artifact tree.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.rra_cli import rra

DATA = Path(__file__).resolve().parents[1] / "data" / "real-repos"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return target


def _records(root: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(p.read_text()) for p in sorted((root / "runs").rglob("record.json"))]


def test_claim_read_from_stdout_of_a_seeded_script(tmp_path: Path) -> None:
    root = _copy("rmse-to-stdout", tmp_path)
    checked = rra("validate", str(root))
    assert checked.returncode == 0 and "0 error(s), 0 warning(s)" in checked.stdout, checked.stdout

    ran = rra("run", str(root), "--all")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = _records(root)
    assert [r["seed"] for r in sorted(records, key=lambda r: r["seed"])] == [0, 1, 2, 3, 4]
    assert all(r["status"] == "completed" and r["outputs"] == [] for r in records)
    # The value in each record is the number the script printed, read from its stdout.log.
    by_seed = {r["seed"]: r["metrics"]["test-rmse"] for r in records}
    assert by_seed == {0: 0.8019, 1: 0.7286, 2: 0.7135, 3: 0.8515, 4: 0.8678}
    for record in records:
        log = (root / "runs" / "train").glob(f"{record['seed']}-*/stdout.log")
        assert f"RMSE: {record['metrics']['test-rmse']:.4f}\n" in next(log).read_text()

    results = rra("results", str(root), "--format", "json")
    assert results.returncode == 0, results.stdout + results.stderr
    [claim] = json.loads(results.stdout)["claims"]
    assert claim["inside"] is True and claim["obtained"] == pytest.approx(0.79266)
    assert json.loads(results.stdout)["levels"]["met"] == ["available", "functional", "reproduced"]


def test_stdout_claim_without_the_line_fails_the_run(tmp_path: Path) -> None:
    root = _copy("rmse-to-stdout", tmp_path)
    manifest = root / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("'^RMSE: ", "'^MAE: "))
    ran = rra("run", str(root), "train")
    assert ran.returncode != 0
    [record] = _records(root)
    assert record["status"] == "failed" and record["metrics"] == {}
    assert "claim 'test-rmse': the run's stdout has no match for regex '^MAE: ([0-9]+\\\\.[0-9]+)$'" \
        in record["messages"], record["messages"]


def test_seedless_launcher_repeated_and_read_from_a_table(tmp_path: Path) -> None:
    root = _copy("tables-seedless", tmp_path)
    checked = rra("validate", str(root))
    assert checked.returncode == 0 and "0 error(s), 0 warning(s)" in checked.stdout, checked.stdout

    single = rra("run", str(root), "importance")  # one run by default: repeat 0
    assert single.returncode == 0, single.stdout + single.stderr
    assert [(r["seed"], r["repeat"]) for r in _records(root)] == [(None, 0)]

    ran = rra("run", str(root), "--all")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "importance repeat 2: completed" in ran.stdout + ran.stderr
    records = _records(root)
    assert sorted(r["repeat"] for r in records) == [0, 0, 1, 2]
    assert all(r["seed"] is None and r["metrics"] == {"sepal-length-importance": 23.0} for r in records)
    names = sorted(p.name[:len("repeat-0")] for p in (root / "runs" / "importance").iterdir())
    assert names == ["repeat-0", "repeat-0", "repeat-1", "repeat-2"]

    results = rra("results", str(root))
    assert results.returncode == 0, results.stdout + results.stderr
    assert "values    repeat 0: 23, repeat 1: 23, repeat 2: 23" in results.stdout
    assert "interval  [22.5, 23.5] (stable, n=3)" in results.stdout
    data = json.loads(rra("results", str(root), "--format", "json").stdout)
    assert [(v["seed"], v["repeat"]) for v in data["claims"][0]["values"]] == [(None, 0), (None, 1), (None, 2)]


def test_seedless_launcher_refuses_a_seed(tmp_path: Path) -> None:
    root = _copy("tables-seedless", tmp_path)
    ran = rra("run", str(root), "importance", "--seed", "3")
    assert ran.returncode != 0 and "Traceback" not in ran.stderr
    assert "launcher 'importance' is not stochastic; it takes no seed" in ran.stderr


LEAKY = """\
    import os, sys, time
    token = os.environ["TRACKING_TOKEN"]
    # A careless program: it prints its credentials, once split across two writes.
    print(f"using token {token} for tracking", flush=True)
    sys.stdout.write(token[:5]); sys.stdout.flush(); time.sleep(0.2)
    sys.stdout.write(token[5:] + "\\n"); sys.stdout.flush()
    print(f"hub token is {sys.argv[2]}", file=sys.stderr)
    print("RMSE: 0.8019")
"""


def _secret_artifact(tmp_path: Path) -> Path:
    root = _copy("rmse-to-stdout", tmp_path)
    (root / "leaky.py").write_text(textwrap.dedent(LEAKY))
    manifest = root / "rra.yaml"
    text = manifest.read_text().replace(
        '    argv: [python, train.py, --seed, "{seed}"]\n',
        '    argv: [python, leaky.py, "{seed}", "--hub={hub_token}"]\n'
        "    secrets: [TRACKING_TOKEN]\n"
        "    parameters:\n"
        "      hub_token: {type: str, secret: true}\n")
    manifest.write_text(text)
    return root


TOKEN, HUB = "tok-9f8e7d6c5b4a", "hf_SeCrEt1234567"


def test_secrets_never_reach_records_logs_or_the_tree(tmp_path: Path) -> None:
    root = _secret_artifact(tmp_path)
    checked = rra("validate", str(root))
    assert "error(s)" in checked.stdout and " 0 error(s)" in checked.stdout, checked.stdout

    ran = rra("run", str(root), "train", env={"TRACKING_TOKEN": TOKEN, "hub_token": HUB})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert TOKEN not in ran.stdout + ran.stderr and HUB not in ran.stdout + ran.stderr
    [record] = _records(root)
    assert record["secrets"] == ["TRACKING_TOKEN", "hub_token"]
    assert record["environment"]["TRACKING_TOKEN"] == "[redacted]"
    assert record["parameters"] == {"hub_token": "[redacted]"}
    assert record["argv"] == ["python", "leaky.py", "0", "--hub=[redacted]"]
    assert record["metrics"] == {"test-rmse": 0.8019}
    [directory] = (root / "runs" / "train").iterdir()
    assert (directory / "stdout.log").read_text().splitlines()[:2] == [
        "using token [redacted] for tracking", "[redacted]"]
    assert (directory / "stderr.log").read_text() == "hub token is --hub=[redacted]\n"
    # Nothing anywhere in the artifact (what rra pack would pack) holds either value.
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data and HUB.encode() not in data, path


def test_missing_or_command_line_secret_is_refused_before_running(tmp_path: Path) -> None:
    root = _secret_artifact(tmp_path)
    missing = rra("run", str(root), "train", env={"hub_token": HUB}, inherit_env=True)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "launcher 'train' needs the secret 'TRACKING_TOKEN': set the environment variable TRACKING_TOKEN" \
        in missing.stderr
    on_argv = rra("run", str(root), "train", "--param", f"hub_token={HUB}", env={"TRACKING_TOKEN": TOKEN})
    assert on_argv.returncode != 0 and "parameter 'hub_token' is secret" in on_argv.stderr
    assert not (root / "runs").exists()


@pytest.mark.parametrize("digits", [401, 5001])
def test_huge_integer_in_a_packed_manifest_is_a_finding(tmp_path: Path, digits: int) -> None:
    # The embedded copy in the OCI config and the manifest layer both carry the number; neither
    # rra pack nor rra validate oci-layout: may fail on it (spec/02-manifest.md#numbers).
    root = _copy("rmse-to-stdout", tmp_path)
    manifest = root / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("reported: {value: 0.79,", f"reported: {{value: 1{'0' * (digits - 1)},"))
    packed = rra("pack", str(root), "--force", "-o", str(tmp_path / "layout"))
    assert packed.returncode == 0 and "Traceback" not in packed.stderr, packed.stderr
    checked = rra("validate", "--format", "json", f"oci-layout:{tmp_path / 'layout'}")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    [result] = json.loads(checked.stdout)["results"]
    found = {(d["code"], d["message"].split(" is out of range")[0]) for d in result["diagnostics"]}
    size = "an integer of 401 digits" if digits == 401 else "an integer of 4300 digits or more"
    assert found == {("RRA114", size), ("RRA812", "the artifact was packed with --force although validation found "
                                                 "errors")}
