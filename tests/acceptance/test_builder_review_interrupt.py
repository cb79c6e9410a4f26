"""Ctrl-C during ``rra review``, through the real CLI: one ``error:`` line, exit status 130, and
nothing half-made left behind (the review's directory is removed, the artifact's latest review
is untouched, no half-built environment, no child process left).

Ctrl-C is sent as a terminal sends it: SIGINT to the whole foreground process group (here the
group of the ``rra`` process, started in a session of its own), at three points, each made slow
enough to hit every time:

- copying the artifact: 20,000 small files to copy, interrupted as soon as the review says it
  copies;
- building the environment: the lock holds one package, and the package index is a local server
  that answers no request; interrupted when uv asks it for the package;
- running the launchers: a launcher that says it is ready and then sleeps.
"""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..rra_cli import rra, rra_command

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "review" / "score"
SIX = ("six==1.16.0 \\\n"
       "    --hash=sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254\n")


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and directory (None) under ``root``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def _relock(root: Path, text: str) -> None:
    """Replace the fixture's lock by ``text`` and pin its digest in the manifest."""
    import hashlib

    old = hashlib.sha256((root / "requirements.lock").read_bytes()).hexdigest()
    (root / "requirements.lock").write_text(text, encoding="utf-8")
    manifest = root / "rra.yaml"
    new = hashlib.sha256(text.encode("utf-8")).hexdigest()
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def _interrupt(args: list[str], when: str, *, stream: str = "stderr",
               env: dict[str, str] | None = None, event: threading.Event | None = None) -> tuple[int, str]:
    """Start ``rra ARGS``; send SIGINT to its process group once a line containing ``when`` is
    on ``stream`` (or once ``event`` is set); its exit status and everything it wrote on
    standard error. Checks that no process of the group outlives it."""
    proc = subprocess.Popen([*rra_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, **(env or {})})
    seen: list[str] = []
    try:
        watched = proc.stderr if stream == "stderr" else proc.stdout
        assert watched is not None
        if event is not None:
            for _ in range(3000):  # up to 300 s, but not a moment longer than the process lives
                if event.wait(0.1) or proc.poll() is not None:
                    break
            assert event.is_set(), f"rra {' '.join(args)} never reached the point to interrupt: {proc.stderr.read()}"
        else:
            for line in watched:
                if stream == "stderr":
                    seen.append(line)
                if when in line:
                    break
            else:
                pytest.fail(f"rra {' '.join(args)} ended before {when!r}: {''.join(seen)}")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # every process of the group (uv, a launcher) has ended
    return proc.returncode, "".join(seen) + err


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    """The fixture with the author's runs, its guide and one finished review."""
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    for args in (("run", str(root), "--all", "--env", "locked", "-q"), ("guide", str(root)), ("review", str(root))):
        proc = rra(*args)
        assert proc.returncode == 0, proc.stderr
    return root


def test_ctrl_c_while_copying_the_artifact(reviewed: Path) -> None:
    before = _tree(reviewed / ".rra")
    for d in range(100):  # a copy that takes seconds, not milliseconds
        (reviewed / "data" / str(d)).mkdir(parents=True)
        for f in range(200):
            (reviewed / "data" / str(d) / f"{f}.txt").write_bytes(b"x" * 64)
    code, err = _interrupt(["review", str(reviewed)], "[review] copying the artifact")
    assert code == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: the review was interrupted while copying the artifact: no report was written; "
                           f"its directory '{reviewed / '.rra' / 'review'}/"), err
    assert last.endswith("' was removed")
    assert "Traceback" not in err and "Aborted" not in err and "environment:" not in err
    assert _tree(reviewed / ".rra") == before  # the finished review and the latest report, untouched


class _SilentIndex(http.server.BaseHTTPRequestHandler):
    """A package index that never answers: uv waits on it until it is stopped."""

    asked = threading.Event()
    release = threading.Event()

    def do_GET(self) -> None:
        type(self).asked.set()
        type(self).release.wait(120)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        pass


@pytest.fixture
def silent_index() -> Iterator[str]:
    _SilentIndex.asked.clear()
    _SilentIndex.release.clear()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SilentIndex)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        _SilentIndex.release.set()
        server.shutdown()
        server.server_close()


def test_ctrl_c_while_building_the_environment(tmp_path: Path, silent_index: str) -> None:
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    _relock(root, SIX)
    cache = tmp_path / "cache"
    out = tmp_path / "reviews" / "one"
    env = {"RRA_CACHE_DIR": str(cache), "UV_INDEX_URL": silent_index, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    code, err = _interrupt(["review", str(root), "-o", str(out)], "", env=env, event=_SilentIndex.asked)
    assert code == 130, err
    assert err.strip().splitlines()[-1] == (
        "error: the review was interrupted while building the environment: no report was written; its directory "
        f"'{out}' was removed")
    assert "Traceback" not in err and "Aborted" not in err
    assert not (tmp_path / "reviews").exists()  # its directory and the parent it created
    assert not (root / ".rra").exists()
    # No half-built environment: only the builders' lock file is left in the cache.
    assert [p.name for p in (cache / "envs").iterdir() if p.is_dir()] == []


def test_ctrl_c_while_a_launcher_runs(tmp_path: Path) -> None:
    root = tmp_path / "score"
    shutil.copytree(FIXTURE, root)
    manifest = root / "rra.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace(
        'argv: ["python", "score.py", "--seed", "{seed}", "--out", "results/seed-{seed}/metrics.json"]',
        'argv: ["python", "-c", "import time; print(\'ready\', flush=True); time.sleep(120)", "{seed}"]'),
        encoding="utf-8")
    code, err = _interrupt(["review", str(root), "-v"], "ready", stream="stdout")
    assert code == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: the review was interrupted while running the launchers: no report was written; "
                           f"its directory '{root / '.rra' / 'review'}/"), err
    assert "Traceback" not in err
    assert not (root / ".rra").exists()
