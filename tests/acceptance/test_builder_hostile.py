"""Hostile repositories against ``rra init`` and ``rra build``, through the real command (issue 24).

Each test hands the builder a repository made to attack it: a ``.git/config`` naming programs
for git to run, credentials in the origin URL, a paper PDF that decompresses to gigabytes, file
names that are not UTF-8, a TOML file nested 100,000 deep, YAML bombs. The builder must run
nothing the repository names, write and print no secret, stay within bounded memory and time,
and report what it skipped with a located line: never a traceback.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.builder_repos import git, make_repo
from tests.rra_cli import rra

TOKEN = "ghp_S3cretT0kenNeverPrinted0123456789"


def _arm(repo: Path, marker: Path) -> None:
    """Make ``repo``'s own configuration run ``touch marker`` from every hook git offers."""
    touch = f"touch {marker}"
    (repo / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "attributes")
    for key, value in (("core.fsmonitor", f"{touch}; false"), ("filter.evil.clean", f"{touch}; cat"),
                       ("filter.evil.smudge", f"{touch}; cat"), ("filter.evil.process", touch),
                       ("filter.evil.required", "true"), ("diff.evil.textconv", f"{touch}; cat"),
                       ("diff.evil.command", touch), ("diff.external", touch), ("core.pager", touch),
                       ("core.hooksPath", str(repo / "hooks")), ("credential.helper", f"!{touch}"),
                       ("merge.evil.driver", touch), ("gpg.program", touch), ("commit.gpgSign", "true"),
                       ("core.alternateRefsCommand", touch)):
        git(repo, "config", key, value)
    hooks = repo / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\n{touch}\n")
        (hooks / name).chmod(0o755)
    # Stat-dirty files: git status would hash them again, through the clean filter.
    for path in repo.glob("*.py"):
        path.touch()


def test_git_runs_no_program_the_repository_configuration_names(tmp_path: Path) -> None:
    repo = make_repo("deterministic-metrics", tmp_path)
    marker = tmp_path / "PWNED"
    _arm(repo, marker)
    # The attack works on plain git: the fixture is armed (git may fail after running it).
    subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, check=False,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    assert marker.exists()
    marker.unlink()

    done = rra("init", str(repo), "-o", str(tmp_path / "drafted"))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists(), "rra init ran a program named by the repository's .git/config"

    # The build's steps that call git: the clone, its checkout, the commit and the diffs.
    built = rra("build", str(repo), "-o", str(tmp_path / "artifact"))
    assert "Traceback" not in built.stderr, built.stderr
    assert (tmp_path / "artifact" / "rra.yaml").is_file(), built.stderr
    assert not marker.exists(), "rra build ran a program named by the repository's .git/config"


def test_credentials_in_the_origin_url_are_never_written_or_printed(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=f"https://alice:{TOKEN}@example.org/lab/{{name}}.git")
    done = rra("init", str(repo))
    assert done.returncode == 0, done.stderr
    assert ("  upstream.url     https://example.org/lab/plain-scripts.git  [git]  "
            "(remote origin; credentials removed from the origin URL)\n") in done.stdout
    manifest = (repo / "rra.yaml").read_text()
    assert "url: \"https://example.org/lab/plain-scripts.git\"" in manifest
    for text in (done.stdout, done.stderr, manifest):
        assert TOKEN not in text and "alice" not in text

    # A token alone as the user name (how GitHub tokens are often given) goes as well.
    other = make_repo("deterministic-metrics", tmp_path, remote=f"https://{TOKEN}@example.org/{{name}}.git")
    artifact = tmp_path / "artifact"
    built = rra("build", str(other), "-o", str(artifact))
    assert (artifact / "rra.yaml").is_file(), built.stderr
    assert TOKEN not in built.stdout + built.stderr
    leaked = [p for p in artifact.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaked == []
    assert git(artifact, "remote", "get-url", "origin").strip() == "https://example.org/deterministic-metrics.git"


def test_an_upstream_option_loses_its_credentials_too(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=None)
    done = rra("init", str(repo), "--upstream", f"https://bob:{TOKEN}@example.org/fork/skr.git@{'ab' * 20}")
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr + (repo / "rra.yaml").read_text()
    assert "https://example.org/fork/skr.git @ " + "ab" * 20 in done.stdout
    assert "credentials removed from the URL" in done.stdout
    # Refused (no commit), the error line does not print it either.
    refused = rra("init", str(repo), "-o", str(tmp_path / "other"), "--upstream", f"https://bob:{TOKEN}@example.org/x")
    assert refused.returncode != 0 and "is not URL@COMMIT" in refused.stderr
    assert TOKEN not in refused.stdout + refused.stderr
