"""Where the symbolic links of a tree lead, computed from the tree's list of links alone.

A link's target cannot be judged by its text: ``a/b/lnk -> ../..`` stays inside the root, and
so does the text of ``esc -> a/b/lnk/../x``, yet ``esc`` leads to ``../x`` once ``lnk`` is on
disk, because the kernel resolves ``lnk`` before it applies the ``..`` that follows it. A tree
that is only a list (a tar stream being unpacked, a directory walk being packed) is therefore
checked as a whole, once it is complete: every link is resolved through the links of the tree
as the kernel would, and the ones that leave the root are reported.

Nothing is read from the disk, so a tree can be judged before it is written and a link added
later in a stream cannot change what an earlier check concluded. A name that is no link in the
list is taken for a directory: a dangling ``missing/..`` is then judged like ``.``, which is
how it resolves should ``missing`` ever appear. Resolution follows at most 40 links, nested or
in a row (the kernel's limit, past which it fails with ELOOP), and a link that needs more, or
loops, is reported too: no reader could follow it. The cost is linear in the total length of
the targets: each link is resolved once and its result shared by every link through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .errors import IOLayerError

__all__ = ["MAX_FOLLOWS", "LinkProblem", "LinkTree"]

#: Most links one resolution may pass through (Linux's MAXSYMLINKS).
MAX_FOLLOWS = 40


@dataclass(frozen=True)
class LinkProblem:
    """A link that no reader could follow without leaving the root (or at all)."""

    #: The link's path relative to the root.
    path: str
    target: str
    #: Why, as a phrase that follows the link's name: "leads outside the root ...".
    why: str
    #: True when the link leads out of the root (absolute, or through ``..``); False when it
    #: only loops or passes too many links, which no reader can follow anywhere.
    leaves_root: bool = True


class _Refused(IOLayerError):
    """Unwinds one resolution; :meth:`LinkTree.problems` turns it into a :class:`LinkProblem`."""

    def __init__(self, why: str, *, leaves_root: bool = True) -> None:
        super().__init__(why)
        self.why = why
        self.leaves_root = leaves_root


class _Node:
    __slots__ = ("active", "children", "name", "parent", "resolved", "target")

    def __init__(self, parent: _Node | None, name: str) -> None:
        self.parent = parent
        self.name = name
        self.children: dict[str, _Node] = {}
        #: The link's target, when this node is a symbolic link.
        self.target: str | None = None
        #: Once resolved: the node the link leads to and the links followed on the way.
        self.resolved: tuple[_Node, int] | None = None
        self.active = False

    def child(self, name: str) -> _Node:
        node = self.children.get(name)
        if node is None:
            node = self.children[name] = _Node(self, name)
        return node

    def path(self) -> str:
        parts: list[str] = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            parts.append(node.name)
            node = node.parent
        return "/".join(reversed(parts))


class LinkTree:
    """The symbolic links of one tree; :meth:`problems` resolves them all.

    >>> tree = LinkTree()
    >>> tree.add("a/b/lnk", "../..")
    >>> tree.add("esc", "a/b/lnk/../x")
    >>> [p.path for p in tree.problems()]
    ['esc']
    """

    def __init__(self, root_name: str = "the root") -> None:
        #: How messages name the root ("the destination", "the artifact").
        self.root_name = root_name
        self._root = _Node(None, "")
        self._links: list[_Node] = []

    def add(self, path: str, target: str) -> None:
        """Record the link ``path`` (relative, normalised, without ``..``) pointing at ``target``."""
        node = self._root
        for part in path.split("/"):
            if part not in ("", "."):
                node = node.child(part)
        node.target = target
        node.resolved = None
        self._links.append(node)

    def __len__(self) -> int:
        return len(self._links)

    def problems(self) -> Iterator[LinkProblem]:
        """Every link that leads outside the root, passes more than :data:`MAX_FOLLOWS` links or loops."""
        for node in self._links:
            if node.target is None:
                continue
            try:
                self._resolve(node, 1)
            except _Refused as refused:
                yield LinkProblem(node.path(), node.target, refused.why, refused.leaves_root)

    def _resolve(self, link: _Node, depth: int) -> tuple[_Node, int]:
        if link.resolved is not None:
            return link.resolved
        if link.active:
            raise _Refused("loops back to itself", leaves_root=False)
        if depth > MAX_FOLLOWS:
            raise _Refused(f"passes through more than {MAX_FOLLOWS} symbolic links", leaves_root=False)
        target = link.target or ""
        if target.startswith("/"):
            raise _Refused("is absolute")
        assert link.parent is not None  # the root itself is never a link
        node: _Node = link.parent
        follows = 1
        via: _Node | None = None
        link.active = True
        try:
            for part in target.split("/"):
                if part in ("", "."):
                    continue
                if part == "..":
                    if node.parent is None:
                        through = f" through the symbolic link {via.path()!r}" if via is not None else ""
                        raise _Refused(f"leads outside {self.root_name}{through}")
                    node = node.parent
                    continue
                node = node.child(part)
                if node.target is not None:
                    via = node
                    node, more = self._resolve(node, depth + 1)
                    follows += more
                    if follows > MAX_FOLLOWS:
                        raise _Refused(f"passes through more than {MAX_FOLLOWS} symbolic links",
                                       leaves_root=False)
        finally:
            link.active = False
        link.resolved = (node, follows)
        return link.resolved
