"""What a run's record says about its declared outputs: directory outputs written into existing
trees (a tracking store), their digests, and every way an output or a metric can be unusable.
Real processes and real files throughout."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any


from .test_run_local import _launcher, manifest, read_record, run_one


def _artifact(root: Path, body: str, outputs: list[dict[str, Any]], claims: list[dict[str, Any]] | None = None,
              **extra: Any) -> Path:
    """A one-launcher artifact ('job' runs ``body`` from the root) with these outputs and claims."""
    data = manifest()
    data["launchers"] = [_launcher("job", ["python", "job.py"], outputs=outputs, **extra)]
    data["claims"] = claims or []
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(json.dumps(data, indent=1), encoding="utf-8")
    (root / "job.py").write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return root


def _age(root: Path, seconds: float = 3600) -> None:
    """Make every file and directory under ``root`` (itself included) ``seconds`` old."""
    then = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        os.utime(path, (then, then), follow_symlinks=False)


def _tracking_store(root: Path) -> None:
    """An MLflow-like store as an earlier run left it: experiments, one old run with metrics."""
    old = root / "mlruns" / "1" / "0a1b2c"
    for sub in ("metrics", "params", "artifacts"):
        (old / sub).mkdir(parents=True)
    (root / "mlruns" / "0" / "meta.yaml").parent.mkdir(parents=True)
    (root / "mlruns" / "0" / "meta.yaml").write_text("name: Default\n")
    (root / "mlruns" / "1" / "meta.yaml").write_text("name: digits\n")
    (old / "meta.yaml").write_text("run_id: 0a1b2c\nstatus: FINISHED\n")
    (old / "metrics" / "accuracy").write_text("1700000000000 0.91 0\n")
    (old / "params" / "C").write_text("1.0")
    _age(root / "mlruns")


def _tree_digest(directory: Path) -> str:
    lines = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(directory).as_posix()}\n"
                    for p in sorted(directory.rglob("*")) if p.is_file())
    return hashlib.sha256(lines.encode()).hexdigest()


STORE_OUTPUT = [{"id": "store", "path": "mlruns", "format": "directory"}]


def test_a_tracking_store_adding_a_run_under_an_existing_folder_is_written_by_the_run(tmp_path: Path) -> None:
    # The tool creates mlruns/1/<new run>/...: mlruns/1 changes, mlruns itself does not.
    root = _artifact(tmp_path / "art", """
        import os
        run = "mlruns/1/9f8e7d"
        for sub in ("metrics", "params", "artifacts"):
            os.makedirs(f"{run}/{sub}")
        open(f"{run}/meta.yaml", "w").write("run_id: 9f8e7d\\nstatus: FINISHED\\n")
        open(f"{run}/metrics/accuracy", "w").write("1700000100000 0.93 0\\n")
        open(f"{run}/params/C", "w").write("0.5")
    """, STORE_OUTPUT)
    _tracking_store(root)
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["messages"], data["missing_outputs"]) == ("completed", [], [])
    (out,) = data["outputs"]
    assert out["id"] == "store" and out["sha256"] == _tree_digest(root / "mlruns")
    assert out["size"] == sum(p.stat().st_size for p in (root / "mlruns").rglob("*") if p.is_file())


def test_a_tool_appending_to_a_file_deep_in_the_store_wrote_the_output(tmp_path: Path) -> None:
    # No directory changes at all: only an existing metrics file grows.
    root = _artifact(tmp_path / "art", """
        open("mlruns/1/0a1b2c/metrics/accuracy", "a").write("1700000200000 0.92 1\\n")
    """, STORE_OUTPUT)
    _tracking_store(root)
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["messages"]) == ("completed", [])
    assert data["outputs"][0]["sha256"] == _tree_digest(root / "mlruns")


def test_a_file_restored_with_its_old_time_still_counts_as_written(tmp_path: Path) -> None:
    # Like 'cp -p' or an archive extracted with its times: the modification time is old, the
    # change time is not.
    root = _artifact(tmp_path / "art", """
        import os
        os.makedirs("out", exist_ok=True)
        open("out/model.bin", "wb").write(b"weights v2")
        os.utime("out/model.bin", (1_600_000_000, 1_600_000_000))
    """, [{"id": "model", "path": "out/model.bin", "format": "binary"}])
    (root / "out").mkdir()
    (root / "out" / "model.bin").write_bytes(b"weights v1")
    _age(root / "out")
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["messages"]) == ("completed", [])
    assert data["outputs"][0]["sha256"] == hashlib.sha256(b"weights v2").hexdigest()


def test_an_untouched_existing_store_is_not_written_by_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "print('wrote nothing')\n", STORE_OUTPUT)
    _tracking_store(root)
    data = read_record(run_one(root, "job"))
    assert data["status"] == "failed" and data["outputs"] == []
    assert data["missing_outputs"] == [{"id": "store", "path": "mlruns"}]
    assert data["messages"] == ["declared output 'store' (mlruns) was not written by this run "
                                "(nothing in it changed while it ran)"]


def test_a_run_that_only_removes_a_file_from_the_store_wrote_it(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "import os; os.remove('mlruns/1/0a1b2c/params/C')\n", STORE_OUTPUT)
    _tracking_store(root)
    data = read_record(run_one(root, "job"))
    assert data["status"] == "completed"
    assert data["outputs"][0]["sha256"] == _tree_digest(root / "mlruns")


def test_directory_output_digest_is_the_digest_of_its_listing(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", """
        import os
        os.makedirs("out/b/c", exist_ok=True)
        open("out/a.txt", "w").write("a")
        open("out/b/c/d.txt", "w").write("dd")
        open("out/b/e.txt", "w").write("")
        os.symlink("a.txt", "out/link")  # links are not part of the digest
    """, [{"id": "d", "path": "out", "format": "directory"}])
    data = read_record(run_one(root, "job"))
    lines = "".join(f"{hashlib.sha256(body).hexdigest()}  {name}\n"
                    for name, body in (("a.txt", b"a"), ("b/c/d.txt", b"dd"), ("b/e.txt", b"")))
    assert data["outputs"][0]["sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert data["outputs"][0]["size"] == 3


def test_an_output_that_is_neither_file_nor_directory_fails_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "import os; os.makedirs('out'); os.mkfifo('out/pipe')\n",
                     [{"id": "p", "path": "out/pipe", "format": "binary"}])
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["exit_status"]) == ("failed", 0)
    assert data["missing_outputs"] == [{"id": "p", "path": "out/pipe"}]
    assert data["messages"] == ["declared output 'p' (out/pipe) is not a regular file or directory"]


def test_a_directory_output_that_is_a_file_is_said(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "open('out', 'w').write('x')\n",
                     [{"id": "d", "path": "out", "format": "directory"}])
    data = read_record(run_one(root, "job"))
    assert data["messages"] == ["declared output 'd' (out) should be a directory but is a file"]
    assert data["outputs"][0]["sha256"] == hashlib.sha256(b"x").hexdigest()


SCORE_CLAIM = {"id": "acc", "paper_location": {"table": "1"}, "launcher": "job",
               "metric": {"name": "accuracy", "unit": "", "direction": "higher"},
               "extract": {"output": "scores", "json_pointer": "/acc"},
               "reported": {"value": 0.5, "precision": 1},
               "reference": {"observations": [{"value": 0.5, "seed": s,
                                               "fingerprint": {"hardware": "x", "software": "y"}}
                                              for s in range(3)]}}


def test_a_claim_on_an_output_its_launcher_does_not_declare_fails_the_run(tmp_path: Path) -> None:
    claim = {**SCORE_CLAIM, "extract": {"output": "nosuch", "json_pointer": "/acc"}}
    root = _artifact(tmp_path / "art", "import os, json; os.makedirs('out'); json.dump({'acc': 1}, "
                     "open('out/s.json', 'w'))\n", [{"id": "scores", "path": "out/s.json", "format": "json"}],
                     [claim])
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["metrics"]) == ("failed", {})
    assert data["messages"] == ["claim 'acc': launcher 'job' declares no output 'nosuch'"]


def test_a_claim_on_a_missing_output_fails_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "print('no scores')\n",
                     [{"id": "scores", "path": "out/s.json", "format": "json"}], [SCORE_CLAIM])
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["metrics"]) == ("failed", {})
    assert data["messages"] == ["declared output 'scores' (out/s.json) was not produced",
                                "claim 'acc': no value, output 'scores' is missing"]


def test_a_metric_that_cannot_be_extracted_fails_the_run(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", "import os, json; os.makedirs('out'); json.dump({'acc': 'high'}, "
                     "open('out/s.json', 'w'))\n", [{"id": "scores", "path": "out/s.json", "format": "json"}],
                     [SCORE_CLAIM])
    data = read_record(run_one(root, "job"))
    assert (data["status"], data["exit_status"], data["metrics"]) == ("failed", 0, {})
    assert len(data["outputs"]) == 1
    assert data["messages"] == ["claim 'acc': output 'scores' (out/s.json) the value at '/acc' is 'high', not a number"]


def _without_dac_override() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding
    set, so that root (and everything it starts) honours file modes like any user."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unreadable_output_fails_the_run(tmp_path: Path) -> None:
    # The launcher leaves an output its user may not read. Root reads everything, so when the
    # suite runs as root, rra (and the launcher under it) runs without the capabilities that
    # let root ignore file modes.
    root = _artifact(tmp_path / "art", """
        import os
        os.makedirs("out", exist_ok=True)
        open("out/s.json", "w").write("{}")
        os.chmod("out/s.json", 0)
    """, [{"id": "scores", "path": "out/s.json", "format": "json"}])
    preexec = _without_dac_override if os.geteuid() == 0 else None
    proc = subprocess.run([sys.executable, "-m", "rra_tools", "run", str(root), "job"], capture_output=True,
                          text=True, timeout=120, preexec_fn=preexec)
    assert proc.returncode == 1, proc.stderr
    (record,) = (root / "runs" / "job").glob("*/record.json")
    data = json.loads(record.read_text())
    assert data["status"] == "failed" and data["outputs"] == []
    assert data["missing_outputs"] == [{"id": "scores", "path": "out/s.json"}]
    assert data["messages"] == ["declared output 'scores' (out/s.json) cannot be read: Permission denied"]


def test_results_say_which_runs_did_not_succeed(tmp_path: Path) -> None:
    # Three seeds, the third fails: the other two still give a verdict inside the interval, and
    # rra results says plainly that one run is not counted (it used to say nothing).
    from ..rra_cli import rra

    claim = {**SCORE_CLAIM, "extract": {"output": "scores", "json_pointer": "/acc"}}
    root = _artifact(tmp_path / "art", """
        import json, os, sys
        seed = int(sys.argv[1])
        if seed == 2:
            sys.exit("diverged")
        os.makedirs("out", exist_ok=True)
        json.dump({"acc": 0.5}, open(f"out/s-{seed}.json", "w"))
    """, [{"id": "scores", "path": "out/s-{seed}.json", "format": "json"}], [claim],
        stochastic=True, seeds=[0, 1, 2])
    data = json.loads((root / "rra.yaml").read_text())
    data["launchers"][0]["argv"] = ["python", "job.py", "{seed}"]
    (root / "rra.yaml").write_text(json.dumps(data))
    assert rra("run", str(root), "job", "--all-seeds").returncode == 1
    (failed,) = (root / "runs" / "job").glob("2-*/record.json")
    where = failed.relative_to(root).as_posix()
    proc = rra("results", str(root))
    assert proc.returncode == 0, proc.stdout
    assert "  verdict   inside\n" in proc.stdout
    assert (f"  NOT OK    seed 2: its latest run is completed with exit status 1 ({where}); not counted\n"
            in proc.stdout)
    assert "run records: 3 (1 did not succeed)\n" in proc.stdout
    as_json = json.loads(rra("results", str(root), "--format", "json").stdout)
    assert as_json["unsuccessful_records"] == 1
    assert as_json["claims"][0]["not_counted"] == [{"seed": 2, "status": "completed with exit status 1",
                                                    "record": where, "older_success_counted": False}]
