"""A default an attrs factory makes is described by the factory's name, read without running
any of the factory's own code."""

from __future__ import annotations

import abc
from typing import Any

import attrs
import pytest

from agentdescent_sampling.params import signature_of


class Window(abc.ABC):  # noqa: B024  # a class whose metaclass is ABCMeta, as a plugin's may be
    pass


class Concrete(Window):
    pass


class Limits:
    @classmethod
    def defaults(cls) -> dict[str, int]:
        return {}


class Nameless:
    """A factory whose every attribute lookup is its own code, ending the process."""

    def __call__(self) -> int:
        return 0

    def __getattr__(self, name: str) -> Any:
        raise SystemExit(f"{name} escaped")


class LoudMeta(type):
    def __getattribute__(cls, name: str) -> Any:
        if name == "__qualname__":
            raise SystemExit("__qualname__ escaped")
        return super().__getattribute__(name)


class Loud(metaclass=LoudMeta):
    pass


@pytest.mark.parametrize(
    ("factory", "described"),
    [
        (list, "list()"),
        (Concrete, "Concrete()"),
        (Limits.defaults, "Limits.defaults()"),
        (Loud, "Loud()"),
        (Nameless(), "a new value per instance"),
    ],
    ids=["a-builtin", "an-abc-class", "a-classmethod", "a-metaclass-own-lookup", "an-object"],
)
def test_a_factory_made_default_is_described_by_its_own_name(factory: Any, described: str) -> None:
    sampler = attrs.make_class("Sampler", {"seen": attrs.field(factory=factory)})

    (parameter,) = signature_of(sampler).parameters

    assert str(parameter) == f"seen={described}"
