"""The built-in samplers, registered through this package's own entry points."""

from .difficulty_weighted import DifficultyWeighted
from .round_robin import RoundRobin

__all__ = ["DifficultyWeighted", "RoundRobin"]
