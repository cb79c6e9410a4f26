#!/usr/bin/env python3
"""Benchmark of ``rra pack`` against the plain pipeline ``tar -c | zstd -1 | sha256sum``.

Usage::

    python benchmarks/bench_pack.py            # full run: an artifact of about 1.1 GiB
    python benchmarks/bench_pack.py --quick    # smoke run with small sizes

The artifact (generated once under benchmarks/_work/pack/, git-ignored, reused when present
with the right sizes) is mixed: many small source files (text that compresses) and one large
incompressible data file, declared as a shipped data source with its SHA-256. Both commands
run on a warm page cache, alternately, several times; the table gives the medians and their
ratio. Target: rra pack / pipeline <= 1.3.

Where ``openssl`` is installed, the same pipeline hashed by ``openssl dgst -sha256`` is timed
too: coreutils' sha256sum may not use the CPU's SHA instructions, which hashlib does, so that
row is the fairer peer. ``rra pack`` does more than either pipeline — it validates the artifact
(hashing the data file once more), writes every blob to disk and hashes each layer twice
(compressed and uncompressed) — so the ratio measures what that costs.
The script exits 0 whether or not the target is met.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work" / "pack"
RRA = Path(sys.executable).parent / "rra"
TARGET = 1.3
MiB = 1024 * 1024

_WORDS = (  # noqa: SIM905 - a word list reads better as one string
          "def class return import self for in range if else while yield lambda tensor model "
          "batch loss optimizer step grad epoch seed torch numpy config path data loader "
          "train eval metric accuracy print log value index shape dtype device").split()


def _source_text(rng: random.Random, size: int) -> bytes:
    lines = []
    total = 0
    while total < size:
        indent = "    " * rng.randrange(4)
        line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 12))) + "\n"
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()


def generate(root: Path, n_sources: int, source_bytes: int, data_bytes: int) -> None:
    """Write the artifact (or keep it when it is already there with the same sizes)."""
    stamp = root.with_name(root.name + ".sizes")
    wanted = f"{n_sources} {source_bytes} {data_bytes}\n"
    if stamp.is_file() and stamp.read_text() == wanted:
        return
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(1)
    for i in range(n_sources):
        path = root / "src" / f"pkg{i % 50:02d}" / f"mod{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_source_text(rng, source_bytes))
    data = root / "data" / "features.bin"
    data.parent.mkdir(parents=True)
    digest = hashlib.sha256()
    with open(data, "wb") as handle:
        left = data_bytes
        while left:
            chunk = os.urandom(min(left, 16 * MiB))
            digest.update(chunk)
            handle.write(chunk)
            left -= len(chunk)
    lock = b"numpy==2.1.3 \\\n    --hash=sha256:016d0f6f5e77b0f0d45d77387ffa4bb89816b57c835580c3ce8e099ef830befe\n"
    (root / "requirements.lock").write_bytes(lock)
    (root / "train.py").write_text("print('train')\n")
    (root / "rra.yaml").write_text(f"""rra_version: "1.0"
id: bench-pack
title: Packing benchmark artifact
paper:
  title: A benchmark
  authors: [{{name: RRA developers}}]
code:
  license: Apache-2.0
  tree: {{path: "."}}
environment:
  interpreter: {{version: "3.11"}}
  lock: {{path: requirements.lock, format: requirements-hashes, sha256: "{hashlib.sha256(lock).hexdigest()}"}}
data:
  - id: features
    license: CC-BY-4.0
    access: public
    shipped: true
    files:
      - {{path: data/features.bin, sha256: "{digest.hexdigest()}", size: {data_bytes}}}
launchers:
  - id: train
    argv: [python, train.py]
    stochastic: false
    resources: {{timeout_s: 60, expected_runtime_s: 1}}
""")
    stamp.write_text(wanted)


def _tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def time_pack(artifact: Path, out: Path) -> float:
    """Seconds of one ``rra pack`` in a fresh process (output directory removed first)."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([str(RRA), "pack", str(artifact), "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_pipeline(artifact: Path, hasher: str = "sha256sum") -> float:
    """Seconds of ``tar -c | zstd -1 | <hasher>`` over the same directory."""
    start = time.perf_counter()
    # The reference is the shell pipeline itself, over a directory this script made.
    subprocess.run(f"tar -cf - -C {artifact} . | zstd -1 -q -c | {hasher}",  # noqa: S602
                   shell=True, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Generate, time both commands alternately, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (default 3)")
    args = parser.parse_args(argv)
    if not RRA.exists() or shutil.which("zstd") is None or shutil.which("tar") is None:
        print("needs the rra console script in this interpreter's environment, tar and zstd", file=sys.stderr)
        return 2
    if args.quick:
        sizes, runs = (200, 4096, 32 * MiB), 1
    else:
        sizes, runs = (12_000, 6 * 1024, 1024 * MiB), args.runs
    artifact = WORK / ("artifact-quick" if args.quick else "artifact")
    out = WORK / "out"
    print(f"generating {artifact.relative_to(REPO)} ...", flush=True)
    generate(artifact, *sizes)
    total = _tree_bytes(artifact)
    time_pipeline(artifact)  # warm the page cache
    time_pack(artifact, out)
    # coreutils' sha256sum may lack the CPU's SHA instructions, which hashlib (OpenSSL) uses;
    # the same pipeline hashed by openssl shows what a fast hasher would change.
    openssl = "openssl dgst -sha256" if shutil.which("openssl") else None
    ours, theirs, fast = [], [], []
    for _ in range(runs):
        theirs.append(time_pipeline(artifact))
        if openssl:
            fast.append(time_pipeline(artifact, openssl))
        ours.append(time_pack(artifact, out))
    mine, peer = statistics.median(ours), statistics.median(theirs)
    stored = _tree_bytes(out)
    print(f"\nartifact: {total / MiB:.0f} MiB in {sizes[0] + 3} files ({sizes[0]} source files of "
          f"{sizes[1] / 1024:.0f} KiB, one data file of {sizes[2] / MiB:.0f} MiB); layout {stored / MiB:.0f} MiB; "
          f"{os.cpu_count()} CPUs; medians of {runs} run(s)\n")
    rows = [("measurement", "seconds", "MiB/s"),
            ("rra pack (validate + pack + write layout)", f"{mine:.2f}", f"{total / MiB / mine:.0f}"),
            ("tar -c | zstd -1 | sha256sum", f"{peer:.2f}", f"{total / MiB / peer:.0f}")]
    if fast:
        quick = statistics.median(fast)
        rows.append(("tar -c | zstd -1 | openssl dgst -sha256", f"{quick:.2f}", f"{total / MiB / quick:.0f}"))
    width = max(len(r[0]) for r in rows)
    for row in rows:
        print(f"{row[0].ljust(width)}  {row[1]:>8}  {row[2]:>6}")
    ratio = mine / peer
    print(f"\nratio rra pack / pipeline: {ratio:.2f} (target <= {TARGET}): {'met' if ratio <= TARGET else 'NOT met'}")
    if fast:
        quick_ratio = mine / statistics.median(fast)
        print(f"ratio rra pack / pipeline with openssl: {quick_ratio:.2f} "
              f"({'within' if quick_ratio <= TARGET else 'above'} the target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
