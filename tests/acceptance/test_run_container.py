"""The container executor against a real engine: Podman's Docker-compatible service, started by
the test setup (tests/services/podman.py), with a busybox image built locally. No mocks: every
launcher is a real process in a real container.

The image has an ENTRYPOINT and a PATH of its own, so the tests also show that argv replaces
the entrypoint and that the run's PATH is the image's.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools import FORMAT_VERSIONS
from rra_tools.model.run_record import RunRecord
from rra_tools.run import EngineUnavailable, EngineUnsupported, PlanError, load_artifact, plan_runs
from rra_tools.run.container import LABEL, ContainerOptions, Engine, connect, execute

from ..rra_cli import rra
from ..services.podman import IMAGE_PATH, PodmanService

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / f"rra-run-record-{FORMAT_VERSIONS['run-record']}.schema.json").read_text(encoding="utf-8"))

OK_SH = """\
seed="$1"
mkdir -p "out/seed-$seed"
printf '{"acc": 0.9%s}\\n' "$seed" > "out/metrics-$seed.json"
echo "per-seed file" > "out/seed-$seed/notes.txt"
echo scratch > "$HOME/scratch" && echo "home is writable"
echo "seed $seed done"
echo "to stderr" >&2
"""


def _launcher(ident: str, argv: list[str], **extra: Any) -> dict[str, Any]:
    resources = {"timeout_s": 30, "expected_runtime_s": 1, **extra.pop("resources", {})}
    return {"id": ident, "argv": argv, "stochastic": False, "resources": resources, **extra}


def manifest(image: str) -> dict[str, Any]:
    """A small valid manifest for busybox: one launcher per behaviour under test."""
    fp = {"hardware": "x86_64", "software": "busybox"}
    sh = ["sh", "-c"]
    return {
        "rra_version": "1.0",
        "id": "tiny-container",
        "title": "Tiny artifact for container run tests",
        "paper": {"title": "Tiny", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        # The GPU launcher needs a GPU declared: rra run refuses a manifest with errors (RRA403).
        "environment": {"interpreter": {"version": "3.11"}, "image": image,
                        "hardware": {"accelerators": [{"vendor": "nvidia", "model": "any", "count": 1,
                                                       "memory_gib": 16}]},
                        "cuda": {"min_version": "12.1", "min_driver": "530.30.02"}},
        "launchers": [
            _launcher("ok", ["sh", "ok.sh", "{seed}"], stochastic=True, seeds=[0, 1],
                      outputs=[{"id": "scores", "path": "out/metrics-{seed}.json", "format": "json"},
                               {"id": "notes", "path": "out/seed-{seed}", "format": "directory"}]),
            _launcher("envdump", ["env"], env={"API_TOKEN": "s3cret", "MODE": "x"}),
            _launcher("tamper", sh + ["touch data/new.txt; echo tampered > rra.yaml && echo '[]' > out/x.json"],
                      outputs=[{"id": "x", "path": "out/x.json", "format": "json"}]),
            _launcher("netcheck", sh + ["ls /sys/class/net"]),
            _launcher("fail", sh + ["echo about to fail >&2; exit 3"]),
            _launcher("hang", sh + ["trap '' TERM; echo ready; while :; do sleep 1; done"],
                      resources={"timeout_s": 1}),
            _launcher("slow", sh + ["trap 'echo got TERM; exit 143' TERM; echo ready; sleep 30 & wait"],
                      resources={"timeout_s": 60}),
            _launcher("missing", sh + ["echo writes nothing"],
                      outputs=[{"id": "never", "path": "made/never.json", "format": "json"}]),
            _launcher("nosuch", ["definitely-not-a-command-rra"]),
            _launcher("gpu", ["true"], resources={"gpus": 1}),
            _launcher("rootout", ["true"], outputs=[{"id": "m", "path": "metrics.json", "format": "json"}]),
        ],
        "claims": [
            {"id": "ok-acc", "paper_location": {"table": "1"}, "launcher": "ok",
             "metric": {"name": "accuracy", "unit": "%", "direction": "higher"},
             "extract": {"output": "scores", "json_pointer": "/acc", "scale": 100},
             "reported": {"value": 90.0, "precision": 1},
             "reference": {"observations": [{"value": v, "seed": s, "fingerprint": fp}
                                            for s, v in enumerate([90.0, 91.0, 90.5])]}},
        ],
    }


@pytest.fixture(scope="module")
def engine(podman: PodmanService) -> Any:
    """One connection for the library tests (Podman takes half a second to answer /version)."""
    connected = connect(podman.url)
    yield connected
    connected.close()


@pytest.fixture()
def art(tmp_path: Path, podman: PodmanService) -> Path:
    root = tmp_path / "art"
    (root / "data").mkdir(parents=True)
    (root / "data" / "input.txt").write_text("input\n")
    # The manifest pins the test image by the digest the engine reports, as a real artifact would.
    (root / "rra.yaml").write_text(json.dumps(manifest(podman.repo_digests[0]), indent=1), encoding="utf-8")
    (root / "ok.sh").write_text(OK_SH, encoding="utf-8")
    return root


def run_one(root: Path, launcher: str, engine: Engine, seed: int | None = None, **options: Any) -> Any:
    (plan,) = plan_runs(load_artifact(root), launcher, seed=seed)
    options.setdefault("kill_grace_s", 0.5)
    options.setdefault("gpus", [])
    return execute(plan, ContainerOptions(engine=engine, **options))


def read_record(result: Any) -> dict[str, Any]:
    """The record as written, checked against the committed schema and the model."""
    data: dict[str, Any] = json.loads(result.record_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    RunRecord.model_validate(data)
    return data


def no_containers_left(podman: PodmanService) -> None:
    assert podman.containers(LABEL) == [], "a container of the executor was left behind"


def test_success_records_outputs_metrics_and_image(art: Path, engine: Engine, podman: PodmanService) -> None:
    seen: list[tuple[str, bytes]] = []
    result = run_one(art, "ok", engine, seed=1, on_output=lambda s, b: seen.append((s, b)))
    data = read_record(result)
    assert result.successful, data["messages"]
    assert data["executor"] == "container"
    assert data["container"] == {"engine": f"Podman Engine {podman_version(podman)}",
                                 "image": podman.repo_digests[0], "image_id": podman.image_id,
                                 "repo_digests": podman.repo_digests, "network": "none"}
    assert data["metrics"] == {"ok-acc": pytest.approx(91.0)}
    assert [(o["id"], o["path"]) for o in data["outputs"]] == [("scores", "out/metrics-1.json"),
                                                               ("notes", "out/seed-1")]
    assert (art / "out" / "metrics-1.json").read_text() == '{"acc": 0.91}\n'
    assert data["missing_outputs"] == [] and data["messages"] == []
    # argv ran as given: the image's ENTRYPOINT ('echo image-entrypoint') was replaced, not prefixed.
    assert (result.directory / "stdout.log").read_text() == "home is writable\nseed 1 done\n"
    assert (result.directory / "stderr.log").read_text() == "to stderr\n"
    assert b"".join(b for s, b in seen if s == "stdout") == b"home is writable\nseed 1 done\n"
    assert result.directory.parent == art / "runs" / "ok"
    no_containers_left(podman)


def test_environment_is_clean_and_recorded(art: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEAKY_VARIABLE", "should-not-leak")
    result = run_one(art, "envdump", engine)
    data = read_record(result)
    seen = dict(line.split("=", 1) for line in (result.directory / "stdout.log").read_text().splitlines())
    assert "LEAKY_VARIABLE" not in seen
    assert seen["PATH"] == IMAGE_PATH, "the run's PATH is the image's"
    assert seen["HOME"] == "/rra/home" and seen["LANG"] == seen["LC_ALL"] == "C.UTF-8"
    assert seen["MODE"] == "x" and seen["API_TOKEN"] == "s3cret"
    # The record holds what the engine gave the container: ours plus its own (TERM, container),
    # minus HOSTNAME, which the runtime sets at start.
    assert set(data["environment"]) == set(seen) - {"HOSTNAME"}
    assert set(seen) - {"PATH", "HOME", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE", "MODE", "API_TOKEN"} <= {
        "HOSTNAME", "TERM", "container"}
    assert data["environment"]["API_TOKEN"] == "[redacted]"
    assert "s3cret" not in result.record_path.read_text()


def test_artifact_is_read_only(art: Path, engine: Engine, podman: PodmanService) -> None:
    before = (art / "rra.yaml").read_bytes()
    result = run_one(art, "tamper", engine)
    data = read_record(result)
    assert (art / "rra.yaml").read_bytes() == before
    assert not (art / "data" / "new.txt").exists()
    assert (result.directory / "stderr.log").read_text() == (
        "touch: data/new.txt: Read-only file system\n"
        "sh: can't create rra.yaml: Read-only file system\n")
    assert not result.successful
    assert data["status"] == "completed" and data["exit_status"] == 1
    assert data["missing_outputs"] == [{"id": "x", "path": "out/x.json"}]
    assert data["messages"] == ["process exited with status 1",
                                "declared output 'x' (out/x.json) was not produced"]
    no_containers_left(podman)


def test_output_directory_linked_out_of_the_artifact_is_not_mounted(art: Path, engine: Engine,
                                                                    tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (art / "out").symlink_to(elsewhere)
    data = read_record(run_one(art, "ok", engine, seed=0))
    assert list(elsewhere.iterdir()) == [], "the container wrote through a link out of the artifact"
    # ok.sh goes on after its failed writes and exits 0; its outputs are what it is judged by.
    assert data["status"] == "failed" and data["exit_status"] == 0
    assert "declared output 'scores' (out/metrics-0.json) leaves the artifact root" in data["messages"]


def test_no_network_by_default(art: Path, engine: Engine) -> None:
    result = run_one(art, "netcheck", engine)
    assert read_record(result)["container"]["network"] == "none"
    assert (result.directory / "stdout.log").read_text() == "lo\n"


def test_non_zero_exit_is_recorded(art: Path, engine: Engine, podman: PodmanService) -> None:
    result = run_one(art, "fail", engine)
    data = read_record(result)
    assert not result.successful
    assert data["status"] == "completed" and data["exit_status"] == 3 and data["seed"] is None
    assert data["messages"] == ["process exited with status 3"]
    assert (result.directory / "stderr.log").read_text() == "about to fail\n"
    no_containers_left(podman)


def test_timeout_kills_and_removes_the_container(art: Path, engine: Engine, podman: PodmanService) -> None:
    # The launcher loops until killed: the record's timeout and SIGKILL show that it was, and
    # how long creating and stopping a container takes is for benchmarks, not for this test.
    result = run_one(art, "hang", engine)
    data = read_record(result)
    assert data["status"] == "timeout" and data["exit_status"] is None
    # The launcher ignores SIGTERM, so the grace period ends in SIGKILL.
    assert data["signal"] == signal.SIGKILL
    assert data["messages"] == ["timed out after 1 s; container stopped with SIGKILL"]
    assert (result.directory / "stdout.log").read_text() == "ready\n"
    no_containers_left(podman)


def test_missing_output_fails_and_empty_mount_point_is_removed(art: Path, engine: Engine) -> None:
    data = read_record(run_one(art, "missing", engine))
    assert data["status"] == "failed" and data["exit_status"] == 0
    assert data["missing_outputs"] == [{"id": "never", "path": "made/never.json"}]
    assert data["messages"] == ["declared output 'never' (made/never.json) was not produced"]
    assert not (art / "made").exists(), "the mount point made for the run and left empty stays behind"


def test_command_that_cannot_start_is_failed(art: Path, engine: Engine, podman: PodmanService) -> None:
    data = read_record(run_one(art, "nosuch", engine))
    assert data["status"] == "failed" and data["exit_status"] is None
    assert data["messages"][0].startswith("cannot start 'definitely-not-a-command-rra': ")
    assert "executable file not found" in data["messages"][0]
    no_containers_left(podman)


def test_gpu_request_on_podman_is_refused_before_anything_is_created(art: Path, engine: Engine,
                                                                     podman: PodmanService) -> None:
    message = (f"launcher 'gpu' needs 1 GPU(s), but the container engine at {podman.url!r} is "
               f"{engine.description}, whose Docker-compatible API ignores GPU device requests; run it on "
               f"Docker with the NVIDIA Container Toolkit, or with --executor local")
    with pytest.raises(EngineUnsupported) as caught:
        run_one(art, "gpu", engine)
    assert str(caught.value) == message
    assert not (art / "runs").exists()
    no_containers_left(podman)
    proc = rra("run", str(art), "gpu", "--executor", "container", "--engine-url", podman.url)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {message}\n"
    assert not (art / "runs").exists()


def test_output_in_read_only_root_is_refused(art: Path, engine: Engine) -> None:
    with pytest.raises(PlanError, match=r"^launcher 'rootout': output 'm' \(metrics.json\) is directly in the "
                                        r"artifact root, which the container executor mounts read-only"):
        run_one(art, "rootout", engine)


def test_unreachable_engine_exits_2_naming_the_address(art: Path, tmp_path: Path) -> None:
    address = f"unix://{tmp_path}/no-engine.sock"
    proc = rra("run", str(art), "ok", "--executor", "container", "--engine-url", address)
    assert proc.returncode == 2
    assert proc.stderr == f"error: cannot reach the container engine at {address!r}: No such file or directory\n"
    assert not (art / "runs").exists()
    with pytest.raises(EngineUnavailable, match="^cannot reach the container engine at 'tcp://127.0.0.1:1': "):
        connect("tcp://127.0.0.1:1")


def test_cli_runs_in_container_from_environment_address(art: Path, podman: PodmanService) -> None:
    env = {"PATH": "/usr/bin:/bin", "RRA_CONTAINER_HOST": podman.url}
    proc = rra("run", str(art), "ok", "--seed", "0", "--executor", "container", env=env, inherit_env=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "home is writable\nseed 0 done\n"
    assert (f"[rra] container engine: Podman Engine {podman_version(podman)} at {podman.url}; image "
            f"{podman.repo_digests[0]} ({podman.image_id})") in proc.stderr
    assert "[rra] ok seed 0: completed, exit 0" in proc.stderr
    (record_path,) = (art / "runs" / "ok").glob("*/record.json")
    record = json.loads(record_path.read_text())
    assert record["executor"] == "container" and record["metrics"] == {"ok-acc": pytest.approx(90.0)}


def test_container_options_need_the_container_executor(art: Path) -> None:
    proc = rra("run", str(art), "ok", "--image", "x")
    assert proc.returncode == 2
    assert "--image, --engine-url and --network need --executor container" in proc.stderr


def test_interrupt_leaves_an_interrupted_record_and_no_container(art: Path, podman: PodmanService) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(art), "slow", "--executor", "container",
                             "--engine-url", podman.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"  # the launcher is running in its container
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    assert "[rra] slow noseed: interrupted, no exit status" in stderr
    assert "[rra] interrupted; remaining runs skipped" in stderr
    (record_path,) = (art / "runs" / "slow").glob("*/record.json")
    record = json.loads(record_path.read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(record)
    # The launcher traps SIGTERM and exits 143: stopped by SIGTERM, no exit status of its own.
    assert record["status"] == "interrupted" and record["signal"] == signal.SIGTERM
    assert record["exit_status"] is None
    assert record["messages"][0].startswith("interrupted after ")
    assert record["messages"][0].endswith(" s; container stopped with SIGTERM")
    assert (record_path.parent / "stdout.log").read_text() == "ready\ngot TERM\n"
    no_containers_left(podman)


def podman_version(podman: PodmanService) -> str:
    return podman.podman("version", "--format", "{{.Server.Version}}").stdout.strip()


def test_sigkill_of_rra_run_takes_the_container_and_keeps_the_run_locked_until_it_is_gone(
        art: Path, podman: PodmanService) -> None:
    from rra_tools.run.pending import PENDING_NAME, finish_orphaned_runs

    # sh is the container's PID 1, which ignores SIGTERM: only the SIGKILL after the grace ends it.
    data = json.loads((art / "rra.yaml").read_text())
    data["launchers"].append(_launcher("sleeper", ["sh", "-c", "echo ready; sleep 600"],
                                       resources={"timeout_s": 300}))
    (art / "rra.yaml").write_text(json.dumps(data, indent=1))
    proc = subprocess.Popen([sys.executable, "-m", "rra_tools", "run", str(art), "sleeper", "--executor",
                             "container", "--engine-url", podman.url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"  # the launcher is running in its container
        (run_dir,) = (art / "runs" / "sleeper").iterdir()
        label = f"{LABEL}={run_dir.relative_to(art).as_posix()}"
        assert [c["State"] for c in podman.containers(label)] == ["running"]
        proc.kill()
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    killed = time.monotonic()
    try:
        # While the container lives, its run stays locked: nobody takes it for finished.
        (running,) = finish_orphaned_runs(load_artifact(art))
        assert (running.state, running.record) == ("running", None)
        # The 5 s grace period, then SIGKILL and removal; waited for up to 120 s (a loaded
        # machine), far less than the 600 s the container would live by itself.
        deadline = killed + 120
        while podman.containers(label) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert podman.containers(label) == [], "the container was still there 120 s after rra run was killed"
    finally:
        client = podman.client()
        try:
            for leftover in podman.containers(label):  # so that the other tests start clean
                client.remove_container(leftover["Id"], force=True)
        finally:
            client.close()

    # The guard lets go of the run's locks as it exits, just after the removal.
    fd = os.open(run_dir / PENDING_NAME, os.O_RDONLY)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "the run stayed locked 60 s after its container was gone"
                time.sleep(0.05)
    finally:
        os.close(fd)
    done = rra("results", str(art))
    rel = run_dir.relative_to(art).as_posix()
    assert (f"run without a record: {rel}: its rra run was killed; finished it as interrupted -> "
            f"{rel}/record.json") in done.stdout
    record = json.loads((run_dir / "record.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(record)
    assert record["status"] == "interrupted" and record["exit_status"] is None and record["executor"] == "container"
    assert record["container"]["image_id"] == podman.image_id and record["container"]["network"] == "none"
    (message,) = record["messages"]
    assert message.startswith(f"rra run (pid {proc.pid}) ended without writing this record: it was killed")
    assert (run_dir / "stdout.log").read_text() == "ready\n"
    assert not (run_dir / PENDING_NAME).exists()
    no_containers_left(podman)
