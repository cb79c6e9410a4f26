#!/usr/bin/env python3
"""Benchmark of ``rra push`` and ``rra pull`` against skopeo, on a local registry.

Usage::

    python benchmarks/bench_push_pull.py            # full run: a 1 GiB+ artifact, 3 rounds
    python benchmarks/bench_push_pull.py --quick    # smoke run: 64 MiB, 1 round
    python benchmarks/bench_push_pull.py --size 256 --rounds 5 --pull-only   # d) alone, 256 MiB

The artifact is examples/digits-logreg plus 2,000 generated source files (about 31 MiB of text,
compressible) and one file of random bytes (1 GiB; incompressible, so stored as a plain layer),
packed once with ``rra_tools.oci.pack.pack``. Then, alternating which tool goes first:

a) push: ``rra push LAYOUT HOST/bench/rra:v1`` vs ``skopeo copy oci:LAYOUT:bench
   docker://HOST/bench/skopeo:v1``, each into a fresh registry (Distribution 2.8, empty storage,
   so neither tool can skip or mount a blob). Target: rra / skopeo <= 1.2.
b) pull: ``rra pull REF -o DIR --layout`` (the same work as skopeo: a verified OCI layout) vs
   ``skopeo copy docker://REF oci:OUT:v1`` from one registry; ``rra pull REF -o DIR`` (verified
   and unpacked into files) is shown too. Target: rra --layout / skopeo <= 1.2.
c) Peak resident memory of each rra process (getrusage of a parent that runs only it).
   Target: < 256 MiB.
d) pull into files against what it must do at least: ``rra pull REF -o DIR`` vs the sum of
   ``rra pull REF -o DIR --layout`` and ``tar -x`` of that layout's layers (GNU tar, ``--zstd``
   for a zstd layer), in the same round. Target: rra pull / (pull --layout + tar -x) <= 1.3.

Scratch data goes to benchmarks/_work/pushpull-<size>/ (git-ignored; the artifact and layout are
reused). Exits 0 whether or not the targets are met; the table says which.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / "benchmarks" / "_work"
DIGITS = REPO / "examples" / "digits-logreg"
BIN = Path(sys.executable).parent
MIB = 1024 * 1024
sys.path.insert(0, str(REPO))

from tests.services.registry import RegistryService  # noqa: E402

PEAK = """
import resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
print(proc.returncode, elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-2000:])
"""


def rra() -> str:
    candidate = BIN / "rra"
    return str(candidate) if candidate.exists() else shutil.which("rra") or sys.exit("bench: rra not found")


def measured(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB) of one run of ``argv``; exits on failure.

    The page cache's dirty pages are flushed first (``sync``), untimed: otherwise a command that
    follows one that wrote a gigabyte pays for that write-back in its own time."""
    os.sync()
    proc = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, check=False)
    code, elapsed, peak = proc.stdout.split()
    if code != "0":
        sys.exit(f"bench: {' '.join(argv)!r} exited {code}:\n{proc.stderr}")
    return float(elapsed), int(peak)


def make_artifact(root: Path, big: int) -> Path:
    """The benchmark artifact under ``root`` (reused when it is already complete)."""
    artifact = root / "artifact"
    done = root / ".artifact-complete"
    if done.exists():
        return artifact
    shutil.rmtree(artifact, ignore_errors=True)
    shutil.copytree(DIGITS, artifact, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    src = artifact / "src"
    for i in range(2000):
        package = src / f"pkg{i // 100:02d}"
        package.mkdir(parents=True, exist_ok=True)
        seed = hashlib.sha256(str(i).encode()).hexdigest()
        lines = [f"def function_{i}_{j}(x: int) -> int:\n    return x * {j} + 0x{seed[j % 56:j % 56 + 8]}\n\n"
                 for j in range(240)]
        (package / f"module_{i}.py").write_text("".join(lines))
    with open(artifact / "weights.bin", "wb") as out:
        left = big
        while left:
            chunk = os.urandom(min(8 * MIB, left))
            out.write(chunk)
            left -= len(chunk)
    done.touch()
    return artifact


def make_layout(root: Path, artifact: Path) -> tuple[Path, float]:
    from rra_tools.oci.pack import pack

    layout = root / "layout"
    if (root / ".layout-complete").exists():
        return layout, 0.0
    shutil.rmtree(layout, ignore_errors=True)
    start = time.perf_counter()
    pack(artifact, layout, ref_name="bench", environ={"SOURCE_DATE_EPOCH": "1700000000"})
    elapsed = time.perf_counter() - start
    (root / ".layout-complete").touch()
    return layout, elapsed


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="64 MiB and one round")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per measurement (default 3; 1 with --quick)")
    parser.add_argument("--size", type=int, default=None, metavar="MIB",
                        help="size of the random data file (default 1024; 64 with --quick)")
    parser.add_argument("--pull-only", action="store_true", help="skip the pushes (a): pulls and d) only")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from _common import compile_bytecode

    print(f"bytecode compiled for {compile_bytecode()}")
    big = (args.size or (64 if args.quick else 1024)) * MIB
    rounds = args.rounds or (1 if args.quick else 3)
    root = WORK / f"pushpull-{big // MIB}M"
    root.mkdir(parents=True, exist_ok=True)
    artifact = make_artifact(root, big)
    layout, pack_s = make_layout(root, artifact)
    print(f"artifact: {size_of(artifact) / MIB:.0f} MiB in {sum(1 for p in artifact.rglob('*') if p.is_file())} files;"
          f" layout {size_of(layout / 'blobs') / MIB:.0f} MiB"
          + (f"; packed in {pack_s:.1f} s" if pack_s else " (reused)"))
    skopeo = shutil.which("skopeo") or sys.exit("bench: skopeo not found")

    push_rra: list[float] = []
    push_skopeo: list[float] = []
    peaks: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-registry-", dir=root) as scratch:
        # a) pushes, each into an empty registry; the tool going first alternates.
        for i in range(0 if args.pull_only else rounds):
            order = ["rra", "skopeo"] if i % 2 == 0 else ["skopeo", "rra"]
            for name in order:
                service = RegistryService(Path(scratch) / f"push-{i}-{name}")
                service.start()
                try:
                    if name == "rra":
                        seconds, peak = measured([rra(), "push", str(layout), f"{service.host}/bench/rra:v1", "-q"])
                        push_rra.append(seconds)
                        peaks["push"] = max(peaks.get("push", 0), peak)
                    else:
                        seconds, _ = measured([skopeo, "copy", "--quiet", "--dest-tls-verify=false",
                                               f"oci:{layout}:bench", f"docker://{service.host}/bench/skopeo:v1"])
                        push_skopeo.append(seconds)
                finally:
                    service.stop()
                    shutil.rmtree(service.root, ignore_errors=True)

        # b) pulls from one registry holding the artifact.
        service = RegistryService(Path(scratch) / "pull")
        service.start()
        pull_rra: list[float] = []
        pull_unpack: list[float] = []
        pull_skopeo: list[float] = []
        untar: list[float] = []
        try:
            ref = f"{service.host}/bench/artifact:v1"
            measured([rra(), "push", str(layout), ref, "-q"])
            for i in range(rounds):
                out = Path(scratch) / f"out-{i}"
                out.mkdir()  # skopeo wants the parent of its oci: destination to exist
                order = ["rra", "skopeo", "unpack"] if i % 2 == 0 else ["skopeo", "rra", "unpack"]
                for name in order:
                    target = out / name
                    if name == "rra":
                        seconds, peak = measured([rra(), "pull", ref, "-o", str(target), "--layout", "-q"])
                        pull_rra.append(seconds)
                        peaks["pull --layout"] = max(peaks.get("pull --layout", 0), peak)
                        untar.append(untar_layers(target, out / "untarred"))
                    elif name == "unpack":
                        seconds, peak = measured([rra(), "pull", ref, "-o", str(target), "-q"])
                        pull_unpack.append(seconds)
                        peaks["pull"] = max(peaks.get("pull", 0), peak)
                    else:
                        seconds, _ = measured([skopeo, "copy", "--quiet", "--src-tls-verify=false",
                                               f"docker://{ref}", f"oci:{target}:v1"])
                        pull_skopeo.append(seconds)
                shutil.rmtree(out, ignore_errors=True)
        finally:
            service.stop()

    def row(what: str, ours: list[float], theirs: list[float], target: float) -> None:
        a, b = statistics.median(ours), statistics.median(theirs)
        ratio = a / b
        print(f"| {what:<34} | {a:7.2f} s | {b:7.2f} s | {ratio:5.2f} | <= {target:.1f} | "
              f"{'yes' if ratio <= target else 'NO'} |")

    print(f"\nmedians of {rounds} round(s); {os.cpu_count()} CPUs")
    print(f"| {'measurement':<34} | {'rra':>9} | {'skopeo':>9} | ratio | target | met |")
    print(f"|{'-' * 36}|{'-' * 11}|{'-' * 11}|-------|--------|-----|")
    if push_rra:
        row("push (fresh registry)", push_rra, push_skopeo, 1.2)
    row("pull --layout", pull_rra, pull_skopeo, 1.2)
    print(f"| {'pull (verify + unpack to files)':<34} | {statistics.median(pull_unpack):7.2f} s | "
          f"{statistics.median(pull_skopeo):7.2f} s | {statistics.median(pull_unpack) / statistics.median(pull_skopeo):5.2f}"
          " |    -   |  -  |")
    floor = [a + b for a, b in zip(pull_rra, untar)]
    unpack_ratio = statistics.median(pull_unpack) / statistics.median(floor)
    print(f"\nd) pull into files {statistics.median(pull_unpack):.2f} s; pull --layout + tar -x of its layers "
          f"{statistics.median(floor):.2f} s (pull --layout {statistics.median(pull_rra):.2f} s, tar -x "
          f"{statistics.median(untar):.2f} s); ratio {unpack_ratio:.2f}, target <= 1.3: "
          f"{'yes' if unpack_ratio <= 1.3 else 'NO'}")
    print("\npeak RSS (target < 256 MiB)")
    for name, kib in peaks.items():
        print(f"| rra {name:<14} | {kib / 1024:6.1f} MiB | {'yes' if kib < 256 * 1024 else 'NO'} |")
    print("\nall times (s): push rra " + ", ".join(f"{x:.2f}" for x in push_rra)
          + "; push skopeo " + ", ".join(f"{x:.2f}" for x in push_skopeo)
          + "; pull --layout rra " + ", ".join(f"{x:.2f}" for x in pull_rra)
          + "; pull skopeo " + ", ".join(f"{x:.2f}" for x in pull_skopeo)
          + "; pull+unpack rra " + ", ".join(f"{x:.2f}" for x in pull_unpack)
          + "; tar -x of the layers " + ", ".join(f"{x:.2f}" for x in untar))


def untar_layers(layout: Path, dest: Path) -> float:
    """Seconds GNU tar takes to extract every layer of the layout's only manifest into ``dest``."""
    import json

    index = json.loads((layout / "index.json").read_text())
    blobs = layout / "blobs" / "sha256"
    manifest = json.loads((blobs / index["manifests"][0]["digest"][7:]).read_text())
    dest.mkdir()
    elapsed = 0.0
    for layer in manifest["layers"]:
        flag = ["--zstd"] if layer["mediaType"].endswith("+zstd") else ["-z"] if layer["mediaType"].endswith("+gzip") \
            else []
        seconds, _ = measured(["tar", "-x", *flag, "-f", str(blobs / layer["digest"][7:]), "-C", str(dest)])
        elapsed += seconds
    shutil.rmtree(dest)
    return elapsed


if __name__ == "__main__":
    main()
