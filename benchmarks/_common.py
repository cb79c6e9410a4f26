"""Helpers shared by the benchmark scripts: finding the commands, timing them, the result table,
scratch files, and the machine line every report starts with. Not a benchmark itself."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work"
BIN = Path(sys.executable).parent
CHUNK = 1024 * 1024
GB = 1e9  # throughput is reported in decimal GB/s, sizes in GiB/MiB
SCRIPT = Path(sys.argv[0]).stem or "benchmark"


def tool(name: str) -> str:
    """A console script of the running interpreter's environment, else one on PATH."""
    candidate = BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        sys.exit(f"{SCRIPT}: {name!r} not found next to {sys.executable} nor on PATH")
    return found


def compile_bytecode() -> str:
    """Compile the rra_tools package being measured to bytecode, as installing a wheel does, and
    say where. With PYTHONDONTWRITEBYTECODE set (CI images and this project's sandboxes set it)
    an editable install never caches bytecode, so every timed run would recompile each module
    changed since the last compile: a cost real installations do not have."""
    import compileall

    import rra_tools

    package = Path(rra_tools.__file__).resolve().parent
    compileall.compile_dir(str(package), quiet=1)
    return str(package)


def warm_bytecode(argv: list[str]) -> None:
    """Run ``argv`` once, untimed, with bytecode caching on: every module it imports, the
    package's and its dependencies' (uv installs wheels without bytecode), then has a cache, as
    after ``pip install`` or any first run without PYTHONDONTWRITEBYTECODE. The timed runs after
    it only read the caches (that variable stops writing, not reading)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def start(doc: str, quick_help: str, letters: str = "abc") -> tuple[set[str], bool]:
    """Parse ``--quick`` and ``--only a|b|c`` (or the script's other ``letters``), create the
    scratch directory and print the lines every report of measurements starts with;
    (measurements to run, quick)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--only", choices=list(letters), action="append", help="run only these measurements")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}")
    print(f"environment: {sys.prefix}")
    print(f"bytecode compiled for {compile_bytecode()}")
    return set(args.only or letters), bool(args.quick)


def run_timed(argv: list[str], *, expect: int | None = 0, env: dict[str, str] | None = None) -> float:
    """Wall-clock seconds of one subprocess run (output discarded); checks its exit code."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    elapsed = time.perf_counter() - start
    if expect is not None and proc.returncode != expect:
        tail = proc.stdout.decode("utf-8", "replace")[-3000:]
        sys.exit(f"{SCRIPT}: {' '.join(argv)!r} exited {proc.returncode}, expected {expect}:\n{tail}")
    return elapsed


@dataclass
class Row:
    """One line of the result table."""

    name: str
    ours: str
    peer_name: str
    peer: str
    ratio: str
    target: str
    met: str


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if abs(seconds) < 10 else f"{seconds:.1f} s"


def fmt_gbs(rate: float) -> str:
    return f"{rate:.2f} GB/s"


def print_table(rows: list[Row]) -> None:
    names = [f.name for f in fields(Row)]
    cells = [Row("measurement", "ours", "peer/limit", "figure", "ratio", "target", "met"), *rows]
    widths = [max(len(getattr(r, f)) for r in cells) for f in names]
    for n, row in enumerate(cells):
        print("  ".join(getattr(row, f).ljust(w) for f, w in zip(names, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def check_clean(path: Path) -> str | None:
    """None when ``rra validate`` finds nothing in ``path``; else a short account of what it found.

    A benchmark manifest must be valid and free of findings, or its timing means little; when
    it is not, the table says so instead of a figure passing for a success.
    """
    proc = subprocess.run([tool("rra"), "validate", "--format", "json", str(path)], capture_output=True)
    try:
        diags = json.loads(proc.stdout)["results"][0]["diagnostics"]
    except (ValueError, KeyError, IndexError):
        return f"exit {proc.returncode}, no JSON report: {proc.stderr.decode('utf-8', 'replace')[-300:]}"
    if proc.returncode == 0 and not diags:
        return None
    codes = sorted({d["code"] for d in diags})
    first = diags[0] if diags else None
    detail = f"; first: {first['code']} {first['message']}" if first else ""
    return f"exit {proc.returncode}, {len(diags)} finding(s) {', '.join(codes)}{detail}"


def write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_file(path: Path, size: int) -> None:
    """``size`` random bytes at ``path`` (kept when it is already there with that size)."""
    if path.exists() and path.stat().st_size == size:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        left = size
        while left:
            n = min(left, 8 * CHUNK)
            handle.write(os.urandom(n))
            left -= n


def sha256_limit(path: Path, buffer: bytearray, view: memoryview) -> str:
    """hashlib's single-thread rate with 1 MiB reads: the physical limit we compare with."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            digest.update(view[:n])
    return digest.hexdigest()


def load() -> float:
    """1-minute load average: other processes on the machine skew every figure."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}, load average {load():.2f}")
