"""``rra build`` on a plain directory (a tarball, a Zenodo archive, a Code Ocean capsule: no
.git): the files are committed once in the artifact with a fixed identity and date, so the same
archive gives the same commit, the patch series is made against it, and the raw directory is
left as it was."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.rra_cli import rra

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def agent() -> str:
    return shlex.join([sys.executable, str(FIXTURES / "agents" / "scripted_agent.py"), "no-results-archive"])


def test_an_archive_builds_to_reproduced_from_its_import_commit(tmp_path: Path) -> None:
    raw = tmp_path / "archive"
    shutil.copytree(FIXTURES / "repos" / "no-results", raw)
    (raw / "__pycache__").mkdir()  # a cache is not part of what was published
    (raw / "__pycache__" / "harmonic.cpython-311.pyc").write_bytes(b"\0")
    before = sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*"))
    artifact = tmp_path / "artifact"
    done = rra("build", str(raw), "-o", str(artifact), "--agent", agent())
    assert done.returncode == 0, done.stderr
    assert f"build: {raw} has no .git (an archive): its 4 file(s) committed as published in {artifact} as " \
        in done.stderr
    # The raw directory is as it was: no .git was made there.
    assert sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*")) == before
    data = parse_document((artifact / "rra.yaml").read_text()).data
    upstream = data["code"]["upstream"]
    assert upstream["url"] == "https://zenodo.org/records/1234567"  # asked: an archive names none
    assert not (artifact / "__pycache__").exists()
    # The patch series (the agent's print-the-gap) is made against the import, and proves the code.
    assert [c["id"] for c in data["changes"]] == ["print-the-gap"]
    assert rra("change", "verify", "-C", str(artifact)).returncode == 0
    result = json.loads(rra("validate", "-f", "json", str(artifact)).stdout)["results"][0]
    assert result["levels"]["met"] == ["available", "functional", "reproduced"]
    # The same archive gives the same commit, and --upstream's own commit is replaced by it (said).
    again = tmp_path / "again"
    other = "https://zenodo.org/records/1234567@" + "0" * 40
    done = rra("build", str(raw), "-o", str(again), "--agent", agent(), "--upstream", other)
    assert done.returncode == 0, done.stderr
    assert parse_document((again / "rra.yaml").read_text()).data["code"]["upstream"] == upstream
    assert f"--upstream names commit 000000000000, which is not in the archive: the patches are made against " \
           f"its import {upstream['commit'][:12]}" in done.stderr


def test_in_place_the_archive_is_committed_without_its_caches_and_environments(tmp_path: Path) -> None:
    raw = tmp_path / "archive"
    shutil.copytree(FIXTURES / "repos" / "no-results", raw)
    (raw / ".venv" / "bin").mkdir(parents=True)
    (raw / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (raw / ".venv" / "bin" / "python").write_text("")
    (raw / "__pycache__").mkdir()
    (raw / "__pycache__" / "harmonic.cpython-311.pyc").write_bytes(b"\0")
    done = rra("build", str(raw), "--agent", agent())
    assert done.returncode == 0, done.stderr
    imported = subprocess.run(["git", "-C", str(raw), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    published = subprocess.run(["git", "-C", str(raw), "show", "--name-only", "--format=", imported],
                               capture_output=True, text=True, check=True).stdout.split()
    # The caches and the virtual environment stay out of the import, and out of the code after it.
    assert sorted(published) == ["LICENSE", "README.md", "harmonic.py", "requirements.txt"]
    assert rra("change", "verify", "-C", str(raw)).returncode == 0
    assert parse_document((raw / "rra.yaml").read_text()).data["code"]["upstream"]["commit"] == imported
