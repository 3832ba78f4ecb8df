"""The built-in samplers, registered through this package's own entry points."""

from .difficulty_weighted import DifficultyWeighted
from .fixable_first import FixableFirst
from .informative_band import InformativeBand
from .round_robin import RoundRobin

__all__ = ["DifficultyWeighted", "FixableFirst", "InformativeBand", "RoundRobin"]
