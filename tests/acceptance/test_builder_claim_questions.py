"""A repository whose results no claim can read (a figure, an array, or, here, a value kept in a
variable) is not a dead end: rra build's claim step asks the agent, whose answer adds the claim
and the change that makes the script show its number; the build reaches *reproduced*."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.builder_repos import make_repo
from tests.rra_cli import rra

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "scripted_agent.py"


def test_a_result_shown_nowhere_becomes_a_claim_through_the_claim_question(tmp_path: Path) -> None:
    raw = make_repo("no-results", tmp_path)
    artifact = tmp_path / "artifact"
    done = rra("build", str(raw), "-o", str(artifact), "--agent", shlex.join([sys.executable, str(AGENT), "no-results"]))
    assert done.returncode == 0, done.stderr
    request = json.loads((artifact / ".rra/build/decisions/claim-question-1.request.json").read_text())
    assert (request["kind"], request["step"]) == ("claim", "claims")
    assert request["question"].startswith("no candidate claim: no results table, printed metric or number written "
                                          "to a file was found: which claim of the paper does it give?")
    assert "build: recorded change print-the-gap: patches/0001-print-the-gap.patch (harmonic.py)" in done.stderr
    data = parse_document((artifact / "rra.yaml").read_text()).data
    [claim] = data["claims"]
    # The runs' values: the answer's observation of the reported value (0.5777) was set aside.
    assert claim["id"] == "euler-gap" and [o["value"] for o in claim["reference"]["observations"]] == [0.577716] * 3
    state = json.loads((artifact / ".rra/build/state.json").read_text())
    claims = next(s for s in state["steps"] if s["name"] == "claims")
    assert [d["id"] for d in claims["decisions"]] == ["claim-question-1"]
    assert claims["decisions"][0]["change"] == "print-the-gap"
    done = rra("validate", "-f", "json", str(artifact))
    assert json.loads(done.stdout)["results"][0]["levels"]["met"] == ["available", "functional", "reproduced"]


def test_a_reported_value_the_repository_never_states_is_refused(tmp_path: Path) -> None:
    # The agent gives its own run's number as the paper's, and writes a file "stating" it in the
    # same answer: the texts are read as published, so the answer is refused, and nothing of it
    # (the claim, the edited script, the new file) is applied.
    raw = make_repo("no-results", tmp_path)
    artifact = tmp_path / "artifact"
    done = rra("build", str(raw), "-o", str(artifact), "--agent",
               shlex.join([sys.executable, str(AGENT), "no-results-invented"]))
    assert done.returncode == 1, done.stderr
    assert ("field 'set': the reported value of claim 'euler-gap' (0.577716) is printed nowhere in the repository "
            "as published") in done.stderr
    assert "the agent's word is not evidence of it" in done.stderr
    assert not parse_document((artifact / "rra.yaml").read_text()).data.get("claims")
    assert not (artifact / "RESULTS.md").exists()
    assert "print(" not in (artifact / "harmonic.py").read_text()
    # The number the note does state (0.5777, README.md:4) is accepted: the first test's build.
