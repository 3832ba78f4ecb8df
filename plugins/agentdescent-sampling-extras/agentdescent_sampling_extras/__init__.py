"""Seeded samplers that comparable optimizers use by default."""

from .samplers import EpochShuffle, UniformRandom

__all__ = ["EpochShuffle", "UniformRandom"]
