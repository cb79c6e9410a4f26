"""An artifact that is itself a Python package (environment.package, RRA 1.1), end to end with
real installs from the package index: rra lock records the package's tree digest, rra env create
installs it from its tree into the locked environment, a launcher calls its console script, the
SBOM carries the digest, and a changed tree is refused until it is locked again.

The fixture is tests/fixtures/repos/setup-package (setup.py, console script graphreg-train). Its
install_requires (numpy, scipy, networkx) are replaced in the copy by one tiny pure-Python
package, to keep the download small; the console script imports none of them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "repos" / "setup-package"

MANIFEST = """\
rra_version: "1.1"
id: graphreg
title: Graph-regularised matrix completion, refined artifact
paper:
  title: Graph-Regularised Matrix Completion
  authors: [{name: Ada Example}]
  arxiv: "2301.04567"
code:
  license: MIT
  tree: {path: "."}
environment:
  interpreter: {version: "3.11"}
  package: {path: ".", name: graphreg}
  hardware: {cpu_cores: 1, ram_gib: 1}
launchers:
  - id: train
    argv: [graphreg-train, --rank, "{rank}", --seed, "{seed}"]
    parameters:
      rank: {type: int, default: 5, description: Rank of the factorisation.}
    seeds: [0, 1, 2]
    resources: {timeout_s: 300, expected_runtime_s: 5}
claims:
  - id: rmse
    description: Held-out RMSE on MovieLens-100k.
    paper_location: {table: "2"}
    launcher: train
    metric: {name: RMSE, unit: "", direction: lower}
    extract:
      stream: stdout
      regex: {pattern: 'test RMSE = ([0-9.]+)'}
    aggregate: mean
    reported: {value: 0.912, precision: 3}
    reference:
      stability: stable
      observations:
        - {value: 0.912, seed: 0, fingerprint: {hardware: "x86_64, 2 cores", software: cpython 3.11}}
        - {value: 0.912, seed: 1, fingerprint: {hardware: "x86_64, 2 cores", software: cpython 3.11}}
        - {value: 0.912, seed: 2, fingerprint: {hardware: "x86_64, 2 cores", software: cpython 3.11}}
"""


@pytest.fixture
def art(tmp_path: Path) -> Path:
    root = tmp_path / "graphreg"
    shutil.copytree(FIXTURE, root)
    setup = root / "setup.py"
    text = setup.read_text()
    for dep in ('        "numpy>=1.22",\n', '        "scipy>=1.8",\n', '        "networkx==3.1",\n'):
        assert dep in text
        text = text.replace(dep, "")
    setup.write_text(text.replace("install_requires=[\n", 'install_requires=[\n        "six==1.16.0",\n'))
    (root / "rra.yaml").write_text(MANIFEST)
    return root


def test_lock_create_run_and_sbom(art: Path, tmp_path: Path) -> None:
    cache = {"RRA_CACHE_DIR": str(tmp_path / "cache")}
    done = rra("lock", str(art), env=cache, timeout=900)
    assert done.returncode == 0, done.stderr
    lock = (art / "pylock.toml").read_text()
    assert '[[packages]]\nname = "graphreg"\ndirectory = { path = ".", editable = false }' in lock
    tree = lock.split('tree-sha256 = "')[1][:64]
    assert 'name = "six"' in lock and 'name = "setuptools"' in lock
    assert not list(art.glob("*.egg-info")) and not (art / "build").exists(), "locking wrote into the artifact"

    done = rra("validate", str(art))
    assert done.returncode == 0, done.stdout + done.stderr

    done = rra("env", "create", str(art), env=cache, timeout=900)
    assert done.returncode == 0, done.stderr
    python = Path(done.stdout.strip())
    script = python.with_name("graphreg-train")
    assert script.is_file()
    before = sorted(p.relative_to(art).as_posix() for p in art.rglob("*"))

    done = rra("run", str(art), "train", "--seed", "0", "--env", "locked", env=cache, timeout=600)
    assert done.returncode == 0, done.stderr
    record = json.loads(next((art / "runs").rglob("record.json")).read_text())
    assert record["metrics"] == {"rmse": 0.912}
    assert record["argv"][0] == "graphreg-train" and record["host"]["environment"] == "locked"
    after = sorted(p.relative_to(art).as_posix() for p in art.rglob("*") if not p.relative_to(art).as_posix()
                   .startswith("runs"))
    assert [p for p in after if p not in before] == [], "installing the package wrote into the artifact"

    done = rra("sbom", str(art), "-o", str(tmp_path / "sbom.json"), env=cache)
    assert done.returncode == 0, done.stderr
    sbom = json.loads((tmp_path / "sbom.json").read_text())
    (own,) = [c for c in sbom["components"] if c["name"] == "graphreg"]
    assert own["hashes"] == [{"alg": "SHA-256", "content": tree}]

    # A change to the code without a new lock is refused, by env create and by a locked run.
    cli = art / "graphreg" / "cli.py"
    cli.write_text(cli.read_text().replace("0.912", "0.911"))
    done = rra("env", "create", str(art), env=cache, timeout=300)
    assert done.returncode == 1
    assert "the tree of package 'graphreg' (.) has sha256 " in done.stderr
    assert f"the lock pylock.toml records {tree}: the code changed since it was locked; run 'rra lock' " \
           "to record it" in done.stderr
    done = rra("run", str(art), "train", "--seed", "0", "--env", "locked", env=cache, timeout=300)
    assert done.returncode != 0 and "the code changed since it was locked" in done.stderr


def test_package_field_needs_rra_1_1(art: Path) -> None:
    manifest = art / "rra.yaml"
    manifest.write_text(manifest.read_text().replace('rra_version: "1.1"', 'rra_version: "1.0"'))
    done = rra("validate", str(art))
    assert done.returncode == 1 and "RRA102" in done.stdout
