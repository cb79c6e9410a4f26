"""Property tests: ``validate_bytes`` never raises, whatever it is given.

(a) random JSON-like documents, serialised as JSON and as YAML;
(b) random text and bytes;
(c) mutations of a valid manifest (a key deleted, a value replaced, a list item duplicated),
    validated with and without an artifact directory so the file and level rules run too.

Every result must be a ValidationResult whose diagnostics carry a catalog code (RRA + 3 digits),
a Severity, and a line inside the text when a line is given; every reporter must render it.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from rra_tools.validate.api import validate_bytes
from rra_tools.validate.catalog import RULES
from rra_tools.validate.diagnostics import Severity
from rra_tools.validate.reporters import render
from rra_tools.validate.result import ValidationReport, ValidationResult

# This machine is slow and shared: no per-example deadline; the example counts bound the runtime.
COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CODE = re.compile(r"^RRA\d{3}$")
# Every character sequence some YAML reader treats as a line break (libyaml follows YAML 1.1,
# which adds NEL, LS and PS): the line bound below must not depend on that choice.
BREAKS = re.compile("\r\n|\r|\n|\x85|\u2028|\u2029")

# ---------------------------------------------------------------------------------------------
# Strategies

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=25,
)
# Documents shaped a little like manifests, so that deeper layers than "expected a mapping" run.
manifest_keys = st.sampled_from(["rra_version", "id", "title", "paper", "code", "environment", "data",
                                 "launchers", "claims", "changes", "discrepancies", "levels", "x-ext"])
documents = json_values | st.dictionaries(manifest_keys, json_values, max_size=8)

YAML_ALPHABET = list("abcxyz019 \n\t-:,.?!&*|>'\"%@`#{}[]~\\/_=+<") + ["\r", "\ufeff", "é", "\u2028", "\x00"]
yamlish_text = st.text(alphabet=st.sampled_from(YAML_ALPHABET), max_size=200)


def to_yaml(value: Any, flow: bool) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    yaml.allow_unicode = True
    stream = io.StringIO()
    yaml.dump(value, stream)
    return stream.getvalue()


def to_json(value: Any) -> str:
    return json.dumps(value)  # NaN and Infinity are written as the non-standard tokens


# ---------------------------------------------------------------------------------------------
# The invariants


def check_result(result: Any, raw: bytes) -> None:
    assert isinstance(result, ValidationResult)
    text = raw.decode("utf-8-sig", errors="replace")
    n_lines = len(BREAKS.split(text))
    for d in result.diagnostics:
        assert CODE.match(d.code), d
        assert d.code in RULES, d
        assert isinstance(d.severity, Severity), d
        assert isinstance(d.message, str) and d.message, d
        if d.line is not None:
            assert 1 <= d.line <= n_lines, (d, n_lines)
        if d.column is not None:
            assert d.line is not None and d.column >= 1, d
    report = ValidationReport([result])
    for fmt in ("text", "json", "sarif", "github"):
        out = render(report, fmt)
        assert isinstance(out, str)
    json.loads(render(report, "json"))


def validate(raw: bytes, root: Path | None = None) -> ValidationResult:
    result = validate_bytes(raw, name="fuzz.yaml", root=root)
    check_result(result, raw)
    return result


# ---------------------------------------------------------------------------------------------
# (a) random documents


@settings(COMMON, max_examples=200)
@given(doc=documents, flow=st.booleans())
def test_random_documents_as_yaml_and_json(doc: Any, flow: bool) -> None:
    validate(to_json(doc).encode("utf-8"))
    validate(to_yaml(doc, flow).encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# (b) random text and bytes


@settings(COMMON, max_examples=300)
@example(data=b"[")               # an error at the end of input without a final newline
@example(data=b"a: b\x01c\n")     # a control character (refused by the YAML reader)
@example(data=b'a: "\x00"')       # a NUL byte
@example(data=b"\xef\xbb\xbf")     # only a BOM
@given(data=st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(lambda s: s.encode("utf-8")),
    yamlish_text.map(lambda s: s.encode("utf-8")),
))
def test_random_bytes(data: bytes) -> None:
    validate(data)


# ---------------------------------------------------------------------------------------------
# (c) mutations of a valid manifest

LOCK = b"numpy==2.1.3 --hash=sha256:016d0f6f5e77b0f0d45d77387ffa4bb89816b57c835580c3ce8e099ef830befe\n"
PATCH = b"--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-import numpy\n+import numpy as np\n"
OBSERVED = [96.2, 96.5, 96.8, 96.4, 96.6]


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An artifact directory holding the files the base manifest references."""
    root = tmp_path_factory.mktemp("artifact")
    (root / "requirements.lock").write_bytes(LOCK)
    (root / "patches").mkdir()
    (root / "patches" / "0001-import.patch").write_bytes(PATCH)
    (root / "CITATION.cff").write_text("cff-version: 1.2.0\ntitle: Demo\n")
    (root / "GUIDE.md").write_text("# Guide\n")
    (root / "data").mkdir()
    (root / "data" / "train.csv").write_text("x,y\n1,2\n")
    (root / "runs").mkdir()
    for seed, value in enumerate(OBSERVED):
        (root / "runs" / f"train-{seed}.json").write_text(json.dumps({
            "launcher": "train", "seed": seed, "exit_status": 0, "status": "completed",
            "metrics": {"test-accuracy": value, "log-loss": 0.25 + seed / 1000, "f1": 0.9}}))
        (root / "runs" / f"prep-{seed}.json").write_text(json.dumps({
            "launcher": "prep", "seed": None, "exit_status": 0, "status": "completed", "metrics": {}}))
    (root / "runs" / "broken.json").write_text("{not json")
    return root


def base_manifest() -> dict[str, Any]:
    """A valid manifest using most of the standard's sections."""
    def sha(content: bytes) -> str:
        return hashlib.sha256(content).hexdigest()

    fingerprint = {"hardware": "x86_64, 2 cores", "software": "cpython 3.11.7"}
    return {
        "rra_version": "1.0",
        "id": "fuzz-base",
        "title": "Fuzzing base manifest",
        "paper": {"title": "A Paper", "authors": [{"name": "A. Author", "orcid": "0000-0002-1825-0097"}],
                  "year": 2024, "doi": "10.1145/3368089.3409730", "citation_file": "CITATION.cff"},
        "code": {"license": "MIT",
                 "upstream": {"url": "https://github.com/example/demo.git",
                              "commit": "3f786850e387550fdab836ed7e6dc881de23001b"},
                 "patches": [{"path": "patches/0001-import.patch", "sha256": sha(PATCH), "change": "fix-import"}]},
        "environment": {
            "interpreter": {"name": "cpython", "version": "3.11.7"},
            "lock": {"path": "requirements.lock", "format": "requirements-hashes", "sha256": sha(LOCK)},
            "image": "ghcr.io/example/demo@sha256:" + "a" * 64,
            "hardware": {"accelerators": [{"vendor": "nvidia", "model": "A100-SXM4-80GB", "count": 1,
                                           "memory_gib": 80}], "cpu_cores": 2},
            "cuda": {"min_version": "12.1"},
        },
        "data": [{"id": "table", "license": "CC0-1.0", "access": "public", "shipped": True,
                  "files": [{"path": "data/train.csv", "sha256": sha(b"x,y\n1,2\n"), "size": 8}]},
                 {"id": "remote", "url": "https://example.org/d.tgz", "license": "CC-BY-4.0", "access": "public",
                  "files": [{"path": "data/d.tgz", "sha256": "b" * 64}]}],
        "launchers": [
            {"id": "prep", "argv": ["python", "prep.py"], "stochastic": False, "data": ["table", "remote"],
             "resources": {"timeout_s": 60, "expected_runtime_s": 5},
             "outputs": [{"id": "features", "path": "out/features.npz", "format": "binary"}]},
            {"id": "train", "argv": ["python", "train.py", "--seed", "{seed}", "--lr", "{lr}"],
             "parameters": {"lr": {"type": "float", "default": 0.1, "choices": [0.1, 0.01]}},
             "seeds": [0, 1, 2, 3, 4], "depends_on": ["prep"],
             "resources": {"gpus": 1, "gpu_memory_gib": 16, "timeout_s": 600, "expected_runtime_s": 60},
             "outputs": [{"id": "metrics", "path": "out/{seed}/metrics.json", "format": "json"},
                         {"id": "log", "path": "out/{seed}/train.log", "format": "log"},
                         {"id": "scores", "path": "out/{seed}/scores.csv", "format": "csv"}]},
        ],
        "claims": [
            {"id": "test-accuracy", "paper_location": {"table": "2", "row": "ours"}, "launcher": "train",
             "metric": {"name": "accuracy", "unit": "%", "direction": "higher"},
             "extract": {"output": "metrics", "json_pointer": "/test/accuracy", "scale": 100},
             "reported": {"value": 96.5, "precision": 1},
             "reference": {"observations": [{"value": v, "seed": s, "fingerprint": fingerprint}
                                            for s, v in enumerate(OBSERVED)]}},
            {"id": "log-loss", "paper_location": {"figure": "3"}, "launcher": "train",
             "metric": {"name": "loss", "unit": "", "direction": "lower"},
             "extract": {"output": "log", "regex": {"pattern": r"loss=(?P<v>[0-9.]+)", "group": 1}},
             "aggregate": "median", "reported": {"value": 0.25, "precision": 2},
             "reference": {"observations": [{"value": 0.25 + s / 1000, "seed": s, "fingerprint": fingerprint}
                                            for s in range(5)]}},
            {"id": "f1", "paper_location": {"section": "5.1"}, "launcher": "train",
             "metric": {"name": "f1", "unit": "", "direction": "higher"},
             "extract": {"output": "scores", "csv": {"column": "f1", "where": {"split": "test"}}},
             "reported": {"value": 0.9, "precision": 1},
             "reference": {"stability": "stable",
                           "observations": [{"value": 0.9, "seed": s, "fingerprint": fingerprint} for s in range(5)]}},
        ],
        "changes": [{"id": "fix-import", "kind": "bug-fix", "summary": "Import numpy as np.",
                     "files": ["train.py"], "patch": "patches/0001-import.patch", "rationale": "NameError.",
                     "evidence": "The run completes.", "alters_method": "no",
                     "affects": {"launchers": ["train"], "claims": ["test-accuracy"]}}],
        "discrepancies": [{"id": "lr", "paper_says": "lr 0.01", "code_does": "lr 0.1", "follows": "code",
                           "rationale": "The code produced the paper's numbers.", "impact": "None expected.",
                           "claims": ["test-accuracy"]}],
        "guide": {"path": "GUIDE.md"},
        "review": {"reviewers": [{"name": "rra", "kind": "tool"}], "date": "2024-05-01", "clean_shell": "pass",
                   "findings": [{"severity": "info", "summary": "Fine."}]},
        "evidence": {"run_records": "runs"},
        "levels": ["available", "functional", "reproduced"],
        "x-note": {"free": ["form"]},
    }


def test_base_manifest_is_valid(artifact: Path) -> None:
    raw = to_yaml(base_manifest(), False).encode()
    bytes_only = validate(raw)
    # Without a directory no level can be shown to be met; nothing else is an error.
    assert {d.code for d in bytes_only.diagnostics if d.severity == Severity.ERROR} == {"RRA601"}, \
        bytes_only.diagnostics
    with_files = validate(raw, artifact)
    # The broken run record is reported; no error; every claimed level is met.
    assert not [d for d in with_files.diagnostics if d.severity == Severity.ERROR], with_files.diagnostics
    assert "RRA602" in {d.code for d in with_files.diagnostics}
    assert with_files.levels_met == ["available", "functional", "reproduced"]


def node_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from node_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from node_paths(value, (*prefix, index))


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@st.composite
def mutated_manifests(draw: st.DrawFn) -> Any:
    doc: Any = base_manifest()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(node_paths(doc))
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["delete", "replace", "duplicate"]))
        if not path:
            if op == "replace":
                doc = draw(json_values)
            continue
        parent, last = get(doc, path[:-1]), path[-1]
        if op == "delete":
            del parent[last]
        elif op == "replace":
            parent[last] = draw(json_values | scalars)
        elif isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        else:
            target = parent[last]
            if isinstance(target, list) and target:
                target.append(copy.deepcopy(target[draw(st.integers(0, len(target) - 1))]))
            else:
                parent[last] = draw(json_values)
    return doc


def mutate(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """The base manifest with the value at ``path`` replaced (a fixed example of a mutation)."""
    doc = base_manifest()
    get(doc, path[:-1])[path[-1]] = value
    return doc


@settings(COMMON, max_examples=200)
# Values of the wrong type where the semantic rules expect an id or a list of ids; the schema
# layer reports them (RRA112) and the semantic rules must skip them, not raise.
@example(doc=mutate(("discrepancies", 0, "claims"), 1), as_json=True, with_root=False)
@example(doc=mutate(("claims", 0, "launcher"), []), as_json=True, with_root=False)
@example(doc=mutate(("claims", 0, "id"), {}), as_json=True, with_root=True)
@example(doc=mutate(("code", "patches", 0, "path"), {}), as_json=False, with_root=False)
# Schema-valid but huge observations: the sample variance overflows a float.
@example(doc=mutate(("claims", 0, "reference", "observations", 0, "value"), 1e200), as_json=True,
         with_root=True)
@given(doc=mutated_manifests(), as_json=st.booleans(), with_root=st.booleans())
def test_mutated_manifests(artifact: Path, doc: Any, as_json: bool, with_root: bool) -> None:
    text = to_json(doc) if as_json else to_yaml(doc, False)
    validate(text.encode("utf-8"), artifact if with_root else None)


def test_non_finite_values_survive_both_serialisations() -> None:
    # A concrete example of (a)/(c): inf and nan in observations, written both ways.
    doc = base_manifest()
    doc["claims"][0]["reference"]["observations"][0]["value"] = math.inf
    doc["claims"][0]["reported"]["value"] = math.nan
    # YAML has .inf and .nan: numbers that are not finite.
    assert "RRA504" in {d.code for d in validate(to_yaml(doc, False).encode()).diagnostics}
    # JSON has no such numbers: the tokens NaN and Infinity are read as strings, not numbers.
    json_codes = {d.code for d in validate(to_json(doc).encode()).diagnostics}
    assert "RRA112" in json_codes and "RRA504" not in json_codes
