"""Defects the second real-repository corpus found (docs/builder-corpus.md, corpus 2), each
with the shape of the repository that showed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rra_tools.builder.agent import AnswerInvalid
from rra_tools.builder.build.fill import _fills
from rra_tools.builder.detect.paper import _ARXIV
from rra_tools.run.host import env_python


@pytest.mark.parametrize(("text", "found"), [
    ("accompanies the arXiv pre-print:2508.19409.", "2508.19409"),  # yx14/disentangler_opt
    ("arXiv preprint arXiv:1804.01508v2", "1804.01508v2"),
    ("an arXiv e-print 2101.00001", "2101.00001"),
    ("https://arxiv.org/abs/2311.17047", "2311.17047"),
    ("see arXiv: 2001.12345", "2001.12345"),
])
def test_arxiv_ids_in_the_forms_readmes_write(text: str, found: str) -> None:
    match = _ARXIV.search(text)
    assert match is not None and match.group(1) == found


@pytest.mark.parametrize(("config", "python"), [
    ("home = /usr/bin\nimplementation = CPython\nversion_info = 3.13.0\n", "cpython 3.13.0"),  # uv
    ("home = /usr/bin\nversion_info = 3.12.1.final.0\n", "cpython 3.12.1"),
    ("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n", "cpython 3.11.7"),  # venv
    ("home = /usr/bin\n", None),
])
def test_a_locked_environment_records_its_own_python(tmp_path: Path, config: str, python: str | None) -> None:
    # b-gibbs-ssvs: the environment was built with Python 3.13 from the manifest, and every run
    # record (and so every observation's fingerprint) said rra's own 3.11.7.
    (tmp_path / "pyvenv.cfg").write_text(config)
    assert env_python(tmp_path) == python
    assert env_python(tmp_path / "absent") is None


def _launchers(*items: tuple[str, str]) -> dict[str, object]:
    return {"launchers": [{"id": ident, "description": text, "argv": ["python", f"{ident}.py"]}
                          for ident, text in items]}


def test_a_placeholder_answer_may_drop_the_launcher_it_was_asked_about(tmp_path: Path) -> None:
    # b-maximin-bnp: launcher 0 (a plotting helper) is dropped; the next launcher moves to
    # /launchers/0 with its own TODO description, which is the next question, not a refusal.
    pointer, answer = "/launchers/0/description", tmp_path / "a.json"
    check = _fills(pointer, answer, ("/launchers/0", "plot"))
    check(_launchers(("suite", "TODO: what suite.py computes")))  # plot dropped: accepted
    check(_launchers(("plot", "Plots."), ("suite", "TODO: what suite.py computes")))  # answered: accepted
    with pytest.raises(AnswerInvalid, match="it leaves the TODO at /launchers/0/description"):
        check(_launchers(("plot", "TODO: what plot.py computes"), ("suite", "Runs the suite.")))


def test_a_claim_answer_that_adds_a_claim_id_twice_is_refused(tmp_path: Path) -> None:
    # b-maximin-bnp: the same claim added by a candidate's answer and by a claim question's made
    # two claims of one id and one extraction (RRA202, RRA939), found only by the review.
    from types import SimpleNamespace

    from rra_tools.builder.build.claims import _stated_check

    build = SimpleNamespace(artifact=lambda: SimpleNamespace(data={"claims": [{"id": "f-best"}]}),
                            steps={"specify": SimpleNamespace(outputs={"published": None})},
                            root=tmp_path, progress=lambda text: None)
    check = _stated_check(build, tmp_path / "claim-question-1.answer.json")  # type: ignore[arg-type]
    with pytest.raises(AnswerInvalid, match="claim 'f-best' is already in the manifest"):
        check({"claims": [{"id": "f-best"}, {"id": "f-best"}]})
    check({"claims": [{"id": "f-best"}, {"id": "g-best"}]})  # no commit recorded: said, not refused


def test_a_git_requirement_in_environment_yml_is_a_direct_reference(tmp_path: Path) -> None:
    # b-disentangler-tables: rra lock resolves environment.yml's pip section, whose git requirement
    # (a fork of pymanopt) could not be fetched; it was not listed, so the failure read as an
    # unreachable index and the build stopped without the repair decision.
    from types import SimpleNamespace

    from rra_tools.builder.build.lock import _direct_references

    (tmp_path / "environment.yml").write_text(
        "name: d\nchannels:\n  - https://conda.anaconda.org/conda-forge\ndependencies:\n  - numpy=1.26\n"
        "  - pip:\n    - git+https://github.com/example/pymanopt.git  # the fork\n    - scipy==1.13\n"
        "    - tool @ https://example.org/tool-1.0.tar.gz\n")
    (tmp_path / "requirements.in").write_text("pkg @ git+https://example.org/pkg.git\nnumpy\n")
    found = _direct_references(SimpleNamespace(root=tmp_path))  # type: ignore[arg-type]
    assert found == ["pkg @ git+https://example.org/pkg.git", "git+https://github.com/example/pymanopt.git",
                     "tool @ https://example.org/tool-1.0.tar.gz"]
