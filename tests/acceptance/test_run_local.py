"""The local executor against real processes: success, failure, timeout, bad outputs, clean
environment, GPU assignment. No mocks: every launcher is a real Python process.

``make_artifact`` builds a tiny artifact whose launchers each show one behaviour; the CLI
tests in ``test_run_cli.py`` reuse it.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools import FORMAT_VERSIONS
from rra_tools.model.run_record import RunRecord
from rra_tools.model.schema import generated_schemas
from rra_tools.run import GpuUnavailable, RunOptions, execute, load_artifact, plan_runs
from rra_tools.run.gpus import INVENTORY_ENV, LOCK_DIR_ENV

SCRIPTS = {
    "ok.py": """
        import json, os, sys
        seed = int(sys.argv[1])
        os.makedirs("out", exist_ok=True)
        with open(f"out/ok-{seed}.json", "w") as f:
            json.dump({"acc": 0.5 + seed / 1000}, f)
        with open(f"out/ok-{seed}.csv", "w") as f:
            f.write("epoch,acc\\n1,0.25\\n2,0.5\\n")
        print(f"seed {seed} done acc=0.5")
        print("to stderr", file=sys.stderr)
    """,
    "fail.py": """
        import sys
        print("about to fail", file=sys.stderr)
        sys.exit(3)
    """,
    "hang.py": """
        import os, subprocess, sys, time
        # Each process leaves a mark if it lives to the end of its sleep: the run's timeout must
        # not have waited for that (however slow the machine, the marks must not be there).
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60); "
            "open('woke-grandchild', 'w').close()"])
        with open("pids.txt", "w") as f:
            f.write(f"{os.getpid()} {child.pid}")
        time.sleep(60)
        open("woke-leader", "w").close()
    """,
    "malformed.py": """
        import os
        os.makedirs("out", exist_ok=True)
        with open("out/bad.json", "w") as f:
            f.write("{not json")
    """,
    "missing.py": """
        print("writes nothing")
    """,
    "envdump.py": """
        import json, os
        os.makedirs("out", exist_ok=True)
        home = os.environ["HOME"]
        os.makedirs(os.path.join(home, ".cache"))
        with open(os.path.join(home, ".cache", "left-behind"), "w") as f:
            f.write("a launcher's cache in its HOME")
        with open("out/env.json", "w") as f:
            json.dump({"env": dict(os.environ), "home_mode": oct(os.stat(home).st_mode & 0o777)}, f)
    """,
    "gpu.py": """
        import os, time
        print("CUDA_VISIBLE_DEVICES=" + os.environ.get("CUDA_VISIBLE_DEVICES", ""), flush=True)
        deadline = time.monotonic() + 120  # only if the test dies: it always opens the barrier
        while not os.path.exists("out/go") and time.monotonic() < deadline:  # a barrier the test opens
            time.sleep(0.02)
    """,
    "slow.py": """
        import time
        print("ready", flush=True)
        time.sleep(30)
    """,
}


def _launcher(ident: str, argv: list[str], **extra: Any) -> dict[str, Any]:
    resources = {"timeout_s": 30, "expected_runtime_s": 1, **extra.pop("resources", {})}
    return {"id": ident, "argv": argv, "stochastic": False, "resources": resources, **extra}


def manifest() -> dict[str, Any]:
    """A small valid manifest with one launcher per behaviour under test."""
    fp = {"hardware": "x86_64", "software": "cpython"}
    return {
        "rra_version": "1.0",
        "id": "tiny",
        "title": "Tiny artifact for run tests",
        "paper": {"title": "Tiny", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        # The GPU launchers need GPUs declared: rra run refuses a manifest with errors (RRA403).
        "environment": {"interpreter": {"version": "3.11"},
                        "hardware": {"accelerators": [{"vendor": "nvidia", "model": "any", "count": 3,
                                                       "memory_gib": 16}]},
                        "cuda": {"min_version": "12.1", "min_driver": "530.30.02"}},
        "launchers": [
            _launcher("ok", ["python", "ok.py", "{seed}"], stochastic=True, seeds=[0, 1],
                      outputs=[{"id": "scores", "path": "out/ok-{seed}.json", "format": "json"},
                               {"id": "table", "path": "out/ok-{seed}.csv", "format": "csv"},
                               {"id": "dir", "path": "out", "format": "directory"}]),
            _launcher("fail", ["python", "fail.py"]),
            # 5 s: time enough, on a loaded machine, for hang.py to start its child and write pids.txt
            _launcher("hang", ["python", "hang.py"], resources={"timeout_s": 5}),
            _launcher("malformed", ["python", "malformed.py"],
                      outputs=[{"id": "m", "path": "out/bad.json", "format": "json"}]),
            _launcher("missing", ["python", "missing.py"],
                      outputs=[{"id": "never", "path": "out/never-{flavour}.json", "format": "json"}],
                      parameters={"flavour": {"type": "str", "default": "plain"}}),
            _launcher("envdump", ["python", "envdump.py"], env={"API_TOKEN": "s3cret", "MODE": "x"},
                      outputs=[{"id": "env", "path": "out/env.json", "format": "json"}]),
            _launcher("gpu", ["python", "gpu.py"], resources={"gpus": 1, "timeout_s": 150}),
            _launcher("gpu3", ["python", "gpu.py"], resources={"gpus": 3, "timeout_s": 150}),
            _launcher("slow", ["python", "slow.py"], resources={"timeout_s": 60}),
            _launcher("nosuch", ["definitely-not-a-command-rra"]),
        ],
        "claims": [
            {"id": "ok-acc", "paper_location": {"table": "1"}, "launcher": "ok",
             "metric": {"name": "accuracy", "unit": "%", "direction": "higher"},
             "extract": {"output": "scores", "json_pointer": "/acc", "scale": 100},
             "reported": {"value": 50.0, "precision": 1},
             "reference": {"observations": [{"value": v, "seed": s, "fingerprint": fp}
                                            for s, v in enumerate([50.0, 50.1, 50.05])]}},
            {"id": "ok-csv", "paper_location": {"table": "1"}, "launcher": "ok",
             "metric": {"name": "accuracy", "unit": "", "direction": "higher"},
             "extract": {"output": "table", "csv": {"column": "acc", "where": {"epoch": "2"}}},
             "reported": {"value": 0.5, "precision": 2},
             "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": fp} for s in range(3)]}},
            {"id": "bad-acc", "paper_location": {"table": "2"}, "launcher": "malformed",
             "metric": {"name": "accuracy", "unit": "", "direction": "higher"},
             "extract": {"output": "m", "json_pointer": "/acc"},
             "reported": {"value": 1.0, "precision": 1},
             "reference": {"observations": [{"value": 1.0, "seed": s, "fingerprint": fp} for s in range(3)]}},
        ],
    }


def make_artifact(root: Path) -> Path:
    """Write the tiny artifact into ``root`` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(json.dumps(manifest(), indent=1), encoding="utf-8")
    for name, body in SCRIPTS.items():
        (root / name).write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return root


def run_one(root: Path, launcher: str, seed: int | None = None, **options: Any) -> Any:
    artifact = load_artifact(root)
    (plan,) = plan_runs(artifact, launcher, seed=seed)
    options.setdefault("kill_grace_s", 0.5)
    options.setdefault("gpus", [])
    return execute(plan, RunOptions(**options))


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def read_record(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.record_path.read_text(encoding="utf-8"))
    schema = json.loads(generated_schemas()[f"rra-run-record-{FORMAT_VERSIONS['run-record']}.schema.json"])
    jsonschema.Draft202012Validator(schema).validate(data)
    RunRecord.model_validate(data)
    return data


@pytest.fixture()
def art(tmp_path: Path) -> Path:
    return make_artifact(tmp_path / "art")


def test_success_records_outputs_logs_and_metrics(art: Path) -> None:
    seen: list[tuple[str, bytes]] = []
    result = run_one(art, "ok", seed=1, on_output=lambda s, b: seen.append((s, b)))
    data = read_record(result)
    assert result.successful
    assert data["status"] == "completed" and data["exit_status"] == 0 and data["seed"] == 1
    assert data["argv"] == ["python", "ok.py", "1"]
    assert data["metrics"] == {"ok-acc": pytest.approx(50.1), "ok-csv": 0.5}
    assert [o["id"] for o in data["outputs"]] == ["scores", "table", "dir"]
    assert data["outputs"][0]["path"] == "out/ok-1.json" and data["outputs"][0]["size"] > 0
    assert data["missing_outputs"] == [] and data["messages"] == []
    assert [(log["stream"], log["path"]) for log in data["logs"]] == [("stdout", "stdout.log"),
                                                                     ("stderr", "stderr.log")]
    assert (result.directory / "stdout.log").read_text() == "seed 1 done acc=0.5\n"
    assert b"".join(b for s, b in seen if s == "stderr") == b"to stderr\n"
    # layout: runs/<launcher>/<seed>-<timestamp>/, and only record.json is JSON
    assert result.directory.parent == art / "runs" / "ok"
    assert result.directory.name.startswith("1-")
    assert sorted(p.name for p in result.directory.iterdir()) == ["record.json", "stderr.log", "stdout.log"]
    assert data["host"]["python"].startswith("cpython") and len(data["host"]["packages_digest"]) == 64


def test_each_run_gets_a_new_directory(art: Path) -> None:
    first = run_one(art, "ok", seed=0)
    first_bytes = first.record_path.read_bytes()
    second = run_one(art, "ok", seed=0)
    assert first.directory != second.directory
    assert first.record_path.read_bytes() == first_bytes
    assert sorted(p.name for p in (art / "runs").rglob("*.json")) == ["record.json", "record.json"]


def test_non_zero_exit_is_recorded(art: Path) -> None:
    result = run_one(art, "fail")
    data = read_record(result)
    assert not result.successful
    assert data["status"] == "completed" and data["exit_status"] == 3 and data["seed"] is None
    assert "process exited with status 3" in data["messages"]
    assert (result.directory / "stderr.log").read_text() == "about to fail\n"


def test_timeout_kills_the_whole_process_group(art: Path) -> None:
    result = run_one(art, "hang")
    data = read_record(result)
    assert data["status"] == "timeout" and data["exit_status"] is None
    assert data["messages"][0].startswith("timed out after 5 s; process group stopped with SIG")
    leader, grandchild = map(int, (art / "pids.txt").read_text().split())
    deadline = time.monotonic() + 60
    while (alive(leader) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(leader), "the launcher was still alive 60 s after its timeout"
    assert not alive(grandchild), "the grandchild (which ignores SIGTERM) was still alive 60 s after the timeout"
    # Killed, not left to end by themselves: neither reached the end of its 60 s sleep.
    assert sorted(p.name for p in art.glob("woke-*")) == []


def test_malformed_output_fails_with_a_message(art: Path) -> None:
    result = run_one(art, "malformed")
    data = read_record(result)
    assert data["status"] == "failed" and data["exit_status"] == 0
    assert data["metrics"] == {}
    assert len(data["messages"]) == 1
    assert data["messages"][0].startswith("claim 'bad-acc': output 'm' (out/bad.json) is not valid JSON: ")


def test_missing_declared_output_fails(art: Path) -> None:
    result = run_one(art, "missing")
    data = read_record(result)
    assert data["status"] == "failed" and data["exit_status"] == 0
    assert data["missing_outputs"] == [{"id": "never", "path": "out/never-plain.json"}]
    assert data["messages"] == ["declared output 'never' (out/never-plain.json) was not produced"]


def test_command_that_cannot_start_is_failed(art: Path) -> None:
    data = read_record(run_one(art, "nosuch"))
    assert data["status"] == "failed" and data["exit_status"] is None
    assert data["messages"][0].startswith("cannot start 'definitely-not-a-command-rra': ")


def test_clean_environment_and_redaction(art: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEAKY_VARIABLE", "should-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "nope")
    result = run_one(art, "envdump")
    dumped = json.loads((art / "out" / "env.json").read_text())
    assert dumped["home_mode"] == "0o700", "HOME is private to the user"
    seen = dumped["env"]
    assert set(seen) == {"PATH", "HOME", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE", "API_TOKEN", "MODE"}
    assert seen["API_TOKEN"] == "s3cret" and seen["MODE"] == "x"
    assert seen["LANG"] == seen["LC_ALL"] == "C.UTF-8"
    assert seen["PATH"].endswith(":/usr/bin:/bin")
    assert not Path(seen["HOME"]).exists(), "the temporary HOME is removed after the run, with what was in it"
    data = read_record(result)
    assert data["environment"]["API_TOKEN"] == "[redacted]"
    assert data["environment"]["MODE"] == "x"
    assert "s3cret" not in result.record_path.read_text()


def _fake_gpus(n: int) -> str:
    return json.dumps([{"index": i, "model": "Fake GPU", "driver": "550.0", "cuda": "12.4",
                        "memory_mib": 81920} for i in range(n)])


def test_gpu_request_larger_than_inventory_is_refused(art: Path, tmp_path: Path) -> None:
    environ = {INVENTORY_ENV: _fake_gpus(2), LOCK_DIR_ENV: str(tmp_path / "locks")}
    with pytest.raises(GpuUnavailable, match=r"^launcher 'gpu3' needs 3 GPU\(s\); this machine has 2$"):
        run_one(art, "gpu3", gpus=None, environ=environ)
    assert not (art / "runs" / "gpu3").exists()


def test_gpu_assignment_is_recorded(art: Path, tmp_path: Path) -> None:
    environ = {INVENTORY_ENV: _fake_gpus(2), LOCK_DIR_ENV: str(tmp_path / "locks")}
    (art / "out").mkdir(exist_ok=True)
    (art / "out" / "go").touch()
    result = run_one(art, "gpu", gpus=None, environ=environ)
    data = read_record(result)
    assert data["gpus"] == [0]
    assert data["environment"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert (result.directory / "stdout.log").read_text() == "CUDA_VISIBLE_DEVICES=0\n"
    assert data["host"]["gpus"][1] == {"index": 1, "model": "Fake GPU", "driver": "550.0", "cuda": "12.4",
                                       "memory_mib": 81920}


def test_records_written_by_runs_feed_the_validator(art: Path) -> None:
    from rra_tools.validate import validate_path

    run_one(art, "ok", seed=0)
    run_one(art, "fail")
    result = validate_path(art)
    assert not [d for d in result.diagnostics if d.code == "RRA602"]
    assert os.path.isdir(art / "runs" / "fail")


def test_stale_output_from_an_earlier_run_does_not_count(art: Path) -> None:
    stale = art / "out" / "never-plain.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    data = read_record(run_one(art, "missing"))
    assert data["status"] == "failed"
    assert data["messages"] == ["declared output 'never' (out/never-plain.json) was not written by this run "
                                "(last modified before it started)"]


def test_run_records_directory_must_stay_inside(art: Path, tmp_path: Path) -> None:
    from rra_tools.run import ArtifactError

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (art / "runs").symlink_to(outside)
    with pytest.raises(ArtifactError, match=r"^evidence.run_records 'runs' leaves the artifact root$"):
        run_one(art, "fail")
    assert list(outside.iterdir()) == []


def _tree_artifact(root: Path, body: str, **launcher: Any) -> Path:
    """A one-launcher artifact whose launcher runs ``body`` (Python) from the root."""
    data = manifest()
    data["launchers"] = [_launcher("job", ["python", "job.py"], **launcher)]
    data["claims"] = []
    root.mkdir(parents=True)
    (root / "rra.yaml").write_text(json.dumps(data, indent=1), encoding="utf-8")
    (root / "job.py").write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    (root / "helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    (root / "config.txt").write_text("lr=0.1\n", encoding="utf-8")
    (root / "old.txt").write_text("to be deleted\n", encoding="utf-8")
    return root


def test_writes_outside_declared_outputs_fail_the_run(tmp_path: Path) -> None:
    root = _tree_artifact(tmp_path / "art", """
        import os
        os.makedirs("out", exist_ok=True)
        open("out/result.json", "w").write("{}")
        open("cache.bin", "w").write("x")           # a new file next to the code
        open("config.txt", "a").write("lr=0.2\\n")   # a changed input
        os.remove("old.txt")                         # a removed file
        os.makedirs("scratch/deep", exist_ok=True)
        open("scratch/deep/t.txt", "w").write("t")
    """, outputs=[{"id": "r", "path": "out/result.json", "format": "json"}])
    result = run_one(root, "job")
    data = read_record(result)
    assert data["exit_status"] == 0 and data["status"] == "failed"
    assert data["stray_writes"] == ["cache.bin", "config.txt", "old.txt", "scratch/deep/t.txt"]
    assert any("wrote outside its declared outputs (4 file(s))" in m for m in data["messages"])
    assert [o["id"] for o in data["outputs"]] == ["r"]  # the declared output is still recorded


def test_declared_outputs_imports_and_records_are_not_stray(tmp_path: Path) -> None:
    # Importing a sibling module would write __pycache__ next to it; the clean environment
    # tells Python not to, so an ordinary launcher leaves the tree as it found it.
    root = _tree_artifact(tmp_path / "art", """
        import json, os, helper
        os.makedirs("out/sub", exist_ok=True)
        json.dump({"v": helper.VALUE}, open("out/sub/v.json", "w"))
    """, outputs=[{"id": "d", "path": "out", "format": "directory"}])
    result = run_one(root, "job")
    data = read_record(result)
    assert (data["status"], data["stray_writes"]) == ("completed", [])
    assert data["environment"]["PYTHONDONTWRITEBYTECODE"] == "1"
    assert not (root / "__pycache__").exists()


def test_package_set_is_compared_with_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib
    from importlib.metadata import version

    root = _tree_artifact(tmp_path / "art", "print('hi')\n")
    click_version = version("click")
    lock = (f"click=={click_version} --hash=sha256:{'0' * 64}\n"
            f"rra-surely-absent==1.0 --hash=sha256:{'1' * 64}\n"
            f"pywin32==306 ; sys_platform == 'win32' --hash=sha256:{'2' * 64}\n"
            f"rra-odd-marker==1.0 ; python_version ~= 'x' --hash=sha256:{'3' * 64}\n")
    (root / "requirements.lock").write_text(lock)
    data = json.loads((root / "rra.yaml").read_text())
    data["environment"]["lock"] = {"path": "requirements.lock", "format": "requirements-hashes",
                                   "sha256": hashlib.sha256(lock.encode()).hexdigest()}
    (root / "rra.yaml").write_text(json.dumps(data))
    host = read_record(run_one(root, "job"))["host"]
    assert host["environment"] == "current"
    assert host["lock"]["matches"] is False
    # click is installed at its locked version; the Windows-only package is not expected here; a
    # marker that cannot be judged counts its package in (as rra env check does), not a crash.
    assert host["lock"]["missing"] == ["rra-odd-marker==1.0", "rra-surely-absent==1.0"]
    assert host["lock"]["extra"] == host["packages"] - 1
    # The parsed lock is cached by its digest; an unreadable cache entry is parsed again.
    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path / "cache"))
    first = read_record(run_one(root, "job"))["host"]["lock"]
    (cached,) = (tmp_path / "cache" / "locks").iterdir()
    assert cached.name == f"{host['lock']['sha256']}-requirements-hashes.json"
    assert first == host["lock"]
    cached.write_text("not json")
    assert read_record(run_one(root, "job"))["host"]["lock"] == host["lock"]


def test_records_in_the_artifact_root_are_not_stray(tmp_path: Path) -> None:
    # evidence.run_records may be the root itself: records then go to <root>/<launcher>/.
    root = _tree_artifact(tmp_path / "art", "print('hi')\n")
    data = json.loads((root / "rra.yaml").read_text())
    data["evidence"] = {"run_records": "."}
    (root / "rra.yaml").write_text(json.dumps(data))
    result = run_one(root, "job")
    record = read_record(result)
    assert result.directory.parent == root / "job"
    assert (record["status"], record["stray_writes"]) == ("completed", [])


def test_checked_manifest_is_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A manifest that passed the schema check is cached (with its digest) by its bytes; a changed
    # manifest is checked again, a failing one is never cached, a corrupt entry is recomputed.
    from rra_tools.run import ArtifactError

    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path / "cache"))
    root = make_artifact(tmp_path / "art")
    first = load_artifact(root)
    (entry,) = (tmp_path / "cache" / "manifests").iterdir()
    assert json.loads(entry.read_text()) == {"digest": first.digest, "data": dict(first.data)}
    again = load_artifact(root)
    assert (again.digest, again.manifest) == (first.digest, first.manifest)

    data = json.loads((root / "rra.yaml").read_text())
    data["launchers"][0]["argv"] = "not a list"
    (root / "rra.yaml").write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match=r"rra\.yaml: not a valid manifest: .* at 'launchers/0/argv'"):
        load_artifact(root)
    assert [p.name for p in (tmp_path / "cache" / "manifests").iterdir()] == [entry.name]

    make_artifact(root)
    entry.write_text('{"digest": 1}')
    assert load_artifact(root).digest == first.digest
    assert json.loads(entry.read_text())["digest"] == first.digest


def test_unwritable_cache_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    monkeypatch.setenv("RRA_CACHE_DIR", str(blocker))
    root = make_artifact(tmp_path / "art")
    assert read_record(run_one(root, "ok", seed=0))["status"] == "completed"
    assert blocker.read_text() == "a file where the cache directory would be"


def test_the_suite_checks_every_written_record_against_the_schema(art: Path) -> None:
    # tests/conftest.py checks, after each test, the records rra wrote under its tmp_path; show
    # that the check finds a record that drifted from the schema, and ignores hand-made ones.
    from tests.conftest import _record_validator, written_run_records

    result = run_one(art, "ok", seed=0)
    path = result.directory / "record.json"
    handmade = art / "runs" / "ok" / "handmade" / "record.json"
    handmade.parent.mkdir()
    handmade.write_text("{}")
    assert written_run_records(art) == [path]
    good = json.loads(path.read_text())
    assert not list(_record_validator().iter_errors(good))
    drifted = {**good, "status": "finished"}
    errors = list(_record_validator().iter_errors(drifted))
    assert [list(e.path) for e in errors] == [["status"]]


def test_no_usable_temporary_directory_is_a_clear_error(art: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every temporary directory full (as root, none can be made unwritable here): the run is
    # refused with a RunError, which the CLI prints as "error: ...", and nothing is recorded.
    import errno

    from rra_tools.run import RunError

    def full(prefix: str) -> str:
        raise OSError(errno.ENOSPC, "No space left on device", "/tmp")

    monkeypatch.setattr("rra_tools.run.local.fresh_private_dir", full)
    with pytest.raises(RunError, match=r"^cannot create a temporary HOME for the run: .*No space left on device"):
        run_one(art, "ok", seed=0)
    assert not (art / "runs").exists()


def test_runs_complete_without_pidfds(art: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Where os.pidfd_open is missing (not Linux) or refused, the executor polls the process.
    def refused(pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    assert read_record(run_one(art, "ok", seed=0))["status"] == "completed"
    failed = read_record(run_one(art, "fail"))
    assert (failed["status"], failed["exit_status"]) == ("completed", 3)
