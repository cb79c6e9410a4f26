"""The GPU inventory (nvidia-smi or RRA_GPU_INVENTORY) and exclusive device leases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rra_tools.run.gpus import GpuInfo
from rra_tools.run.errors import GpuUnavailable
from rra_tools.run.gpus import INVENTORY_ENV, LOCK_DIR_ENV, acquire, inventory

FAKE_SMI = """#!/bin/sh
if [ "$1" = "--query-gpu=index,name,driver_version,memory.total" ]; then
  printf '0, NVIDIA H200, 550.90.07, 143771\\n1, NVIDIA H200, 550.90.07, 143771\\n'
else
  echo '+-----------------------------------------------------------------------------------------+'
  echo '| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |'
fi
"""


def test_inventory_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "nvidia-smi"
    tool.write_text(FAKE_SMI)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    gpus = inventory({})
    assert gpus == [GpuInfo(index=i, model="NVIDIA H200", driver="550.90.07", cuda="12.4", memory_mib=143771)
                    for i in (0, 1)]


def test_both_nvidia_smi_queries_run_at_the_same_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each call of this nvidia-smi waits (up to 10 s) for the other to have started: run one after
    # the other, the first would give up and the inventory would be empty.
    tool = tmp_path / "nvidia-smi"
    tool.write_text(f"""#!/bin/sh
if [ $# -gt 0 ]; then me=query; other=header; else me=header; other=query; fi
touch "{tmp_path}/started-$me"
other="{tmp_path}/started-$other"
i=0
while [ ! -e "$other" ]; do
  i=$((i + 1)); [ $i -gt 1000 ] && exit 1
  sleep 0.01
done
""" + FAKE_SMI.split("\n", 1)[1])
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert [g.index for g in inventory({})] == [0, 1]


def test_failing_nvidia_smi_means_no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the driver'\nexit 9\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert inventory({}) == []


def test_no_nvidia_smi_means_no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert inventory({}) == []


def test_override() -> None:
    gpus = inventory({INVENTORY_ENV: '[{"index": 3, "name": "A100"}]'})
    assert gpus == [GpuInfo(index=3, model="A100")]
    # the spelling rra env check uses is read too
    same = inventory({INVENTORY_ENV: '[{"index": 0, "name": "H200", "driver_version": "550.90.07", '
                                     '"cuda_version": "12.4", "memory_total_mib": 143771.0}]'})
    assert same == [GpuInfo(index=0, model="H200", driver="550.90.07", cuda="12.4", memory_mib=143771)]
    with pytest.raises(GpuUnavailable, match=r"^RRA_GPU_INVENTORY is not a JSON list of GPU objects: "):
        inventory({INVENTORY_ENV: '{"index": 0}'})


def test_leases_are_exclusive_and_released(tmp_path: Path) -> None:
    environ = {LOCK_DIR_ENV: str(tmp_path)}
    gpus = inventory({INVENTORY_ENV: json.dumps([{"index": i, "model": "X"} for i in range(3)])})
    first = acquire(2, "a", gpus, environ)
    second = acquire(1, "b", gpus, environ)
    assert first.visible == "0,1" and second.visible == "2"
    with pytest.raises(GpuUnavailable, match=r"^launcher 'c' needs 1 GPU\(s\); only 0 of 3 are free "):
        acquire(1, "c", gpus, environ)
    first.release()
    assert acquire(2, "c", gpus, environ).visible == "0,1"
    assert acquire(0, "d", gpus, environ).visible == ""
