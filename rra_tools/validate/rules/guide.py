"""The reproduction guide in sync with the manifest (RRA215).

Only a guide written by ``rra guide`` is compared (its first line is the generator's marker): a
guide written by hand has no rendering to compare with. The comparison covers the part rendered
from the manifest; the section rendered from run records (after the records marker) changes
with every run and is ``rra guide --check``'s business, not validation's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...guide_text import guide_path, is_generated, manifest_part, render_guide
from ...io.limits import MAX_MANIFEST_BYTES
from ...io.paths import resolve_inside
from ..context import Context, Finding
from . import check

__all__: list[str] = []


@check("RRA215")
def guide_in_sync(ctx: Context) -> Iterator[Finding]:
    """A generated guide whose manifest part differs from the rendering of this manifest."""
    if ctx.root is None:
        return
    rel = guide_path(ctx.data)
    resolved = resolve_inside(ctx.root, rel, kind="file")
    if resolved.path is None or resolved.issue is not None:
        return  # missing or unsafe paths are RRA301-RRA306 (declared) or no guide at all (default)
    try:
        if resolved.path.stat().st_size > 2 * MAX_MANIFEST_BYTES:
            return
        text = resolved.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if not is_generated(text):
        return
    expected = render_guide(ctx.data)
    if manifest_part(text) == expected:
        return
    got, want = manifest_part(text).splitlines(), expected.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    pointer = ("guide", "path") if isinstance(ctx.data.get("guide"), Mapping) else ()
    yield Finding("RRA215", f"the guide {rel!r} is out of sync with the manifest (first difference at line "
                  f"{line + 1})", pointer, "run 'rra guide' to regenerate it")
