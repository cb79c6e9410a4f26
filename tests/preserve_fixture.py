"""A small research repository for the preserve commands: a README whose command is wrong and
a dependency pin that no longer installs, committed with a fixed author and date so the
upstream commit id is the same on every machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["FIXED_GIT_ENV", "MANIFEST", "git", "make_artifact"]

FIXED_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Example", "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_AUTHOR_DATE": "2024-03-01T12:00:00+00:00",
    "GIT_COMMITTER_NAME": "Ada Example", "GIT_COMMITTER_EMAIL": "ada@example.org",
    "GIT_COMMITTER_DATE": "2024-03-01T12:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}

TRAIN = '''"""Fit a one-parameter model and print its error."""
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--log", default="train.log")
args = parser.parse_args()
line = "RMSE: %.2f" % (0.82 + 0.0 * args.epochs)
print(line)
os.makedirs(os.path.dirname(args.log) or ".", exist_ok=True)
with open(args.log, "w") as log:
    log.write(line + "\\n")
'''

README = """# Initialisation scale

Train the model:

```sh
python train.py --epoch 3
```

Results: RMSE 0.82 (Table 2).
"""

MANIFEST = """\
# The refined artifact of the initialisation-scale study.
rra_version: "1.0"
id: init-scale
title: Initialisation scale, refined artifact
paper: {title: A Note on Initialisation Scale, authors: [{name: Ada Example}]}
code:
  license: MIT   # from LICENSE
  upstream: {url: "https://example.org/lab/init-scale.git", commit: "COMMIT"}
environment:
  interpreter: {version: "3.11"}
launchers:
  - id: train
    argv: [python, train.py, --epochs, "3", --log, outputs/train.log]   # the README says --epoch
    stochastic: false
    outputs: [{id: log, path: outputs/train.log, format: log}]
    resources: {timeout_s: 60, expected_runtime_s: 1}
claims:
  - id: rmse
    paper_location: {table: "2"}
    launcher: train
    metric: {name: RMSE, unit: "", direction: lower}
    extract: {output: log, regex: {pattern: "RMSE: ([0-9.]+)"}}
    reported: {value: 0.82, precision: 2}
    reference:
      observations:
        # the authors' own run, from the paper's appendix
        - {value: 0.82, seed: 0, fingerprint: {hardware: "x86_64, 8 cores", software: "cpython 3.7"}}
"""


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with the fixed identity and dates; its standard output."""
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **FIXED_GIT_ENV}, check=True,
                          capture_output=True, text=True).stdout


def make_artifact(directory: Path) -> tuple[Path, str]:
    """The upstream repository committed once, with ``rra.yaml`` added (uncommitted) in its
    working tree; returns the artifact root and the upstream commit."""
    directory.mkdir(parents=True, exist_ok=True)
    git(directory, "init", "-q", "-b", "main")
    (directory / "train.py").write_text(TRAIN)
    (directory / "README.md").write_text(README)
    (directory / "requirements.txt").write_text("numpy==1.16.0\n")
    (directory / ".gitignore").write_text("__pycache__/\noutputs/\n")
    git(directory, "add", "-A")
    git(directory, "commit", "-q", "-m", "Initial code of the paper")
    commit = git(directory, "rev-parse", "HEAD").strip()
    (directory / "rra.yaml").write_text(MANIFEST.replace("COMMIT", commit))
    return directory, commit


def repair(directory: Path) -> None:
    """The two repairs: the README's command, and the numpy pin."""
    readme = directory / "README.md"
    readme.write_text(readme.read_text().replace("--epoch 3", "--epochs 3"))
    (directory / "requirements.txt").write_text("numpy==1.26.4\n")
