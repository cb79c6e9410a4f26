"""``rra review --env container``: the clean-shell runs of a review in the artifact's image, through
a real engine (Podman's Docker-compatible service started by the test setup, with the busybox
image of ``tests/services/podman.py``). The artifact pins that image by digest and has no lock:
in a container the image is the environment, so the review runs (a local review would refuse,
RRA910)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..rra_cli import rra
from ..services.podman import PodmanService


def manifest(image: str) -> dict[str, Any]:
    fingerprint = {"hardware": "x86_64", "software": "busybox"}
    return {
        "rra_version": "1.0",
        "id": "container-review",
        "title": "A review in a container",
        "paper": {"title": "Container review", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}, "image": image,
                        "hardware": {"cpu_cores": 1, "ram_gib": 1}},
        "launchers": [{
            "id": "score", "argv": ["sh", "score.sh", "{seed}"], "seeds": [0, 1, 2],
            "resources": {"timeout_s": 30, "expected_runtime_s": 1},
            "outputs": [{"id": "metrics", "path": "out/{seed}.json", "format": "json"}]}],
        "claims": [{
            "id": "score", "paper_location": {"table": "1"}, "launcher": "score",
            "metric": {"name": "score", "unit": "", "direction": "higher"},
            "extract": {"output": "metrics", "json_pointer": "/score"},
            "reported": {"value": 0.5, "precision": 1},
            "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": fingerprint} for s in range(3)]},
        }],
    }


def test_review_in_the_container_image(tmp_path: Path, podman: PodmanService) -> None:
    root = tmp_path / "art"
    root.mkdir()
    (root / "score.sh").write_text('mkdir -p out && printf \'{"score": 0.5}\\n\' > "out/$1.json"\n', encoding="utf-8")
    (root / "rra.yaml").write_text(json.dumps(manifest(podman.repo_digests[0]), indent=1), encoding="utf-8")
    engine = ("--engine-url", podman.url)
    ran = rra("run", str(root), "--all", "--executor", "container", *engine, "-q")
    assert ran.returncode == 0, ran.stderr
    assert rra("guide", str(root)).returncode == 0
    proc = rra("review", str(root), "--env", "container", *engine)
    report = json.loads((root / ".rra" / "review" / "review.json").read_text(encoding="utf-8"))
    # Only the validator's lock warning (RRA404) and its note on three observations (RRA503): the
    # review itself finds nothing.
    assert [f["code"] for f in report["findings"]] == ["RRA404", "RRA503"], report["findings"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["passed"] is True and report["clean_shell"] == "pass"
    assert report["environment"]["mode"] == "container"
    assert podman.image_id in report["environment"]["detail"]
    assert [(r["seed"], r["successful"], r["same_outputs"]) for r in report["runs"]] == [
        (0, True, True), (1, True, True), (2, True, True)]
    record = json.loads((root / report["runs"][0]["record"]).read_text(encoding="utf-8"))
    assert record["executor"] == "container" and record["container"]["image_id"] == podman.image_id
    # Without a lock the artifact is not 'available', so no level is met, by the records or the review.
    assert report["levels"] == {"claimed": [], "recorded": [], "reviewed": []}
