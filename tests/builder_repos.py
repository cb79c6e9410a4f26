"""Fixture repositories for the builder's tests: copied out of tests/fixtures/repos and made git
repositories with a fixed author and date, so that their commit ids are the same on every run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["REPOS", "git", "make_repo", "repo_of"]

REPOS = Path(__file__).parent / "fixtures" / "repos"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture Author", "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "Fixture Author", "GIT_COMMITTER_EMAIL": "author@example.org",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
    # The user's and the system's git configuration (hooks, templates, signing) stay out of it.
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with the fixed identity; its standard output."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **_GIT_ENV})
    return done.stdout


def make_repo(name: str, dest: Path, *, remote: str | None = "https://example.org/lab/{name}.git") -> Path:
    """Copy fixture ``name`` to ``dest/name``, commit it, and add ``remote`` as origin."""
    repo = dest / name
    shutil.copytree(REPOS / name, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", f"{name} as published")
    if remote is not None:
        git(repo, "remote", "add", "origin", remote.format(name=name))
    return repo


def repo_of(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository ``tmp_path/raw`` holding ``files`` (path -> text), committed once."""
    repo = tmp_path / "raw"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "as published")
    return repo
