"""Everything an artifact depends on is pinned: commit, image digest, lock, GPU requirements."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..context import Context, Finding
from . import check
from ._numbers import as_number

__all__ = ["commit_findings", "image_findings"]

# \Z, not $: Python's $ also matches before a final line break, so "<40 hex>\n" would pass.
_COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}\Z")


def commit_findings(ctx: Context) -> list[Finding]:
    """RRA401 findings (shared with the level computation)."""
    upstream = ctx.section("code").get("upstream")
    if not isinstance(upstream, Mapping) or not isinstance(upstream.get("commit"), str):
        return []
    commit = upstream["commit"]
    if _COMMIT.match(commit):
        return []
    if re.fullmatch(r"[0-9a-fA-F]{40}", commit):
        hint = "write the commit in lower case"
    elif re.fullmatch(r"[0-9a-fA-F]{4,39}", commit):
        hint = "abbreviated commits are ambiguous: use the full 40-hex id ('git rev-parse HEAD')"
    else:
        hint = "branches and tags move: use the full 40-hex commit id ('git rev-parse HEAD')"
    return [Finding("RRA401", f"commit {commit!r} is not a full 40-hex commit id", ("code", "upstream", "commit"),
                    hint)]


def image_findings(ctx: Context) -> list[Finding]:
    """RRA402 findings (shared with the level computation)."""
    image = ctx.section("environment").get("image")
    if not isinstance(image, str) or _DIGEST.search(image):
        return []
    name = image.rsplit("/", 1)[-1]
    tag = name.split(":", 1)[1] if ":" in name else "latest (implied)"
    return [Finding("RRA402", f"image {image!r} is pinned by tag {tag!r}, not by digest", ("environment", "image"),
                    "append the digest: 'name@sha256:<64 hex>' (e.g. from 'docker buildx imagetools inspect')")]


@check("RRA401")
def commit_pinned(ctx: Context) -> list[Finding]:
    """The upstream commit is a full 40-hex id."""
    return commit_findings(ctx)


@check("RRA402")
def image_pinned(ctx: Context) -> list[Finding]:
    """The container image is referenced by digest."""
    return image_findings(ctx)


@check("RRA404")
def lock_present(ctx: Context) -> Iterator[Finding]:
    """The environment has a lock file."""
    env = ctx.data.get("environment")
    if isinstance(env, Mapping) and env.get("lock") is None:
        yield Finding("RRA404", "environment has no lock file; packages are not pinned with hashes",
                      ("environment",), "add lock: {path, format, sha256} (e.g. a PEP 751 pylock.toml)")


_number = as_number


@check("RRA403")
def gpu_requirements(ctx: Context) -> Iterator[Finding]:
    """GPUs that launchers request are declared in the hardware block, with CUDA minimums."""
    env = ctx.section("environment")
    raw_hardware = env.get("hardware")
    hardware: Mapping[str, Any] = raw_hardware if isinstance(raw_hardware, Mapping) else {}
    accelerators = [a for _, a in ctx.items("accelerators", hardware)]
    total = sum(int(a["count"]) for a in accelerators if isinstance(a.get("count"), int))
    memories = [m for m in (_number(a.get("memory_gib")) for a in accelerators) if m is not None]
    wants_gpu = False
    for i, launcher in ctx.items("launchers"):
        resources = launcher.get("resources")
        if not isinstance(resources, Mapping):
            continue
        gpus = resources.get("gpus")
        if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0:
            wants_gpu = True
            if gpus > total:
                yield Finding("RRA403", f"launcher {launcher.get('id')!r} needs {gpus} GPU(s), the hardware block "
                              f"declares {total}", ("launchers", i, "resources", "gpus"),
                              "declare environment.hardware.accelerators with vendor, model, count and memory_gib")
            memory = _number(resources.get("gpu_memory_gib"))
            if memory is not None and memories and memory > max(memories):
                yield Finding("RRA403", f"launcher {launcher.get('id')!r} needs {memory:g} GiB per GPU, the largest "
                              f"declared accelerator has {max(memories):g} GiB",
                              ("launchers", i, "resources", "gpu_memory_gib"))
    if wants_gpu and any(a.get("vendor") == "nvidia" for a in accelerators) and env.get("cuda") is None:
        yield Finding("RRA403", "NVIDIA accelerators are required but environment.cuda gives no CUDA/driver minimum",
                      ("environment",), "add cuda: {min_version: '12.1', min_driver: '530.30.02'}")
