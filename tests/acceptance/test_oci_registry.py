"""rra push / pull / attach / discover / provenance against a real registry (Distribution 2.8).

The registry is started by the test setup (tests/services/registry.py); skopeo, another OCI
client, reads what we push and pushes what we pull. Distribution 2.8 has no Referrers API, so
attach and discover go through the referrers tag schema here; the API path is exercised through
a stand-in proxy (FaultProxy(referrers_api=True)) in front of the same registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from rra_tools.oci.pack import pack
from rra_tools.oci.provenance import BUILD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE, check_statement
from rra_tools.oci.push import push_layout
from rra_tools.oci.referrers import CYCLONEDX_JSON, IN_TOTO_JSON, fallback_tag
from rra_tools.oci.registry import Reference, RegistryClient

from ..rra_cli import rra
from ..services.registry import FaultProxy, RegistryService

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits-logreg"
EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}


def repo_name() -> str:
    """A fresh repository per test: the registry is shared by the whole session."""
    return f"t/{uuid.uuid4().hex[:12]}"


def tree(root: Path) -> dict[str, tuple[str, int]]:
    """Relative path -> (sha256, mode bits) of every file; directories by their files."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[path.relative_to(root).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                      path.stat().st_mode & 0o111)
    return out


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    return copy


@pytest.fixture
def layout(artifact: Path, tmp_path: Path) -> Path:
    out = tmp_path / "layout"
    pack(artifact, out, ref_name="v1", environ=EPOCH)
    return out


def manifest_descriptor(layout: Path) -> dict[str, Any]:
    return dict(json.loads((layout / "index.json").read_bytes())["manifests"][0])


def test_push_pull_round_trip_gives_the_identical_tree(registry: RegistryService, artifact: Path, layout: Path,
                                                       tmp_path: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    pushed = rra("push", str(layout), ref)
    assert pushed.returncode == 0, pushed.stderr
    digest = manifest_descriptor(layout)["digest"]
    assert pushed.stdout == f"pushed {ref} {digest}\n"
    out = tmp_path / "out"
    pulled = rra("pull", ref, "-o", str(out))
    assert pulled.returncode == 0, pulled.stderr
    assert tree(out) == tree(artifact)
    # By digest too, and the fetched layout is the packed one, blob for blob.
    fetched = tmp_path / "fetched"
    by_digest = rra("pull", f"{ref.rsplit(':', 1)[0]}@{digest}", "-o", str(fetched), "--layout")
    assert by_digest.returncode == 0, by_digest.stderr
    assert tree(fetched / "blobs") == tree(layout / "blobs")


def test_pushing_an_artifact_directory_packs_it_first(registry: RegistryService, artifact: Path, layout: Path,
                                                      tmp_path: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    pushed = rra("push", str(artifact), ref, "--format", "json", env=EPOCH)
    assert pushed.returncode == 0, pushed.stderr
    result = json.loads(pushed.stdout)
    # Packing is deterministic: the same digest as the layout packed separately.
    assert result["digest"] == manifest_descriptor(layout)["digest"]
    assert not list(artifact.parent.glob(".rra-push-*")), "the temporary layout is removed"
    out = tmp_path / "only"
    pulled = rra("pull", ref, "-o", str(out), "--only", "manifest,code")
    assert pulled.returncode == 0, pulled.stderr
    # The same files as unpacking those roles from the local layout, and no others.
    from rra_tools.oci.layout import resolve
    from rra_tools.oci.unpack import unpack_layers

    local = tmp_path / "local"
    unpack_layers(layout, resolve(layout, "v1")[1], local, only_roles={"manifest", "code"})
    assert tree(out) == tree(local)
    assert {"rra.yaml", "train.py"} <= set(tree(out)) and "README.md" not in tree(out)


def test_skopeo_reads_what_we_push(registry: RegistryService, layout: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    assert rra("push", str(layout), ref, "-q").returncode == 0
    raw = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
                         capture_output=True, check=True, timeout=120).stdout
    descriptor = manifest_descriptor(layout)
    # The registry holds our manifest byte for byte.
    assert "sha256:" + hashlib.sha256(raw).hexdigest() == descriptor["digest"]
    assert json.loads(raw)["artifactType"] == "application/vnd.rra.artifact.v1"


def test_we_pull_what_skopeo_pushes(registry: RegistryService, artifact: Path, layout: Path, tmp_path: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    subprocess.run(["skopeo", "copy", "--quiet", "--dest-tls-verify=false", f"oci:{layout}:v1", f"docker://{ref}"],
                   check=True, timeout=120, capture_output=True)
    out = tmp_path / "out"
    pulled = rra("pull", ref, "-o", str(out))
    assert pulled.returncode == 0, pulled.stderr
    assert manifest_descriptor(layout)["digest"] in pulled.stdout
    assert tree(out) == tree(artifact)


def test_a_skopeo_made_layout_round_trips(registry: RegistryService, layout: Path, tmp_path: Path) -> None:
    # Any OCI image layout, not only ours: skopeo writes this one (its own index.json).
    theirs = tmp_path / "skopeo-layout"
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{layout}:v1", f"oci:{theirs}:other"], check=True, timeout=120,
                   capture_output=True)
    ref = f"{registry.host}/{repo_name()}:other"
    assert rra("push", str(theirs), ref, "-q").returncode == 0
    fetched = tmp_path / "fetched"
    assert rra("pull", ref, "-o", str(fetched), "--layout", "-q").returncode == 0
    assert tree(fetched / "blobs") == tree(theirs / "blobs")


def test_second_push_uploads_nothing(registry: RegistryService, layout: Path) -> None:
    blobs = 1 + len(json.loads((layout / "blobs" / "sha256" / manifest_descriptor(layout)["digest"][7:])
                               .read_bytes())["layers"])
    with FaultProxy(registry.host) as proxy:
        ref = f"{proxy.host}/{repo_name()}:v1"
        assert rra("push", str(layout), ref, "-q").returncode == 0
        assert proxy.counts.get("blob-put") == blobs
        proxy.counts.clear()
        again = rra("push", str(layout), ref, "--format", "json", "-q")
        assert again.returncode == 0, again.stderr
    assert proxy.counts.get("head") == blobs
    assert proxy.counts.get("upload-start", 0) == 0 and proxy.counts.get("blob-put", 0) == 0
    result = json.loads(again.stdout)
    assert result["uploaded"] == [] and len(result["skipped"]) == blobs and result["bytes_uploaded"] == 0


def test_attach_and_discover_through_the_referrers_tag(registry: RegistryService, layout: Path,
                                                       tmp_path: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    assert rra("push", str(layout), ref, "-q").returncode == 0
    sbom = tmp_path / "sbom.cdx.json"
    sbom.write_text('{"bomFormat": "CycloneDX", "specVersion": "1.6"}\n')
    statement = tmp_path / "provenance.json"
    statement.write_text('{"_type": "https://in-toto.io/Statement/v1"}\n')
    for option, path in (("--sbom", sbom), ("--provenance", statement), ("--sbom", sbom)):
        attached = rra("attach", ref, option, str(path), "-q")
        assert attached.returncode == 0, attached.stderr
    listed = rra("discover", ref, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    digest = manifest_descriptor(layout)["digest"]
    assert report["source"] == "tag" and report["subject"].endswith(f"@{digest}")
    # Re-attaching the same SBOM does not add a third entry.
    assert [r["artifactType"] for r in report["referrers"]] == [CYCLONEDX_JSON, IN_TOTO_JSON]
    # The fallback index is a real tag in the repository, readable by other clients.
    repo = ref.rsplit(":", 1)[0]
    index = json.loads(subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false",
                                       f"docker://{repo}:{fallback_tag(digest)}"],
                                      capture_output=True, check=True, timeout=120).stdout)
    assert index["mediaType"] == "application/vnd.oci.image.index.v1+json"
    assert sorted(m["digest"] for m in index["manifests"]) == sorted(r["digest"] for r in report["referrers"])
    # Each referrer's subject is the artifact, and its layer is the attached file.
    for entry in report["referrers"]:
        raw = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{repo}@{entry['digest']}"],
                             capture_output=True, check=True, timeout=120).stdout
        manifest = json.loads(raw)
        assert manifest["subject"]["digest"] == digest
        expected = sbom if manifest["artifactType"] == CYCLONEDX_JSON else statement
        assert manifest["layers"][0]["digest"] == "sha256:" + hashlib.sha256(expected.read_bytes()).hexdigest()
    text = rra("discover", ref)
    assert text.returncode == 0
    assert "2 referrer(s) (from the referrers tag)" in text.stdout and "sbom.cdx.json" in text.stdout
    only = json.loads(rra("discover", ref, "--artifact-type", IN_TOTO_JSON, "-f", "json").stdout)
    assert [r["artifactType"] for r in only["referrers"]] == [IN_TOTO_JSON]


def test_referrers_api_is_used_when_the_registry_has_it(registry: RegistryService, layout: Path) -> None:
    # Distribution 2.8 lacks the API; a stand-in in front of it answers OCI-Subject and serves
    # GET /v2/<name>/referrers/<digest>. No referrers tag may then be written.
    name = repo_name()
    with FaultProxy(registry.host, referrers_api=True) as proxy:
        client = RegistryClient(proxy.host)
        ref = Reference.parse(f"{proxy.host}/{name}:v1")
        result = push_layout(layout, ref, client)
        from rra_tools.oci.referrers import attach_bytes, discover

        referrer = attach_bytes(client, ref, b'{"bomFormat":"CycloneDX"}', CYCLONEDX_JSON, title="sbom.json")
        digest, found, source = discover(client, ref)
    assert digest == result.digest and source == "api"
    assert [r.digest for r in found] == [referrer.digest]
    direct = RegistryClient(registry.host)
    tags = direct.session.get(f"http://{registry.host}/v2/{name}/tags/list", timeout=30).json()["tags"]
    assert tags == ["v1"]


def write_record(artifact: Path) -> Path:
    from rra_tools.model.run_record import RunRecord
    from rra_tools.run.records import record_bytes

    record = RunRecord.model_validate({
        "record_version": "1.0", "artifact_id": "digits-logreg", "artifact_digest": "0" * 64, "launcher": "train",
        "argv": ["python", "train.py", "--seed", "0", "--C", "1.0", "--out", "results/seed-0"], "cwd": ".",
        "parameters": {"C": 1.0}, "seed": 0, "started": "2026-01-01T00:00:00.000000Z",
        "ended": "2026-01-01T00:00:02.500000Z", "duration_s": 2.5, "status": "completed", "exit_status": 0,
        "executor": "local", "timeout_s": 120.0,
        "host": {"os": "Linux 6.8", "machine": "x86_64", "cpus": 2, "python": "cpython 3.11.7",
                 "packages_digest": "1" * 64, "packages": 3},
        "metrics": {"test-accuracy": 96.9},
    })
    path = artifact / "runs" / "train" / "0-20260101T000000.000000Z" / "record.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(record_bytes(record.model_dump(mode="json", exclude_none=True)))
    return path


def test_provenance_is_a_valid_deterministic_statement(registry: RegistryService, artifact: Path,
                                                       tmp_path: Path) -> None:
    record = write_record(artifact)
    layout = tmp_path / "with-runs"
    pack(artifact, layout, ref_name="v1", environ=EPOCH)
    digest = manifest_descriptor(layout)["digest"]
    first, second, packed = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert rra("provenance", str(artifact), "-o", str(first), "--layout", str(layout)).returncode == 0
    assert rra("provenance", str(artifact), "-o", str(second), "--layout", str(layout)).returncode == 0
    made = rra("provenance", str(artifact), "-o", str(packed), env=EPOCH)
    assert made.returncode == 0, made.stderr
    assert first.read_bytes() == second.read_bytes() == packed.read_bytes()
    statement = json.loads(first.read_bytes())
    assert check_statement(statement) == []
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    assert statement["subject"] == [{"name": "digits-logreg", "digest": {"sha256": digest[7:]}}]
    build = statement["predicate"]["buildDefinition"]
    assert build["buildType"] == BUILD_TYPE
    run = build["externalParameters"]["runs"][0]
    assert run["argv"][:2] == ["python", "train.py"] and run["parameters"] == {"C": 1.0} and run["seed"] == 0
    lock = next(d for d in build["resolvedDependencies"] if d["name"] == "requirements.lock")
    assert lock["digest"]["sha256"] == hashlib.sha256((artifact / "requirements.lock").read_bytes()).hexdigest()
    details = statement["predicate"]["runDetails"]
    assert details["metadata"] == {"startedOn": "2026-01-01T00:00:00.000000Z",
                                   "finishedOn": "2026-01-01T00:00:02.500000Z"}
    assert {"name": "runs/train/0-20260101T000000.000000Z/record.json", "mediaType": "application/json",
            "digest": {"sha256": hashlib.sha256(record.read_bytes()).hexdigest()}} in details["byproducts"]
    # Attached to the pushed artifact, it is found again.
    ref = f"{registry.host}/{repo_name()}:v1"
    assert rra("push", str(layout), ref, "-q").returncode == 0
    assert rra("attach", ref, "--provenance", str(first), "-q").returncode == 0
    found = json.loads(rra("discover", ref, "-f", "json").stdout)["referrers"]
    assert [r["artifactType"] for r in found] == [IN_TOTO_JSON]


def test_check_statement_names_what_is_missing() -> None:
    problems = check_statement({"_type": STATEMENT_TYPE, "subject": [{"name": "a", "digest": {"sha256": "XY"}}],
                                "predicateType": PREDICATE_TYPE,
                                "predicate": {"buildDefinition": {"buildType": "nope", "externalParameters": {}},
                                              "runDetails": {"builder": {}}}})
    assert problems == [
        "subject[0].digest.sha256 is not lower-case hex",
        "predicate.buildDefinition.buildType is not a URI",
        "predicate.runDetails.builder.id is not a URI",
    ]


def test_provenance_without_records_is_refused(artifact: Path, tmp_path: Path) -> None:
    made = rra("provenance", str(artifact), "-o", str(tmp_path / "p.json"), "--digest", "sha256:" + "a" * 64)
    assert made.returncode == 1
    assert made.stderr == "error: no run records under 'runs'; run the launchers first ('rra run')\n"
    assert not (tmp_path / "p.json").exists()


def test_references_without_a_registry_host_are_usage_errors(layout: Path) -> None:
    result = rra("push", str(layout), "lab/model:v1")
    assert result.returncode == 2
    assert result.stderr == ("error: reference 'lab/model:v1' has no registry host; write HOST[:PORT]/REPOSITORY:TAG, "
                             "e.g. 'localhost:5000/lab/model:v1'\n")


def test_validate_reads_an_artifact_from_the_registry(registry: RegistryService, layout: Path) -> None:
    ref = f"{registry.host}/{repo_name()}:v1"
    assert rra("push", str(layout), ref, "-q").returncode == 0
    digest = manifest_descriptor(layout)["digest"]
    for target in (f"oci://{ref}", f"oci://{ref.rsplit(':', 1)[0]}@{digest}"):
        checked = rra("validate", target, "-f", "json")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        result = json.loads(checked.stdout)["results"][0]
        assert result["input"] == target and result["valid"] is True
    attached = rra("validate", f"oci://{ref}", "--attach-report")
    assert attached.returncode == 0, attached.stderr
    assert attached.stderr.startswith("attached the validation report sha256:")
    found = json.loads(rra("discover", ref, "-f", "json").stdout)["referrers"]
    assert [(r["artifactType"], r["annotations"]["org.opencontainers.image.title"]) for r in found] == [
        ("application/vnd.rra.report.v1+json", "rra-validation-report.json")]


def test_validate_of_a_missing_artifact_is_unreadable(registry: RegistryService) -> None:
    name = repo_name()
    checked = rra("validate", f"oci://{registry.host}/{name}:v1")
    assert checked.returncode == 2
    assert f"error[RRA001] manifest 'v1' is not in {registry.host}/{name}" in checked.stdout


def test_the_walk_through_in_docs_oci_md_runs(registry: RegistryService, tmp_path: Path) -> None:
    import re

    text = (REPO / "docs" / "oci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    assert "docker-registry serve" in blocks[0]  # the registry itself: the fixture runs one
    script = "\n".join(blocks[1:3]).replace("localhost:5000", registry.host)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
    done = subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pushed {registry.host}/lab/digits:v1 sha256:" in done.stdout
    assert "2 referrer(s) (from the referrers tag)" in done.stdout
    v2 = re.search(rf"pushed {re.escape(registry.host)}/lab/digits:v2 (sha256:[0-9a-f]{{64}})", done.stdout)
    assert v2 is not None
    statement = json.loads(next(tmp_path.glob("tmp.*/provenance.json")).read_bytes())
    assert statement["subject"][0]["digest"]["sha256"] == v2[1][7:]
    assert check_statement(statement) == []


def test_credentials_come_from_the_docker_config(layout: Path, tmp_path: Path) -> None:
    import base64
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        crypt = pytest.importorskip("crypt")  # bcrypt (cost 4: the registry checks it on every request) for htpasswd; gone in Python 3.13
    htpasswd = tmp_path / "htpasswd"
    htpasswd.write_text(f"alice:{crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))}\n")
    service = RegistryService(tmp_path / "registry", htpasswd=htpasswd)
    service.start()
    try:
        ref = f"{service.host}/{repo_name()}:v1"
        home = tmp_path / "home"
        (home / ".docker").mkdir(parents=True)
        token = base64.b64encode(b"alice:s3cret").decode()
        (home / ".docker" / "config.json").write_text(json.dumps({"auths": {service.host: {"auth": token}}}))
        denied = rra("push", str(layout), ref, "-q", env={"HOME": str(tmp_path / "nobody")})
        assert denied.returncode == 1
        assert f"error: {service.host} requires authentication for HEAD" in denied.stderr
        pushed = rra("push", str(layout), ref, "-q", env={"HOME": str(home)})
        assert pushed.returncode == 0, pushed.stderr
        pulled = rra("pull", ref, "-o", str(tmp_path / "out"), "-q", env={"HOME": str(home)})
        assert pulled.returncode == 0, pulled.stderr
        # oras's variables work too; wrong ones are refused with the registry's words.
        again = rra("pull", ref, "-o", str(tmp_path / "out2"), "-q",
                    env={"HOME": str(tmp_path / "nobody"), "ORAS_USER": "alice", "ORAS_PASS": "s3cret"})
        assert again.returncode == 0, again.stderr
        wrong = rra("pull", ref, "-o", str(tmp_path / "out3"), "-q",
                    env={"HOME": str(tmp_path / "nobody"), "ORAS_USER": "alice", "ORAS_PASS": "nope"})
        assert wrong.returncode == 1 and "(401): UNAUTHORIZED" in wrong.stderr
        assert not (tmp_path / "out3").exists()
    finally:
        service.stop()


@pytest.mark.parametrize(("text", "expected"), [
    ("localhost:5000/lab/model:v1", ("localhost:5000", "lab/model", "v1", None)),
    ("oci://registry.example.org/a/b/c", ("registry.example.org", "a/b/c", None, None)),
    ("127.0.0.1:5000/m@sha256:" + "a" * 64, ("127.0.0.1:5000", "m", None, "sha256:" + "a" * 64)),
    ("[::1]:5000/m:t", ("[::1]:5000", "m", "t", None)),
])
def test_references_parse(text: str, expected: tuple[str, str, str | None, str | None]) -> None:
    ref = Reference.parse(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == expected
    assert str(ref) == text.removeprefix("oci://")


@pytest.mark.parametrize(("text", "message"), [
    ("localhost:5000/Lab:v1", "repository 'Lab' in 'localhost:5000/Lab:v1' is not valid: path components are "
                              "lowercase letters and digits separated by '.', '_', '__' or '-'"),
    ("localhost:5000/lab:v 1", "tag 'v 1' in 'localhost:5000/lab:v 1' is not valid (letters, digits, '_', '.', "
                               "'-'; at most 128)"),
    ("localhost:5000/lab@sha256:abc", "digest 'sha256:abc' in 'localhost:5000/lab@sha256:abc' is not "
                                      "sha256:<64 hex> or sha512:<128 hex>"),
])
def test_bad_references_say_what_is_wrong(text: str, message: str) -> None:
    from rra_tools.oci.registry import InvalidReference

    with pytest.raises(InvalidReference) as caught:
        Reference.parse(text)
    assert str(caught.value) == message


def test_plain_http_is_the_default_for_loopback_only() -> None:
    from rra_tools.oci.registry import is_loopback

    assert [is_loopback(h) for h in ("localhost:5000", "127.0.0.2", "[::1]:80", "reg.localhost", "10.0.0.1:5000",
                                     "registry.example.org")] == [True, True, True, True, False, False]
    assert RegistryClient("127.0.0.1:5000").scheme == "http"
    assert RegistryClient("registry.example.org").scheme == "https"
    assert RegistryClient("registry.example.org", plain_http=True).scheme == "http"


def test_the_referrers_tag_follows_the_distribution_spec() -> None:
    assert fallback_tag("sha256:" + "0123456789abcdef" * 4) == "sha256-" + "0123456789abcdef" * 4
    # Longer digests are cut to 64 characters, the algorithm to 32.
    assert fallback_tag("sha512:" + "f" * 128) == "sha512-" + "f" * 64
    assert fallback_tag("a+b" * 20 + ":x") == ("a-b" * 20)[:32] + "-x"


def test_retry_waits_double_up_to_the_cap() -> None:
    from rra_tools.oci.registry import RetryPolicy

    policy = RetryPolicy(attempts=6, backoff_s=0.5, max_backoff_s=8.0)
    assert [policy.wait(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.wait(1, hint=3.0) == 3.0 and policy.wait(1, hint=60.0) == 8.0
