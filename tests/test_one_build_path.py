"""create() calls a factory once, built-in or plugin, and words a failure from that one call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentdescent_sampling import InvalidSamplerConfig, Registry, RoundRobin
from agentdescent_sampling.errors import PluginLoadError
from agentdescent_sampling.samplers import round_robin


class Counted:
    """Counts its calls; raises ``error`` when given one."""

    name = "counted"

    def __init__(self, error: BaseException | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.error = error

    def __call__(self, **params: Any) -> RoundRobin:
        self.calls.append(params)
        if self.error is not None:
            raise self.error
        return RoundRobin(**params)


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (None, None),
        (ValueError("spread must be true"), InvalidSamplerConfig),
        (TypeError("unexpected keyword argument"), InvalidSamplerConfig),
        (SystemExit(3), PluginLoadError),
    ],
    ids=["built", "ValueError", "TypeError", "SystemExit"],
)
@pytest.mark.parametrize("where", ["built-in", "in-process"])
def test_the_factory_is_called_once_whatever_it_raises(
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    error: BaseException | None,
    raised: type[Exception] | None,
) -> None:
    factory = Counted(error)
    registry = Registry(disable=(), only=())
    if where == "built-in":
        monkeypatch.setattr(round_robin, "RoundRobin", factory)
        name = "round-robin"
    else:
        registry.register(factory)
        name = "counted"
    spec = f"{name}:spread_in_flight=true"
    if raised is None:
        registry.create(spec)
    else:
        with pytest.raises(raised) as caught:
            registry.create(spec)
        assert caught.value.__cause__ is error  # worded from that one call
    assert factory.calls == [{"spread_in_flight": True}]


def test_a_built_in_is_described_as_a_class_form_entry_point_declared_in_code() -> None:
    info = Registry(disable=(), only=()).get("RoundRobin")
    assert (info.name, info.form, info.distribution) == (
        "round-robin",
        "built-in",
        "agentdescent-sampling",
    )
    assert info.entry_point == "round-robin = agentdescent_sampling.samplers.round_robin:RoundRobin"


class CannotStart:
    """Takes one optional parameter, and raises on its own account whatever it is given."""

    name = "cannot-start"

    def __init__(self, size: int = 1) -> None:
        raise ValueError("cannot reach its cache directory")

    def pick(self, keys: Sequence[str], round_index: int) -> str:
        return keys[0]

    def record(self, task_id: str, score: float) -> None:
        pass


class NeedsSize(CannotStart):
    """Has a required parameter."""

    name = "needs-size"

    def __init__(self, size: int) -> None:
        raise TypeError("missing 1 required positional argument: 'size'")


def test_a_factory_raising_when_given_no_parameters_is_a_broken_plugin_not_a_bad_config() -> None:
    registry = Registry(only=[])
    registry.register(CannotStart)
    with pytest.raises(PluginLoadError, match="raised while being built") as caught:
        registry.create("cannot-start")
    assert "cannot reach its cache directory" in str(caught.value)
    assert "sampler 'cannot-start' (registered in-process) raised" in str(caught.value)
    assert isinstance(caught.value.__cause__, ValueError)


def test_a_factory_refusing_a_given_value_or_lacking_a_required_one_is_a_bad_config() -> None:
    registry = Registry(only=[])
    registry.register(CannotStart)
    registry.register(NeedsSize)
    with pytest.raises(InvalidSamplerConfig, match="rejected 'cannot-start:size=2'"):
        registry.create("cannot-start:size=2")
    with pytest.raises(InvalidSamplerConfig, match="missing required parameter 'size'") as told:
        registry.create("needs-size")
    # How a config gives it, in either form.
    assert str(told.value).endswith(
        ". Add it: size=... in 'needs-size:key=value,...', or 'size' beside 'name' in a table"
    )
