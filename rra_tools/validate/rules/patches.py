"""The patch series is well formed and stays in the code tree (RRA216), statically.

The spec requires every patch of ``code.patches`` to apply cleanly, in order, to the upstream
commit; proving that needs the upstream tree (``rra change verify``). What can be known from the
artifact alone is checked here, without running anything: each patch file is a well-formed
unified diff (``rra_tools.io.unidiff``), every path it touches is relative, free of ``..`` and of
``.git``, and does not lead out of the artifact root through a symlink; and the patches and the
change records agree (no patch listed twice, a patch and the change it names point at each
other, no two patches for one change, change records in the order of their patches). A patch
that names no change is allowed (the spec says SHOULD; ``rra review`` challenges it).

Missing, unreadable or escaping patch files themselves are RRA301-RRA306; here they are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...io.paths import PathIssue, RootResolver, lexical_issue
from ..context import Context, Finding
from . import check

__all__: list[str] = []

#: A patch larger than this is not read (a series of source patches is kilobytes).
MAX_PATCH_BYTES = 64 * 1024 * 1024


@check("RRA216")
def patch_series(ctx: Context) -> Iterator[Finding]:
    """Each patch file is a well-formed unified diff touching paths inside the code tree, and the
    patch series agrees with the change records."""
    code = ctx.section("code")
    patches = list(ctx.items("patches", code))
    if not patches:
        return
    yield from _series_consistency(ctx, patches)
    if ctx.root is None:
        return
    resolver = RootResolver(ctx.root)
    for i, patch in patches:
        rel = patch.get("path")
        if not isinstance(rel, str) or not rel or lexical_issue(rel) is not None:
            continue
        resolved = resolver.resolve(rel, kind="file")
        if resolved.path is None:
            continue  # RRA301-RRA303, RRA306
        pointer = ("code", "patches", i, "path")
        try:
            size = resolved.path.stat().st_size
            if size > MAX_PATCH_BYTES:
                yield Finding("RRA216", f"patch {rel!r} is {size} bytes, more than the {MAX_PATCH_BYTES} "
                              "this check reads; it was not checked", pointer, "split the patch into smaller ones")
                continue
            data = resolved.path.read_bytes()
        except OSError as exc:
            yield Finding("RRA216", f"patch {rel!r} cannot be read: {exc.strerror or exc}", pointer)
            continue
        # Here, not at the top: most manifests list no patch, and then rra validate does without it.
        from ...io.unidiff import DiffProblem, parse_unified_diff

        try:
            parsed = parse_unified_diff(data)
        except DiffProblem as exc:
            yield Finding("RRA216", f"patch {rel!r} is not a well-formed unified diff: {exc}", pointer,
                          "write it with 'git diff' or 'rra change record'; a hand-edited hunk must keep "
                          "the line counts of its '@@' header")
            continue
        for path in parsed.paths:
            problem = _path_problem(resolver, path)
            if problem is not None:
                yield Finding("RRA216", f"patch {rel!r} touches {path!r}, which {problem}", pointer,
                              "a patch may only change files of the code tree, by paths relative to it")


def _path_problem(resolver: RootResolver, path: str) -> str | None:
    issue = lexical_issue(path)
    if issue is PathIssue.ABSOLUTE:
        return "is absolute"
    if issue is not None:
        return "uses '..' to leave the code tree"
    if "\\" in path:
        return "holds a backslash (a Windows reader would write elsewhere)"
    if ".git" in path.split("/"):
        return "is inside .git (applying it would change the repository itself, e.g. its hooks)"
    real = resolver.real_path(path)
    if not resolver.inside(real):
        return f"resolves through a symlink outside the artifact root (to {real!r})"
    return None


def _series_consistency(ctx: Context, patches: list[tuple[int, Mapping[str, Any]]]) -> Iterator[Finding]:
    """The patches and the change records name each other consistently, in the same order."""
    first_at: dict[str, int] = {}
    for i, patch in patches:
        rel = patch.get("path")
        if not isinstance(rel, str):
            continue
        if rel in first_at:
            yield Finding("RRA216", f"patch {rel!r} is listed twice in code.patches (entries {first_at[rel]} and "
                          f"{i}): the series would apply it twice", ("code", "patches", i, "path"),
                          "remove the second entry")
        else:
            first_at[rel] = i
    changes: dict[str, tuple[int, Mapping[str, Any]]] = {}
    duplicated: set[str] = set()
    for j, c in ctx.items("changes"):
        if isinstance(c.get("id"), str):
            if c["id"] in changes:
                duplicated.add(c["id"])  # RRA202's finding; which of them a patch means is unknowable
            changes[c["id"]] = (j, c)
    named_by: dict[str, tuple[int, str]] = {}
    for i, patch in patches:
        rel, change_id = patch.get("path"), patch.get("change")
        if not isinstance(change_id, str) or change_id not in changes or change_id in duplicated:
            continue  # no change named, an unknown one (RRA201) or an ambiguous one (RRA202)
        if change_id in named_by:
            other_i, other = named_by[change_id]
            yield Finding("RRA216", f"patches {other!r} (entry {other_i}) and {rel!r} (entry {i}) both name change "
                          f"{change_id!r}; a change record has one patch", ("code", "patches", i, "change"),
                          "record one change per patch ('rra change record' does)")
        else:
            named_by[change_id] = (i, str(rel))
        j, change = changes[change_id]
        its_patch = change.get("patch")
        # A change whose patch is not in code.patches at all is RRA201's finding.
        if isinstance(its_patch, str) and its_patch != rel and its_patch in first_at:
            yield Finding("RRA216", f"patch {rel!r} names change {change_id!r}, whose patch is {its_patch!r}",
                          ("code", "patches", i, "change"), "make the patch and its change record name each other")
    # Change records in the order of their patches: the log reads in the order the series applies.
    order = [(first_at[c["patch"]], j, str(c.get("id"))) for j, c in ctx.items("changes")
             if isinstance(c.get("patch"), str) and c["patch"] in first_at]
    for (pa, _, ca), (pb, jb, cb) in zip(order, order[1:], strict=False):
        if pb < pa:
            yield Finding("RRA216", f"change {cb!r} comes after change {ca!r} but its patch applies before "
                          f"theirs (code.patches entries {pb} and {pa})", ("changes", jb, "patch"),
                          "list the change records in the order of code.patches")
