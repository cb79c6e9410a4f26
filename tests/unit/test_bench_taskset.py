"""Reading task sets: the example of docs/bench.md loads, and every user mistake is a BenchError
that names the file or task (no traceback), before anything runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench import BenchError, load_taskset
from rra_tools.errors import ExitStatus, RRAError

REPO = Path(__file__).resolve().parents[2]
FP = {"hardware": "x86_64", "software": "sh"}


def docs_example() -> str:
    text = (REPO / "docs" / "bench.md").read_text(encoding="utf-8")
    # The full example; the other YAML block (ablations) is checked by test_bench_ablation.py.
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if "bench_version" in b]
    return block


def artifact(root: Path, observations: int = 3) -> Path:
    """A minimal valid artifact with one claim 'score' and ``observations`` reference values."""
    manifest: dict[str, Any] = {
        "rra_version": "1.0", "id": "tiny", "title": "Tiny",
        "paper": {"title": "Tiny", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 5, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/m.json", "format": "json"}]}],
        "claims": [{"id": "score", "paper_location": {"table": "1"}, "launcher": "emit",
                    "metric": {"name": "score", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": "/score"},
                    "reported": {"value": 0.5, "precision": 2},
                    "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": FP}
                                                   for s in range(observations)]}}],
    }
    root.mkdir(parents=True)
    (root / "rra.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def write(path: Path, tasks: list[dict[str, Any]], **top: Any) -> Path:
    data = {"bench_version": "1.0", "id": "t", **top,
            "papers": [{"id": "p", "experiments": [{"id": "e", "tasks": tasks}]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_docs_example_loads(tmp_path: Path) -> None:
    # The example sits in docs/ and names ../examples/digits-logreg: rebuild that layout.
    shutil.copytree(REPO / "examples" / "digits-logreg", tmp_path / "examples" / "digits-logreg",
                    ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    (tmp_path / "docs").mkdir()
    path = tmp_path / "docs" / "tasks.yaml"
    path.write_text(docs_example(), encoding="utf-8")
    loaded = load_taskset(path)
    (task,) = loaded.tasks
    assert loaded.model.repeats == 3
    assert (task.key, task.launcher, task.source) == ("digits/table-1/accuracy", "train", "manifest")
    assert loaded.model.slurm is not None and loaded.model.slurm.partition == "gpu"
    assert task.task.slurm is not None and (task.task.slurm.time_min, task.task.slurm.mem_gb) == (240, 8)
    assert task.interval.n == 5 and not task.interval.stable


def test_repeats_default_to_three_and_task_observations_win(tmp_path: Path) -> None:
    artifact(tmp_path / "a")
    reference = [{"value": v, "by": "me", "machine": "laptop", "code": "raw"} for v in (1.0, 2.0, 3.0)]
    loaded = load_taskset(write(tmp_path / "t.json", [{"id": "x", "artifact": "a", "claim": "score",
                                                        "reference": reference}]))
    assert loaded.model.repeats == 3
    (task,) = loaded.tasks
    assert (task.source, task.interval.center, task.interval.n) == ("task", 2.0, 3)


@pytest.mark.parametrize(("tasks", "message"), [
    ([{"id": "x", "artifact": "a", "claim": "nope"}],
     "task p/e/x: artifact 'a' has no claim 'nope' (it has 'score')"),
    ([{"id": "x", "artifact": "a", "claim": "score"}, {"id": "x", "artifact": "a", "claim": "score"}],
     "task set '{path}' is invalid at /papers/0/experiments/0/tasks/1/id: task id 'x' is used twice in p/e "
     "(first at /papers/0/experiments/0/tasks/0/id) (line 1, column 153)"),
    ([{"id": "x", "artifact": "a", "claim": "score",
       "reference": [{"value": 1.0, "by": "me", "machine": "m", "code": "cooked"}] * 3}],
     "task set '{path}' is invalid at /papers/0/experiments/0/tasks/0/reference/0/code: "
     "Input should be 'raw' or 'refined'"),
    ([{"id": "x", "artifact": "a", "claim": "score", "seed": 3}],
     "task set '{path}' is invalid at /papers/0/experiments/0/tasks/0: "
     "Value error, unknown field(s) ['seed']; extensions must start with 'x-'"),
])
def test_mistakes_are_bench_errors(tmp_path: Path, tasks: list[dict[str, Any]], message: str) -> None:
    artifact(tmp_path / "a")
    path = write(tmp_path / "t.json", tasks)
    with pytest.raises(BenchError) as caught:
        load_taskset(path)
    assert str(caught.value) == message.format(path=path)
    assert isinstance(caught.value, RRAError) and caught.value.exit_status == ExitStatus.USAGE


def test_too_few_manifest_observations(tmp_path: Path) -> None:
    artifact(tmp_path / "a", observations=2)
    with pytest.raises(BenchError) as caught:
        load_taskset(write(tmp_path / "t.json", [{"id": "x", "artifact": "a", "claim": "score"}]))
    assert str(caught.value) == ("task p/e/x: claim 'score' has 2 reference observation(s) in its manifest; "
                                 "a task needs at least 3")
    assert caught.value.hint == "give the task its own 'reference' observations"


def test_missing_artifact_and_bad_syntax(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", [{"id": "x", "artifact": "gone", "claim": "score"}])
    with pytest.raises(BenchError, match=r"^task p/e/x: artifact 'gone': "):
        load_taskset(path)
    path.write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(BenchError, match=rf"^task set {re.escape(str(path))}:\d+:\d+: "):
        load_taskset(path)
    path.write_text("id: a\nid: b\n", encoding="utf-8")
    with pytest.raises(BenchError, match=rf"^task set {re.escape(str(path))}: duplicate key 'id'"):
        load_taskset(path)


def test_an_oci_reference_needs_a_cache(tmp_path: Path) -> None:
    # No registry is contacted: without a cache the reference is refused before any network use.
    ref = "oci://127.0.0.1:9/lab/model:v1"
    path = write(tmp_path / "t.json", [{"id": "x", "artifact": ref, "claim": "score"}])
    with pytest.raises(BenchError) as caught:
        load_taskset(path)
    assert str(caught.value) == f"task p/e/x: artifact {ref!r} is an OCI reference and no cache directory was given"
    assert caught.value.hint == "pass --cache DIR (rra bench) or an ArtifactCache (load_taskset)"
