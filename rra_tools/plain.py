"""Plain record classes for the modules every ``rra run`` imports.

A dataclass costs its module the ``dataclasses`` import (with ``inspect``, ``ast``, ``dis`` and
``tokenize``: about 5 ms) and the generation of its methods at import (a fraction of a
millisecond each); ``rra run ARTIFACT LAUNCHER`` pays both on top of the launcher's own cost
(issue 25). A record class of the run path is therefore a plain class with ``__slots__`` (its
fields, in order) and an explicit ``__init__``; :class:`Plain` gives it what a dataclass would:
``repr``, equality, hashing (:class:`Frozen`), pickling and a copy with some fields changed, all
read from the slots, and no code generated at import.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _P = TypeVar("_P", bound="Plain")

__all__ = ["Frozen", "Plain"]


class Plain:
    """Base of a slotted record class: ``repr``, ``==`` and :meth:`replace` as a dataclass's.

    Fields are the ``__slots__`` of the class and its bases, bases first (a dataclass's order);
    those named in ``_unshown`` are left out of ``repr``, those in ``_uncompared`` out of
    equality and hashing (a dataclass field with ``repr=False``, ``compare=False``). Mutable,
    hence unhashable, like a dataclass with ``eq``.
    """

    __slots__ = ()
    _unshown: tuple[str, ...] = ()
    _uncompared: tuple[str, ...] = ()

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The fields, in order (the slots of the class and its bases, bases first)."""
        return tuple(name for base in reversed(cls.__mro__) for name in base.__dict__.get("__slots__", ()))

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.field_names() if name not in self._uncompared)

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self.field_names() if name not in self._unshown)
        return f"{type(self).__qualname__}({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Plain)
        return self._compared() == other._compared()

    # Defining __eq__ leaves __hash__ None: unhashable, as a dataclass with eq and not frozen.

    def as_dict(self) -> dict[str, Any]:
        """The fields by name (``dataclasses.asdict`` of a record whose fields are plain values)."""
        return {name: getattr(self, name) for name in self.field_names()}

    def __setstate__(self, state: tuple[Any, dict[str, Any]] | dict[str, Any]) -> None:
        # pickle and copy restore a slotted object's fields with setattr, which a class that
        # refuses assignment refuses: set them as its __init__ does.
        fields = state[1] if isinstance(state, tuple) else state
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def replace(self: _P, **changes: Any) -> _P:
        """A copy with ``changes`` (``dataclasses.replace``; the same class, subclasses too)."""
        copy = object.__new__(type(self))
        for name in self.field_names():
            object.__setattr__(copy, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"{type(self).__qualname__} has no field(s) {', '.join(sorted(changes))}")
        return copy


class Frozen(Plain):
    """A :class:`Plain` record whose fields are not reassigned: hashable by its fields, as a frozen
    dataclass. (Only hashing is given here; assignment is refused where a class asks for it with
    :meth:`_refuse_assignment`, its ``__init__`` then setting fields with ``object.__setattr__``.)"""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._compared())

    @staticmethod
    def _refuse_assignment(name: str) -> None:
        from dataclasses import FrozenInstanceError  # only on the error, as a frozen dataclass raises

        raise FrozenInstanceError(f"cannot assign to field {name!r}")
