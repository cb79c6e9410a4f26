"""The files rule (RRA301-RRA306) and the schema layer's shortcuts find exactly what the plain
versions find.

The shortcuts compared here:

- :meth:`RootResolver.leads_out` answers a path below a folder that is missing inside the root
  without a step (nothing below a missing folder can be a symlink), and the resolver remembers
  the place of each folder part of a path as written;
- :func:`lexical_issue` splits a path only when it holds '..';
- :func:`path_refs` looks at the claims' observations only when the text may hold ``run_record``
  (``Context.may_contain``);
- :func:`tree_links` asks whether a manifest path goes through a link by one look-up in the set
  of the paths' prefixes, made only once a link leaves the root;
- the schema layer asks the compiled validator about a manifest declaring an older version
  against the schema with every newer field refused (``refusing_schema``): valid there means
  valid and no RRA102, with no walk for the newer fields.

Each is compared with the straightforward version, copied below as it was before the
shortcuts, over every conformance case (with its tree) and example, over generated trees
with symlinks in and out of the root, chains of them, loops, missing folders and files where
folders are expected, and over manifests with fields of a later version written plainly and
with escapes.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rra_tools.conformance import load_suite, materialise, suite_path
from rra_tools.io.digest import DigestPool
from rra_tools.io.errors import LoadError
from rra_tools.io.paths import PathIssue, RootResolver, lexical_issue
from rra_tools.io.read.source import decode_text, parse_document
from rra_tools.validate.api import find_manifest
from rra_tools.validate.context import Context, Finding, Pointer, strings
from rra_tools.io.limits import INT_MAX, INT_MIN, out_of_range_integers, out_of_range_message
from rra_tools.validate.rules.files import files, path_refs, tree_links
from rra_tools.validate.schema_layer import (
    _RANGE, _VALUE, FAST_PATH_MIN_VALUES, _findings, _validator, check_schema, declared_version, manifest_schema,
    refusing_schema)

from .test_validate_shortcuts import newer_fields_walk  # the plain RRA102 walk, kept once

ROOT = Path(__file__).resolve().parents[2]


# The plain versions, as they were before the shortcuts -------------------------------------


def plain_lexical_issue(rel: str) -> PathIssue | None:
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":" and rel[0].isalpha()):
        return PathIssue.ABSOLUTE
    if any(part == ".." for part in rel.replace("\\", "/").split("/")):
        return PathIssue.PARENT
    return None


class PlainResolver:
    """The root resolver with one cached real path per normalised prefix and no other memory."""

    def __init__(self, root: Path) -> None:
        self.real_root = os.path.realpath(root)
        self._dirs: dict[str, str] = {"": self.real_root}
        self._absent: set[str] = set()

    def real_path(self, rel: str) -> str:
        real, prefix, absent = self.real_root, "", False
        for part in posixpath.normpath(rel).split("/"):
            if part in (".", ""):
                continue
            prefix = f"{prefix}/{part}" if prefix else part
            cached = self._dirs.get(prefix)
            if cached is None:
                cached = os.path.join(real, part)
                if absent:
                    self._absent.add(prefix)
                else:
                    try:
                        mode = os.lstat(cached).st_mode
                    except (OSError, ValueError):
                        self._absent.add(prefix)
                    else:
                        if stat.S_ISLNK(mode):
                            cached = os.path.realpath(cached)
                self._dirs[prefix] = cached
            real = cached
            absent = prefix in self._absent
        return real

    def inside(self, real: str) -> bool:
        return real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)

    def resolve(self, rel: str, kind: str) -> tuple[Path | None, PathIssue | None, str]:
        real = self.real_path(rel)
        if not self.inside(real):
            return None, PathIssue.SYMLINK_ESCAPE, real
        try:
            info = os.stat(real)
        except FileNotFoundError:
            return None, PathIssue.MISSING, ""
        except OSError as exc:
            return None, PathIssue.MISSING, exc.strerror or str(exc)
        if kind == "file" and not stat.S_ISREG(info.st_mode):
            return None, PathIssue.NOT_REGULAR, _describe(info.st_mode)
        if kind == "dir" and not stat.S_ISDIR(info.st_mode):
            return None, PathIssue.NOT_DIRECTORY, _describe(info.st_mode)
        return Path(real), None, ""


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


@dataclass(frozen=True)
class PlainRef:
    pointer: Pointer
    path: str
    must_exist: str | None
    sha256: str | None = None
    size: int | None = None


def plain_path_refs(ctx: Context) -> list[PlainRef]:
    refs: list[PlainRef] = []

    def add(pointer: Pointer, value: Any, must_exist: str | None, sha256: Any = None, size: Any = None) -> None:
        if isinstance(value, str) and value:
            refs.append(PlainRef(pointer, value, must_exist, sha256 if isinstance(sha256, str) else None,
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
        add(("launchers", i, "cwd"), cwd, "dir" if isinstance(cwd, str) and "{" not in cwd else None)
        for j, output in ctx.items("outputs", launcher):
            add(("launchers", i, "outputs", j, "path"), output.get("path"), None)
    for i, claim in ctx.items("claims"):
        reference = claim.get("reference")
        if isinstance(reference, Mapping):
            for j, obs in ctx.items("observations", reference):
                add(("claims", i, "reference", "observations", j, "run_record"), obs.get("run_record"), "file")
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


def plain_file_findings(ctx: Context) -> Iterator[Finding]:
    """RRA301-RRA306 with a real path and a containment test per path."""
    with DigestPool(deadline=ctx.deadline) as pool:
        to_hash: list[tuple[PlainRef, Path]] = []
        resolver = PlainResolver(ctx.root) if ctx.root is not None else None
        for ref in plain_path_refs(ctx):
            issue = plain_lexical_issue(ref.path)
            if issue is not None:
                how = "is absolute" if issue is PathIssue.ABSOLUTE else "uses '..'"
                yield Finding("RRA301", f"path {ref.path!r} {how} and leaves the artifact root", ref.pointer,
                              "write the path relative to the artifact root, without '..'")
                continue
            if resolver is None:
                continue
            if ref.must_exist is None:
                real = resolver.real_path(ref.path)
                if not resolver.inside(real):
                    yield Finding("RRA302", f"path {ref.path!r} resolves outside the artifact root (to {real!r})",
                                  ref.pointer, "replace the symlink by the file itself")
                continue
            path, found, detail = resolver.resolve(ref.path, ref.must_exist)
            if found is PathIssue.SYMLINK_ESCAPE:
                yield Finding("RRA302", f"path {ref.path!r} resolves outside the artifact root (to {detail!r})",
                              ref.pointer, "replace the symlink by the file itself")
            elif found is PathIssue.MISSING:
                detail = f" ({detail})" if detail else ""
                yield Finding("RRA303", f"{'directory' if ref.must_exist == 'dir' else 'file'} {ref.path!r} "
                              f"does not exist{detail}", ref.pointer, "add it to the artifact or fix the path")
            elif found in (PathIssue.NOT_REGULAR, PathIssue.NOT_DIRECTORY):
                expected = "a directory" if ref.must_exist == "dir" else "a regular file"
                yield Finding("RRA306", f"{ref.path!r} is {detail}, not {expected}", ref.pointer)
            elif path is not None and ref.must_exist == "file":
                if ref.size is not None:
                    actual = path.stat().st_size
                    if actual != ref.size:
                        yield Finding("RRA305", f"file {ref.path!r} has {actual} bytes, the manifest says {ref.size}",
                                      ref.pointer[:-1] + ("size",), "update size (and sha256) or restore the file")
                        continue
                if ref.sha256 is not None:
                    to_hash.append((ref, path))
                    pool.submit(path)
        digests = pool.results()
        for ref, path in to_hash:
            digest = digests[path]
            if isinstance(digest, OSError):
                yield Finding("RRA303", f"file {ref.path!r} cannot be read: {digest.strerror or digest}", ref.pointer)
            elif digest != ref.sha256:
                yield Finding("RRA304", f"sha256 of {ref.path!r} is {digest}, the manifest says {ref.sha256}",
                              ref.pointer[:-1] + ("sha256",), f"if the file is right, record sha256: {digest}")


def plain_tree_links(ctx: Context) -> Iterator[Finding]:
    """RRA302 for the tree's links, each leaving link compared with every manifest path."""
    from rra_tools.io.ignore import IGNORE_FILE
    from rra_tools.io.links import LinkTree
    from rra_tools.io.tree import walk_tree
    from rra_tools.validate.diagnostics import Severity

    assert ctx.root is not None
    links = LinkTree("the artifact")
    unread: list[tuple[str, OSError]] = []
    for rel, item in walk_tree(ctx.root, unreadable=lambda d, e: unread.append((d, e))):
        if item.is_symlink():
            links.add(rel, os.readlink(item.path))
    for rel, exc in unread:
        yield Finding("RRA302", f"directory {rel!r} cannot be read ({exc.strerror or exc}), so the symbolic "
                      "links in it were not checked", (), f"make it readable, or list it in {IGNORE_FILE} "
                      "('rra pack' refuses it too)", severity=Severity.WARNING, file=rel)
    if not links:
        return
    named = [ref.path for ref in plain_path_refs(ctx)]
    for problem in links.problems():
        if not problem.leaves_root:
            continue
        prefix = problem.path + "/"
        if any(path == problem.path or path.startswith(prefix) for path in named):
            continue
        yield Finding("RRA302", f"symbolic link {problem.path!r} -> {problem.target!r} {problem.why}", (),
                      f"replace the link by what it points to, remove it, or list it in {IGNORE_FILE}: "
                      f"'rra pack' refuses it and no unpacked copy could follow it", file=problem.path)


# Comparing ------------------------------------------------------------------------------------


def _rows(found: Iterator[Finding] | list[Finding]) -> list[tuple[Any, ...]]:
    return [(f.code, f.pointer, f.message, f.hint, f.at_key, f.severity, f.file) for f in found]


def _refs(refs: list[Any]) -> list[tuple[Any, ...]]:
    return [(r.pointer, r.path, r.must_exist, r.sha256, r.size) for r in refs]


def assert_files_as_plain(data: Mapping[str, Any], root: Path | None, text: str | None, name: str = "") -> bool:
    """The files rule finds what the plain version finds (with and without the text); whether
    it found anything."""
    expected = _rows(plain_file_findings(Context(data=data, root=root)))
    links = _rows(plain_tree_links(Context(data=data, root=root))) if root is not None else []
    for given_text in (text, None):
        assert _rows(files(Context(data=data, root=root, text=given_text))) == expected, name
        assert _rows(tree_links(Context(data=data, root=root, text=given_text))) == links, name
        assert _refs(path_refs(Context(data=data, root=root, text=given_text))) == \
            _refs(plain_path_refs(Context(data=data, root=root))), name
    return bool(expected)


@pytest.fixture(scope="module")
def corpus() -> Iterator[list[tuple[Path, str, Any]]]:
    """(manifest, text, data) of every conformance case (written out with its tree) and every
    example whose manifest is text and parses."""
    suite = suite_path()
    with tempfile.TemporaryDirectory() as tmp:
        roots = [materialise(suite, loaded, Path(tmp) / str(n)) for n, loaded in enumerate(load_suite(suite))]
        roots += sorted(path.parent for path in ROOT.glob("examples/**/rra.yaml"))
        out = []
        for root in roots:
            manifest = find_manifest(root)
            if manifest is None or not manifest.is_file():
                continue
            try:
                text = decode_text(manifest.read_bytes())
                out.append((manifest, text, parse_document(text, located=False).data))
            except LoadError:
                continue
        yield out


def test_files_as_plain_over_every_case_and_example(corpus: list[tuple[Path, str, Any]]) -> None:
    checked = with_findings = 0
    for manifest, text, data in corpus:
        if isinstance(data, Mapping):
            with_findings += assert_files_as_plain(data, manifest.parent, text, str(manifest))
            checked += 1
    assert checked > 400 and with_findings > 20


# Generated trees ------------------------------------------------------------------------------


def _tree(base: Path) -> Path:
    """An artifact root with every kind of path a manifest may meet, and a folder outside it."""
    outside = base / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret")
    root = base / "root"
    (root / "runs" / "a").mkdir(parents=True)
    (root / "runs" / "a" / "m.json").write_text("{}")
    (root / "data").mkdir()
    (root / "data" / "d.csv").write_text("a,b\n1,2\n")
    (root / "file.txt").write_text("x")
    os.mkfifo(root / "pipe")
    links = {
        "in": "runs/a", "out": "../outside", "abs": str(outside), "up": "..", "self": ".",
        "chain": "in/../../out", "chain_in": "in/../a", "dangling": "missing/deeper",
        "dangling_out": "../outside/missing", "loop1": "loop2", "loop2": "loop1", "to_file": "file.txt",
        "runs/a/back": "../..", "runs/a/out2": "../../out", "data/shard": "../runs/a/m.json",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root


_PARTS = ["runs", "a", "m.json", "in", "out", "abs", "up", "self", "chain", "chain_in", "dangling", "dangling_out",
          "loop1", "to_file", "file.txt", "pipe", "data", "d.csv", "shard", "missing", "deep", "secret.txt",
          "root", "outside", "back", "out2", "{seed}", ".", "", "..", "x\\..\\y", "c:", "\\a"]


@st.composite
def _paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=5))
    path = "/".join(parts)
    if draw(st.booleans()):
        path = draw(st.sampled_from(["./", "/", "", "", "c:/"])) + path + draw(st.sampled_from(["", "", "/", "/."]))
    return path


def _manifest(paths: list[tuple[str, str]], digest: str) -> dict[str, Any]:
    """A manifest naming ``paths`` (slot, path) in every place the files rule looks."""
    launchers: list[dict[str, Any]] = []
    data: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    doc: dict[str, Any] = {"rra_version": "1.0", "launchers": launchers, "data": data, "claims": claims,
                           "changes": changes}
    for slot, path in paths:
        if slot == "output":
            if not launchers or len(launchers[-1]["outputs"]) > 2:
                launchers.append({"id": f"l{len(launchers)}", "outputs": []})
            launchers[-1]["outputs"].append({"id": "o", "path": path})
        elif slot == "cwd":
            launchers.append({"id": f"l{len(launchers)}", "cwd": path, "outputs": [{"path": path + "/o"}]})
        elif slot in ("shipped", "fetched"):
            data.append({"id": f"d{len(data)}", "shipped": slot == "shipped",
                         "files": [{"path": path, "sha256": digest, "size": 8}, {"path": path, "size": 1}]})
        elif slot == "run_record":
            claims.append({"id": f"c{len(claims)}", "reference": {"observations": [{"value": 1, "run_record": path},
                                                                                   {"value": 2}]}})
        elif slot == "change":
            changes.append({"id": f"ch{len(changes)}", "files": [path, 3, path], "patch": path})
        elif slot == "patch":
            doc.setdefault("code", {}).setdefault("patches", []).append({"path": path, "sha256": digest})
        elif slot == "tree":
            doc.setdefault("code", {})["tree"] = {"path": path}
        elif slot == "lock":
            doc.setdefault("environment", {})["lock"] = {"path": path, "sha256": "0" * 64}
        elif slot == "package":
            doc.setdefault("environment", {})["package"] = {"path": path}
        else:
            doc[slot] = {"path": path} if slot == "guide" else {"run_records": path}
    return doc


_SLOTS = ["output", "output", "output", "cwd", "shipped", "fetched", "run_record", "change", "patch", "tree",
          "lock", "package", "guide", "evidence"]


@pytest.fixture(scope="module")
def tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield _tree(Path(tmp))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_SLOTS), _paths()), min_size=1, max_size=12), st.booleans())
def test_files_as_plain_over_generated_trees(tree: Path, paths: list[tuple[str, str]], as_json: bool) -> None:
    # A fresh resolver per validation: the paths' order decides what each one finds cached.
    doc = _manifest(paths, "a" * 64)
    text = json.dumps(doc) if as_json else None
    assert_files_as_plain(doc, tree, text)


def test_files_as_plain_on_chosen_paths(tree: Path) -> None:
    # The cases the shortcuts turn on, written out: a missing folder inside the root (answered
    # without a step) and outside it (through a link: still RRA302), the same folder met again
    # after its files, and paths spelled with '.' and doubled slashes.
    chosen = ["missing/x/y", "missing/x/z", "out/missing/x", "out/missing/y", "runs/b/{seed}/m.json",
              "runs/b/{seed}/log", "runs/b/{seed}", "runs/b", "./missing//x/", "runs/./b/x", "abs/new/x",
              "dangling_out/x/y", "dangling/x", "up/outside/new/x", "up/root/missing/x", "chain/new/x",
              "to_file/x/y", "loop1/x", "self/missing/x", "runs/a/back/out/x", "runs/a/out2/new", "in/..x/y",
              "a..b/c", "x/../y", "x\\..\\y/z"]
    for order in (chosen, chosen[::-1]):
        doc = _manifest([("output", p) for p in order] + [("run_record", p) for p in order], "a" * 64)
        assert assert_files_as_plain(doc, tree, json.dumps(doc))
    found = _rows(files(Context(data=_manifest([("output", p) for p in chosen], "a" * 64), root=tree)))
    assert [(row[0], row[2].split(" (to ")[0]) for row in found if row[0] == "RRA302"] == [
        ("RRA302", f"path {p!r} resolves outside the artifact root") for p in
        ["out/missing/x", "out/missing/y", "abs/new/x", "dangling_out/x/y", "up/outside/new/x", "chain/new/x",
         "runs/a/back/out/x", "runs/a/out2/new"]]


@pytest.mark.parametrize("text", [
    '{"claims": [{"reference": {"observations": [{"run\\u005frecord": "missing.json"}]}}]}',
    'claims:\n- reference:\n    observations:\n    - "run\\x5frecord": missing.json\n',
    'claims:\n- reference:\n    observations:\n    - run_record: missing.json\n'])
def test_run_records_written_any_way_are_checked(tree: Path, text: str) -> None:
    doc = parse_document(text, located=False)
    assert [row[0] for row in _rows(files(Context(data=doc.data, root=tree, text=text)))] == ["RRA303"]
    assert_files_as_plain(doc.data, tree, text)


def test_no_run_record_in_the_text_means_none_in_the_data() -> None:
    text = 'claims:\n- reference:\n    observations:\n    - value: 1\n      seed: 0\n'
    doc = parse_document(text, located=False)
    assert path_refs(Context(data=doc.data, root=None, text=text)) == []


def test_lexical_issue_as_plain() -> None:
    for path in ["a", "..", "../a", "a/..", "a/../b", "a..", "..a", "a/..b", "a\\..", "..\\a", "a\\..\\b", "/a",
                 "\\a", "c:a", "c:/a", "1:a", "a/b/..", ".../a", "a/...", "./..", "a/./../b", "", ".", "a//..//b"]:
        assert lexical_issue(path) is plain_lexical_issue(path), path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_paths(), min_size=1, max_size=12))
def test_root_resolver_as_plain(tree: Path, paths: list[str]) -> None:
    # real_path and leads_out on one resolver, in the order given, against a fresh plain one.
    resolver, plain = RootResolver(tree), PlainResolver(tree)
    for path in paths:
        expected = plain.real_path(path)
        if lexical_issue(path) is None:
            assert resolver.leads_out(path) == (None if plain.inside(expected) else expected), path
        assert resolver.real_path(path) == expected, path


# The schema layer -----------------------------------------------------------------------------


def plain_check_schema(data: Any) -> list[Finding]:
    """The schema layer with neither compiled validator nor plan: RRA102 by visiting every value
    beside its schema, then jsonschema."""
    out: list[Finding] = []
    version = declared_version(data) if isinstance(data, Mapping) else None
    if version is not None:
        out += newer_fields_walk(manifest_schema(), manifest_schema(), data, (), version)
    newer_minor = version is not None and version > (1, 1)
    huge = list(out_of_range_integers(data))
    out += [Finding("RRA114", out_of_range_message(value), path) for path, value in huge]
    errors = list(_validator().iter_errors(data))
    if huge:
        errors = [e for e in errors if not (isinstance(e.instance, int) and not isinstance(e.instance, bool)
                                            and not INT_MIN <= e.instance <= INT_MAX)]
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in mistyped and error.validator in _VALUE | _RANGE:
            continue
        out += _findings(error, newer_minor)
    return out


def assert_schema_as_plain(data: Any, text: str | None, name: str = "") -> list[Finding]:
    expected = plain_check_schema(data)
    # As a large document (the compiled validator is asked first) and as a small one.
    for values in (FAST_PATH_MIN_VALUES, 0):
        assert _rows(check_schema(data, values, text)) == _rows(expected), name
    return expected


def test_schema_layer_as_plain_over_every_case_and_example(corpus: list[tuple[Path, str, Any]]) -> None:
    checked = newer = valid = 0
    for manifest, text, data in corpus:
        found = assert_schema_as_plain(data, text, str(manifest))
        valid += not found
        checked += 1
        if isinstance(data, dict) and data.get("rra_version") == "1.1":
            # The same document declaring 1.0: every field 1.1 added is now RRA102.
            older = {**data, "rra_version": "1.0"}
            newer += any(f.code == "RRA102" for f in assert_schema_as_plain(older, None, str(manifest)))
    assert checked > 400 and valid > 100 and newer >= 3


_LATER = [("launchers", "repeats", 3), ("launchers", "secrets", ["TOKEN"]), ("claims.extract", "stream", "stdout"),
          ("observations", "repeat", 0), ("observations", "provenance", {"by": "someone"}),
          ("parameters", "secret", True), ("environment", "package", {"path": "src"})]


def _escaped(key: str, form: str) -> str:
    """``key`` as a quoted key of ``form`` with its first letter written as an escape."""
    if form == "json":
        return json.dumps(key) if len(key) < 2 else '"\\u%04x%s"' % (ord(key[0]), key[1:])
    return '"\\x%02x%s"' % (ord(key[0]), key[1:])


def _text(doc: Any, form: str, escape: bool) -> str:
    if form == "json":
        text = json.dumps(doc)
        if escape:
            for _, key, _ in _LATER:
                text = text.replace(json.dumps(key) + ":", _escaped(key, "json") + ":")
        return text
    import io

    from ruamel.yaml import YAML

    writer = YAML(typ="safe", pure=True)
    writer.default_flow_style = False
    stream = io.StringIO()
    writer.dump(doc, stream)
    text = stream.getvalue()
    if escape:
        import re

        for _, key, _ in _LATER:
            text = re.sub(rf"^(\s*(?:- )?){key}:", lambda m: m.group(1) + _escaped(key, "yaml") + ":", text,
                          flags=re.M)
    return text


@settings(max_examples=120, deadline=None)
@given(st.data(), st.sampled_from(["json", "yaml"]), st.booleans(), st.sampled_from(["1.0", "1.1"]))
def test_schema_layer_with_later_fields_anywhere(data: st.DataObject, form: str, escape: bool, version: str) -> None:
    # Fields of 1.1 put at random places of a valid manifest (sometimes with a wrong value, or
    # beside an unknown key), written plainly or with escapes, declared 1.0 or 1.1.
    import copy

    doc = copy.deepcopy(parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data)
    doc["rra_version"] = version
    for _ in range(data.draw(st.integers(0, 4))):
        where, key, value = data.draw(st.sampled_from(_LATER))
        targets = _later_targets(doc, where)
        if targets:
            target = data.draw(st.sampled_from(targets))
            target[key] = data.draw(st.sampled_from([value, value, None, "text", {"unknown": 1}]))
            if data.draw(st.integers(0, 5)) == 0:
                target["unknwon"] = 1
    text = _text(doc, form, escape)
    parsed = parse_document(text, located=False)
    assert parsed.data == doc
    assert_schema_as_plain(parsed.data, text, text)


def _later_targets(doc: dict[str, Any], where: str) -> list[dict[str, Any]]:
    launchers = [x for x in doc.get("launchers", []) if isinstance(x, dict)]
    claims = [x for x in doc.get("claims", []) if isinstance(x, dict)]
    if where == "launchers":
        return launchers
    if where == "environment":
        return [doc["environment"]]
    if where == "claims.extract":
        return [c["extract"] for c in claims if isinstance(c.get("extract"), dict)]
    if where == "observations":
        return [o for c in claims for o in c.get("reference", {}).get("observations", []) if isinstance(o, dict)]
    params = [p for x in launchers for p in (x.get("parameters") or {}).values() if isinstance(p, dict)]
    if not params and launchers:
        launchers[0]["parameters"] = {"lr": {"type": "float", "default": 0.1}}
        params = [launchers[0]["parameters"]["lr"]]
    return params


def test_one_later_field_in_a_large_valid_manifest() -> None:
    # The case the shortcut is for: a valid manifest of more than FAST_PATH_MIN_VALUES values
    # declaring 1.0. One field of 1.1 deep inside is still found, and nothing else is.
    doc = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    doc["rra_version"] = "1.0"
    doc["x-sweep"] = {"values": list(range(FAST_PATH_MIN_VALUES))}
    assert _rows(check_schema(doc, FAST_PATH_MIN_VALUES + 10, json.dumps(doc))) == []
    doc["claims"][-1]["reference"]["observations"][-1]["repeat"] = 0
    found = _rows(check_schema(doc, FAST_PATH_MIN_VALUES + 10, json.dumps(doc)))
    last = len(doc["claims"]) - 1, len(doc["claims"][-1]["reference"]["observations"]) - 1
    assert found == _rows(plain_check_schema(doc)) == [(
        "RRA102", ("claims", last[0], "reference", "observations", last[1], "repeat"),
        "field 'repeat' was added in RRA 1.1, but the manifest declares rra_version '1.0'",
        "declare rra_version: '1.1' or remove the field", True, None, None)]


@pytest.mark.parametrize("keyword", ["oneOf", "not", "if", "dependentSchemas", "contains", "unevaluatedProperties"])
def test_no_refusing_schema_where_refusing_could_accept(keyword: str) -> None:
    # Under "oneOf" (or "not", "if", ...) a branch made stricter can make a document valid
    # that was not: {"a": 1} fails the oneOf below (both branches hold) until "a" is refused.
    import jsonschema

    branch = {"properties": {"a": {"x-rra-added": "1.1"}}}
    schema = {"oneOf": [branch, {"required": ["a"]}]}
    assert not jsonschema.Draft202012Validator(schema).is_valid({"a": 1})
    assert jsonschema.Draft202012Validator({"oneOf": [{"properties": {"a": False}}, {"required": ["a"]}]}).is_valid(
        {"a": 1})
    assert refusing_schema(schema, frozenset({"1.1"})) is None
    assert refusing_schema({"properties": {"b": {keyword: [branch] if keyword == "oneOf" else branch}}},
                           frozenset({"1.1"})) is None
    assert refusing_schema({"properties": {"b": branch}}, frozenset({"1.1"})) == {"properties": {"b": {
        "properties": {"a": False}}}}


def test_no_refusing_schema_where_the_walk_and_the_validator_differ() -> None:
    # The walk gives "x-a" to additionalProperties; the validator gives it to patternProperties,
    # where a field of 1.1 would go unrefused.
    schema = {"patternProperties": {"^x-": {}}, "additionalProperties": {"properties": {"new": {"x-rra-added": "1.1"}}}}
    assert refusing_schema(schema, frozenset({"1.1"})) is None
    assert refusing_schema({"additionalProperties": schema["additionalProperties"]}, frozenset({"1.1"})) is not None


def test_the_manifest_schema_has_a_refusing_schema() -> None:
    # Otherwise the shortcut silently never runs.
    from rra_tools.validate.schema_layer import _added_versions

    assert _added_versions() == frozenset({"1.1", "1.2"})
    assert refusing_schema(manifest_schema(), frozenset({"1.1"})) is not None
    assert refusing_schema(manifest_schema(), frozenset({"1.1", "1.2"})) is not None
