"""rra guide: REPRODUCE.md rendered from the manifest and run records, --check, and RRA215."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml

from rra_tools.guide_text import MARKER, RECORDS_MARKER, manifest_part, render_guide
from tests.rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits-logreg"
GPU = REPO / "conformance" / "v1.0" / "bases" / "gpu"


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / src.name
    shutil.copytree(src, dest, symlinks=True)
    return dest


def test_guide_is_written_and_regenerated_byte_identically(tmp_path: Path) -> None:
    art = _copy(DIGITS, tmp_path)
    first = rra("guide", str(art))
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"{art / 'REPRODUCE.md'}: written\n"
    before = (art / "REPRODUCE.md").read_bytes()
    second = rra("guide", str(art))
    assert second.stdout == f"{art / 'REPRODUCE.md'}: up to date\n"
    assert (art / "REPRODUCE.md").read_bytes() == before
    (art / "REPRODUCE.md").unlink()
    rra("guide", str(art))
    assert (art / "REPRODUCE.md").read_bytes() == before
    text = before.decode()
    assert text.startswith(MARKER + "\n")
    for line in ("rra env create .", "rra run . train --all-seeds --env locked",
                 "- Runs `python train.py --seed {seed} --C {C} --out results/seed-{seed}` in `.`",
                 "- Seeds: 0, 1, 2, 3, 4 (one run each; `--seed N` runs one).",
                 "- Expected runtime: 2 s per run (10 s for all 5 seeds); timeout 2 min.",
                 "- Resources per run: 0 GPU(s), 1 CPU core(s), 1 GiB RAM.",
                 "| `train` | `metrics` | `results/seed-{seed}/metrics.json` | json |",
                 "- Extraction: JSON pointer `/test/accuracy`, multiplied by 100.",
                 "- Aggregation: mean over seeds 0, 1, 2, 3, 4.",
                 "- In the paper: Table 1, row Logistic regression, column Accuracy (%); printed as 96.9 %."):
        assert line in text, line
    assert rra("validate", str(art)).returncode == 0


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+\.\d+", text))


def test_no_reference_observation_value_appears(tmp_path: Path) -> None:
    for src in (DIGITS, GPU):
        art = _copy(src, tmp_path / src.name)
        assert rra("guide", "--force", "-o", str(tmp_path / f"{src.name}.md"), str(art)).returncode == 0
        text = (tmp_path / f"{src.name}.md").read_text()
        data = yaml.safe_load((art / "rra.yaml").read_text())
        for claim in data["claims"]:
            for obs in claim["reference"]["observations"]:
                value = float(obs["value"])
                shown = {repr(value), f"{value:g}", f"{value:.1f}", f"{value:.2f}", f"{value:.3f}"}
                # The paper's printed value may be shown (it is in the paper), even when an
                # observation rounds to it.
                shown.discard(f"{claim['reported']['value']:.{claim['reported']['precision']}f}")
                assert not shown & _numbers(text), (claim["id"], value)
            assert "interval" not in text.replace("the reference interval recorded in the manifest", "")


def test_changes_discrepancies_image_and_records_are_rendered(tmp_path: Path) -> None:
    art = _copy(GPU, tmp_path)
    refused = rra("guide", str(art))
    assert refused.returncode == 1
    assert refused.stderr == (f"error: {art / 'GUIDE.md'} was not written by 'rra guide'; it is left as it is\n"
                              "hint: pass --force to replace it, or -o FILE to write the guide elsewhere\n")
    assert rra("guide", "--force", str(art)).returncode == 0
    text = (art / "GUIDE.md").read_text()
    for line in ("### Change `smoothing-target` (bug-fix)",
                 "- Rationale: The released code smoothed only the one-hot labels.",
                 "- Alters the paper's method: yes.",
                 "### Discrepancy `warmup-epochs`",
                 "- This artifact follows the code: The authors confirmed that the released configuration "
                 "produced Table 2.",
                 "rra run . --all --executor container",
                 "- Extraction: CSV column `error`, the row where `split=test`.",
                 "- Extraction: regular expression `val_loss=([0-9]+\\.[0-9]+)`, group 1, last match.",
                 "- Resources per run: 1 GPU(s), 24 GiB per GPU, 8 CPU core(s), 32 GiB RAM.",
                 RECORDS_MARKER, "| `train` | 1 | 0 | ? |"):
        assert line in text, line
    # A new run record changes the records section: --check sees it, validate does not.
    record = next((art / "evidence" / "runs").rglob("*.json"))
    extra = record.parent.parent / "seed-1" / "record.json"
    extra.parent.mkdir(parents=True)
    data = json.loads(record.read_text())
    data.update(seed=1, duration_s=3.25)
    extra.write_text(json.dumps(data))
    check = rra("guide", "--check", str(art))
    assert check.returncode == 1
    assert check.stderr.startswith(f"{art / 'GUIDE.md'}: out of sync (1 hunk(s), 1 line(s) to add, 1 to remove)")
    assert "+| `train` | 2 | 0, 1 | 3.2 s |" in check.stderr
    assert rra("validate", str(art)).returncode == 0


def test_check_and_validate_see_a_manifest_edit(tmp_path: Path) -> None:
    art = _copy(DIGITS, tmp_path)
    assert rra("guide", str(art)).returncode == 0
    assert rra("guide", "--check", str(art)).returncode == 0
    manifest = art / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("timeout_s: 120", "timeout_s: 300"))
    check = rra("guide", "--check", str(art))
    assert check.returncode == 1
    assert "-- Expected runtime: 2 s per run (10 s for all 5 seeds); timeout 2 min." in check.stderr
    assert "+- Expected runtime: 2 s per run (10 s for all 5 seeds); timeout 5 min." in check.stderr
    validate = rra("validate", str(art))
    assert "RRA215" in validate.stdout
    assert "the guide 'REPRODUCE.md' is out of sync with the manifest (first difference at line 42)" \
        in validate.stdout
    assert rra("guide", str(art)).returncode == 0
    assert "RRA215" not in rra("validate", str(art)).stdout


def test_check_of_a_missing_guide_fails() -> None:
    result = rra("guide", "--check", str(DIGITS))
    assert result.returncode == 1
    assert result.stderr == f"{DIGITS.resolve() / 'REPRODUCE.md'}: missing; run 'rra guide' to write it\n"


def test_manifest_part_ignores_the_records_section() -> None:
    data = yaml.safe_load((DIGITS / "rra.yaml").read_text())
    plain = render_guide(data)
    with_records = render_guide(data, "## Recorded runs\n\nrows\n")
    assert with_records.startswith(plain) and manifest_part(with_records) == plain
    assert render_guide(data) == plain


def test_a_claim_read_from_standard_output_and_a_labelled_table() -> None:
    """Issue 24: a claim with extract.stream gave "Source: output `None` (`?`)", and a table value
    that says "Table" already gave "Table Table 1"."""
    data = yaml.safe_load((DIGITS / "rra.yaml").read_text())
    claim = data["claims"][0]
    claim["paper_location"] = {"table": "Table 1", "figure": "Fig. 2", "row": "Logistic regression"}
    claim["extract"] = {"stream": "stdout", "regex": {"pattern": "test_accuracy=([0-9.]+)"}, "scale": 100}
    text = render_guide(data)
    assert "- Source: the standard output (`stdout`, in each run's `stdout.log`) of launcher `train`." in text
    assert "output `None`" not in text and "(`?`)" not in text
    assert "- In the paper: Table 1, Fig. 2, row Logistic regression; printed as 96.9 %." in text
    assert "Table Table" not in text
    claim["extract"] = {"stream": "stderr", "regex": {"pattern": "acc ([0-9.]+)"}}
    claim["paper_location"] = {"table": "2", "figure": "3b", "section": "§4.1"}
    text = render_guide(data)
    assert "- Source: the standard error (`stderr`, in each run's `stderr.log`) of launcher `train`." in text
    assert "- In the paper: Table 2, Figure 3b, §4.1; printed as 96.9 %." in text
