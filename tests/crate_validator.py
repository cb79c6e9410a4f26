"""roc-validator (``rocrate-validator``), the RO-Crate community's validator, run offline from tests.

roc-validator cannot share the test environment: every release pins ``rich<14`` while
import-linter 2.17 (the ``acyclic_siblings`` contract of ``.ci/run``) needs ``rich>=14.2``, so
installing it would downgrade rich under import-linter. It gets its own virtual environment,
made once with uv from the package index and kept in the user's cache (``RRA_ROC_VALIDATOR_ENV``
names another place).

Offline: the validator ships its profiles (RO-Crate 1.1, Process Run Crate 0.5, ...) but fetches
the JSON-LD context a crate names (``https://w3id.org/ro/crate/1.1/context``) over HTTP, through
its requests-cache; ``--offline`` serves it only from that cache. The context document comes
from the package index too: rocrate 0.11.0 ships the RO-Crate 1.1 context as package data. It
is stored in a private cache for the context's URL (:data:`SEED`), and the validator runs with
``--offline --cache-path`` on it, so no test reaches anything but the package index, and that
only to build the environment once.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["VALIDATOR", "issues", "validate_crate", "validator_python"]

#: The validator's version and the package whose data holds the RO-Crate 1.1 context.
VALIDATOR = "roc-validator==0.13.0"
CONTEXT_SOURCE = "rocrate==0.11.0"
CONTEXT_URL = "https://w3id.org/ro/crate/1.1/context"

#: Run by the validator's interpreter: store the context document in a requests-cache database
#: as the 200 response to CONTEXT_URL (argv: cache path).
SEED = r'''
import io, sys
from importlib.resources import files
import requests
from requests_cache import CachedSession
from urllib3 import HTTPResponse

url = sys.argv[2]
body = files("rocrate").joinpath("data/ro-crate.jsonld").read_bytes()
assert b'"@id": "' + url.encode() + b'"' in body, "rocrate's context is not the RO-Crate 1.1 context"
response = requests.Response()
response.status_code, response.reason, response.url, response.encoding = 200, "OK", url, "utf-8"
response._content = body
response.headers["Content-Type"] = "application/ld+json"
response.request = requests.Request("GET", url, headers={"Accept": "application/ld+json, application/json"}).prepare()
response.raw = HTTPResponse(body=io.BytesIO(body), headers={"Content-Type": "application/ld+json"}, status=200,
                            preload_content=False, request_url=url)
CachedSession(cache_name=sys.argv[1], backend="sqlite").cache.save_response(response)
'''


def _env_dir() -> Path:
    named = os.environ.get("RRA_ROC_VALIDATOR_ENV")
    if named:
        return Path(named)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "rra-tools-tests" / f"{VALIDATOR.replace('==', '-')}-py{sys.version_info[0]}.{sys.version_info[1]}"


def validator_python() -> Path:
    """The interpreter of the validator's environment, made on first use (under a file lock, so
    parallel test workers make it once)."""
    from rra_tools.env.resolve import find_uv

    where = _env_dir()
    python = where / "bin" / "python"
    done = where / ".complete"
    where.parent.mkdir(parents=True, exist_ok=True)
    with open(where.parent / f".{where.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            uv = find_uv()
            subprocess.run([uv, "venv", "--quiet", "--clear", "--python", sys.executable, str(where)], check=True)
            subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), VALIDATOR, CONTEXT_SOURCE],
                           check=True)
            done.write_text("ok\n")
    return python


def validate_crate(crate: Path, work: Path, *, profile: str = "process-run-crate-0.5",
                   severity: str = "required") -> dict[str, Any]:
    """roc-validator's report on ``crate`` (a directory or a ZIP file) against ``profile`` (and
    the profiles it builds on), offline, at ``severity`` and above.

    A directory gets the JSON report. For a ZIP file roc-validator 0.13.0 cannot write one (its
    JSON writer fails on the archive's URI: "Object of type URI is not JSON serializable"), so
    the report is its exit status (0: valid) and its text, as {"passed": ..., "text": ...}.
    """
    python = validator_python()
    cache = work / "roc-validator-cache"
    if not Path(f"{cache}.sqlite").is_file():
        subprocess.run([str(python), "-c", SEED, str(cache), CONTEXT_URL], check=True)
    fmt = "text" if crate.suffix == ".zip" else "json"
    report = work / f"roc-validator-{profile}-{severity}.{fmt}"
    done = subprocess.run(
        [str(python.with_name("rocrate-validator")), "--no-interactive", "--disable-color", "validate",
         "--offline", "--cache-path", str(cache), "--profile-identifier", profile,
         "--requirement-severity", severity, "--no-paging", "--output-format", fmt,
         "--output-file", str(report), str(crate)],
        capture_output=True, text=True, timeout=600, check=False, env={**os.environ, "COLUMNS": "200"})
    assert report.is_file() and report.stat().st_size, \
        f"roc-validator wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    text = report.read_text(encoding="utf-8")
    if fmt == "text":
        return {"passed": done.returncode == 0, "text": text}
    data: dict[str, Any] = json.loads(text)
    assert data["passed"] == (done.returncode == 0), (data["passed"], done.returncode)
    return data


def issues(report: dict[str, Any]) -> list[str]:
    """One line per issue of a report: severity, check identifier, message, entity."""
    return [f"{i.get('severity')} {i.get('check', {}).get('identifier')}: {i.get('message')} "
            f"({i.get('violatingEntity') or i.get('focusNode')})" for i in report.get("issues", [])]
