"""``rra init RAW_REPO`` on fixture repositories shaped like real research code: each item found is
printed with its file:line, the draft validates with only the placeholders left for the author
(listed exactly here), and nothing is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from rra_tools.io.source import parse_document
from tests.builder_repos import git, make_repo
from tests.rra_cli import rra


def _validate(target: Path) -> list[tuple[str, str]]:
    done = rra("validate", "-f", "json", str(target))
    [result] = json.loads(done.stdout)["results"]
    return sorted((d["code"], d["pointer"]) for d in result["diagnostics"])


def _init(*args: str) -> str:
    done = rra("init", *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_plain_scripts_upstream_license_and_paper(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    commit = git(repo, "rev-parse", "HEAD").strip()
    out = _init(str(repo))
    for line in (
        "  paper.title      Sparse Kernel Regression at Scale  [CITATION.cff:9]",
        "  paper.authors    Ada Okafor, Bo Lindqvist  [CITATION.cff:11]",
        "  paper.year       2024  [CITATION.cff:17]",
        "  paper.doi        10.5555/tmlr.2024.0042  [CITATION.cff:18]",
        "  paper.arxiv      2403.01234  [README.md:3]",
        "  license          BSD-3-Clause  [LICENSE:5]",
        "  upstream.url     https://example.org/lab/plain-scripts.git  [git]  (remote origin)",
        f"  upstream.commit  {commit}  [git]  (HEAD)",
    ):
        assert line + "\n" in out, out
    data = parse_document((repo / "rra.yaml").read_text()).data
    assert data["code"]["upstream"] == {"url": "https://example.org/lab/plain-scripts.git", "commit": commit}
    assert data["code"]["license"] == "BSD-3-Clause"
    assert data["paper"]["authors"][0] == {"name": "Ada Okafor", "orcid": "0000-0002-1825-0097"}
    assert (data["paper"]["arxiv"], data["paper"]["citation_file"]) == ("2403.01234", "CITATION.cff")
    # A second fixture copy has the same commit: the fixture's git history is deterministic.
    again = make_repo("plain-scripts", tmp_path / "again")
    assert git(again, "rev-parse", "HEAD").strip() == commit


def test_upstream_option_and_output_directory(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=None)
    pin = "https://example.org/fork/skr.git@" + "ab" * 20
    out = _init(str(repo), "-o", str(tmp_path / "artifact"), "--upstream", pin)
    assert f"  upstream         https://example.org/fork/skr.git @ {'ab' * 20}  [--upstream]\n" in out
    data = parse_document((tmp_path / "artifact" / "rra.yaml").read_text()).data
    assert data["code"] == {"license": "BSD-3-Clause",
                            "upstream": {"url": "https://example.org/fork/skr.git", "commit": "ab" * 20}}
    assert not (repo / "rra.yaml").exists()


def test_no_remote_is_a_placeholder(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=None)
    out = _init(str(repo))
    assert "  /code/upstream/url\n" in out
    assert ("RRA214", "/code/upstream/url") in _validate(repo)


def test_bad_upstream_option_and_never_overwrite(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    done = rra("init", str(repo), "--upstream", "https://example.org/x.git@main")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: --upstream 'https://example.org/x.git@main' is not URL@COMMIT with a full 40-hex "
                           "commit\nhint: e.g. --upstream https://github.com/org/repo@<40-hex commit>; "
                           "'git rev-parse HEAD' prints the commit\n")
    (repo / "rra.yaml").write_text("keep me\n")
    done = rra("init", str(repo))
    assert (done.returncode, done.stderr) == (2, f"error: {repo / 'rra.yaml'} already exists; nothing was written\n")
    assert (repo / "rra.yaml").read_text() == "keep me\n"
    assert not [p for p in repo.iterdir() if p.name.startswith(".rra.yaml.")]


def test_a_directory_without_git_gets_the_template(tmp_path: Path) -> None:
    out = _init(str(tmp_path / "new"))
    assert out.startswith(f"wrote {tmp_path / 'new' / 'rra.yaml'}; fill in the TODOs")
    assert "found:" not in out
