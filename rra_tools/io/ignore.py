"""``.rraignore``: gitignore-style patterns naming files of the artifact directory not to pack.

One pattern per line; blank lines and lines starting with ``#`` are skipped; ``!`` re-includes
what an earlier pattern excluded (the last matching pattern wins); a trailing ``/`` matches
directories only; a pattern holding a ``/`` elsewhere is anchored at the artifact root, one
without matches a name at any depth; ``*`` and ``?`` never match ``/``, ``**`` matches any
number of directories, ``[...]`` is a character class. A file inside an excluded directory
cannot be re-included, as in git.

Why not ``pathspec`` (benchmarks/bench_libraries.py, 2026-12-05): ``pathspec.GitIgnoreSpec``
gives the same verdicts on its corpus (20,000 paths, 12 patterns with negations, ``**``,
anchored and directory-only ones: 0 differ) but takes 1.4x the time (117 ms against 84 ms), and
it would be a dependency of every install for ~100 lines whose semantics the spec pins down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["IGNORE_FILE", "IgnoreRules", "VCS_NAMES", "glob_regex"]

#: The file, at the artifact root, holding the patterns.
IGNORE_FILE = ".rraignore"
#: Version-control metadata, never packed whatever the patterns say.
VCS_NAMES = frozenset({".git", ".hg", ".svn", ".bzr"})


def glob_regex(pattern: str) -> str:
    """The regular expression (for a whole relative path) of one glob.

    >>> bool(re.fullmatch(glob_regex("a/**/*.py"), "a/b/c/d.py"))
    True
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
                continue
            body = pattern[i + 1:end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


@dataclass
class IgnoreRules:
    """Parsed patterns; :meth:`ignored` answers for one relative path."""

    rules: list[_Rule] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> IgnoreRules:
        """Rules from the text of an ignore file."""
        rules: list[_Rule] = []
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            if line.startswith("\\"):  # "\#name" and "\!name" are literal names
                line = line[1:] if line[1:2] in ("#", "!") else line
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            body = glob_regex(line)
            if not anchored:
                body = "(?:.*/)?" + body
            rules.append(_Rule(re.compile(body, re.DOTALL), negate, dir_only))
        return cls(rules)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """True when the POSIX relative path ``rel`` is excluded (the last matching rule decides)."""
        verdict = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(rel):
                verdict = not rule.negate
        return verdict
