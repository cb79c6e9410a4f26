#!/usr/bin/env python3
"""Benchmark of ``rra init RAW_REPO``: drafting a manifest from a large repository.

Usage::

    python benchmarks/bench_init.py            # 20,000 files, 5 timed runs, git and plain
    python benchmarks/bench_init.py --quick    # 2,000 files, 3 runs

The generated repository (benchmarks/_work/init-repo, reused when it has the right size) is the
plain-scripts fixture plus 1,000 tracked Python modules (one in ten a script with argparse
options and a metric print, so 100 launchers are drafted) and 50 tracked Markdown pages with a results table, and then
ignored trees, as research repositories have them: ``data/`` and ``checkpoints/`` (listed in
``.gitignore``) hold the rest of the 20,000 files. The same files without ``.git`` (a plain
directory, as an archive is unpacked: issue 24) are timed too; ``rra init`` then walks the
directory, honouring the ``.gitignore``, instead of asking git; and once more without the
``.gitignore`` (the worst case: every file is listed, and the 2,706 one-line ``.py`` files under
``data/`` and ``checkpoints/`` are read as scripts). Each run is a fresh ``rra init REPO
-o OUT`` process; the figure is the median. Target (issues 12 and 24): < 2 s for each. Exits 0
whether or not the target is met; the last line says which.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import compile_bytecode

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work"
FIXTURE = REPO / "tests" / "fixtures" / "repos" / "plain-scripts"
TARGET_S = 2.0
_GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org", "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.org", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
            "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1"}

_SCRIPT = '''"""Experiment {n}."""

import argparse

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.{n})
    args = parser.parse_args()
    print(f"loss_{n}: {{0.5:.3f}}")
'''
_MODULE = '"""Helper module {n}."""\n\n\ndef f{n}(x):\n    return x * {n}\n'
_PAGE = "# Page {n}\n\n| Model | Acc |\n|---|---|\n| m{n} | 0.{n} |\n"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, env={**os.environ, **_GIT_ENV},
                   stdout=subprocess.DEVNULL)


def generate(total: int) -> Path:
    """The repository with ``total`` files (not counting .git), made once and reused."""
    repo = WORK / f"init-repo-v2-{total}"
    if (repo / ".git").is_dir() and (repo / ".complete").is_file():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(FIXTURE, repo)
    (repo / ".gitignore").write_text("data/\ncheckpoints/\n.complete\n")
    tracked = min(1000, total // 20)
    for n in range(tracked):
        path = repo / "src" / f"pkg{n // 100}" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((_SCRIPT if n % 10 == 1 else _MODULE).format(n=n))
    for n in range(50):
        page = repo / "docs" / f"page{n}.md"
        page.parent.mkdir(exist_ok=True)
        page.write_text(_PAGE.format(n=n))
    count = sum(1 for p in repo.rglob("*") if p.is_file())
    n = 0
    while count < total:
        where = "data" if n % 2 else "checkpoints"
        path = repo / where / f"shard{n // 500}" / f"part{n}.{'py' if n % 7 == 0 else 'bin'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"print('RMSE: 1.0')\n" if path.suffix == ".py" else b"\0" * 64)
        count, n = count + 1, n + 1
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-gpg-sign", "-m", "generated")
    (repo / ".complete").write_text("")
    return repo


def plain_copy(repo: Path, *, gitignore: bool = True) -> Path:
    """The files of ``repo`` without ``.git`` (and without its ``.gitignore`` unless
    ``gitignore``): an unpacked archive, made once and reused."""
    plain = repo.with_name(repo.name.replace("init-repo", "init-plain" if gitignore else "init-bare"))
    if (plain / ".complete").is_file():
        return plain
    shutil.rmtree(plain, ignore_errors=True)
    skipped = (".git", ".complete") if gitignore else (".git", ".complete", ".gitignore")
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(*skipped))
    (plain / ".complete").write_text("")
    return plain


def _time(rra: Path, repo: Path, runs: int) -> list[float]:
    times = []
    for run in range(runs + 1):
        out = WORK / "init-out"
        shutil.rmtree(out, ignore_errors=True)
        begin = time.perf_counter()
        subprocess.run([str(rra), "init", str(repo), "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - begin
        if run:  # the first run warms the page cache and the bytecode
            times.append(elapsed)
    return times


def main() -> None:
    """Generate, time, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 files and 3 runs")
    args = parser.parse_args()
    total, runs = (2_000, 3) if args.quick else (20_000, 5)
    rra = Path(sys.executable).with_name("rra")
    # As installed from a wheel: without this, PYTHONDONTWRITEBYTECODE would make every timed run
    # recompile the modules it imports (see _common.compile_bytecode).
    compile_bytecode()
    repo = generate(total)
    files = sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo).parts)
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.count("\n")
    times = _time(rra, repo, runs)
    median = statistics.median(times)
    plain = plain_copy(repo)
    plain_times = _time(rra, plain, runs)
    plain_median = statistics.median(plain_times)
    bare_times = _time(rra, plain_copy(repo, gitignore=False), runs)
    bare_median = statistics.median(bare_times)
    # The CLI's own start-up on the same machine at the same moment, for scale on a busy machine.
    startup = []
    for _ in range(runs):
        begin = time.perf_counter()
        subprocess.run([str(rra), "--version"], check=True, stdout=subprocess.DEVNULL)
        startup.append(time.perf_counter() - begin)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"repository: {files:,} files, {listed:,} listed by git (the rest ignored)")
    print(f"rra init REPO -o OUT, fresh process, median of {runs}: {median:.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f})")
    print(f"rra init PLAIN -o OUT (the same files, no .git: walked), fresh process, median of {runs}: "
          f"{plain_median:.2f} s (min {min(plain_times):.2f}, max {max(plain_times):.2f})")
    print(f"rra init PLAIN -o OUT without its .gitignore (every file walked), median of {runs}: "
          f"{bare_median:.2f} s (min {min(bare_times):.2f}, max {max(bare_times):.2f})")
    print(f"rra --version, median of {runs}: {statistics.median(startup):.2f} s; load average {load:.1f} "
          f"on {os.cpu_count()} CPUs")
    met = max(median, plain_median, bare_median) < TARGET_S
    print(f"target < {TARGET_S:.0f} s (git, plain, plain without .gitignore): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
