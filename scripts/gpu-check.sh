#!/usr/bin/env bash
# Does `rra run` give a launcher its GPU, and record the machine's GPU fingerprint?
#
#   scripts/gpu-check.sh
#
# On a machine with an NVIDIA GPU and nvidia-smi: installs this checkout (`pip install -e .`,
# into a temporary venv; a working .venv of this checkout is reused instead), writes a tiny
# artifact in a temporary directory whose one launcher needs `resources.gpus: 1` and runs a
# small Python script (no torch): it prints CUDA_VISIBLE_DEVICES and `nvidia-smi -L`, counts
# the devices the CUDA driver shows it (libcuda through ctypes, when the driver is there) and
# writes that to out/gpu.json. Then `rra run` it and print what the run record says: host.gpus
# (the fingerprint), the devices assigned, the launcher's CUDA_VISIBLE_DEVICES, its output.
#
# Then a two-task GPU benchmark: `rra bench reproduce -j 2` of a task whose launcher needs one GPU,
# attempted twice; with two or more GPUs the attempts run side by side and must receive distinct
# devices (run records' `gpus`, the launchers' CUDA_VISIBLE_DEVICES); with one, they take turns.
#
# Then the same task as two sandboxed cells of `rra bench run --sandbox bwrap -j 2`: each cell must
# see only its own leased /dev/nvidiaN inside, one CUDA device, and record that device alone.
#
# Exit status: 0 PASS; 1 FAIL (no GPU recorded, CUDA_VISIBLE_DEVICES empty, the run failed, or
# the CUDA driver shows the launcher a number of devices other than 1); 2 when it cannot check
# here (no nvidia-smi, no Python >= 3.11, the install failed).
#
# Environment:
#   PYTHON             the interpreter for the venv (default python3; Python >= 3.11).
#   RRA_GPU_INVENTORY  replaces nvidia-smi's inventory (see rra_tools/run/gpus.py), which makes a
#                      dry run possible on a machine without a GPU; it proves the script works end
#                      to end (install, artifact, assignment, record), and the verdict says DRY RUN:
#                        RRA_GPU_INVENTORY='[{"index": 0, "model": "NVIDIA H200", "driver": "580.1",
#                          "cuda": "13.0", "memory_mib": 143771}]' scripts/gpu-check.sh
#   PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR   (read by pip) install offline from a directory of wheels:
#                      the runtime dependencies of pyproject.toml, hatchling and editables (the
#                      build backend), with their own; made where the index is reachable with
#                      `pip download -d DIR --only-binary=:all: --python-version 3.12 --platform
#                      manylinux_2_17_x86_64 <each requirement> hatchling editables` (about 11 MiB).
#   KEEP=1             keep the temporary directory (artifact, run record, logs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ -z ${RRA_GPU_INVENTORY:-} ]] && ! command -v nvidia-smi >/dev/null; then
    echo "gpu-check: nvidia-smi not found, so this machine shows no NVIDIA GPU; nothing to check" >&2
    echo "gpu-check: (set RRA_GPU_INVENTORY to a JSON list of GPUs for a dry run)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rra-gpu-check.XXXXXX")
if [[ -n ${KEEP:-} ]]; then echo "gpu-check: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

# The interpreter that runs rra: this checkout's .venv when it works, else a fresh venv.
if "$repo/.venv/bin/python" -c 'import sys, rra_tools; sys.exit(not rra_tools.__file__.startswith(sys.argv[1]))' \
        "$repo/" 2>/dev/null; then
    py=$repo/.venv/bin/python
    echo "gpu-check: using $repo/.venv"
else
    base=${PYTHON:-python3}
    if ! "$base" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "gpu-check: $base is missing or older than Python 3.11" >&2
        exit 2
    fi
    echo "gpu-check: pip install -e $repo into $tmp/venv"
    "$base" -m venv "$tmp/venv"
    py=$tmp/venv/bin/python
    if ! "$py" -m pip install --quiet --disable-pip-version-check -e "$repo"; then
        echo "gpu-check: pip install -e $repo failed (offline? see PIP_NO_INDEX / PIP_FIND_LINKS above)" >&2
        exit 2
    fi
fi

# The artifact. The run's clean shell keeps only declared variables: pass where nvidia-smi and
# the driver's libraries are, since they need not be under /usr/bin:/bin or in ld.so's cache.
art=$tmp/artifact
mkdir -p "$art"
cat > "$art/gpu.py" <<'EOF'
import ctypes, json, os, subprocess
visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
print(f"CUDA_VISIBLE_DEVICES={visible}", flush=True)
smi = os.environ.get("NVIDIA_SMI")
listing = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.splitlines() if smi else []
for line in listing:
    print(f"nvidia-smi -L: {line}", flush=True)
count = names = None
try:  # the CUDA driver API honours CUDA_VISIBLE_DEVICES: count what this process can use
    cuda, n = ctypes.CDLL("libcuda.so.1"), ctypes.c_int()
    if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0:
        count, names = n.value, []
        for i in range(count):
            dev, name = ctypes.c_int(), ctypes.create_string_buffer(256)
            cuda.cuDeviceGet(ctypes.byref(dev), i)
            cuda.cuDeviceGetName(name, 256, dev)
            names.append(name.value.decode())
except OSError:
    pass
print(f"CUDA driver: {'not loadable' if count is None else f'{count} device(s) {names}'}", flush=True)
os.makedirs("out", exist_ok=True)
with open("out/gpu.json", "w") as f:
    json.dump({"cuda_visible_devices": visible, "visible_devices": len([d for d in visible.split(",") if d]),
               "cuda_device_count": count, "cuda_devices": names, "nvidia_smi_l": listing}, f, indent=1)
EOF
NVIDIA_SMI=$(command -v nvidia-smi || true) "$py" - "$art" <<'EOF'
import json, os, sys
env = {k: os.environ[k] for k in ("NVIDIA_SMI", "LD_LIBRARY_PATH") if os.environ.get(k)}
manifest = {
    "rra_version": "1.0", "id": "gpu-check", "title": "GPU check of rra run",
    "paper": {"title": "GPU check", "authors": [{"name": "rra"}]},
    "code": {"license": "MIT", "tree": {"path": "."}},
    "environment": {"interpreter": {"version": "%d.%d" % sys.version_info[:2]},
                    "hardware": {"accelerators": [{"vendor": "nvidia", "model": "any", "count": 1}]},
                    "cuda": {"min_version": "11.0"}},
    "launchers": [{"id": "gpu", "argv": ["python", "gpu.py"], "stochastic": False, "env": env,
                   "resources": {"gpus": 1, "timeout_s": 300, "expected_runtime_s": 5},
                   "outputs": [{"id": "gpu", "path": "out/gpu.json", "format": "json"}]}],
}
with open(os.path.join(sys.argv[1], "rra.yaml"), "w") as f:
    json.dump(manifest, f, indent=1)
EOF

echo "gpu-check: rra run $art gpu"
rc=0
"$py" -m rra_tools run "$art" gpu || rc=$?

single=0
"$py" - "$art" "$rc" <<'EOF' || single=$?
import glob, json, os, sys
art, rc = sys.argv[1], int(sys.argv[2])
found = sorted(glob.glob(os.path.join(art, "runs", "gpu", "*", "record.json")))
if not found:
    print(f"FAIL: rra run exited {rc} and wrote no run record")
    sys.exit(1)
record = json.load(open(found[-1]))
host = record["host"]
visible = record["environment"].get("CUDA_VISIBLE_DEVICES", "")
print(f"\nrun record: {found[-1]}")
print(f"host: {host['os']}, {host['machine']}, {host['cpus']} CPUs, {host['python']}")
print("host.gpus (GPU fingerprint):")
for gpu in host["gpus"]:
    print("  " + json.dumps(gpu))
print(f"gpus assigned: {record['gpus']}")
print(f"CUDA_VISIBLE_DEVICES in the launcher's environment: {visible!r}")
print(f"status {record['status']}, exit status {record['exit_status']}, messages {record['messages']}")
print("launcher's stdout:")
print("".join("  " + line for line in open(os.path.join(os.path.dirname(found[-1]), "stdout.log"))), end="")
try:
    seen = json.load(open(os.path.join(art, "out", "gpu.json")))
except (OSError, ValueError):
    seen = {}
problems = []
if not host["gpus"]:
    problems.append("no GPU recorded in host.gpus")
if not visible or f"CUDA_VISIBLE_DEVICES={visible}" not in open(os.path.join(os.path.dirname(found[-1]), "stdout.log")).read():
    problems.append("CUDA_VISIBLE_DEVICES empty or not what the launcher saw")
if record["status"] != "completed" or record["exit_status"] != 0:
    problems.append(f"the run did not succeed (rra run exited {rc})")
if seen.get("cuda_device_count") not in (None, 1):
    problems.append(f"the CUDA driver shows the launcher {seen['cuda_device_count']} devices, not 1")
dry = "RRA_GPU_INVENTORY" in os.environ
if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
cuda = "not loadable" if seen.get("cuda_device_count") is None else f"{seen['cuda_device_count']} device(s) {seen['cuda_devices']}"
print(f"PASS{' (DRY RUN: inventory from RRA_GPU_INVENTORY, no real GPU checked)' if dry else ''}: "
      f"{len(host['gpus'])} GPU(s) recorded, launcher got CUDA_VISIBLE_DEVICES={visible}, CUDA driver: {cuda}")
EOF

# Part 2: two GPU tasks at once through the benchmark's local executor (rra bench reproduce -j 2).
# One task whose launcher needs 1 GPU, attempted twice: with two or more GPUs both attempts run
# side by side and must get different devices (each run record's `gpus`, the CUDA_VISIBLE_DEVICES
# each launcher saw); with one GPU the second waits for the first.
bench=$tmp/bench
mkdir -p "$bench/art"
cat > "$bench/art/hold.py" <<'PYEOF'
import json, os, time
visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
print(f"CUDA_VISIBLE_DEVICES={visible}", flush=True)
started = time.time()
time.sleep(4)  # long enough for the other attempt to start meanwhile
os.makedirs("out", exist_ok=True)
with open("out/hold.json", "w") as f:
    json.dump({"visible": visible, "devices": len([d for d in visible.split(",") if d]),
               "started": started, "ended": time.time()}, f)
PYEOF
"$py" - "$bench" <<'PYEOF'
import json, os, sys
bench = sys.argv[1]
manifest = {
    "rra_version": "1.0", "id": "gpu-check-bench", "title": "Two GPU tasks at once",
    "paper": {"title": "GPU check", "authors": [{"name": "rra"}]},
    "code": {"license": "MIT", "tree": {"path": "."}},
    "environment": {"interpreter": {"version": "%d.%d" % sys.version_info[:2]},
                    "hardware": {"accelerators": [{"vendor": "nvidia", "model": "any", "count": 1}]},
                    "cuda": {"min_version": "11.0"}},
    "launchers": [{"id": "hold", "argv": ["python", "hold.py"], "stochastic": False,
                   "resources": {"gpus": 1, "timeout_s": 120, "expected_runtime_s": 4},
                   "outputs": [{"id": "hold", "path": "out/hold.json", "format": "json"}]}],
    "claims": [{"id": "devices", "paper_location": {"table": "1"}, "launcher": "hold",
                "metric": {"name": "devices", "unit": "", "direction": "higher"},
                "extract": {"output": "hold", "json_pointer": "/devices"},
                "reported": {"value": 1, "precision": 0},
                "reference": {"observations": [
                    {"value": 1, "seed": s, "fingerprint": {"hardware": "any GPU", "software": "rra"}}
                    for s in range(3)]}}],
}
with open(os.path.join(bench, "art", "rra.json"), "w") as f:
    json.dump(manifest, f, indent=1)
with open(os.path.join(bench, "tasks.json"), "w") as f:
    json.dump({"bench_version": "1.0", "id": "gpu-check", "repeats": 2, "papers": [{"id": "gpu", "experiments": [
        {"id": "e", "tasks": [{"id": "hold", "artifact": "art", "claim": "devices"}]}]}]}, f, indent=1)
PYEOF
echo
echo "gpu-check: rra bench reproduce $bench/tasks.json -j 2 (two attempts of a 1-GPU task)"
brc=0
"$py" -m rra_tools bench reproduce "$bench/tasks.json" -o "$bench/out" -j 2 || brc=$?
twin=0
"$py" - "$bench" "$brc" <<'PYEOF' || twin=$?
import glob, json, os, sys
from datetime import datetime
bench, rc = sys.argv[1], int(sys.argv[2])
records = []
for n in (1, 2):
    found = glob.glob(os.path.join(bench, "out", "work", "gpu", "e", "hold", f"attempt-{n}", "runs", "hold", "*",
                                   "record.json"))
    if not found:
        print(f"FAIL: attempt {n} left no run record (rra bench reproduce exited {rc})")
        sys.exit(1)
    with open(found[0]) as f:
        records.append(json.load(f))


def when(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


spans = [(when(r["started"]), when(r["ended"])) for r in records]
for n, (r, (a, b)) in enumerate(zip(records, spans), 1):
    print(f"attempt {n}: gpus {r['gpus']}, CUDA_VISIBLE_DEVICES={r['environment'].get('CUDA_VISIBLE_DEVICES', '')!r}, "
          f"{r['status']}, exit status {r['exit_status']}, ran {b - a:.1f} s")
overlap = spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]
gpus = records[0]["host"]["gpus"]
problems = [f"attempt {n} did not succeed" for n, r in enumerate(records, 1)
            if r["status"] != "completed" or r["exit_status"] != 0]
problems += [f"attempt {n} was not given exactly one device" for n, r in enumerate(records, 1) if len(r["gpus"]) != 1]
if overlap and records[0]["gpus"] == records[1]["gpus"]:
    problems.append(f"the two attempts ran at the same time on the same device {records[0]['gpus']}")
if len(gpus) >= 2 and not overlap:
    problems.append(f"{len(gpus)} GPUs, yet the two attempts ran one after the other")
if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
dry = " (DRY RUN: inventory from RRA_GPU_INVENTORY)" if "RRA_GPU_INVENTORY" in os.environ else ""
if overlap:
    print(f"PASS{dry}: two tasks ran concurrently on distinct devices {records[0]['gpus']} and {records[1]['gpus']}")
else:
    print(f"PASS{dry}: one GPU, so the two tasks ran one after the other, each on device {records[0]['gpus']}")
PYEOF

# Part 3: two sandboxed cells of `rra bench run --sandbox bwrap -j 2`, each leased one GPU: each
# must see only its own /dev/nvidiaN inside (the other GPUs' device files absent), the CUDA driver
# must show it exactly one device, and the cell's sandbox record must name that device alone.
mkdir -p "$bench/probe"
cat > "$bench/probe/probe.py" <<'PYEOF'
import ctypes, glob, json, os
nodes = sorted(glob.glob("/dev/nvidia[0-9]*"))
count = None
try:
    cuda, n = ctypes.CDLL("libcuda.so.1"), ctypes.c_int()
    if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0:
        count = n.value
except OSError:
    pass
with open("gpu-seen.json", "w") as f:
    json.dump({"nodes": nodes, "cuda_device_count": count,
               "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "")}, f)
PYEOF
"$py" - "$bench" <<'PYEOF'
import json, os, sys
bench = sys.argv[1]
with open(os.path.join(bench, "tasks.json")) as f:
    data = json.load(f)
data.update({"id": "gpu-check-sandbox", "conditions": ["refined"], "sandbox": {"readonly": ["probe"]},
             "limits": {"wall_clock_s": 120}})
with open(os.path.join(bench, "sandboxed.json"), "w") as f:
    json.dump(data, f, indent=1)
PYEOF
echo
echo "gpu-check: rra bench run $bench/sandboxed.json --sandbox bwrap -j 2 (two sandboxed cells of a 1-GPU task)"
src=0
"$py" -m rra_tools bench run "$bench/sandboxed.json" -o "$bench/out-sandbox" -j 2 --sandbox bwrap \
    --reproducer "probe=python3 $bench/probe/probe.py" || src=$?
sandboxed=0
"$py" - "$bench" "$src" <<'PYEOF' || sandboxed=$?
import json, os, sys
bench, rc = sys.argv[1], int(sys.argv[2])
try:
    with open(os.path.join(bench, "out-sandbox", "results.json")) as f:
        results = json.load(f)
except OSError:
    print(f"FAIL: rra bench run exited {rc} and wrote no results")
    sys.exit(1)
dry = "RRA_GPU_INVENTORY" in os.environ
problems, leased = [], []
for cell in results["cells"]:
    key = "/".join(str(cell["cell"][k]) for k in ("task", "condition", "reproducer", "repeat"))
    record = cell.get("sandbox") or {}
    try:
        with open(os.path.join(bench, "out-sandbox", cell["workspace"], "gpu-seen.json")) as f:
            seen = json.load(f)
    except (OSError, KeyError):
        problems.append(f"{key}: the probe left no gpu-seen.json ({cell.get('detail')})")
        continue
    own = [d for d in record.get("devices", []) if d.rsplit("/", 1)[-1].removeprefix("nvidia").isdigit()]
    print(f"{key}: backend {record.get('backend')}, devices passed in {record.get('devices')}, seen inside "
          f"{seen['nodes']}, CUDA_VISIBLE_DEVICES={seen['cuda_visible_devices']!r}, CUDA driver: "
          f"{seen['cuda_device_count']}")
    if record.get("backend") != "bwrap":
        problems.append(f"{key}: ran under {record.get('backend')}, not bubblewrap")
    if not dry:
        if len(own) != 1 or seen["nodes"] != own:
            problems.append(f"{key}: sees {seen['nodes']} inside, leased {own}")
        if seen["cuda_device_count"] not in (None, 1):
            problems.append(f"{key}: the CUDA driver shows {seen['cuda_device_count']} devices, not 1")
    leased.append(tuple(own))
overlapping = len(leased) == 2 and leased[0] == leased[1] and leased[0]
if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
if dry:
    print("PASS (DRY RUN: no GPU device files here; the sandboxed cells ran, were recorded and saw no /dev/nvidia*)")
else:
    print(f"PASS: each sandboxed cell saw only its own leased GPU: {[list(x) for x in leased]}"
          + (" (one GPU: the cells took turns)" if overlapping else ""))
PYEOF
if [[ $single -ne 0 || $twin -ne 0 || $sandboxed -ne 0 ]]; then exit 1; fi
