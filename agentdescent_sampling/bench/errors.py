"""The error the bench raises for bad input and for samplers that break the contract."""

from __future__ import annotations

from ..errors import SamplerError

__all__ = ["BenchError"]


class BenchError(SamplerError):
    """A bench run cannot go on: bad configuration, an unreadable log or a broken sampler.

    The message names the offending value, what was expected and what to try.
    """
