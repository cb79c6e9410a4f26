#!/usr/bin/env python3
"""Benchmarks of ``rra run`` and ``rra env create``: launch overhead, warm environment, output hashing.

Usage::

    python benchmarks/bench_run.py            # full run (about 2 GiB of scratch data)
    python benchmarks/bench_run.py --quick    # smoke run with small sizes

Three measurements, each printed as one or more rows of a table (our figure, the peer or limit
figure, their ratio and the target):

a) Overhead of ``rra run ARTIFACT LAUNCHER`` (local executor) over running the launcher's argv
   directly, for launchers that do nothing (``/bin/true`` and ``python -c pass``) in a generated
   artifact; the two alternate, 15 runs each (3 with --quick); overhead = difference of the
   medians. Target: <= 30 ms (issue 25; issue 9's was 0.15 s). ``rra run`` caches a manifest
   it has checked (by content), so these are runs of a manifest already run once; a third
   launcher, run each time with an empty ``RRA_CACHE_DIR``, gives the first run of a manifest
   (parsed and schema-checked) in its own row. Alternating with them, ``python -c`` importing
   the standard-library modules the run path imports gives the floor under the overhead. A
   breakdown of one ``rra run`` follows, measured in a fresh interpreter. The package's bytecode
   is compiled first, as installing a wheel does.
b) ``rra env create`` from a warm cache: a one-package lock (six, a pure-Python wheel), built
   once from an empty rra cache (shown, needs the package index), then 15 warm calls (3 with
   --quick), median. Target: <= 1 s.
c) Run-record output hashing: a launcher that only ``touch``es 2 GiB of pre-generated
   incompressible outputs (a directory output of 60 x 32 MiB files and two 64 MiB file outputs),
   so what the record costs is hashing them. Measured in process
   (``rra_tools.run.outcome.collect_outputs``) and as a whole ``rra run`` minus a no-op ``rra
   run`` of the same artifact, on a warm page cache, median of 3 (1 with --quick), against
   ``hashlib.sha256`` with 1 MiB reads in 1 thread and in one thread per core. Target: >= 1 GB/s.

Scratch data goes to benchmarks/_work/run-*/ (git-ignored) and is reused when it is already
there with the right sizes; run records from earlier invocations are deleted first. The script
exits 0 whether or not targets are met; the table says which.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import (BIN, CHUNK, GB, REPO, WORK, Row, check_clean, fmt_gbs, fmt_s, load, make_file,
                     print_table, run_timed, sha256_limit, start, tool, write_if_changed)

MiB = 1024 * 1024
#: Issue 25's goal (issue 9's was 0.15 s).
OVERHEAD_TARGET_S = 0.030
#: The standard-library modules ``rra run ARTIFACT LAUNCHER`` imports (``-X importtime``; they
#: bring in the rest: re, enum, urllib.parse and ipaddress through pathlib, selectors and locale
#: through subprocess, ...): their import time over ``python -c pass`` is a floor under its
#: overhead that no change of ours lowers. (typing, dataclasses and platform are no longer among
#: them: the run path's record classes are plain slotted classes, see rra_tools/plain.py.)
STDLIB_OF_RUN = "import pathlib, hashlib, subprocess, json, datetime, signal, threading, atexit"
ENV_TARGET_S = 1.0
HASH_TARGET_GBS = 1.0

# six 1.17.0's wheel (pure Python, 11 KiB): the smallest useful thing to install from the index.
LOCK_TEXT = (
    "# requirements-hashes lock used by the rra run benchmarks\n"
    "six==1.17.0 \\\n"
    "    --hash=sha256:4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274\n"
)


# --------------------------------------------------------------------------------------------
# Timing helpers


def spread(times: list[float]) -> str:
    return f"median {fmt_s(statistics.median(times))}  min {fmt_s(min(times))}  max {fmt_s(max(times))}"


# --------------------------------------------------------------------------------------------
# Artifacts


def launcher(ident: str, argv: list[str], **extra: object) -> dict[str, object]:
    return {"id": ident, "argv": argv, "stochastic": False,
            "resources": {"timeout_s": 600, "expected_runtime_s": 1}, **extra}


def write_artifact(root: Path, ident: str, title: str, launchers: list[dict[str, object]]) -> Path:
    """A minimal valid artifact in ``root`` (rra.yaml written as JSON, which is YAML); its manifest."""
    write_if_changed(root / "requirements.lock", LOCK_TEXT)
    doc = {
        "rra_version": "1.0",
        "id": ident,
        "title": title,
        "paper": {"title": "rra run benchmark", "authors": [{"name": "Benchmark"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {
            # The running interpreter's version, so that `rra env create` builds on it (no download).
            "interpreter": {"version": f"{sys.version_info.major}.{sys.version_info.minor}"},
            "lock": {"path": "requirements.lock", "format": "requirements-hashes",
                     "sha256": hashlib.sha256(LOCK_TEXT.encode()).hexdigest()},
        },
        "launchers": launchers,
    }
    manifest = root / "rra.yaml"
    write_if_changed(manifest, json.dumps(doc, indent=1) + "\n")
    # Records of earlier invocations would pile up; they are scratch like everything here.
    shutil.rmtree(root / "runs", ignore_errors=True)
    return manifest


def records(root: Path, ident: str) -> list[dict[str, object]]:
    """Every run record of launcher ``ident``, oldest first."""
    found = sorted((root / "runs" / ident).glob("*/record.json"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in found]


def record_problem(recs: list[dict[str, object]], expected: int) -> str | None:
    """None when there are ``expected`` records, all completed with exit status 0."""
    if len(recs) != expected:
        return f"{len(recs)} run records, expected {expected}"
    bad = [r for r in recs if r.get("status") != "completed" or r.get("exit_status") != 0]
    if bad:
        return f"{len(bad)} run(s) not completed with exit 0, e.g. {bad[0].get('status')} {bad[0].get('messages')}"
    return None


# --------------------------------------------------------------------------------------------
# a) launch overhead


BREAKDOWN = r"""
import json, os, subprocess, sys, time
t0 = time.perf_counter()
import rra_tools.cli.main
import rra_tools.cli.failure, rra_tools.cli.output  # what entry() loads for `rra run ART LAUNCHER`
t1 = time.perf_counter()
import rra_tools.cli.run_exec  # the run without click (rra_tools/cli/main.py's fast path)
from rra_tools.run import RunOptions, execute, load_artifact, plan_runs
from rra_tools.run.gpus import inventory
from rra_tools.run import local
t2 = time.perf_counter()
artifact = load_artifact(sys.argv[1])
t3 = time.perf_counter()
(plan,) = plan_runs(artifact, sys.argv[2])
t4 = time.perf_counter()
gpus = inventory()
t5 = time.perf_counter()
try:
    from rra_tools.run.host import package_set
    package_set()  # cached: the record's fingerprint reuses it
except ImportError:
    pass
t6 = time.perf_counter()
spent = {"write_record": 0.0, "fsync": 0.0}
def timed(name, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start
    return wrapper
if hasattr(local, "write_record"):
    local.write_record = timed("write_record", local.write_record)
os.fsync = timed("fsync", os.fsync)
execute(plan, RunOptions(gpus=gpus))
t7 = time.perf_counter()
start = time.perf_counter()
subprocess.run(plan.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
bare = time.perf_counter() - start
print(json.dumps({"import CLI entry (no click)": t1 - t0, "import run library": t2 - t1, "load_artifact": t3 - t2,
                  "plan_runs": t4 - t3, "GPU inventory": t5 - t4, "package scan": t6 - t5,
                  "execute": t7 - t6, "  of which write_record": spent["write_record"],
                  "  of which fsync": spent["fsync"], "  bare spawn+wait in process": bare}))
"""


def breakdown(manifest: Path, ident: str, runs: int, startup: float) -> None:
    """Where the time of one ``rra run`` goes, measured in fresh interpreters (median per stage)."""
    stages: dict[str, list[float]] = {}
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", BREAKDOWN, str(manifest.parent), ident],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"     breakdown failed: {proc.stderr[-500:]}")
            return
        for name, seconds in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            stages.setdefault(name, []).append(seconds)
    med = {name: statistics.median(values) for name, values in stages.items()}
    parts = [f"interpreter start (python -c pass) {1000 * startup:.0f} ms"]
    parts += [f"{name.strip()} {1000 * value:.1f} ms" if name.startswith(" ") else f"{name} {1000 * value:.0f} ms"
              for name, value in med.items()]
    print(f"     breakdown of `rra run {ident}` (fresh interpreter, median of {runs}):")
    for part in parts:
        print(f"       {part}")


def bench_overhead(runs: int) -> list[Row]:
    root = WORK / "run-noop"
    python = shutil.which("python", path=f"{BIN}:/usr/bin:/bin") or sys.executable
    manifest = write_artifact(root, "run-noop", "No-op launchers for the rra run overhead benchmark", [
        launcher("true", ["/bin/true"]),
        launcher("pass", ["python", "-c", "pass"]),
        launcher("cold", ["/bin/true"]),
    ])
    problem = check_clean(manifest)
    if problem:
        print(f"     {manifest.relative_to(REPO)}: NOT VALIDATED AS CLEAN: {problem}")
    # `rra run` puts the directory of its interpreter first on PATH: `python` is this one.
    commands = {
        "rra run true": [tool("rra"), "run", str(root), "true", "-q"],
        "/bin/true": ["/bin/true"],
        "rra run pass": [tool("rra"), "run", str(root), "pass", "-q"],
        "python -c pass": [python, "-c", "pass"],
        "rra --help": [tool("rra"), "--help"],
        # The standard-library modules the run path imports, alone: the floor under the overhead.
        "stdlib of rra run": [python, "-c", STDLIB_OF_RUN],
        # The first run of a manifest version: nothing in the rra cache, so the manifest is
        # parsed and schema-checked (later runs read the checked manifest from the cache).
        "rra run cold": [tool("rra"), "run", str(root), "cold", "-q"],
    }
    caches = WORK / "run-noop-caches"
    shutil.rmtree(caches, ignore_errors=True)
    fresh = iter(range(10**6))

    def env_for(name: str) -> dict[str, str] | None:
        return {**os.environ, "RRA_CACHE_DIR": str(caches / str(next(fresh)))} if name == "rra run cold" else None

    for name, argv in commands.items():  # untimed: page caches and the rra cache warm
        run_timed(argv, env=env_for(name))
    times: dict[str, list[float]] = {name: [] for name in commands}
    order = list(commands)
    for i in range(runs):
        # Alternate the order so that drifts in machine load hit all alike.
        for name in (order if i % 2 == 0 else order[::-1]):
            times[name].append(run_timed(commands[name], env=env_for(name)))
    shutil.rmtree(caches, ignore_errors=True)
    print(f"  a) load average {load():.2f} at the end; {runs} alternating runs each, artifact "
          f"{root.relative_to(REPO)}, python = {python}", flush=True)
    for name, values in times.items():
        ratio = statistics.median(values) / statistics.median(times["python -c pass"])
        print(f"     {name:18s} {spread(values)}  ({ratio:.1f} x python -c pass)")
    rows = []
    for label, ours, bare in (("/bin/true", "rra run true", "/bin/true"),
                              ("python -c pass", "rra run pass", "python -c pass")):
        overhead = statistics.median(times[ours]) - statistics.median(times[bare])
        paired = statistics.median(a - b for a, b in zip(times[ours], times[bare]))
        print(f"     overhead with {label}: difference of medians {fmt_s(overhead)}, "
              f"median of paired differences {fmt_s(paired)}")
        recorded = record_problem(records(root, ours.split()[-1]), runs + 1)
        if recorded:
            print(f"     {ours}: RECORDS WRONG: {recorded}")
        met = "yes" if overhead <= OVERHEAD_TARGET_S else "NO"
        rows.append(Row(f"a) rra run overhead, launcher {label} (median)", fmt_s(overhead), "limit",
                        fmt_s(OVERHEAD_TARGET_S), f"{overhead / OVERHEAD_TARGET_S:.2f}", "<= 30 ms",
                        "NO: " + ("findings" if problem else "records") if problem or recorded else met))
    cold = statistics.median(times["rra run cold"]) - statistics.median(times["/bin/true"])
    rows.append(Row("a) same, /bin/true, first run of the manifest (empty cache)", fmt_s(cold), "limit",
                    fmt_s(OVERHEAD_TARGET_S), f"{cold / OVERHEAD_TARGET_S:.2f}", "<= 30 ms",
                    "yes" if cold <= OVERHEAD_TARGET_S else "NO"))
    floor = statistics.median(times["stdlib of rra run"]) - statistics.median(times["python -c pass"])
    rows.append(Row("a) same, floor: the run path's stdlib imports", fmt_s(floor), "limit", fmt_s(OVERHEAD_TARGET_S),
                    f"{floor / OVERHEAD_TARGET_S:.2f}", "", ""))
    rows.append(Row("a) same, whole rra run true vs rra --help", fmt_s(statistics.median(times["rra run true"])),
                    "rra --help", fmt_s(statistics.median(times["rra --help"])),
                    f"{statistics.median(times['rra run true']) / statistics.median(times['rra --help']):.2f}",
                    "", ""))
    breakdown(manifest, "true", max(3, runs // 3), statistics.median(times["python -c pass"]))
    return rows


# --------------------------------------------------------------------------------------------
# b) rra env create, warm cache


def bench_env(runs: int) -> list[Row]:
    root = WORK / "run-env"
    manifest = write_artifact(root, "run-env", "Environment for the rra env create benchmark", [
        launcher("true", ["/bin/true"]),
    ])
    problem = check_clean(manifest)
    if problem:
        print(f"     {manifest.relative_to(REPO)}: NOT VALIDATED AS CLEAN: {problem}")
    cache = root / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    argv = [tool("rra"), "env", "create", str(root), "--cache-dir", str(cache)]
    start = time.perf_counter()
    cold = subprocess.run(argv, capture_output=True, text=True)
    cold_s = time.perf_counter() - start
    if cold.returncode != 0 or not cold.stderr.startswith("built "):
        print(f"  b) cold `rra env create` failed (exit {cold.returncode}); is the package index reachable?\n"
              f"     {cold.stderr.strip()[-800:]}")
        return [Row("b) rra env create, warm cache (median)", "-", "limit", fmt_s(ENV_TARGET_S), "-", "<= 1 s",
                    "NO: cold create failed")]
    python = Path(cold.stdout.strip())
    times, reused = [], 0
    help_times = []
    for i in range(runs):
        start = time.perf_counter()
        warm = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        reused += warm.returncode == 0 and warm.stderr.startswith("reused ") and Path(warm.stdout.strip()) == python
        help_times.append(run_timed([tool("rra"), "--help"]))
    med = statistics.median(times)
    print(f"  b) load average {load():.2f} at the end; lock: six==1.17.0 (hash-checked), cache "
          f"{cache.relative_to(REPO)}", flush=True)
    print(f"     cold (empty rra cache; uv's own download cache as it is): {fmt_s(cold_s)} -> {python}")
    print(f"     warm, {runs} calls: {spread(times)}; {reused} of {runs} reused the environment")
    print(f"     rra --help, alternating with them: {spread(help_times)}")
    wrong = problem or reused != runs
    met = ("yes" if med <= ENV_TARGET_S else "NO") if not wrong else "NO: " + ("findings" if problem else "not reused")
    return [
        Row("b) rra env create, warm cache (median)", fmt_s(med), "limit", fmt_s(ENV_TARGET_S),
            f"{med / ENV_TARGET_S:.2f}", "<= 1 s", met),
        Row("b) same, against rra --help", fmt_s(med), "rra --help", fmt_s(statistics.median(help_times)),
            f"{med / statistics.median(help_times):.2f}", "", ""),
        Row("b) rra env create, cold (once, for reference)", fmt_s(cold_s), "", "", "", "", ""),
    ]


# --------------------------------------------------------------------------------------------
# c) run-record output hashing


def in_process(root: Path, runs: int) -> tuple[list[float], list[dict[str, object]] | str]:
    """Times of ``collect_outputs`` on the 'write' launcher's plan, and what it produced (or why not)."""
    try:
        sys.path.insert(0, str(REPO))
        from rra_tools.run import load_artifact, plan_runs
        from rra_tools.run.outcome import collect_outputs
    except ImportError as exc:
        return [], f"cannot import collect_outputs: {exc}"
    (plan,) = plan_runs(load_artifact(root), "write")
    times: list[float] = []
    produced: list[dict[str, object]] | str = []
    for _ in range(runs):
        messages: list[str] = []
        start = time.perf_counter()
        outputs, missing, _paths = collect_outputs(plan, 0.0, messages)  # 0.0: nothing counts as stale
        times.append(time.perf_counter() - start)
        produced = list(outputs) if not missing else f"missing: {messages}"
    return times, produced


def bench_hash(n_shards: int, shard_size: int, model_size: int, runs: int) -> list[Row]:
    total_mib = (n_shards * shard_size + 2 * model_size) // MiB
    root = WORK / f"run-hash-{total_mib}M"
    shards = [root / "out" / "shards" / f"shard-{i:03d}.bin" for i in range(n_shards)]
    models = [root / "out" / "model-a.bin", root / "out" / "model-b.bin"]
    generated = time.perf_counter()
    for path in shards:
        make_file(path, shard_size)
    for path in models:
        make_file(path, model_size)
    generated = time.perf_counter() - generated
    files = shards + models
    total = sum(p.stat().st_size for p in files)
    outputs = [{"id": "shards", "path": "out/shards", "format": "directory"},
               {"id": "model-a", "path": "out/model-a.bin", "format": "binary"},
               {"id": "model-b", "path": "out/model-b.bin", "format": "binary"}]
    manifest = write_artifact(root, "run-hash", "Output hashing benchmark", [
        # The outputs already exist: `touch` makes them this run's (they must not predate it).
        launcher("write", ["touch", "out/shards", "out/model-a.bin", "out/model-b.bin"], outputs=outputs),
        launcher("true", ["/bin/true"]),
    ])
    problem = check_clean(manifest)
    if problem:
        print(f"     {manifest.relative_to(REPO)}: NOT VALIDATED AS CLEAN: {problem}")
    print(f"  c) {len(files)} output files, {total / 2**30:.2f} GiB ({n_shards} x {shard_size // MiB} MiB in a "
          f"directory output + 2 x {model_size // MiB} MiB file outputs) in {root.relative_to(REPO)} "
          f"(prepared in {generated:.1f} s)", flush=True)

    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    expected = {p: sha256_limit(p, buffer, view) for p in files}  # also warms the page cache
    lines = "".join(f"{expected[p]}  {p.name}\n" for p in sorted(shards))
    want = {"shards": hashlib.sha256(lines.encode()).hexdigest(),
            "model-a": expected[models[0]], "model-b": expected[models[1]]}

    threads = os.cpu_count() or 1

    def hash_in_threads() -> None:
        def one(path: Path) -> str:
            buf = bytearray(CHUNK)
            return sha256_limit(path, buf, memoryview(buf))

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, files))

    write_t: list[float] = []
    noop_t: list[float] = []
    lib_t: list[float] = []
    limit_t: list[float] = []
    par_t: list[float] = []
    produced: list[dict[str, object]] | str = []
    for i in range(runs):
        pair = [("write", write_t), ("true", noop_t)]
        for ident, sink in (pair if i % 2 == 0 else pair[::-1]):
            sink.append(run_timed([tool("rra"), "run", str(root), ident, "-q"]))
        times, produced = in_process(root, 1)
        lib_t += times
        start = time.perf_counter()
        for path in files:
            sha256_limit(path, buffer, view)
        limit_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        hash_in_threads()
        par_t.append(time.perf_counter() - start)

    def digests_wrong(outs: object) -> str | None:
        if not isinstance(outs, list):
            return str(outs)
        got = {o["id"]: o["sha256"] for o in outs}
        if got != want:
            return f"digests differ from hashlib's: {got} vs {want}"
        return None

    recs = records(root, "write")
    cli_problem = record_problem(recs, runs) or (digests_wrong(recs[-1]["outputs"]) if recs else "no record")
    lib_problem = digests_wrong(produced) if lib_t else str(produced)
    cli_hash_s = statistics.median(write_t) - statistics.median(noop_t)
    cli = total / cli_hash_s / GB if cli_hash_s > 0 else float("inf")
    lib = total / statistics.median(lib_t) / GB if lib_t else 0.0
    limit = total / statistics.median(limit_t) / GB
    par = total / statistics.median(par_t) / GB
    print(f"     load average {load():.2f} at the end")

    def line(label: str, times: list[float]) -> None:
        med, best = statistics.median(times), min(times)
        print(f"     {label:40s} median {fmt_s(med)} -> {fmt_gbs(total / med / GB)}"
              f"   (best {fmt_s(best)} -> {fmt_gbs(total / best / GB)})")

    print(f"     {'rra run write (whole CLI run)':40s} {spread(write_t)}")
    print(f"     {'rra run true (same artifact, no outputs)':40s} {spread(noop_t)}")
    print(f"     {'difference: hashing in the CLI':40s} {fmt_s(cli_hash_s)} -> {fmt_gbs(cli)}")
    if lib_t:
        line("collect_outputs (in process)", lib_t)
    line("hashlib.sha256, 1 thread, 1 MiB", limit_t)
    line(f"hashlib.sha256, {threads} threads, 1 MiB", par_t)
    for label, issue in (("rra run write", cli_problem), ("collect_outputs", lib_problem)):
        if issue:
            print(f"     {label}: WRONG RESULT: {issue}")

    def met(rate: float, issue: str | None) -> str:
        if problem:
            return "NO: findings"
        if issue:
            return "NO: wrong result"
        return "yes" if rate >= HASH_TARGET_GBS else "NO"

    size = f"{total / 2**30:.2f} GiB"
    return [
        Row(f"c) output hashing, {size}, collect_outputs", fmt_gbs(lib), "hashlib 1 thread", fmt_gbs(limit),
            f"{lib / limit:.2f}", ">= 1 GB/s", met(lib, lib_problem)),
        Row("c) same, against hashlib in threads", fmt_gbs(lib), f"hashlib {threads} threads", fmt_gbs(par),
            f"{lib / par:.2f}", ">= 1 GB/s", met(lib, lib_problem)),
        Row("c) same, whole rra run minus no-op rra run", fmt_gbs(cli), "hashlib 1 thread", fmt_gbs(limit),
            f"{cli / limit:.2f}", ">= 1 GB/s", met(cli, cli_problem)),
    ]


# --------------------------------------------------------------------------------------------


def main() -> int:
    only, quick = start(__doc__, "small sizes and few runs, for a smoke run")
    inventory = os.environ.get("RRA_GPU_INVENTORY")
    gpu_source = "RRA_GPU_INVENTORY" if inventory is not None else (
        "nvidia-smi" if shutil.which("nvidia-smi") else "none (no nvidia-smi)")
    print(f"GPU inventory read by rra run: {gpu_source}")
    print(f"mode: {'quick' if quick else 'full'}", flush=True)
    rows: list[Row] = []
    if "a" in only:
        rows += bench_overhead(3 if quick else 15)
    if "b" in only:
        rows += bench_env(3 if quick else 15)
    if "c" in only:
        if quick:
            rows += bench_hash(6, 8 * MiB, 8 * MiB, 1)
        else:
            rows += bench_hash(60, 32 * MiB, 64 * MiB, 3)
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
