"""Fixtures for the bench tests: small runs, a schema check and a throwaway plugin."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import Registry
from agentdescent_sampling.bench import WORKLOADS, BenchConfig, RolloutLoop
from agentdescent_sampling.bench.command import add_bench_arguments
from tests.support.distinfo import write_plugin

# Helpers are handed out as fixtures, so that no test imports a module named conftest.
_counter = itertools.count()


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def benchmark_script(request: pytest.FixtureRequest) -> Iterator[types.ModuleType]:
    """The script ``benchmarks/<SCRIPT>.py`` named by the test module's ``SCRIPT``, imported
    for as long as the test module runs."""
    name: str = request.module.SCRIPT
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
        yield module


@pytest.fixture
def example_log() -> Path:
    """The example rollout log shipped in ``examples/``."""
    return Path(__file__).resolve().parents[2] / "examples" / "rollouts.jsonl"


def _small_config(**overrides: Any) -> BenchConfig:
    settings: dict[str, Any] = {
        "samplers": ["difficulty-weighted"],
        "workloads": [WORKLOADS["stationary"]],
        "loop": RolloutLoop(budget=80),
        "seeds": 2,
    }
    settings.update(overrides)
    return BenchConfig(**settings)


@pytest.fixture
def small_config() -> Callable[..., BenchConfig]:
    """``small_config(**overrides)``: a run of a fraction of a second (2 seeds, 80 rollouts)."""
    return _small_config


def _bench_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agentdescent-sampling bench")
    add_bench_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def bench_args() -> Callable[..., argparse.Namespace]:
    """``bench_args(*argv)``: parse ``argv`` as ``agentdescent-sampling bench`` would."""
    return _bench_args


@pytest.fixture
def schema_errors() -> Callable[[Any, Mapping[str, Any]], list[str]]:
    """``schema_errors(document, schema)``: every way ``document`` breaks ``schema``."""
    return _schema_errors


def _schema_errors(document: Any, schema: Mapping[str, Any], where: str = "$") -> list[str]:
    """Check ``document`` against the JSON Schema keywords the bench schema uses.

    Covers type, const, enum, properties, required, additionalProperties, items,
    minItems, maxItems, minimum and maximum; an unknown keyword is an error, so the
    schema can't silently grow past what this checks.
    """
    known = {
        "$schema", "title", "type", "const", "enum", "properties", "required",
        "additionalProperties", "items", "minItems", "maxItems", "minimum", "maximum",
    }  # fmt: skip
    unknown = set(schema) - known
    if unknown:
        return [f"{where}: schema uses unchecked keywords {sorted(unknown)}"]
    types_: dict[str, type | tuple[type, ...]] = {
        "object": dict,
        "array": list,
        "string": str,
        "boolean": bool,
        "null": type(None),
        "integer": int,
        "number": (int, float),
    }
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        fits = any(
            isinstance(document, types_[name])
            and not (isinstance(document, bool) and name in ("integer", "number"))
            for name in allowed
        )
        if not fits:
            return [f"{where}: expected {allowed}, got {type(document).__name__}"]
    errors = []
    if "const" in schema and document != schema["const"]:
        errors.append(f"{where}: expected {schema['const']!r}, got {document!r}")
    if "enum" in schema and document not in schema["enum"]:
        errors.append(f"{where}: {document!r} not in {schema['enum']}")
    # As in JSON Schema, the bounds apply to numbers only.
    number = isinstance(document, (int, float)) and not isinstance(document, bool)
    if number and "minimum" in schema and document < schema["minimum"]:
        errors.append(f"{where}: {document} < {schema['minimum']}")
    if number and "maximum" in schema and document > schema["maximum"]:
        errors.append(f"{where}: {document} > {schema['maximum']}")
    if isinstance(document, dict):
        properties = schema.get("properties", {})
        errors += [
            f"{where}: missing {key!r}" for key in schema.get("required", ()) if key not in document
        ]
        if schema.get("additionalProperties") is False:
            errors += [f"{where}: unexpected {key!r}" for key in document if key not in properties]
        for key, value in document.items():
            if key in properties:
                errors += _schema_errors(value, properties[key], f"{where}.{key}")
    if isinstance(document, list):
        if len(document) < schema.get("minItems", 0):
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if len(document) > schema.get("maxItems", len(document)):
            errors.append(f"{where}: more than {schema['maxItems']} items")
        for index, item in enumerate(document):
            errors += _schema_errors(item, schema.get("items", {}), f"{where}[{index}]")
    return errors


@pytest.fixture
def plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str, Mapping[str, str]], tuple[Registry, types.ModuleType]]:
    """Put a real (if minimal) plugin distribution on ``sys.path``; return a registry and module.

    ``plugin(source, {"sampler-name": "ClassName"})`` writes ``source`` as a module,
    declares each class under the ``agentdescent.samplers`` entry-point group in a
    ``.dist-info`` directory, and returns an isolated :class:`Registry` holding it and
    the built-ins only, with the imported module (to read what the plugin saw).
    """

    def install(source: str, entry_points: Mapping[str, str]) -> tuple[Registry, types.ModuleType]:
        module = f"bench_test_plugin_{next(_counter)}"
        write_plugin(tmp_path, module, source, entry_points, module)
        monkeypatch.syspath_prepend(str(tmp_path))
        # Only this plugin loads beside the built-ins, whatever else the venv holds.
        registry = Registry(disable=(), only=(module,), strict=False)
        registry.available()  # loads every plugin, so the module is importable below
        return registry, sys.modules[module]

    return install
