"""Ways to ask a process in the zoo venv what its registry did."""

from __future__ import annotations

from tests.registry.conftest import PLUGIN_MODULES
from tests.support.venv import Venv

#: Appended to a snippet: prints which plugin modules the process imported.
IMPORTED_PLUGINS = f"""
import json, sys
print(json.dumps(sorted(m for m in {PLUGIN_MODULES!r} if m in sys.modules)))
"""


_RECORDS: dict[tuple[str, frozenset[tuple[str, str]]], list[dict[str, object]]] = {}


def records(zoo: Venv, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    """``available()`` in a fresh process, as ``list --json`` prints it.

    The zoo never changes within a session, so each environment is asked once.
    """
    key = (str(zoo.path), frozenset((env or {}).items()))
    if key not in _RECORDS:
        _RECORDS[key] = zoo.json(
            """
            import json
            from agentdescent_sampling import available
            print(json.dumps([record.to_dict() for record in available()]))
            """,
            env=env,
        )
    return _RECORDS[key]


def failure_of(records: list[dict[str, object]], distribution: str) -> dict[str, object]:
    """The one failure record of ``distribution``."""
    (found,) = [r for r in records if r["kind"] == "failure" and r["distribution"] == distribution]
    return found


def failures_of(records: list[dict[str, object]], distribution: str) -> list[dict[str, object]]:
    """Every failure record of ``distribution``."""
    return [r for r in records if r["kind"] == "failure" and r["distribution"] == distribution]


def error_of(zoo: Venv, spec: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """Create ``spec`` in a fresh process; return the error it raised and its cause."""
    result: dict[str, str] = zoo.json(
        f"""
        import json
        from agentdescent_sampling import create
        try:
            create({spec!r})
        except Exception as error:
            cause = error.__cause__
            print(json.dumps({{"type": type(error).__name__, "message": str(error),
                              "cause": type(cause).__name__ if cause else None}}))
        else:
            print(json.dumps({{"type": None, "message": "", "cause": None}}))
        """,
        env=env,
    )
    return result
