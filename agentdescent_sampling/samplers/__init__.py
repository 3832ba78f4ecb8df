"""The built-in samplers, registered through this package's own entry points.

Each is imported on first use (PEP 562), so selecting one imports only its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

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
    __getattr__, __dir__ = lazy_names(__name__, _HOME, globals(), __all__)
