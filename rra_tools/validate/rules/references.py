"""Ids and cross-references, dependency cycles, placeholders and the shape of claims."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from ...model.regex import subset_problem
from ..context import Context, Finding, Pointer, strings
from ..diagnostics import Severity
from ..schema_layer import declared_version
from . import check

__all__: list[str] = []

_LISTS = ("data", "launchers", "claims", "changes", "discrepancies")
# {name} placeholders; {{ and }} are literal braces.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
#: A launcher without outputs (read only); values a paper location leaves blank.
_NONE: Mapping[str, str] = {}
_BLANK = (None, "")


def _ref(kind: str, value: str, known: Mapping[str, Any], pointer: Pointer,
         suggestions: _Suggestions | None = None) -> Finding:
    suggestions = suggestions or _Suggestions()
    names = suggestions.names(known)
    listed = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
    close = suggestions.closest(value, names)
    if close is not None:
        hint = f"did you mean {close!r}?"
    elif not names:
        hint = f"no {kind} is declared"
    elif suggestions.spent:
        hint = (f"declared {kind} ids: {listed} ({len(names)} in all; no 'did you mean': the unknown "
                f"references before this one used up its budget of {_BUDGET:,} name comparisons)")
    else:
        hint = f"declared {kind} ids: {listed}"
    return Finding("RRA201", f"{kind} {value!r} is not declared", pointer, hint)


#: How many names, over all unknown references of one manifest, are compared for "did you
#: mean": about a second. A comparison costs microseconds, but a renamed sweep gives 10,000
#: references that each miss 10,000 launcher ids, and that would take hours.
_BUDGET = 200_000


class _Suggestions:
    """The closest declared name for each unknown reference of one manifest, within a budget.

    A value that missed before gets the same answer at no cost; the sorted names of each
    mapping of ids are made once. Once the budget is spent a reference gets no suggestion (the
    hint lists the declared ids), so the output still depends on the manifest alone.
    """

    def __init__(self, budget: int = _BUDGET) -> None:
        self.left = budget
        self.spent = False
        self._sorted: dict[int, tuple[Mapping[str, Any], list[str]]] = {}
        self._memo: dict[tuple[int, str], str | None] = {}

    def names(self, known: Mapping[str, Any]) -> list[str]:
        """The names of ``known``, sorted (kept with the mapping so its id is not reused)."""
        kept = self._sorted.get(id(known))
        if kept is None or kept[0] is not known:
            kept = self._sorted[id(known)] = (known, sorted(known))
        return kept[1]

    def closest(self, value: str, names: list[str]) -> str | None:
        key = (id(names), value)
        if key in self._memo:
            self.spent = False  # answered (a close name or none) before the budget ran out
            return self._memo[key]
        self.spent = self.left < len(names)
        if self.spent:
            return None
        self.left -= len(names)
        close = self._memo[key] = _closest(value, names)
        return close


def _closest(word: str, names: list[str]) -> str | None:
    """What ``difflib.get_close_matches(word, names, n=1)`` gives, or None when it gives nothing.

    That is the name of greatest similarity ratio, at least 0.6 (the greatest name among equals).
    The ratio is costly (a sweep declares 10,000 launchers); its cheap upper bound, the quick
    ratio, orders the names, and the ratio is computed only while a bound can still reach the
    best ratio found.
    """
    import difflib

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    bounded: list[tuple[float, str]] = []
    for name in names:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= _CUTOFF:
            bound = matcher.quick_ratio()
            if bound >= _CUTOFF:
                bounded.append((bound, name))
    bounded.sort(reverse=True)
    best: tuple[float, str] | None = None
    for bound, name in bounded:
        if best is not None and bound < best[0]:
            break  # neither this name nor any after it can reach the best ratio
        matcher.set_seq1(name)
        ratio = matcher.ratio()
        if ratio >= _CUTOFF and (best is None or (ratio, name) > best):
            best = (ratio, name)
    return None if best is None else best[1]


#: get_close_matches' default cutoff.
_CUTOFF = 0.6


@check("RRA201")
def unknown_references(ctx: Context) -> Iterator[Finding]:
    """Every id reference names a declared entry."""
    launchers, data = ctx.ids("launchers"), ctx.ids("data")
    claims, changes = ctx.ids("claims"), ctx.ids("changes")
    outputs = ctx.launcher_outputs()
    suggestions = _Suggestions()
    # Lists of references are read in place (not through strings()): a sweep has 10,000s of them.
    for i, launcher in ctx.items("launchers"):
        deps = launcher.get("depends_on")
        if isinstance(deps, list):
            for j, dep in enumerate(deps):
                if isinstance(dep, str) and dep not in launchers:
                    yield _ref("launcher", dep, launchers, ("launchers", i, "depends_on", j), suggestions)
        sources = launcher.get("data")
        if isinstance(sources, list):
            for j, source in enumerate(sources):
                if isinstance(source, str) and source not in data:
                    yield _ref("data source", source, data, ("launchers", i, "data", j), suggestions)
    for i, claim in ctx.items("claims"):
        launcher_id = claim.get("launcher")
        if not isinstance(launcher_id, str):
            continue
        if launcher_id not in launchers:
            yield _ref("launcher", launcher_id, launchers, ("claims", i, "launcher"), suggestions)
            continue
        extract = claim.get("extract")
        if type(extract) is dict or isinstance(extract, Mapping):
            output_id = extract.get("output")
            if isinstance(output_id, str):
                own = outputs.get(launcher_id, _NONE)
                if output_id not in own:
                    yield _ref(f"output of launcher {launcher_id!r},", output_id, own,
                               ("claims", i, "extract", "output"), suggestions)
    patch_paths = {p["path"] for _, p in ctx.items("patches", ctx.section("code")) if isinstance(p.get("path"), str)}
    for i, patch in ctx.items("patches", ctx.section("code")):
        change = patch.get("change")
        if isinstance(change, str) and change not in changes:
            yield _ref("change", change, changes, ("code", "patches", i, "change"), suggestions)
    for i, change in ctx.items("changes"):
        affects = change.get("affects")
        if isinstance(affects, Mapping):
            for j, ref in strings(affects.get("launchers")):
                if ref not in launchers:
                    yield _ref("launcher", ref, launchers, ("changes", i, "affects", "launchers", j), suggestions)
            for j, ref in strings(affects.get("claims")):
                if ref not in claims:
                    yield _ref("claim", ref, claims, ("changes", i, "affects", "claims", j), suggestions)
        patch_ref = change.get("patch")
        if isinstance(patch_ref, str) and patch_ref not in patch_paths:
            yield Finding("RRA201", f"patch {patch_ref!r} is not in code.patches", ("changes", i, "patch"),
                          "list the patch file under code.patches, in the order it applies")
    for i, discrepancy in ctx.items("discrepancies"):
        for j, ref in strings(discrepancy.get("claims")):
            if ref not in claims:
                yield _ref("claim", ref, claims, ("discrepancies", i, "claims", j), suggestions)


@check("RRA202")
def duplicate_ids(ctx: Context) -> Iterator[Finding]:
    """Ids are unique within their list (outputs: within their launcher)."""
    for key in _LISTS:
        index = ctx.id_index(key)
        what = key.rstrip("s") if key != "data" else "data source"
        for i, ident in index.repeated:
            yield Finding("RRA202", f"{what} id {ident!r} is used twice (first at index {index.first[ident]})",
                          (key, i, "id"), "give every entry its own id")
    for i, j, oid, first in ctx.repeated_outputs():
        yield Finding("RRA202", f"output id {oid!r} is used twice (first at index {first})",
                      ("launchers", i, "outputs", j, "id"), "give every entry its own id")


@check("RRA203")
def dependency_cycles(ctx: Context) -> Iterator[Finding]:
    """depends_on forms no cycle."""
    graph: dict[str, list[str]] = {}
    where: dict[str, int] = {}
    later: list[str] = []  # dependencies on ids not read yet: declared later, or never
    ordered = True  # every dependency declared before its dependent: then there is no cycle
    for i, launcher in ctx.items("launchers"):
        ident = launcher.get("id")
        if isinstance(ident, str) and ident not in graph:
            deps = launcher.get("depends_on")
            graph[ident] = edges = [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []
            where[ident] = i
            for dep in edges:
                if dep not in where:
                    later.append(dep)
                elif dep == ident:
                    ordered = False
    if ordered and not any(dep in graph for dep in later):
        # Checked when each launcher was read: its dependencies came earlier, so every edge of a
        # cycle would lead to an earlier launcher, round to the one it left: impossible.
        return
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    reported: set[frozenset[str]] = set()
    for start in graph:
        if state.get(start):
            continue
        # Iterative depth-first search so a long chain cannot exhaust the stack.
        path: list[str] = [start]
        iters = [iter(graph[start])]
        state[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    yield Finding("RRA203", "launchers depend on each other in a cycle: " + " -> ".join(cycle),
                                  ("launchers", where[nxt], "depends_on"), "remove one of the dependencies")
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(graph[nxt]))


def placeholders(text: str) -> Iterator[str]:
    """Names of the ``{name}`` placeholders in ``text``."""
    for match in _PLACEHOLDER.finditer(text):
        if match.group(1) is not None:
            yield match.group(1)


@check("RRA204")
def undefined_placeholders(ctx: Context) -> Iterator[Finding]:
    """Placeholders name 'seed' (when seeds are declared) or a parameter of the launcher."""
    for i, launcher in ctx.items("launchers"):
        params = launcher.get("parameters")
        known = set(params) if type(params) is dict or isinstance(params, Mapping) else set()
        seeds = launcher.get("seeds")
        if isinstance(seeds, list) and seeds:
            known.add("seed")
        # Only a text with a brace can hold a placeholder, and the pointer of a text is built
        # only when it holds an undefined one. The argv and the output paths of most launchers
        # are looked at in one search (_all_known), and each text only when it finds something.
        argv, cwd, outputs = launcher.get("argv"), launcher.get("cwd"), launcher.get("outputs")
        plain = _all_known((argv if isinstance(argv, list) else []) +
                           (_paths(outputs) if isinstance(outputs, list) else []), known)
        if not plain and isinstance(argv, list):
            for j, text in enumerate(argv):
                if isinstance(text, str) and "{" in text:
                    names = _names(text)
                    if names and not known.issuperset(names):
                        yield from _undefined(names, known, ("launchers", i, "argv", j))
        if isinstance(cwd, str):
            yield from _undefined(_names(cwd), known, ("launchers", i, "cwd"))
        if not plain and isinstance(outputs, list):
            for j, output in ctx.items("outputs", launcher):
                path = output.get("path")
                if isinstance(path, str):
                    names = _names(path)
                    if names and not known.issuperset(names):
                        yield from _undefined(names, known, ("launchers", i, "outputs", j, "path"))


def _paths(outputs: list[Any]) -> list[Any]:
    """The paths of ``outputs`` when every output is a mapping with a path, else ``[None]`` (so
    that :func:`_all_known` sends each output to be looked at)."""
    try:
        return [output["path"] for output in outputs]
    except (KeyError, TypeError, IndexError):
        return [None]


#: A text without '{{' or '}}' holds no literal brace, so its placeholders are this pattern's
#: matches (as with _PLACEHOLDER, whose first two alternatives can match nowhere in it).
_PLAIN_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _all_known(texts: list[Any], known: set[str]) -> bool:
    """True when ``texts`` are all strings whose placeholders are all ``known`` (False may be wrong).

    The strings are joined by a character that is no brace and searched at once: a placeholder
    of one string is one of the joined text too, which only adds those that straddle two strings.
    """
    try:
        joined = "\0".join(texts)
    except TypeError:
        return False  # an item that is not a string: each is looked at
    return "{" not in joined or (
        "{{" not in joined and "}}" not in joined and known.issuperset(_PLAIN_PLACEHOLDER.findall(joined)))


def _names(text: str) -> list[str]:
    """The names of :func:`placeholders` in ``text``, in order."""
    if "{" not in text:
        return []
    if "{{" in text or "}}" in text:
        return list(placeholders(text))
    return _PLAIN_PLACEHOLDER.findall(text)


def _undefined(names: list[str], known: set[str], pointer: Pointer) -> Iterator[Finding]:
    for name in names:
        if name not in known:
            if name == "seed":
                hint = "declare seeds for the launcher, or remove {seed}"
            else:
                hint = f"declare parameter {name!r} under parameters, or write '{{{{' for a literal brace"
            yield Finding("RRA204", f"placeholder {{{name}}} is not defined", pointer, hint)


_FITS = {"json_pointer": {"json"}, "csv": {"csv"}, "regex": {"log", "text"}}


@check("RRA205", "RRA206", "RRA208", "RRA209", "RRA210")
def claim_shape(ctx: Context) -> Iterator[Finding]:
    """Each claim's extraction has exactly one fitting method, and its paper location says where."""
    outputs = ctx.launcher_outputs()
    version = declared_version(ctx.data) or (1, 1)
    for i, claim in ctx.items("claims"):
        location = claim.get("paper_location")
        if (type(location) is dict or isinstance(location, Mapping)) and location.get("table") in _BLANK and \
                location.get("figure") in _BLANK and location.get("section") in _BLANK and \
                location.get("page") in _BLANK:
            yield Finding("RRA209", "paper_location names no table, figure, section or page",
                          ("claims", i, "paper_location"), "say where the number is printed, e.g. table: '2'")
        extract = claim.get("extract")
        if type(extract) is not dict and not isinstance(extract, Mapping):
            continue
        # The pointers and the list of methods are built only for a finding.
        pointer, csv, regex = extract.get("json_pointer"), extract.get("csv"), extract.get("regex")
        method = None
        if (pointer is not None) + (csv is not None) + (regex is not None) == 1:
            method = "json_pointer" if pointer is not None else "csv" if csv is not None else "regex"
        else:
            given = [m for m, v in (("json_pointer", pointer), ("csv", csv), ("regex", regex)) if v is not None]
            yield Finding("RRA206", "extract must give exactly one of json_pointer, csv, regex; given: "
                          f"{', '.join(given) if given else 'none'}", ("claims", i, "extract"),
                          "keep the one method that reads the output")
        output_id = extract.get("output")
        if output_id is not None and extract.get("stream") is not None:
            yield Finding("RRA206", "extract must read exactly one source, a declared output or a stream; "
                          "given both 'output' and 'stream'", ("claims", i, "extract", "stream"),
                          "keep 'stream' to read the captured stdout/stderr, or 'output' for a file")
        if method is not None and isinstance(output_id, str):
            launcher_id = claim.get("launcher")
            fmt = outputs.get(launcher_id, _NONE).get(output_id) if isinstance(launcher_id, str) else None
            if fmt and fmt not in _FITS[method]:
                yield Finding("RRA205", f"{method} cannot read output {output_id!r}, whose format is {fmt!r}",
                              ("claims", i, "extract", method),
                              f"{method} reads {' or '.join(sorted(_FITS[method]))} outputs")
        if csv is not None and isinstance(csv, Mapping) and \
                (csv.get("row_index") is None) == (csv.get("where") is None):
            yield Finding("RRA208", "csv extraction must give exactly one of row_index and where",
                          ("claims", i, "extract", "csv"),
                          "row_index: -1 takes the last row; where: {split: test} matches a row")
        if regex is not None and isinstance(regex, Mapping) and isinstance(regex.get("pattern"), str):
            yield from _regex(regex, ("claims", i, "extract", "regex"), version)


#: Claims of one sweep share a few patterns: each is looked at once (a pure function of the text).
_subset_problem = lru_cache(maxsize=1024)(subset_problem)


def _regex(regex: Mapping[str, Any], pointer: Pointer, version: tuple[int, int]) -> Iterator[Finding]:
    problem = _subset_problem(regex["pattern"])
    outside = f"regex {regex['pattern']!r} is outside the portable subset: {problem}"
    try:
        compiled = re.compile(regex["pattern"])
    except re.error as exc:
        # ECMA-262 constructs Python refuses, e.g. (?<name>...): the subset says what is wrong.
        message = outside if problem is not None else f"regex {regex['pattern']!r} does not compile: {exc}"
        yield Finding("RRA210", message, (*pointer, "pattern"))
        return
    if problem is not None:
        # RRA 1.0 admitted any Python 're' pattern; a 1.0 manifest keeps validating (a warning),
        # from 1.1 on the pattern must be in the portable subset.
        yield Finding("RRA210", outside, (*pointer, "pattern"), "see spec/02-manifest.md#regular-expressions",
                      severity=Severity.WARNING if version < (1, 1) else None)
    group = regex.get("group", 1)
    if isinstance(group, int) and not isinstance(group, bool) and group > compiled.groups:
        yield Finding("RRA210", f"regex {regex['pattern']!r} has {compiled.groups} group(s), "
                      f"but group {group} is used", (*pointer, "pattern"),
                      "put parentheses around the number, e.g. 'acc=([0-9.]+)'")


@check("RRA207")
def code_source(ctx: Context) -> Iterator[Finding]:
    """code names an upstream commit or a shipped tree; patches apply to an upstream."""
    if "code" not in ctx.data or not isinstance(ctx.data.get("code"), Mapping):
        return
    code = ctx.section("code")
    if code.get("upstream") is None and code.get("tree") is None:
        yield Finding("RRA207", "code has neither upstream nor tree", ("code",),
                      "give upstream: {url, commit} or tree: {path}")
    elif code.get("upstream") is None and code.get("patches"):
        yield Finding("RRA207", "code has patches but no upstream to apply them to", ("code", "patches"),
                      "add upstream: {url, commit}, or fold the patches into the shipped tree")


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind in ("str", "path"):
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    return True


#: Value types that satisfy each parameter type at once (other values are asked to _type_ok).
_EXACT_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,), "path": (str,),
                                             "bool": (bool,)}


@check("RRA211")
def parameter_defaults(ctx: Context) -> Iterator[Finding]:
    """Parameter defaults and choices match the parameter's type; the default is a choice."""
    for i, launcher in ctx.items("launchers"):
        params = launcher.get("parameters")
        if not isinstance(params, Mapping):
            continue
        for name, spec in params.items():
            if type(spec) is not dict and not isinstance(spec, Mapping):
                continue
            kind = spec.get("type")
            if not isinstance(kind, str):
                continue
            exact = _EXACT_TYPES.get(kind, ())
            has_default = "default" in spec
            if has_default:
                default = spec["default"]
                if type(default) not in exact and not _type_ok(kind, default):
                    yield Finding("RRA211", f"default {default!r} of parameter {name!r} is not of type {kind!r}",
                                  ("launchers", i, "parameters", name, "default"))
            choices = spec.get("choices")
            if isinstance(choices, list):
                for j, choice in enumerate(choices):
                    if type(choice) not in exact and not _type_ok(kind, choice):
                        yield Finding("RRA211", f"choice {choice!r} of parameter {name!r} is not of type {kind!r}",
                                      ("launchers", i, "parameters", name, "choices", j))
                if has_default and spec["default"] not in choices:
                    yield Finding("RRA211", f"default {spec['default']!r} of parameter {name!r} is not one of "
                                  f"its choices", ("launchers", i, "parameters", name, "default"),
                                  "add it to choices or change the default")


@check("RRA213")
def secrets_stored(ctx: Context) -> Iterator[Finding]:
    """A secret's value is never written into the manifest or into a recorded place."""
    for i, launcher in ctx.items("launchers"):
        names = launcher.get("secrets")
        if names:
            env = launcher.get("env")
            for _, name in strings(names):
                if isinstance(env, Mapping) and name in env:
                    yield Finding("RRA213", f"secret {name!r} also has a value in env, which the manifest stores",
                                  ("launchers", i, "env", name), "remove it from env: its value comes from the "
                                  "caller's environment at run time", at_key=True)
        params = launcher.get("parameters")
        if not isinstance(params, Mapping):
            continue
        secret: set[str] | None = None  # made for the first secret parameter (most launchers have none)
        for name, p in params.items():
            if (type(p) is dict or isinstance(p, Mapping)) and p.get("secret") is True:
                if secret is None:
                    secret = set()
                secret.add(name)
        if secret is None:
            continue  # no secret parameter to report or to find in a path
        for name in sorted(secret):
            if "default" in params[name]:
                yield Finding("RRA213", f"secret parameter {name!r} has a default, which the manifest stores",
                              ("launchers", i, "parameters", name, "default"),
                              "remove the default: the value comes from the caller's environment", at_key=True)
        places: list[tuple[Pointer, str]] = []
        if isinstance(launcher.get("cwd"), str):
            places.append((("launchers", i, "cwd"), launcher["cwd"]))
        for j, output in ctx.items("outputs", launcher):
            if isinstance(output.get("path"), str):
                places.append((("launchers", i, "outputs", j, "path"), output["path"]))
        for pointer, text in places:
            for name in placeholders(text):
                if name in secret:
                    yield Finding("RRA213", f"secret parameter {{{name}}} is used in a path, which run records "
                                  "store", pointer, "use secret parameters only in argv")
