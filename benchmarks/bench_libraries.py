"""Four hand-written readers and writers against the library each could be (issue 25 item 2):
``.rraignore`` matching (``rra_tools/io/ignore.py``) against ``pathspec``; unified diffs
(``rra_tools/io/unidiff.py``) against ``unidiff``; ``pylock.toml`` (``rra_tools/env/locks.py``)
against ``packaging.pylock``; the deterministic tar writer (``rra_tools/oci/tarball.py``) against
``tarfile``. For each: the time of the same work side by side (median of 5) and what each gives
or misses on the cases that decided the choice. The module docstrings cite these figures.

    pip install pathspec unidiff   # not dependencies of rra-tools: only this comparison needs them
    python benchmarks/bench_libraries.py
"""

from __future__ import annotations

import hashlib
import io
import statistics
import sys
import tarfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import WORK, machine

from rra_tools.env.locks import LockError, parse_pylock
from rra_tools.io.ignore import IgnoreRules
from rra_tools.io.unidiff import DiffProblem, parse_unified_diff
from rra_tools.oci.tarball import Entry, write_tar

try:
    import pathspec
    import unidiff
    from packaging import pylock
except ImportError as exc:
    sys.exit(f"bench_libraries: {exc}; pip install pathspec unidiff 'packaging>=26'")


def _median(work: Callable[[], object], runs: int = 5) -> float:
    work()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _row(what: str, ours: float, theirs: float, peer: str) -> None:
    print(f"  {what:<44} ours {ours * 1000:8.2f} ms   {peer} {theirs * 1000:8.2f} ms   ratio {ours / theirs:5.2f}")


def ignore() -> None:
    print("ignore rules: 20,000 paths, 12 patterns")
    patterns = "\n".join(["*.pyc", "__pycache__/", "/build/", "data/**/*.npy", "!data/keep/*.npy", "*.log",
                          "runs/", "!runs/keep.txt", "**/tmp", "docs/_build/", "*.ckpt", "!best.ckpt"])
    paths = [f"{d}/{sub}/file{i}.{ext}" for i in range(2000) for d, sub, ext in (
        ("src", "pkg", "py"), ("src", "__pycache__", "pyc"), ("data", "raw/x", "npy"), ("data", "keep", "npy"),
        ("logs", "a", "log"), ("runs", "r1", "json"), ("docs", "_build", "html"), ("a", "tmp", "txt"),
        ("models", "m", "ckpt"), ("x", "y", "txt"))]
    ours = IgnoreRules.parse(patterns)
    spec = pathspec.GitIgnoreSpec.from_lines(patterns.splitlines())

    def with_dirs(ignored: Callable[[str, bool], bool]) -> list[str]:
        # As the packer walks: a path is out when any directory above it is (git cannot
        # re-include a file inside an excluded directory), else by its own rules.
        out = []
        for path in paths:
            parts = path.split("/")
            if any(ignored("/".join(parts[:k]), True) for k in range(1, len(parts))) or ignored(path, False):
                out.append(path)
        return out

    def theirs(rel: str, is_dir: bool) -> bool:
        return bool(spec.match_file(rel + "/" if is_dir else rel))

    a, b = with_dirs(ours.ignored), with_dirs(theirs)
    _row("verdicts for every path (directories first)", _median(lambda: with_dirs(ours.ignored)),
         _median(lambda: with_dirs(theirs)), "pathspec")
    print(f"  paths excluded: ours {len(a)}, pathspec {len(b)}, verdicts that differ {len(set(a) ^ set(b))}")


DIFF = b"""From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] change

 a.py | 2 +-
diff --git a/a.py b/a.py
index 1111111..2222222 100644
--- a/a.py
+++ b/a.py
@@ -1,3 +1,3 @@
 x = 1
-y = 2
+y = 3
 z = 4
diff --git a/old.txt b/new.txt
similarity index 100%
rename from old.txt
rename to new.txt
diff --git a/img.png b/img.png
index 3333333..4444444 100644
Binary files a/img.png and b/img.png differ
"""
#: The first hunk claims 4 lines and holds 3: `git apply` calls it corrupt.
CORRUPT = DIFF.replace(b"@@ -1,3 +1,3 @@", b"@@ -1,4 +1,4 @@")


def diffs() -> None:
    print("unified diffs: a format-patch mail with a hunk, a rename and a binary file, x200")
    big = b"\n".join([DIFF.replace(b"a.py", f"f{i}.py".encode()) for i in range(200)])

    def ours_paths(data: bytes) -> list[str]:
        return sorted(parse_unified_diff(data).paths)

    def theirs_paths(data: bytes) -> list[str]:
        patch = unidiff.PatchSet(data.decode())
        return sorted({p.path for p in patch} | {p.source_file.removeprefix("a/") for p in patch})

    _row("parse and list touched paths", _median(lambda: ours_paths(big)), _median(lambda: theirs_paths(big)),
         "unidiff ")
    print(f"  paths: ours {ours_paths(DIFF)}, unidiff {theirs_paths(DIFF)}")
    for name, reader in (("ours", ours_paths), ("unidiff", theirs_paths)):
        try:
            reader(CORRUPT)
            verdict = "accepted"
        except (DiffProblem, unidiff.UnidiffParseError) as exc:
            verdict = f"refused ({type(exc).__name__})"
        print(f"  a hunk whose counts run over its lines: {name} {verdict}")


def locks() -> None:
    print("pylock.toml: 500 packages")
    packages = "\n".join(
        f'[[packages]]\nname = "pkg{i}"\nversion = "1.{i}"\n'
        f'[[packages.wheels]]\nname = "pkg{i}-1.{i}-py3-none-any.whl"\n'
        f'url = "https://example.org/pkg{i}-1.{i}-py3-none-any.whl"\n'
        f'hashes = {{sha256 = "{hashlib.sha256(str(i).encode()).hexdigest()}"}}\n' for i in range(500))
    text = f'lock-version = "1.0"\ncreated-by = "bench"\nrequires-python = ">=3.11"\n{packages}'
    _row("read and check", _median(lambda: parse_pylock(text)),
         _median(lambda: pylock.Pylock.from_dict(tomllib.loads(text))), "packaging")
    broken = text.replace('version = "1.3"', "version = 13", 1).replace(
        'hashes = {sha256 = "' + hashlib.sha256(b"7").hexdigest() + '"}', "hashes = {}", 1).replace(
        'name = "pkg9"\n', 'name = ""\n', 1)
    try:
        parse_pylock(broken, "pylock.toml")
    except LockError as exc:
        print(f"  a lock with 3 errors: ours reports {len(exc.problems)}: "
              + "; ".join(f"line {p.line}: {p.message}" for p in exc.problems))
    try:
        pylock.Pylock.from_dict(tomllib.loads(broken))
    except pylock.PylockValidationError as exc:
        print(f"  packaging reports 1 (the first), with no line: {exc}")


def tars() -> None:
    print("tar stream: 2,000 files of 64 KiB (128 MiB)")
    root = WORK / "libraries-tar"
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for i in range(2000):
        path = root / f"f{i:04d}.bin"
        if not path.exists():
            path.write_bytes(hashlib.sha256(str(i).encode()).digest() * 2048)
        entries.append(Entry(name=f"f{i:04d}.bin", kind="file", size=path.stat().st_size, source=path))

    def ours() -> bytes:
        digest = hashlib.sha256()
        write_tar(entries, 0, lambda view: digest.update(view))
        return digest.digest()

    def theirs() -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for entry in entries:
                assert entry.source is not None
                info = tar.gettarinfo(str(entry.source), arcname=entry.name)
                info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
                with entry.source.open("rb") as handle:
                    tar.addfile(info, handle)
        return hashlib.sha256(out.getvalue()).digest()

    _row("write and hash the stream", _median(ours, 3), _median(theirs, 3), "tarfile")
    print(f"  same bytes: {ours() == theirs()} (tarfile pads the archive to a 10,240-byte record and writes "
          "its own header fields)")


def main() -> None:
    print(f"machine: {machine()}")
    ignore()
    diffs()
    locks()
    tars()


if __name__ == "__main__":
    main()
