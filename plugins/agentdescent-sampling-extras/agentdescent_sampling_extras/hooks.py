"""The hook-form entry point: registers both samplers with aliases and descriptions."""

from __future__ import annotations

from agentdescent_sampling.plugin import Register, hookimpl

from .samplers import EpochShuffle, UniformRandom


@hookimpl
def agentdescent_register_samplers(register: Register) -> None:
    """Register ``epoch-shuffle`` and ``uniform-random``."""
    register(
        EpochShuffle,
        aliases=("epoch", "shuffled"),
        description="Every task once per epoch, in a seeded random order (full coverage).",
    )
    register(
        UniformRandom,
        aliases=("random",),
        description="Uniformly random task from the shard, with replacement, seeded.",
    )
