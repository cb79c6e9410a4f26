"""What a cell's Slurm job asks for: the launchers' ``resources`` in the manifest first, then the
task set's Slurm settings, then the task's, then the command line's, each field by field. The
same order runs against the real cluster in tests/acceptance/test_bench_slurm_run.py."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rra_tools.bench.executors.slurm import JobResources, SlurmOptions, launcher_resources, overridden
from rra_tools.model.manifest_view import LauncherSpec, read_manifest
from rra_tools.model.taskset import SlurmSettings, TaskSet


def _launcher(ident: str, **resources: Any) -> LauncherSpec:
    # Through the manifest reader the run path uses, so the test sees what a manifest gives.
    manifest = {
        "rra_version": "1.0", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "A"}]},
        "code": {"license": "MIT"}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": ident, "argv": ["true"], "stochastic": False,
                       "resources": {"timeout_s": 600, "expected_runtime_s": 1, **resources}}],
        "claims": [],
    }
    (launcher,) = read_manifest(manifest).launchers
    return launcher


def test_cpus_and_memory_come_from_the_launchers_resources() -> None:
    prepare, train = _launcher("prepare", cpus=8, ram_gib=2.5), _launcher("train", gpus=2, cpus=4, ram_gib=30)
    assert launcher_resources([prepare, train], gpus=2, seconds=1200) == JobResources(
        gpus=2, cpus=8, mem_gb=30.0, time_min=30)  # 1200 s x 1.25 = 25 min, + 5
    # A manifest that says nothing: one CPU, the partition's memory.
    assert launcher_resources([_launcher("x")], gpus=0, seconds=59) == JobResources(
        gpus=0, cpus=1, mem_gb=None, time_min=7)


def test_command_line_over_task_over_task_set_over_launchers() -> None:
    base = JobResources(gpus=1, cpus=4, mem_gb=16, time_min=65)
    taskset = SlurmSettings(partition="gpu", account="lab", time_min=120, mem_gb=32, gpu_type="a100")
    task = SlurmSettings(time_min=600, cpus=16, partition="long")
    cli = SlurmOptions(partition="debug", mem_gb=8)
    assert overridden(base, taskset, task, cli) == JobResources(
        gpus=1, cpus=16, mem_gb=8, time_min=600, partition="debug", account="lab", qos=None, gpu_type="a100")
    # Without the command line: the task's partition and time, the task set's memory.
    got = overridden(base, taskset, task)
    assert (got.partition, got.time_min, got.mem_gb, got.cpus) == ("long", 600, 32, 16)
    # Without the task: the task set's; without any setting: the launchers'.
    assert overridden(base, taskset, None).time_min == 120
    assert overridden(base, None, None, SlurmOptions()) == base
    # Options the command line leaves unset (None) never erase a setting; 0 GPUs is a setting.
    assert overridden(base, SlurmSettings(gpus=0)).gpus == 0
    assert overridden(base, taskset, SlurmOptions(max_retries=5)).partition == "gpu"


def test_gres() -> None:
    assert JobResources(gpus=0).gres() is None
    assert JobResources(gpus=2).gres() == "gpu:2"
    assert JobResources(gpus=1, gpu_type="a100").gres() == "gpu:a100:1"


def test_settings_are_checked_in_the_task_set() -> None:
    base: dict[str, Any] = {"bench_version": "1.0", "id": "s", "papers": [{"id": "p", "experiments": [
        {"id": "e", "tasks": [{"id": "t", "artifact": "a", "claim": "c", "slurm": {"cpus": 4}}]}]}]}
    model = TaskSet.model_validate({**base, "slurm": {"partition": "gpu", "time_min": 90}})
    assert model.slurm == SlurmSettings(partition="gpu", time_min=90)
    assert model.papers[0].experiments[0].tasks[0].slurm == SlurmSettings(cpus=4)
    for bad in ({"partition": "gpu --wrap=x"}, {"time_min": 0}, {"mem_gb": -1}, {"nodes": 2}):
        with pytest.raises(ValidationError):
            TaskSet.model_validate({**base, "slurm": bad})
