"""RRA 1.1: numbers pinned (no crash on huge ones), the portable regex subset, the rules of
repeats, independence and secrets (with a second problem after each skipped entry, so that a
``continue`` turned into ``break`` is caught), and the stream redactor of the logs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.io.read.scalars import MAX_DECIMAL_DIGITS
from rra_tools.io.read.source import decode_text, parse_document
from rra_tools.model.regex import compile_pattern, subset_problem
from rra_tools.run.extract import ExtractError, extract_value
from rra_tools.run.records import REDACTED, StreamRedactor, redact_values
from rra_tools.model.manifest_view import ExtractSpec, RegexSpec
from rra_tools.validate import validate_bytes, validate_path
from tests.unit.test_rules import OBS, base, write


def codes(manifest: dict[str, Any], root: Path | None = None) -> list[tuple[str, str, str]]:
    if root is not None:
        result = validate_path(write(root, manifest))
    else:
        result = validate_bytes(json.dumps(manifest).encode(), name="rra.json", root=None)
    return [(d.code, d.pointer, d.message) for d in result.diagnostics if d.code != "RRA601"]


def v11() -> dict[str, Any]:
    m = copy.deepcopy(base())  # base() shares its observation dicts between calls
    m["rra_version"] = "1.1"
    return m


# Numbers -----------------------------------------------------------------------------------

HUGE = "1" + "0" * 5000


@pytest.mark.parametrize("text", [
    f"value: {HUGE}\n", f'{{"value": {HUGE}}}', f"value: -{HUGE}\n", f'{{"value": [-{HUGE}]}}'])
def test_integers_of_thousands_of_digits_are_read_not_raised(text: str) -> None:
    data = parse_document(decode_text(text.encode())).data
    value = data["value"] if not isinstance(data["value"], list) else data["value"][0]
    assert isinstance(value, int) and len(str(abs(value))) == MAX_DECIMAL_DIGITS


@pytest.mark.parametrize("where", ["yaml", "json"])
def test_huge_integers_in_a_manifest_are_one_finding_each(where: str) -> None:
    m = v11()
    text = json.dumps(m).replace('"value": 91.0, "precision"', f'"value": {HUGE}, "precision"')
    text = text.replace('"timeout_s": 60', '"timeout_s": 1' + "0" * 400)
    if where == "yaml":  # the same document in block YAML: a different reader path
        from io import StringIO

        from ruamel.yaml import YAML

        out = StringIO()
        YAML().dump(json.loads(text.replace(HUGE, "123456789")), out)
        text = out.getvalue().replace("123456789", HUGE)
    result = validate_bytes(text.encode(), name=f"rra.{where}", root=None)
    found = [(d.code, d.pointer, d.message) for d in result.diagnostics if d.code != "RRA601"]
    assert found == [
        ("RRA114", "/launchers/0/resources/timeout_s",
         "an integer of 401 digits is out of range: integers must lie between -2^63 and 2^63-1"),
        ("RRA114", "/claims/0/reported/value",
         "an integer of 4300 digits or more is out of range: integers must lie between -2^63 and 2^63-1"),
    ]


def test_integer_just_outside_64_bits_is_quoted_exactly() -> None:
    m = v11()
    m["x-build"] = 2**63
    m["launchers"][0]["seeds"] = [0, 1, 2, 3, -(2**63) - 1]
    found = codes(m)
    assert ("RRA114", "/x-build", "9223372036854775808 is out of range: integers must lie between -2^63 and "
            "2^63-1") in found
    assert [c for c, p, _ in found if p == "/launchers/0/seeds/4"] == ["RRA114"]  # once, not twice


def test_integer_valued_floats_are_integers_for_the_rules() -> None:
    m = v11()
    m["launchers"][0]["seeds"] = [0, 1, 2, 3, 4.0, 4]
    m["claims"][0]["reference"]["observations"][4]["seed"] = 4.0
    assert [(c, p) for c, p, _ in codes(m)] == [("RRA511", "/launchers/0/seeds/5")]


def test_run_path_reads_integer_valued_seeds_as_integers(tmp_path: Path) -> None:
    from rra_tools.run import load_artifact, plan_runs

    m = v11()
    m["launchers"][0]["seeds"] = [7.0]
    write(tmp_path, m)
    [plan] = plan_runs(load_artifact(tmp_path), "train")
    assert plan.seed == 7 and plan.argv == ["python", "train.py", "--seed", "7"]


def test_run_path_refuses_huge_integers_with_a_message(tmp_path: Path) -> None:
    from rra_tools.run import load_artifact
    from rra_tools.run.errors import ArtifactError

    m = v11()
    (tmp_path / "requirements.lock").write_text("x")
    (tmp_path / "rra.json").write_text(json.dumps(m).replace('"timeout_s": 60', '"timeout_s": 1' + "0" * 400))
    with pytest.raises(ArtifactError, match=r"not a valid manifest: an integer of 401 digits is out of range"):
        load_artifact(tmp_path)


# The regex subset --------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", [
    r"RMSE: ([0-9]+\.[0-9]+)", r"^sepal length *\| ([0-9]+)%$", r"(?:val|eval)_loss=(\d+(?:\.\d+)?)",
    r"acc(?=\s)", r"a(?!b)", r"x{2}y{1,}z{1,3}?", r"[^\]\[a-z\-]+", r"\u00e9\x41\t", r"(a)(b)\2", r"\/\{\}"])
def test_patterns_inside_the_subset(pattern: str) -> None:
    assert subset_problem(pattern) is None


@pytest.mark.parametrize("pattern, problem", [
    (r"(?<v>[0-9.]+)", "named group '(?<' at offset 0: use a plain group '(...)' and 'group: N'"),
    (r"x(?P<v>[0-9.]+)", "named group '(?P' at offset 1: use a plain group '(...)' and 'group: N'"),
    (r"(?P=v)", "named group '(?P' at offset 0: use a plain group '(...)' and 'group: N'"),
    (r"(?i)acc", "inline flags or modifier '(?i' at offset 0: not in the portable subset (patterns are always "
                 "multi-line and case-sensitive)"),
    (r"(?<=a)b", "lookbehind '(?<=' at offset 0: not in the portable subset; use a group around the number"),
    (r"(?>a)", "atomic group at offset 0: not in the portable subset"),
    (r"(?#c)", "comment group at offset 0: not in the portable subset"),
    (r"a++", "possessive or doubled quantifier at offset 1: not in the portable subset"),
    (r"a{", "'{' at offset 1 does not start a quantifier {n}, {n,} or {n,m}: write '\\{'"),
    (r"a}", "'}' at offset 1 must be escaped as '\\}'"),
    (r"[]a]", "empty character class at offset 0, or a ']' that must be escaped as '\\]'"),
    (r"[[a]", "'[' inside the character class at offset 0 must be escaped as '\\['"),
    (r"[a", "character class opened at offset 0 is not closed"),
    (r"\Aa", "escape '\\A' at offset 0 is not in the portable subset"),
    (r"\p{L}", "escape '\\p' at offset 0 is not in the portable subset"),
    (r"\x4", "'\\x' at offset 0 needs 2 hexadecimal digits"),
    (r"*a", "quantifier '*' at offset 0 repeats nothing"),
])
def test_patterns_outside_the_subset(pattern: str, problem: str) -> None:
    assert subset_problem(pattern) == problem


def test_subset_meaning_is_ascii_and_multiline(tmp_path: Path) -> None:
    assert compile_pattern(r"\d").search("٣") is None  # an Arabic-Indic digit is not \d
    log = tmp_path / "train.log"
    log.write_bytes(b"epoch 1\r\nacc=0.5\r\nacc=0.75\r\n")
    rule = ExtractSpec(output="log", regex=RegexSpec(r"^acc=([0-9.]+)$"))
    assert extract_value(log, rule) == 0.75  # CRLF line ends: '$' still ends the line
    with pytest.raises(ExtractError, match="has no match"):
        extract_value(log, ExtractSpec(output="log", regex=RegexSpec(r"^ACC=([0-9.]+)$")))


def test_regex_outside_the_subset_is_an_error_in_1_1_and_a_warning_in_1_0() -> None:
    for version, severity in (("1.1", "error"), ("1.0", "warning")):
        m = copy.deepcopy(base())
        m["rra_version"] = version
        m["launchers"][0]["outputs"].append({"id": "log", "path": "out/{seed}.log", "format": "log"})
        m["claims"][0]["extract"] = {"output": "log", "regex": {"pattern": "acc=(?P<v>[0-9.]+)"}}
        result = validate_bytes(json.dumps(m).encode(), name="rra.json", root=None)
        [(code, level, message)] = [(d.code, d.severity.name.lower(), d.message) for d in result.diagnostics
                                    if d.code != "RRA601"]
        assert (code, level) == ("RRA210", severity), version
        assert message == "regex 'acc=(?P<v>[0-9.]+)' is outside the portable subset: named group '(?P' at " \
                          "offset 4: use a plain group '(...)' and 'group: N'"


def test_ecma_named_group_is_named_as_outside_the_subset_not_as_a_python_error() -> None:
    m = v11()
    m["launchers"][0]["outputs"].append({"id": "log", "path": "out/{seed}.log", "format": "log"})
    m["claims"][0]["extract"] = {"output": "log", "regex": {"pattern": "acc=(?<v>[0-9.]+)"}}
    assert codes(m) == [("RRA210", "/claims/0/extract/regex/pattern", "regex 'acc=(?<v>[0-9.]+)' is outside "
                         "the portable subset: named group '(?<' at offset 4: use a plain group '(...)' and "
                         "'group: N'")]


# Rules: the second problem after a skipped entry is still found ------------------------------

def test_claim_without_observations_does_not_hide_the_next_claim() -> None:
    m = v11()
    second = copy.deepcopy(m["claims"][0])
    second["id"] = "acc2"
    second["reference"]["observations"] = copy.deepcopy(OBS[:2])
    m["claims"].append(second)
    m["claims"][0]["reference"] = {"stability": "stable"}  # no observations list at all
    found = [(c, p) for c, p, _ in codes(m)]
    assert ("RRA502", "/claims/1/reference/observations") in found


def test_observation_without_seed_does_not_hide_a_later_duplicate_seed() -> None:
    m = v11()
    m["launchers"][0]["stochastic"] = False
    m["launchers"][0]["seeds"] = []
    m["launchers"][0]["argv"] = ["python", "train.py"]
    m["launchers"][0]["outputs"][0]["path"] = "out/m.json"
    m["launchers"][0]["repeats"] = 3
    obs = m["claims"][0]["reference"]["observations"]
    for index, observation in enumerate(obs):
        del observation["seed"]
        observation["repeat"] = index
    obs[4]["repeat"] = 1
    del obs[0]["repeat"]
    obs[0]["seed"] = 0  # a seed where a repeat belongs comes first: it must not end the scan
    found = [(c, p) for c, p, _ in codes(m)]
    assert ("RRA505", "/claims/0/reference/observations/4/repeat") in found
    assert ("RRA509", "/claims/0/reference/observations/3/repeat") in found  # 3 is not below repeats: 3


def test_seedless_observation_does_not_hide_a_duplicate_seed() -> None:
    m = v11()
    obs = m["claims"][0]["reference"]["observations"]
    del obs[0]["seed"]
    obs[0]["repeat"] = 0  # a repeat on a stochastic launcher, then a shared seed
    obs[4]["seed"] = 3
    found = [(c, p, msg) for c, p, msg in codes(m)]
    assert ("RRA509", "/claims/0/reference/observations/0/repeat",
            "observation repeat 0 belongs to a stochastic launcher, whose runs are told apart by seed") in found
    assert ("RRA505", "/claims/0/reference/observations/4/seed",
            "observations 3 and 4 share seed 3; they are not independent") in found


def test_shipped_data_source_does_not_hide_an_unobtainable_one(tmp_path: Path) -> None:
    m = v11()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("x\n")
    import hashlib

    m["data"] = [
        {"id": "shipped", "license": "MIT", "access": "public", "shipped": True,
         "files": [{"path": "data/a.csv", "sha256": hashlib.sha256(b"x\n").hexdigest()}]},
        {"id": "gated", "license": "other", "access": "restricted",
         "files": [{"path": "data/b.csv", "sha256": "0" * 64}]},
    ]
    result = validate_path(write(tmp_path, m))
    [level] = [d for d in result.diagnostics if d.code == "RRA601"]
    assert "data source 'gated' is restricted and not shipped" in level.message


def test_claim_without_an_interval_does_not_hide_the_next_claims_interval() -> None:
    m = v11()
    second = copy.deepcopy(m["claims"][0])
    second["id"] = "acc2"
    second["reported"]["value"] = 95.0
    m["claims"].append(second)
    m["claims"][0]["reference"]["observations"] = m["claims"][0]["reference"]["observations"][:1]
    found = [(c, p) for c, p, _ in codes(m)]
    assert ("RRA506", "/claims/1/reported/value") in found


def test_observations_from_one_run_are_not_independent(tmp_path: Path) -> None:
    m = v11()
    obs = m["claims"][0]["reference"]["observations"]
    for index, observation in enumerate(obs):
        observation["run_record"] = f"evidence/train/{index}/record.json"
    obs[3]["run_record"] = "evidence/train/1/./record.json"  # the same run directory as observation 1
    obs[4]["run_record"] = "evidence/train/seed-4.json"       # a record file of its own: another run
    del obs[0]["run_record"]  # an observation without a record comes first: the scan goes on
    for index in range(5):
        path = tmp_path / "evidence" / "train" / str(index)
        path.mkdir(parents=True)
        (path / "record.json").write_text("{}")
    (tmp_path / "evidence" / "train" / "seed-4.json").write_text("{}")
    found = codes(m, tmp_path)
    assert found == [("RRA512", "/claims/0/reference/observations/3/run_record",
                      "observations 1 and 3 come from the same run ('evidence/train/1'); independent "
                      "observations come from separate runs")]


def test_secret_rules_report_every_place() -> None:
    m = v11()
    launcher = m["launchers"][0]
    launcher["secrets"] = ["A_TOKEN", "B_TOKEN"]
    launcher["env"] = {"B_TOKEN": "x"}
    launcher["parameters"] = {"k1": {"type": "str", "secret": True, "default": "v"},
                              "k2": {"type": "str", "secret": True}}
    launcher["cwd"] = "runs-{k2}"
    found = [(c, p) for c, p, _ in codes(m)]
    assert found == [("RRA213", "/launchers/0/env/B_TOKEN"), ("RRA213", "/launchers/0/parameters/k1/default"),
                     ("RRA213", "/launchers/0/cwd")]


# Redaction ---------------------------------------------------------------------------------

@pytest.mark.parametrize("chunks", [
    [b"key=abcdef!"], [b"key=abc", b"def!"], [b"key=a", b"b", b"cdef", b"!"], [b"key=abcde", b"f!"]])
def test_stream_redactor_across_chunk_boundaries(chunks: list[bytes]) -> None:
    redactor = StreamRedactor(["abcdef"])
    out = b"".join(redactor.feed(c) for c in chunks) + redactor.flush()
    assert out == b"key=" + REDACTED.encode() + b"!"


def test_stream_redactor_prefers_the_longer_of_two_overlapping_secrets() -> None:
    redactor = StreamRedactor(["ab", "abcdefgh"])
    out = redactor.feed(b"x ab") + redactor.feed(b"cdefgh y ab") + redactor.flush()
    assert out == b"x [redacted] y [redacted]"


def test_redact_values_reaches_keys_and_nested_strings() -> None:
    assert redact_values({"s3": ["a s3 b", {"k": "s3"}], "n": 3}, ["s3"]) == \
        {REDACTED: [f"a {REDACTED} b", {"k": REDACTED}], "n": 3}
    assert redact_values({"a": "x"}, [""]) == {"a": "x"}  # an empty value redacts nothing


def test_launcher_without_an_id_does_not_hide_the_next_launchers_seeds() -> None:
    m = v11()
    m["launchers"].insert(0, {"id": 5, "argv": ["x"], "seeds": [0],
                              "resources": {"timeout_s": 1, "expected_runtime_s": 1}})
    m["claims"][0]["reference"]["observations"][4]["seed"] = 9
    found = [(c, p) for c, p, _ in codes(m)]
    assert ("RRA509", "/claims/0/reference/observations/4/seed") in found


def test_repeats_on_a_stochastic_launcher_is_a_warning_through_the_cli(tmp_path: Path) -> None:
    from tests.rra_cli import rra

    m = v11()
    m["launchers"][0]["repeats"] = 5  # base()'s launcher is stochastic (the default) with seeds
    m["launchers"].append({**copy.deepcopy(m["launchers"][0]), "id": "again", "stochastic": True})
    root = write(tmp_path, m)
    assert [c for c in codes(m) if c[0] == "RRA513"] == [
        ("RRA513", "/launchers/0/repeats", "launcher 'train' is stochastic, so repeats 5 is ignored: its runs "
                                           "are its seeds"),
        ("RRA513", "/launchers/1/repeats", "launcher 'again' is stochastic, so repeats 5 is ignored: its runs "
                                           "are its seeds")]
    done = rra("validate", str(root))
    assert "warning[RRA513] launcher 'train' is stochastic, so repeats 5 is ignored" in done.stdout
    assert ("= hint: remove repeats and list one seed per run, or set stochastic: false if the program reads "
            "no seed") in done.stdout
    m["launchers"][0]["stochastic"] = False
    m["launchers"][0]["seeds"] = []
    del m["launchers"][1]
    assert [c for c in codes(m) if c[0] == "RRA513"] == []
