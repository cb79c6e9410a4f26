"""Hostile repositories against ``rra init`` and ``rra build``, through the real command (issue 24).

Each test hands the builder a repository made to attack it: a ``.git/config`` naming programs
for git to run, credentials in the origin URL, a paper PDF that decompresses to gigabytes, file
names that are not UTF-8, a TOML file nested 100,000 deep, YAML bombs. The builder must run
nothing the repository names, write and print no secret, stay within bounded memory and time,
and report what it skipped with a located line: never a traceback.
"""

from __future__ import annotations

import os
import resource
import struct
import subprocess
import time
import zlib
from pathlib import Path

from tests.acceptance.test_builder_build import agent
from tests.builder_repos import git, make_repo
from tests.rra_cli import rra, rra_command

GIB = 1024 * 1024 * 1024

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

    # Every step of the build, the scripted agent answering its decisions: the clone and its
    # checkout, the patches' trees and diffs, the review's checkouts.
    artifact = tmp_path / "artifact"
    built = rra("build", str(repo), "-o", str(artifact), "--agent", agent("deterministic-metrics"))
    assert built.returncode == 0, built.stderr
    assert built.stdout.splitlines()[-1] == f"built {artifact}: next, rra validate {artifact}"
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


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object 1 the catalog) with its cross-reference table."""
    parts, offsets, size = [b"%PDF-1.4\n"], [], 9
    for number, body in enumerate(objects, 1):
        offsets.append(size)
        parts.append(b"%d 0 obj\n%s\nendobj\n" % (number, body))
        size += len(parts[-1])
    parts.append(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    parts.extend(b"%010d 00000 n \n" % offset for offset in offsets)
    parts.append(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, size))
    return b"".join(parts)


def _zeros_deflated(gib: int) -> bytes:
    """A zlib stream of ``gib`` GiB of zeros (about 1 MiB a GiB), made without compressing them
    all: after a full flush deflate starts afresh, so every 16 MiB block compresses the same."""
    chunk = b"\0" * (1 << 24)
    deflate = zlib.compressobj(9)
    first = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush(zlib.Z_FINISH)[:-4]
    count = gib * 64
    # Adler-32 of n zeros: a stays 1, b counts them.
    return first + block * (count - 1) + end + struct.pack(">I", ((count << 24) % 65521) << 16 | 1)


def _pdf_bomb(gib: int) -> bytes:
    stream = _zeros_deflated(gib)
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << >> >>",
                 b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream)])


def _pdf_of_pages(count: int) -> bytes:
    """``count`` pages, each a table caption and a row of numbers (one shared content stream)."""
    content = b"BT /F1 11 Tf 14 TL 72 720 Td (Table 1: accuracy.) ' (GRMC 0.912) ' ET"
    kids = b" ".join(b"%d 0 R" % (number + 5) for number in range(count))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>"
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
                 b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
                 b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", *[page] * count])


def _rra_limited(*args: str, memory: int, timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    """``rra ARGS`` with its address space (and its children's) held to ``memory`` bytes."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    start = time.monotonic()
    done = subprocess.run([*rra_command(), *args], capture_output=True, text=True, timeout=timeout, check=False,
                          preexec_fn=limit)
    return done, time.monotonic() - start


def test_a_pdf_bomb_is_refused_within_bounded_memory_and_time(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    paper = tmp_path / "bomb.pdf"
    paper.write_bytes(_pdf_bomb(4))  # 4 MiB that decompress to 4 GiB
    assert paper.stat().st_size < 5 * 1024 * 1024
    # Today's code grew past 3 GiB on a 3 GiB bomb; under 2 GiB it died with a MemoryError traceback.
    done, seconds = _rra_limited("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper),
                                 memory=2 * GIB, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr.splitlines()[0]) == (2, (
        "error: --paper bomb.pdf: reading its text needs more than 1024 MiB of memory or CPU time (a compressed "
        "stream that expands without bound?); nothing was taken from it")), done.stderr
    assert seconds < 10
    assert not (tmp_path / "art").exists()


def test_a_pdf_of_100000_pages_is_read_to_its_50th_page(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    paper = tmp_path / "long.pdf"
    paper.write_bytes(_pdf_of_pages(100_000))
    # Today's code read every page: over 2 minutes, and a warning line per page on stderr.
    done, seconds = _rra_limited("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper),
                                 memory=2 * GIB, timeout=60)
    assert done.returncode == 0, done.stderr
    assert seconds < 10
    assert "  claim-candidate  Table 1: GRMC 0.912  [long.pdf page 50]" in done.stdout
    assert "[long.pdf page 51]" not in done.stdout


def test_file_names_that_are_not_utf8_are_skipped_with_a_line_each(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    (repo / os.fsdecode(b"bad_\xff.py")).write_text("print('RMSE: 1.0')\n")
    (repo / os.fsdecode(b"dir_\xfa")).mkdir()
    (repo / os.fsdecode(b"dir_\xfa") / "run.py").write_text("if __name__ == '__main__':\n    print(2)\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "names")
    done = rra("init", str(repo), "-o", str(tmp_path / "art"))
    # Today's code: UnicodeEncodeError writing a manifest that named dir_\udcfa/run.py.
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for shown in (r"bad_\xff.py", r"dir_\xfa/run.py"):
        assert f"skipped {shown}: its name is not UTF-8, which a manifest cannot hold; rename it to use it\n" \
            in done.stdout
    assert "dir_" not in (tmp_path / "art" / "rra.yaml").read_text()

    built = rra("build", str(repo), "-o", str(tmp_path / "artifact"))
    assert "Traceback" not in built.stderr and "Error:" not in built.stderr, built.stderr
    assert (tmp_path / "artifact" / "rra.yaml").is_file()


def test_toml_and_json_nested_100000_deep_are_skipped_naming_the_file(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    (repo / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = {deep}\n')
    (repo / "Pipfile").write_text("[packages]\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n")
    (repo / "codemeta.json").write_text('{"referencePublication": ' + deep + "}")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "deep")
    done = rra("init", str(repo), "-o", str(tmp_path / "art"))
    # Today's code: RecursionError from tomllib (and from json for codemeta.json).
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert ("skipped pyproject.toml: not valid TOML, skipped: arrays or tables nested 100000 deep, more than 64\n"
            in done.stdout)
    assert "skipped Pipfile: not valid TOML, skipped: arrays or tables nested 50000 deep, more than 64\n" in done.stdout
    # The requirements still come from requirements.txt, which comes first anyway.
    assert "  requirement      numpy>=1.24,<2  [requirements.txt:2]\n" in done.stdout


#: A "billion laughs": 600 bytes whose alias *a8 expands to 10^8 values.
LAUGHS = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 10)}]\n" for level in range(1, 9))


def test_a_yaml_bomb_in_a_conda_environment_file_is_refused(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    (repo / "environment.yml").write_text(LAUGHS + "dependencies:\n  - python=3.11\n  - pip:\n    - *a8\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "conda")
    made = rra("init", str(repo))
    assert made.returncode == 0, made.stderr
    assert "skipped environment.yml:7: not valid YAML, skipped: document expands to more than 2000000 values" \
        in made.stdout
    # rra lock reads the file's pip section: today's code expanded it (MemoryError after 24 s
    # under 2 GiB); the bounded loader stops at 2,000,000 values.
    done, seconds = _rra_limited("lock", str(repo), memory=GIB, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode != 0
    assert done.stderr.startswith(f"error: invalid YAML: {repo / 'environment.yml'}:7: document expands to more "
                                  "than 2000000 values"), done.stderr
    assert seconds < 10


def test_a_yaml_bomb_in_a_conda_lock_file_is_refused(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    assert rra("init", str(repo)).returncode == 0
    (repo / "conda-lock.yml").write_text(LAUGHS + "version: 1\npackage:\n  - {name: x, version: *a8, hash: {sha256: ab}}\n")
    manifest = repo / "rra.yaml"
    text = manifest.read_text()
    interpreter = '  interpreter:\n    version: "3.11"\n'
    assert interpreter in text
    manifest.write_text(text.replace(interpreter, interpreter + "  lock:\n    path: conda-lock.yml\n    format: "
                                     f'conda-lock\n    sha256: "{"0" * 64}"\n'))
    # Today's code: MemoryError after 28 s under 2 GiB (str() of the version's expansion).
    done, seconds = _rra_limited("env", "check", str(repo), "--no-gpu", memory=GIB, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    assert ("conda-lock.yml:7: error RRA700 [lock-unreadable] invalid YAML: document expands to more than "
            "2000000 values") in done.stdout, done.stdout
    assert seconds < 10

    (repo / "conda-lock.yml").write_text("version: 1\npackage: " + "[" * 50_000 + "]" * 50_000 + "\n")
    done, seconds = _rra_limited("env", "check", str(repo), "--no-gpu", memory=GIB, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr  # today's code: RecursionError
    assert "conda-lock.yml:2: error RRA700 [lock-unreadable] invalid YAML: nesting is deeper than 64 levels" \
        in done.stdout, done.stdout


def test_a_repository_git_cannot_read_is_refused_with_git_s_own_words(tmp_path: Path) -> None:
    raw = tmp_path / "elsewhere"
    raw.mkdir()
    (raw / ".git").write_text(f"gitdir: {tmp_path / 'missing'}\n")
    done = rra("init", str(raw), "-o", str(tmp_path / "art"))
    assert (done.returncode, done.stderr) == (2, f"error: git cannot list the files of {raw}: fatal: not a git "
                                                 f"repository: {tmp_path / 'missing'}\n")
