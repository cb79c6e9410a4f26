"""``rra bench run --executor slurm`` against the real cluster on localhost
(``tests/services/slurm.py``): reproducer-mode cells as one job array, each in node-local
scratch and gathered into the benchmark directory, scored and audited as the local executor
scores them; the Slurm settings of the task set, of a task and of the command line reaching the
jobs in that order of precedence (read back from ``scontrol show job``); a cell whose job is
cancelled with no retry left kept as an infrastructure failure with Slurm's words; and a local
run killed with SIGKILL finished on Slurm, with the GPU Slurm allocated handed to the reproducer.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench.executors.state import cell_digest
from rra_tools.model.bench_results import BenchResults

from ..bench_tiny import reproducer_commands, tiny_artifact, tiny_taskset
from ..rra_cli import rra, rra_command
from ..services.slurm import SlurmCluster
from .test_bench_run import _own_manifest

#: Generous: the suite runs on loaded two-core machines.
TIMEOUT_S = 600

#: Says it started (one character appended to the file named by its argument), then sleeps.
SLEEPER = """import sys, time
open(sys.argv[1], "a").write("x")
time.sleep(60)
"""


def _job(cluster: SlurmCluster, job: str) -> dict[str, str]:
    shown = cluster.command("scontrol", "show", "job", "-o", job)
    assert shown.returncode == 0, shown.stderr
    return dict(re.findall(r"(\w+)=(\S*)", shown.stdout))


def _state(out: Path, key: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "state" / "cells" / f"{cell_digest(key)}.json").read_text())
    return data


def test_cells_run_as_a_job_array_with_the_settings_in_order(slurm: SlurmCluster, tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    # Task set: the second partition, 30 min, 0.5 GB; task 'var': 20 min and 2 CPUs; command line: 0.75 GB.
    taskset, references = tiny_taskset(tmp_path, repeats=1, limits={"wall_clock_s": 120},
                                       slurm={"partition": slurm.second, "time_min": 30, "mem_gb": 0.5})
    data = json.loads(taskset.read_text())
    data["papers"][0]["experiments"][0]["tasks"][0]["slurm"] = {"time_min": 20, "cpus": 2}
    taskset.write_text(json.dumps(data))
    honest = reproducer_commands(tmp_path, _own_manifest(tmp_path))["honest"]
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    done = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out),
               "--reproducer", f"honest={honest}", "--executor", "slurm", "--mem", "0.75", "--sandbox", "none",
               "--scratch", str(scratch), timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert "4/4 cells succeeded (100.0 %)" in done.stdout, (done.stdout, done.stderr)
    assert "p/t1/var/raw/honest/1: submitted as Slurm job " in done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert {c.cell.key: c.state for c in results.cells} == {
        f"p/t1/{t}/{c}/honest/1": "success" for t in ("var", "exact") for c in ("raw", "refined")}
    for cell in results.cells:
        # Gathered: the workspace, its submission and the run record it names are in the benchmark directory.
        assert cell.workspace == f"cells/{cell.cell.key}/workspace"
        assert cell.submission is not None and (out / cell.submission).is_file()
        assert (out / "cells" / cell.cell.key / "result.json").is_file()
        assert (out / "cells" / cell.cell.key / "attempt.json").is_file()
        assert list((out / cell.workspace / "runs" / "emit").glob("*/record.json"))
    assert list(scratch.iterdir()) == []  # scratch cleaned after gathering
    assert not list((out / "state" / "started").iterdir())
    # One array per set of resources: the two tasks differ (time, CPUs), so two arrays of two.
    jobs = {c.cell.key: str(_state(out, c.cell.key)["slurm"]["job"]) for c in results.cells}
    arrays: dict[str, set[str]] = {"var": set(), "exact": set()}
    for key, job in jobs.items():
        arrays[key.split("/")[2]].add(job.split("_")[0])
    assert all(len(ids) == 1 for ids in arrays.values()) and arrays["var"] != arrays["exact"], jobs
    for key, job in jobs.items():
        shown = _job(slurm, job)
        task = key.split("/")[2]
        # task > task set (time, CPUs); command line > task set (memory); task set > default (partition).
        assert shown["Partition"] == slurm.second, shown
        assert shown["TimeLimit"] == ("00:20:00" if task == "var" else "00:30:00"), shown
        assert shown["NumCPUs"] == ("2" if task == "var" else "1"), shown
        assert shown["MinMemoryNode"] == "768M", shown


def test_a_cancelled_cell_with_no_retry_left_is_an_infrastructure_failure(slurm: SlurmCluster,
                                                                          tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"],
                                       limits={"wall_clock_s": 300})
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER, encoding="utf-8")
    out, started = tmp_path / "out", tmp_path / "started"
    proc = subprocess.Popen([*rra_command(), "bench", "run", str(taskset), "--references", str(references),
                             "-o", str(out), "--reproducer", f"sleeper={sys.executable} {script} {started}", "--sandbox", "none",
                             "--executor", "slurm", "--max-retries", "0", "--partition", slurm.partition],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    key = "p/t1/var/refined/sleeper/1"
    deadline = time.monotonic() + 300
    while len(started.read_text() if started.exists() else "") < 2:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"the reproducers did not start: {proc.communicate()}")
        time.sleep(0.2)
    job = json.loads((out / "state" / "started" / f"{cell_digest(key)}.json").read_text())["slurm_job"]
    assert slurm.command("scancel", job).returncode == 0
    other = json.loads((out / "state" / "started" / f"{cell_digest('p/t1/exact/refined/sleeper/1')}.json")
                       .read_text())["slurm_job"]
    assert slurm.command("scancel", other).returncode == 0
    stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    cell = next(c for c in results.cells if c.cell.key == key)
    assert (cell.state, cell.infrastructure) == ("infrastructure_failure", "interrupted"), (stdout, stderr)
    assert cell.detail is not None and cell.detail.startswith(f"cancelled: Slurm job {job} ended CANCELLED (")
    assert cell.detail.endswith("without a result; given up after 1 job(s)")
    assert "infrastructure failures (2):" in stdout
    # The cell's own result file says the same as the results.
    kept = json.loads((out / "cells" / key / "result.json").read_text())
    assert kept["state"] == "infrastructure_failure" and kept["detail"] == cell.detail


#: Logs 'start|end KEY CUDA_VISIBLE_DEVICES PID' ('-' for no devices) to the file named by its
#: argument around a sleep: 60 s for the second cell started without GPUs (the local run's, which
#: the test kills mid-way), 1 s otherwise; then submits the paper's value (no evidence: the
#: auditor calls it hard-coded; any final state will do here).
COUNTER = """import json, os, sys, time
key = "/".join([os.environ["RRA_BENCH_TASK_KEY"], os.environ["RRA_BENCH_CONDITION"], os.environ["RRA_BENCH_REPEAT"]])
gpus = os.environ.get("CUDA_VISIBLE_DEVICES") or "-"
def say(what):
    open(sys.argv[1], "a").write(f"{what} {key} {gpus} {os.getpid()}\\n")
second = gpus == "-" and os.path.exists(sys.argv[1])
say("start")
time.sleep(60 if second else 1)
json.dump({"submission_version": "1.0", "values": [{"task": os.environ["RRA_BENCH_TASK_KEY"], "value": 0.8125}]},
          open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
say("end")
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def test_a_local_run_killed_mid_way_is_finished_on_slurm_with_its_gpus(slurm: SlurmCluster, tmp_path: Path) -> None:
    tiny_artifact(tmp_path / "tiny")
    # The task set asks for one GPU per job (the tiny launcher needs none): a Slurm-only setting.
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"], limits={"wall_clock_s": 300},
                                       slurm={"gpus": 1})
    script, log = tmp_path / "counter.py", tmp_path / "counter.log"
    script.write_text(COUNTER, encoding="utf-8")
    out = tmp_path / "out"
    args = ["bench", "run", str(taskset), "--references", str(references), "-o", str(out), "--sandbox", "none",
            "--reproducer", f"counter={sys.executable} {script} {log}"]
    proc = subprocess.Popen([*rra_command(), *args, "-j", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while not (sum(w[0] == "end" for w in _lines(log)) == 1 and sum(w[0] == "start" for w in _lines(log)) == 2):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail(f"the local run did not finish one cell and start the next: {proc.communicate()}")
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    first, second = (w[1] for w in _lines(log) if w[0] == "start")
    assert all(w[2] == "-" for w in _lines(log))  # locally: no GPU (the Slurm setting is not the local executor's)

    done = rra(*args, "--executor", "slurm", timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert f"p/t1/{first.split('/')[2]}/refined/counter/1: audit_violation" in done.stderr
    assert "(finished earlier)" in done.stderr
    key2 = f"p/t1/{second.split('/')[2]}/refined/counter/1"
    assert f"{key2}: submitted as Slurm job " in done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    by_key = {c.cell.key: c for c in results.cells}
    assert by_key[key2].restarted == 1 and by_key[key2].state == "audit_violation", by_key[key2]
    seen = _lines(log)
    # The cell killed mid-run started twice and ended once: its leftover reproducer was killed
    # before the Slurm job made the cell afresh; on Slurm it ran with the GPU Slurm gave its job.
    assert [w[0] for w in seen if w[1] == second] == ["start", "start", "end"], seen
    assert [w[2] for w in seen if w[1] == second][1:] in (["0", "0"], ["1", "1"]), seen
    assert _state(out, key2)["slurm"]["gpus_from"] == "scontrol"
    assert [w[0] for w in seen if w[1] == first] == ["start", "end"]
    leftover = int(next(w[3] for w in seen if w[1] == second))
    assert not _alive(leftover)
    # Gathered over the leftover: one workspace, the Slurm job's submission in it.
    assert json.loads((out / "cells" / key2 / "workspace" / "submission.json").read_text())["values"][0]["value"] == 0.8125


#: What the sandboxed cell on Slurm runs: which hidden paths it can see, its network devices, then
#: an honest run and submission.
PROBE = """import glob, json, os, subprocess
seen = [p for p in {hidden!r} if os.path.exists(p)]
net = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
open("probe.txt", "w").write(f"seen: {{seen}}\\nnet: {{net}}\\n")
subprocess.run(["rra", "run", "emit"], check=True, stdout=subprocess.DEVNULL)
(record,) = glob.glob("runs/emit/*/record.json")
value = json.load(open(record))["metrics"]["score"]
json.dump({{"submission_version": "1.0", "values": [{{"task": os.environ["RRA_BENCH_TASK_KEY"], "value": value,
           "evidence": {{"run_record": record, "output": "out/metrics.json", "script": "emit.sh"}}}}]}},
          open("submission.json", "w"))
"""


def test_a_cell_runs_in_bubblewrap_inside_its_slurm_job(slurm: SlurmCluster, tmp_path: Path) -> None:
    """--sandbox bwrap on Slurm: the job itself starts the sandbox and the metering proxy on the
    node; the cell sees its workspace and nothing of the benchmark directory or the references,
    and its record says so."""
    tiny_artifact(tmp_path / "tiny")
    taskset, references = tiny_taskset(tmp_path, repeats=1, conditions=["refined"], limits={"wall_clock_s": 120})
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "probe.py").write_text(PROBE.format(hidden=[str(references), str(out)]), encoding="utf-8")
    data = json.loads(taskset.read_text())
    data["sandbox"] = {"readonly": ["probe"]}
    taskset.write_text(json.dumps(data))
    probe = f"python3 {tmp_path / 'probe' / 'probe.py'}"
    done = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out),
               "--reproducer", f"probe={probe}", "--executor", "slurm", "--sandbox", "bwrap",
               "--scratch", str(scratch), "--partition", slurm.partition, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    assert {c.cell.key: c.state for c in results.cells} == {
        "p/t1/var/refined/probe/1": "success", "p/t1/exact/refined/probe/1": "success"}, \
        [(c.cell.key, c.detail) for c in results.cells]
    for cell in results.cells:
        assert cell.sandbox is not None and cell.sandbox.backend == "bwrap" and cell.sandbox.network == "proxy-only"
        probe_out = (out / cell.workspace / "probe.txt").read_text()
        # Neither the references nor the benchmark directory (nor the node's scratch) is there,
        # and the only network device is the sandbox's own loopback.
        assert "seen: []" in probe_out and "net: ['lo']" in probe_out, probe_out
