"""How a dead Slurm job is classified: from ``sacct`` when the cluster has accounting, else from
``scontrol show job``.

The test cluster (tests/services/slurm.py) has no slurmdbd (it needs a database server), so the
``sacct`` path cannot run there: its ``sacct`` answers 'Slurm accounting storage is disabled'
with status 1, and tests/acceptance/test_bench_slurm*.py exercise the ``scontrol`` path live.
Here the command runner is replaced by the output shapes ``sacct -X -n -P -o
State,ExitCode,Reason`` prints (``--parsable2``: '|' between fields, none at the end; a cancelled
job's state followed by ' by <uid>', per sacct(1) and Slurm's sacct source), and ``scontrol``'s
as the test cluster printed it. The live ``sacct`` path is untested here (docs/bench.md says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rra_tools.bench.executors.slurm import DEAD_STATES, Runner, max_array_size, classify

#: What the test cluster's sacct says (captured on slurm-wlm 22.05 without slurmdbd).
NO_ACCOUNTING = (1, "", "Slurm accounting storage is disabled\n")


def _runner(sacct: tuple[int, str, str],
            scontrol: tuple[int, str, str] | None = None) -> tuple[Runner, list[list[str]]]:
    asked: list[list[str]] = []

    def run(argv: Sequence[str]) -> tuple[int, str, str]:
        asked.append(list(argv))
        if argv[0] == "sacct":
            assert list(argv) == ["sacct", "-X", "-n", "-P", "-o", "State,ExitCode,Reason", "-j", "12_3"]
            return sacct
        assert list(argv) == ["scontrol", "show", "job", "-o", "12_3"]
        if scontrol is None:
            raise AssertionError("scontrol asked although sacct knew the job")
        return scontrol

    return run, asked


@pytest.mark.parametrize(("line", "state", "kind", "detail"), [
    ("CANCELLED by 1000|0:15|None", "CANCELLED", "cancelled", "by uid 1000, reason None, exit code 0:15"),
    ("CANCELLED by 0|0:0|", "CANCELLED", "cancelled", "by uid 0, reason None, exit code 0:0"),
    ("TIMEOUT|0:0|None", "TIMEOUT", "timeout", "reason None, exit code 0:0"),
    ("OUT_OF_MEMORY|0:125|None", "OUT_OF_MEMORY", "oom", "reason None, exit code 0:125"),
    ("NODE_FAIL|0:0|None", "NODE_FAIL", "node_lost", "reason None, exit code 0:0"),
    ("PREEMPTED|0:15|None", "PREEMPTED", "preempted", "reason None, exit code 0:15"),
    ("FAILED|1:0|NonZeroExitCode", "FAILED", "job_failed", "reason NonZeroExitCode, exit code 1:0"),
    ("BOOT_FAIL|0:0|None", "BOOT_FAIL", "node_lost", "reason None, exit code 0:0"),
    ("DEADLINE|0:0|None", "DEADLINE", "timeout", "reason None, exit code 0:0"),
])
def test_dead_states_from_sacct(line: str, state: str, kind: str, detail: str) -> None:
    run, _ = _runner((0, line + "\n", ""))
    assert classify("12_3", run) == (state, "sacct", detail)
    assert DEAD_STATES[state] == kind


def test_a_requeued_job_is_its_last_run() -> None:
    # A job requeued after a node failure, then preempted: sacct lists each run (-D, or a
    # cluster's defaults); the last line is what happened last.
    run, _ = _runner((0, "NODE_FAIL|0:0|None\nPREEMPTED|0:15|None\n", ""))
    assert classify("12_3", run)[:2] == ("PREEMPTED", "sacct")


def test_a_job_still_running_in_accounting_is_not_dead() -> None:
    run, _ = _runner((0, "RUNNING|0:0|None\n", ""))
    state, source, _ = classify("12_3", run)
    assert (state, source) == ("RUNNING", "sacct") and state not in DEAD_STATES


def test_without_accounting_the_controller_is_asked() -> None:
    # What 'scontrol show job -o' printed on the test cluster for a job cancelled with scancel.
    shown = ("JobId=12 ArrayJobId=12 ArrayTaskId=3 JobName=rra-bench UserId=root(0) GroupId=root(0) "
             "Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=CANCELLED Reason=None "
             "Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15\n")
    run, asked = _runner(NO_ACCOUNTING, (0, shown, ""))
    assert classify("12_3", run) == ("CANCELLED", "scontrol", "reason None, exit code 0:15")
    assert [a[0] for a in asked] == ["sacct", "scontrol"]


def test_accounting_that_does_not_know_the_job_yet_falls_back_to_the_controller() -> None:
    # slurmdbd lags behind the controller: a job that just ended may not be listed yet.
    shown = "JobId=12 ArrayTaskId=3 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:0\n"
    run, _ = _runner((0, "", ""), (0, shown, ""))
    assert classify("12_3", run) == ("TIMEOUT", "scontrol", "reason TimeLimit, exit code 0:0")


def test_a_job_nobody_knows_is_unknown() -> None:
    run, _ = _runner(NO_ACCOUNTING, (1, "", "slurm_load_jobs error: Invalid job id specified\n"))
    assert classify("12_3", run) == ("UNKNOWN", "scontrol", "slurm_load_jobs error: Invalid job id specified")
    assert DEAD_STATES.get("UNKNOWN") is None  # the executor calls it 'lost'


def test_the_largest_array_is_read_from_the_cluster() -> None:
    # 'scontrol show config' lines as slurm-wlm 22.05 prints them; an array of 1,008 cells is
    # split into arrays of at most this many tasks (the benchmark submits 1,008 for real).
    shown = "MaxArraySize            = 1001\nMaxJobCount             = 10000\n"
    assert max_array_size(lambda argv: (0, shown, "")) == 1001
    assert max_array_size(lambda argv: (0, "MaxArraySize = 40\n", "")) == 40
    assert max_array_size(lambda argv: (1, "", "scontrol: error: ...")) == 1001
