"""The agent hook of ``rra build``: request and answer files, the command, and what a bad answer
says; JSON pointers set in a manifest document."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from rra_tools.builder.agent import Agent, AgentFailed, AnswerInvalid, DecisionNeeded, decision_paths, read_answer
from rra_tools.builder.build.answers import set_pointer
from rra_tools.errors import ExitStatus
from rra_tools.model.agent import AgentRequest, DecisionKind


def request(tmp_path: Path, ident: str = "claim-1") -> AgentRequest:
    _, answer = decision_paths(tmp_path, ident)
    return AgentRequest(rra_agent_request="1.0", id=ident, kind=DecisionKind.CLAIM, step="claims",
                        question="is it a claim?", artifact=str(tmp_path), manifest="rra.yaml", answer=str(answer))


def agent_script(tmp_path: Path, body: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text("import json, os, sys\nrequest = json.load(open(sys.argv[1]))\n" + body)
    return shlex.join([sys.executable, str(script)])


def test_without_an_agent_a_decision_stops_with_the_files_named(tmp_path: Path) -> None:
    asked = request(tmp_path)
    with pytest.raises(DecisionNeeded) as caught:
        Agent(None).ask(tmp_path, asked, "write the answer")
    stop = caught.value
    assert stop.exit_status == ExitStatus.STOPPED == 3
    assert str(stop) == "stopped at step 'claims': is it a claim?"
    assert stop.hint == "write the answer; then run the build again"
    written = json.loads(stop.request.read_text())
    assert written == {"rra_agent_request": "1.0", "id": "claim-1", "kind": "claim", "step": "claims",
                       "question": "is it a claim?", "artifact": str(tmp_path), "manifest": "rra.yaml",
                       "answer": str(stop.answer)}


def test_the_agent_gets_the_request_path_and_environment(tmp_path: Path) -> None:
    command = agent_script(tmp_path, (
        "assert os.environ['RRA_AGENT_REQUEST'] == sys.argv[1]\n"
        "assert os.environ['RRA_AGENT_ANSWER'] == request['answer']\n"
        "json.dump({'rra_agent_answer': '1.0', 'request': request['id'], 'reject': 'no',\n"
        "           'usage': {'input_tokens': 10, 'cost_usd': 0.5}}, open(request['answer'], 'w'))\n"))
    asked = Agent(command).ask(tmp_path, request(tmp_path), "")
    assert asked.source == "agent" and asked.answer.reject == "no"
    assert asked.answer.usage is not None and asked.answer.usage.cost_usd == 0.5
    log = tmp_path / ".rra/build/decisions/claim-1.agent.log"
    assert log.is_file()


def test_an_agent_that_fails_or_writes_nothing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AgentFailed, match=r"the agent exited with status 3 on .*claim-1.request.json:\nbroken"):
        Agent(agent_script(tmp_path, "print('broken'); sys.exit(3)\n")).ask(tmp_path, request(tmp_path), "")
    with pytest.raises(AgentFailed, match=r"the agent exited 0 but wrote no answer to .*claim-1.answer.json"):
        Agent(agent_script(tmp_path, "pass\n")).ask(tmp_path, request(tmp_path), "")
    with pytest.raises(AgentFailed, match=r"the agent command '/no/such/agent' was not found"):
        Agent("/no/such/agent").ask(tmp_path, request(tmp_path), "")


def test_an_answer_file_already_there_is_used(tmp_path: Path) -> None:
    asked = request(tmp_path)
    _, answer = decision_paths(tmp_path, asked.id)
    answer.parent.mkdir(parents=True)
    answer.write_text(json.dumps({"rra_agent_answer": "1.0", "request": "claim-1", "reject": "not a claim"}))
    got = Agent(None).ask(tmp_path, asked, "")
    assert (got.source, got.answer.reject) == ("file", "not a claim")


@pytest.mark.parametrize(("body", "message"), [
    ("{", "not JSON: Expecting property name"),
    ('{"request": "claim-1"}', "field 'rra_agent_answer': Field required"),
    ('{"rra_agent_answer": "1.0", "request": "claim-1", "sett": []}',
     "field '(the document)': Value error, unknown field(s) ['sett']; extensions must start with 'x-'"),
    ('{"rra_agent_answer": "1.0", "request": "claim-1", "change": {"id": "x", "kind": "typo", "rationale": "r", '
     '"alters_method": "no"}}', "field 'change/kind': String should match pattern "),
    ('{"rra_agent_answer": "1.0", "request": "claim-2"}',
     "field 'request': 'claim-2' is not the id of the request it answers, 'claim-1'"),
])
def test_a_bad_answer_names_the_file_and_field(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "a.json"
    path.write_text(body)
    with pytest.raises(AnswerInvalid) as caught:
        read_answer(path, request(tmp_path))
    assert str(caught.value).startswith(f"answer {path}: {message}"), str(caught.value)


def test_json_pointers_set_values_append_and_refuse_missing_parents() -> None:
    document = {"launchers": [{"id": "a", "argv": ["TODO"]}], "claims": []}
    set_pointer(document, "/launchers/0/argv", ["python", "a.py"], "here")
    set_pointer(document, "/claims/-", {"id": "c"}, "here")
    set_pointer(document, "/launchers/0/x~1y", 1, "here")
    assert document == {"launchers": [{"id": "a", "argv": ["python", "a.py"], "x/y": 1}], "claims": [{"id": "c"}]}
    with pytest.raises(AnswerInvalid, match=r"here: '/paper/title': /paper does not exist \(parents must exist\)"):
        set_pointer(document, "/paper/title", "T", "here")
    with pytest.raises(AnswerInvalid, match=r"'/launchers/3/id': the list at /launchers has no item '3'"):
        set_pointer(document, "/launchers/3/id", "T", "here")
