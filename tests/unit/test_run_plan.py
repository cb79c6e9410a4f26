"""Planning runs: placeholders, typed parameters, seeds, dependency order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.run import PlanError, launcher_order, load_artifact, parse_overrides, plan_runs
from rra_tools.io.artifact import ArtifactError
from rra_tools.run.plan import format_value, substitute


def _write(root: Path, launchers: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    doc = {
        "rra_version": "1.0", "id": "p", "title": "Plan tests",
        "paper": {"title": "T", "authors": [{"name": "A"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"resources": {"timeout_s": 10, "expected_runtime_s": 1}, **x} for x in launchers],
    }
    (root / "rra.yaml").write_text(json.dumps(doc), encoding="utf-8")
    return root


PARAMS = {
    "lr": {"type": "float", "default": 0.1},
    "steps": {"type": "int", "default": 3},
    "flag": {"type": "bool", "default": False},
    "mode": {"type": "str", "default": "a", "choices": ["a", "b"]},
}


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return _write(tmp_path, [
        {"id": "train", "argv": ["python", "t.py", "{seed}", "{lr}", "{steps}", "{flag}", "--m={mode}", "{{x}}"],
         "parameters": PARAMS, "seeds": [5, 6, 7],
         "outputs": [{"id": "o", "path": "out/{mode}/{seed}.json", "format": "json"}]},
        {"id": "eval", "argv": ["python", "e.py"], "stochastic": False, "depends_on": ["train"]},
        {"id": "prep", "argv": ["python", "p.py"], "stochastic": False},
        {"id": "report", "argv": ["python", "r.py"], "stochastic": False, "depends_on": ["eval", "prep"]},
    ])


def test_format_value() -> None:
    assert [format_value(v) for v in (3, 0.1, 1e-05, 1.0, True, False, "x y")] == [
        "3", "0.1", "1e-05", "1.0", "true", "false", "x y"]


def test_defaults_and_first_seed(root: Path) -> None:
    (plan,) = plan_runs(load_artifact(root), "train")
    assert plan.seed == 5
    assert plan.argv == ["python", "t.py", "5", "0.1", "3", "false", "--m=a", "{x}"]
    assert plan.outputs == [("o", "out/a/5.json", "json")]
    assert plan.parameters == {"lr": 0.1, "steps": 3, "flag": False, "mode": "a"}


def test_overrides_are_typed(root: Path) -> None:
    overrides = parse_overrides(["lr=3e-4", "steps=10", "flag=TRUE", "mode=b"])
    plans = plan_runs(load_artifact(root), "train", all_seeds=True, overrides=overrides)
    assert [p.seed for p in plans] == [5, 6, 7]
    assert plans[0].argv[3:7] == ["0.0003", "10", "true", "--m=b"]
    assert plans[0].parameters == {"lr": 0.0003, "steps": 10, "flag": True, "mode": "b"}


@pytest.mark.parametrize(("item", "message"), [
    ("steps=1.5", "parameter 'steps' is an int; got '1.5'"),
    ("lr=fast", "parameter 'lr' is a float; got 'fast'"),
    ("lr=nan", "parameter 'lr' must be finite; got 'nan'"),
    ("flag=yes", "parameter 'flag' is a bool; got 'yes' (use true or false)"),
    ("mode=c", "parameter 'mode' must be one of a, b; got 'c'"),
    ("depth=3", "launcher 'train' has no parameter 'depth' (it has 'lr', 'steps', 'flag', 'mode')"),
])
def test_bad_overrides(root: Path, item: str, message: str) -> None:
    with pytest.raises(PlanError) as info:
        plan_runs(load_artifact(root), "train", overrides=parse_overrides([item]))
    assert str(info.value) == message


def test_override_syntax() -> None:
    with pytest.raises(PlanError, match=r"^--param needs NAME=VALUE; got 'lr'$"):
        parse_overrides(["lr"])
    assert parse_overrides(["a=b=c"]) == {"a": "b=c"}


def test_seeds(root: Path) -> None:
    artifact = load_artifact(root)
    assert [p.seed for p in plan_runs(artifact, "train", seed=42)] == [42]
    assert [p.seed for p in plan_runs(artifact, "eval")] == [None]
    with pytest.raises(PlanError, match=r"^launcher 'eval' is not stochastic; it takes no seed$"):
        plan_runs(artifact, "eval", seed=1)


def test_all_in_dependency_order(root: Path) -> None:
    plans = plan_runs(load_artifact(root), None)
    assert [(p.launcher.id, p.seed) for p in plans] == [
        ("train", 5), ("train", 6), ("train", 7), ("eval", None), ("prep", None), ("report", None)]


def test_order_of_a_subset_pulls_dependencies(root: Path) -> None:
    assert [x.id for x in launcher_order(load_artifact(root), ["report"])] == ["train", "eval", "prep", "report"]


def test_cycle_is_refused(tmp_path: Path) -> None:
    root = _write(tmp_path, [
        {"id": "a", "argv": ["x"], "stochastic": False, "depends_on": ["b"]},
        {"id": "b", "argv": ["x"], "stochastic": False, "depends_on": ["c"]},
        {"id": "c", "argv": ["x"], "stochastic": False, "depends_on": ["a"]},
    ])
    with pytest.raises(PlanError, match=r"^launchers depend on each other in a cycle: a -> b -> c -> a$"):
        plan_runs(load_artifact(root), None)


def test_unknown_placeholder(tmp_path: Path) -> None:
    root = _write(tmp_path, [{"id": "a", "argv": ["x", "{lr}"], "stochastic": False}])
    with pytest.raises(PlanError, match=r"^launcher 'a': unknown placeholder \{lr\} in '\{lr\}' \(known: none\)$"):
        plan_runs(load_artifact(root), "a")


def test_substitute_keeps_escaped_braces() -> None:
    assert substitute("{{a}}-{a}", {"a": "1"}, "here") == "{a}-1"


def test_unusable_artifact(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"^directory .* has no rra.yaml or rra.yml or rra.json$"):
        load_artifact(tmp_path)
    (tmp_path / "rra.yaml").write_text("rra_version: '1.0'\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match="not a valid manifest"):
        load_artifact(tmp_path)


def test_digest_is_of_canonical_json(tmp_path: Path, root: Path) -> None:
    import hashlib

    from rra_tools.io.canonical import canonical_json

    artifact = load_artifact(root)
    assert artifact.digest == hashlib.sha256(canonical_json(json.loads((root / "rra.yaml").read_text()))).hexdigest()
    # the same manifest written as YAML has the same digest
    other = tmp_path / "yaml"
    other.mkdir()
    (other / "rra.yaml").write_text(
        "\n".join(f"{k}: {json.dumps(v)}" for k, v in json.loads((root / "rra.yaml").read_text()).items()) + "\n",
        encoding="utf-8")
    assert load_artifact(other).digest == artifact.digest
