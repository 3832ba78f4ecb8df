"""The built-in samplers, registered through this package's own entry points.

Each is imported on first use (PEP 562), so selecting one imports only its module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .difficulty_weighted import DifficultyWeighted
    from .fixable_first import FixableFirst
    from .informative_band import InformativeBand
    from .round_robin import RoundRobin

__all__ = ["DifficultyWeighted", "FixableFirst", "InformativeBand", "RoundRobin"]

_HOME = {
    "DifficultyWeighted": ".difficulty_weighted",
    "FixableFirst": ".fixable_first",
    "InformativeBand": ".informative_band",
    "RoundRobin": ".round_robin",
}


# Hidden from type checkers, which read the imports above: a misspelt name stays an error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _HOME.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
