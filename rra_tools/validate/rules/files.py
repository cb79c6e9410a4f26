"""Paths stay inside the artifact root; referenced files exist and match their digests and sizes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ...io.digest import DigestPool
from ...io.ignore import IGNORE_FILE
from ...io.links import LinkTree
from ...io.paths import PathIssue, RootResolver, lexical_issue
from ...io.tree import walk_tree
from ..context import Context, Finding, Pointer, strings
from ..diagnostics import Severity
from . import check

__all__ = ["PathRef", "files", "path_refs", "tree_links"]


class PathRef(NamedTuple):
    """One path the manifest mentions and what must hold of it."""

    pointer: Pointer
    path: str
    #: 'file' or 'dir' when it must exist as such; None when it is only checked for escaping.
    must_exist: str | None
    sha256: str | None = None
    size: int | None = None


def path_refs(ctx: Context) -> list[PathRef]:
    """Every path in the manifest, in document order."""
    refs: list[PathRef] = []

    def add(pointer: Pointer, value: Any, must_exist: str | None, sha256: Any = None, size: Any = None) -> None:
        if isinstance(value, str) and value:
            refs.append(PathRef(pointer, value, must_exist, sha256 if isinstance(sha256, str) else None,
                                size if isinstance(size, int) and not isinstance(size, bool) else None))

    paper, code, env = ctx.section("paper"), ctx.section("code"), ctx.section("environment")
    add(("paper", "citation_file"), paper.get("citation_file"), "file")
    tree = code.get("tree")
    if isinstance(tree, Mapping):
        add(("code", "tree", "path"), tree.get("path"), "dir")
    for i, patch in ctx.items("patches", code):
        add(("code", "patches", i, "path"), patch.get("path"), "file", patch.get("sha256"))
    package = env.get("package")
    if isinstance(package, Mapping):
        add(("environment", "package", "path"), package.get("path"), "dir")
    lock = env.get("lock")
    if isinstance(lock, Mapping):
        add(("environment", "lock", "path"), lock.get("path"), "file", lock.get("sha256"))
    for i, source in ctx.items("data"):
        shipped = source.get("shipped") is True
        for j, item in ctx.items("files", source):
            add(("data", i, "files", j, "path"), item.get("path"), "file" if shipped else None,
                item.get("sha256") if shipped else None, item.get("size") if shipped else None)
    for i, launcher in ctx.items("launchers"):
        cwd = launcher.get("cwd")
        # A templated cwd is only known at run time.
        add(("launchers", i, "cwd"), cwd, "dir" if isinstance(cwd, str) and "{" not in cwd else None)
        # Written out rather than through add(): 20,000 outputs in the benchmark manifest.
        outputs = launcher.get("outputs")
        if isinstance(outputs, list):
            for j, output in enumerate(outputs):
                if type(output) is dict or isinstance(output, Mapping):
                    path = output.get("path")
                    if isinstance(path, str) and path:
                        refs.append(PathRef(("launchers", i, "outputs", j, "path"), path, None))
    # A run_record is a key written in the text: without it (or a backslash) the 50,000
    # observations of the benchmark manifest need no look.
    if ctx.may_contain("run_record"):
        for i, claim in ctx.items("claims"):
            reference = claim.get("reference")
            if isinstance(reference, Mapping):
                for j, obs in ctx.items("observations", reference):
                    add(("claims", i, "reference", "observations", j, "run_record"), obs.get("run_record"),
                        "file")
    for i, change in ctx.items("changes"):
        for j, name in strings(change.get("files")):
            add(("changes", i, "files", j), name, None)
        add(("changes", i, "patch"), change.get("patch"), None)
    guide = ctx.data.get("guide")
    if isinstance(guide, Mapping):
        add(("guide", "path"), guide.get("path"), "file")
    evidence = ctx.data.get("evidence")
    if isinstance(evidence, Mapping):
        add(("evidence", "run_records"), evidence.get("run_records"), None)
    return refs


@check("RRA301", "RRA302", "RRA303", "RRA304", "RRA305", "RRA306")
def files(ctx: Context) -> list[Finding]:
    """Paths stay inside the root; files exist, are regular, and match digest and size."""
    # Memoised: the level computation needs the same answers.
    if "file_findings" not in ctx.memo:
        ctx.memo["file_findings"] = list(_file_findings(ctx))
    found: list[Finding] = ctx.memo["file_findings"]
    return found


def _file_findings(ctx: Context) -> Iterator[Finding]:
    # Hashing starts as soon as a file resolves, overlapping the checks of the paths after it.
    with DigestPool(deadline=ctx.deadline) as pool:
        yield from _check_paths(ctx, pool)


def _check_paths(ctx: Context, pool: DigestPool) -> Iterator[Finding]:
    to_hash: list[tuple[PathRef, Path]] = []
    resolver = RootResolver(ctx.root) if ctx.root is not None else None
    for ref in path_refs(ctx):
        issue = lexical_issue(ref.path)
        if issue is not None:
            how = "is absolute" if issue is PathIssue.ABSOLUTE else "uses '..'"
            yield Finding("RRA301", f"path {ref.path!r} {how} and leaves the artifact root", ref.pointer,
                          "write the path relative to the artifact root, without '..'")
            continue
        if resolver is None:
            continue  # bytes without a directory: nothing on disk to check
        if ref.must_exist is None:
            # Only escaping is checked (outputs do not exist before a run): no stat needed.
            real = resolver.leads_out(ref.path)
            if real is not None:
                yield Finding("RRA302", f"path {ref.path!r} resolves outside the artifact root (to {real!r})",
                              ref.pointer, "replace the symlink by the file itself")
            continue
        resolved = resolver.resolve(ref.path, kind=ref.must_exist)
        if resolved.issue is PathIssue.SYMLINK_ESCAPE:
            yield Finding("RRA302", f"path {ref.path!r} resolves outside the artifact root (to {resolved.detail!r})",
                          ref.pointer, "replace the symlink by the file itself")
        elif ref.must_exist is None:
            continue
        elif resolved.issue is PathIssue.MISSING:
            detail = f" ({resolved.detail})" if resolved.detail else ""
            yield Finding("RRA303", f"{'directory' if ref.must_exist == 'dir' else 'file'} {ref.path!r} "
                          f"does not exist{detail}", ref.pointer, "add it to the artifact or fix the path")
        elif resolved.issue in (PathIssue.NOT_REGULAR, PathIssue.NOT_DIRECTORY):
            expected = "a directory" if ref.must_exist == "dir" else "a regular file"
            yield Finding("RRA306", f"{ref.path!r} is {resolved.detail}, not {expected}", ref.pointer)
        elif resolved.path is not None and ref.must_exist == "file":
            if ref.size is not None:
                actual = resolved.path.stat().st_size
                if actual != ref.size:
                    yield Finding("RRA305", f"file {ref.path!r} has {actual} bytes, the manifest says {ref.size}",
                                  ref.pointer[:-1] + ("size",), "update size (and sha256) or restore the file")
                    continue
            if ref.sha256 is not None:
                to_hash.append((ref, resolved.path))
                pool.submit(resolved.path)
    digests = pool.results()
    ctx.memo["digests"] = digests
    for ref, path in to_hash:
        digest = digests[path]
        if isinstance(digest, TimeoutError):
            continue  # the engine reports the exhausted budget once
        if isinstance(digest, OSError):
            yield Finding("RRA303", f"file {ref.path!r} cannot be read: {digest.strerror or digest}", ref.pointer)
        elif digest != ref.sha256:
            yield Finding("RRA304", f"sha256 of {ref.path!r} is {digest}, the manifest says {ref.sha256}",
                          ref.pointer[:-1] + ("sha256",), f"if the file is right, record sha256: {digest}")


@check("RRA302")
def tree_links(ctx: Context) -> Iterator[Finding]:
    """Every symbolic link of the tree that a pack holds leads inside the root, through the others.

    The manifest's own paths are resolved on disk by :func:`files`; the links no path names
    (a ``data -> /nfs/lab`` left in the tree, a chain ``c -> a/b/lnk/../../..`` through
    ``a/b/lnk -> ../..``) would still be packed, and every reader of the unpacked copy would
    follow them out. They are judged from the list of links alone, as ``rra pack`` and the
    unpacker judge them (:class:`~rra_tools.io.links.LinkTree`), so nothing outside is touched.
    """
    if ctx.root is None:
        return
    links = LinkTree("the artifact")
    unread: list[tuple[str, OSError]] = []
    for count, (rel, item) in enumerate(walk_tree(ctx.root, unreadable=lambda d, e: unread.append((d, e)))):
        if count % 4096 == 0 and ctx.expired():
            return  # the engine reports the exhausted budget once
        if item.is_symlink():
            try:
                target = os.readlink(item.path)
            except OSError:
                continue  # removed while walking: nothing left to follow
            links.add(rel, target)
    for rel, exc in unread:
        yield Finding("RRA302", f"directory {rel!r} cannot be read ({exc.strerror or exc}), so the symbolic "
                      "links in it were not checked", (), f"make it readable, or list it in {IGNORE_FILE} "
                      "('rra pack' refuses it too)", severity=Severity.WARNING, file=rel)
    if not links:
        return
    # A link a manifest path goes through is reported there already, with the path's pointer.
    named: set[str] | None = None
    for problem in links.problems():
        if not problem.leaves_root:
            continue  # a loop leads nowhere: a reader fails on it, and a named path gets RRA303
        if named is None:  # only once a link leaves the root: most trees have none
            named = _named_prefixes(path_refs(ctx))
        if problem.path in named:
            continue
        yield Finding("RRA302", f"symbolic link {problem.path!r} -> {problem.target!r} {problem.why}", (),
                      f"replace the link by what it points to, remove it, or list it in {IGNORE_FILE}: "
                      f"'rra pack' refuses it and no unpacked copy could follow it", file=problem.path)


def _named_prefixes(refs: list[PathRef]) -> set[str]:
    """Each path as written and each of its prefixes that a '/' follows: a link is named by a
    path when it is one of them (one set look-up per link instead of a scan of every path)."""
    out: set[str] = set()
    for ref in refs:
        path = ref.path
        out.add(path)
        end = path.find("/")
        while end >= 0:
            out.add(path[:end])
            end = path.find("/", end + 1)
    return out
