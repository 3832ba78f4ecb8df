"""Hostile configs get a clear SamplerError, and never import anything."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from agentdescent_sampling import (
    InvalidSamplerConfig,
    SamplerError,
    UnknownSamplerError,
    available,
    create,
    parse_spec,
)

HUGE = "x" * 1_000_000

HOSTILE: list[tuple[str, Any, type[SamplerError]]] = [
    ("unknown key", {"name": "difficulty-weighted", "cc": 1}, InvalidSamplerConfig),
    ("unknown key in a string", "round-robin:seed=1", InvalidSamplerConfig),
    ("key that is not an identifier", {"name": "round-robin", "a-b": 1}, InvalidSamplerConfig),
    ("name of the wrong type", {"name": 5}, InvalidSamplerConfig),
    ("name missing", {"c": 0.1}, InvalidSamplerConfig),
    (
        "parameter of the wrong type",
        {"name": "difficulty-weighted", "c": "x"},
        InvalidSamplerConfig,
    ),
    ("parameter that is a list", {"name": "difficulty-weighted", "c": [1]}, InvalidSamplerConfig),
    (
        "parameter that is a table",
        {"name": "difficulty-weighted", "c": {"a": 1}},
        InvalidSamplerConfig,
    ),
    ("boolean for a number", "difficulty-weighted:c=true", InvalidSamplerConfig),
    ("spec of the wrong type", 42, InvalidSamplerConfig),
    ("spec that is None", None, InvalidSamplerConfig),
    ("spec that is bytes", b"round-robin", InvalidSamplerConfig),
    ("huge string", HUGE, InvalidSamplerConfig),
    ("huge parameter string", "round-robin:a=" + HUGE, InvalidSamplerConfig),
    ("huge name in a table", {"name": HUGE}, InvalidSamplerConfig),
    ("huge parameter value", {"name": "difficulty-weighted", "c": HUGE}, InvalidSamplerConfig),
    ("huge parameter name", {"name": "round-robin", HUGE: 1}, InvalidSamplerConfig),
    ("module:attribute name", "os:system", InvalidSamplerConfig),
    ("module:attribute in a table", {"name": "subprocess:run"}, InvalidSamplerConfig),
    ("dotted module path", {"name": "agentdescent_sampling.registry"}, InvalidSamplerConfig),
    (
        "this package's own class path",
        "agentdescent_sampling.samplers:RoundRobin",
        InvalidSamplerConfig,
    ),
    ("relative path", "../../etc/passwd", InvalidSamplerConfig),
    ("path separator", {"name": "plugins/evil"}, InvalidSamplerConfig),
    ("windows path", {"name": "C:\\evil"}, InvalidSamplerConfig),
    (
        "provider that is not a string",
        {"name": "round-robin", "provider": ["a"]},
        InvalidSamplerConfig,
    ),
    ("unknown provider", {"name": "round-robin", "provider": "evil-dist"}, UnknownSamplerError),
    ("well-formed but unknown name", "json-decoder", UnknownSamplerError),
    ("a module's name", "subprocess", UnknownSamplerError),
]


@pytest.mark.parametrize(
    ("spec", "error"), [pytest.param(spec, error, id=label) for label, spec, error in HOSTILE]
)
def test_a_hostile_config_gets_a_clear_error_and_imports_nothing(
    spec: Any, error: type[SamplerError]
) -> None:
    available()  # every installed plugin is loaded; a config must import nothing more
    before = set(sys.modules)
    with pytest.raises(error) as caught:
        create(spec)
    assert set(sys.modules) == before
    message = str(caught.value)
    assert len(message) < 2_000, "a huge input must not flood the message"
    assert any(
        word in message
        for word in (
            "expected",
            "Available",
            "Valid",
            "never imports",
            "needs",
            "provided by",
            "must be",
            "limit",
        )
    )


def test_parse_spec_of_a_huge_string_is_refused_before_any_work() -> None:
    with pytest.raises(InvalidSamplerConfig, match="over the limit of 4096"):
        parse_spec("a:" + "b=1," * 100_000)
