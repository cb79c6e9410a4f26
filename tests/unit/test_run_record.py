"""The run-record model, its committed schema, redaction, and atomic never-overwriting writes."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import pytest

from rra_tools.model.run_record import RECORD_VERSION, RunRecord
from rra_tools.model.schema import generated_schemas
from rra_tools.io.atomic import write_atomic
from rra_tools.run.records import fresh_private_dir, new_run_dir, record_bytes, redact

REPO = Path(__file__).resolve().parents[2]
SCHEMA_NAME = f"rra-run-record-{RECORD_VERSION}.schema.json"

RECORD = {
    "record_version": "1.0", "artifact_id": "a", "artifact_digest": "0" * 64, "launcher": "train",
    "argv": ["python", "t.py"], "cwd": ".", "seed": None, "started": "2026-01-01T00:00:00.000000Z",
    "ended": "2026-01-01T00:00:01.500000Z", "duration_s": 1.5, "status": "timeout", "exit_status": None,
    "executor": "local", "timeout_s": 1.0,
    "host": {"os": "Linux 6.8", "machine": "x86_64", "cpus": 2, "python": "cpython 3.11.7",
             "packages_digest": "1" * 64, "packages": 3},
    "metrics": {"c": 1.0},
}


def test_schema_is_committed_and_current() -> None:
    committed = (REPO / "schemas" / SCHEMA_NAME).read_text(encoding="utf-8")
    assert committed == generated_schemas()[SCHEMA_NAME], "run 'python -m rra_tools._generate' to regenerate"


def test_written_record_matches_schema_with_nulls() -> None:
    RunRecord.model_validate(RECORD)
    data = json.loads(record_bytes(dict(RECORD)))
    assert data == RECORD  # written as given: nulls kept, nothing added
    assert data["seed"] is None and data["exit_status"] is None
    assert "signal" not in data
    schema = json.loads(generated_schemas()[SCHEMA_NAME])
    jsonschema.Draft202012Validator(schema).validate(data)


def test_spec_minimal_fields_are_kept() -> None:
    schema = json.loads(generated_schemas()[SCHEMA_NAME])
    assert {"launcher", "seed", "exit_status", "status", "metrics"} <= set(schema["properties"])
    assert schema["properties"]["status"]["$ref"].endswith("RunStatus")
    assert schema["$defs"]["RunStatus"]["enum"] == ["completed", "failed", "timeout", "interrupted"]


def test_unknown_fields_are_refused_but_extensions_allowed() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        RunRecord.model_validate({**RECORD, "colour": 1})
    RunRecord.model_validate({**RECORD, "x-note": 1})


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "api_key", "DB_PASSWORD", "my_passwd", "AWS_SECRET",
                                  "GOOGLE_APPLICATION_CREDENTIALS", "Hf_Token"])
def test_secret_names_are_redacted(name: str) -> None:
    assert redact({name: "v", "PATH": "/bin"}) == {name: "[redacted]", "PATH": "/bin"}


def test_run_dirs_are_never_reused(tmp_path: Path) -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
    first = new_run_dir(tmp_path, "train", 3, moment)
    second = new_run_dir(tmp_path, "train", 3, moment)
    assert first.name == "3-20260102T030405.000006Z"
    assert second.name == "3-20260102T030405.000006Z-1"
    assert new_run_dir(tmp_path, "eval", None, moment).name == "noseed-20260102T030405.000006Z"


def test_write_atomic_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    write_atomic(path, b"{}\n", replace=False)
    with pytest.raises(FileExistsError):
        write_atomic(path, b"{\"x\": 1}\n", replace=False)
    assert path.read_bytes() == b"{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_written_records_are_readable_as_the_umask_allows(tmp_path: Path) -> None:
    # Records are evidence others review: not 0600 as a temporary file would leave them.
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "record.json", b"{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "record.json").stat().st_mode & 0o777 == 0o644


def test_docs_example_record_is_valid() -> None:
    import re

    text = (REPO / "docs" / "run.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    data = json.loads(blocks[0])
    jsonschema.Draft202012Validator(json.loads(generated_schemas()[SCHEMA_NAME])).validate(data)
    RunRecord.model_validate(data)


def test_private_dirs_fall_back_from_an_unusable_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setenv("TEMP", str(tmp_path))
    first, second = fresh_private_dir("rra-home-"), fresh_private_dir("rra-home-")
    assert first != second
    for made in (first, second):
        assert os.path.dirname(made) == str(tmp_path)
        assert os.stat(made).st_mode & 0o777 == 0o700
