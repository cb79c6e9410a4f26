"""Which GPUs a Slurm job was given: what Slurm sets in the environment first, the indices of
``scontrol show job -d`` when it sets nothing (gres backed by files, as on the test cluster).
The ``scontrol`` path also runs for real in tests/acceptance/test_bench_slurm.py."""

from __future__ import annotations

import pytest

from rra_tools.bench.errors import BenchError
from rra_tools.bench.executors.slurm import DEAD_STATES, parse_indices, slurm_gpus

# What 'scontrol show job -d' printed on the test cluster for a --gres=gpu:2 job.
SHOWN = """JobId=7 ArrayJobId=6 ArrayTaskId=0 JobName=rra-bench
   JOB_GRES=gpu:2
     Nodes=vm CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)
   TresPerNode=gres:gpu:2
"""


def _no_scontrol(job: str) -> str:
    raise AssertionError(f"scontrol asked for job {job} although Slurm set the devices")


def test_parse_indices() -> None:
    assert parse_indices("0") == [0]
    assert parse_indices("0,2-3") == [0, 2, 3]
    assert parse_indices(" 1 , 5 ") == [1, 5]
    assert parse_indices("GPU-8f1c2a3b-0000") is None
    assert parse_indices("0,MIG-1") is None


@pytest.mark.parametrize(("environ", "expected"), [
    ({"CUDA_VISIBLE_DEVICES": "0,1", "SLURM_JOB_GPUS": "4,5", "SLURM_GPUS_ON_NODE": "2"},
     ([0, 1], "CUDA_VISIBLE_DEVICES")),
    # UUIDs (MIG) are not indices: SLURM_JOB_GPUS names them.
    ({"CUDA_VISIBLE_DEVICES": "GPU-8f1c2a3b", "SLURM_JOB_GPUS": "3", "SLURM_GPUS_ON_NODE": "1"},
     ([3], "SLURM_JOB_GPUS")),
    ({"SLURM_JOB_GPUS": "2,3", "SLURM_GPUS_ON_NODE": "2"}, ([2, 3], "SLURM_JOB_GPUS")),
    ({"SLURM_JOB_ID": "7"}, ([], "none")),
    ({}, ([], "none")),
])
def test_devices_from_what_slurm_sets(environ: dict[str, str], expected: tuple[list[int], str]) -> None:
    assert slurm_gpus(environ, _no_scontrol) == expected


def test_devices_from_scontrol_when_slurm_sets_none() -> None:
    asked: list[str] = []

    def scontrol(job: str) -> str:
        asked.append(job)
        return SHOWN

    assert slurm_gpus({"SLURM_JOB_ID": "7", "SLURM_GPUS_ON_NODE": "2"}, scontrol) == ([0, 1], "scontrol")
    assert asked == ["7"]
    typed = SHOWN.replace("GRES=gpu:2(IDX:0-1)", "GRES=gpu:a100:2(IDX:1,3)")
    assert slurm_gpus({"SLURM_JOB_ID": "7", "SLURM_GPUS_ON_NODE": "2"}, lambda _: typed) == ([1, 3], "scontrol")


def test_devices_nobody_names_are_an_error() -> None:
    with pytest.raises(BenchError) as caught:
        slurm_gpus({"SLURM_JOB_ID": "9", "SLURM_GPUS_ON_NODE": "1"}, lambda _: "JobId=9 JobState=RUNNING")
    assert str(caught.value).startswith("Slurm allocated 1 GPU(s) to job 9 but neither CUDA_VISIBLE_DEVICES, "
                                        "SLURM_JOB_GPUS nor 'scontrol show job -d' names them")


def test_dead_states_are_infrastructure_kinds() -> None:
    assert DEAD_STATES["TIMEOUT"] == "timeout"
    assert DEAD_STATES["OUT_OF_MEMORY"] == "oom"
    assert DEAD_STATES["NODE_FAIL"] == "node_lost"
    assert DEAD_STATES["CANCELLED"] == "cancelled"
    assert DEAD_STATES["PREEMPTED"] == "preempted"
