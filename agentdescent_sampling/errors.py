"""The errors this package raises. All derive from :class:`SamplerError`."""

from __future__ import annotations

__all__ = [
    "BenchError",
    "InvalidSamplerConfig",
    "PluginLoadError",
    "RegistrationError",
    "SamplerConflictError",
    "SamplerError",
    "ScaffoldError",
    "StateError",
    "UnknownSamplerError",
]


class SamplerError(Exception):
    """Base class of the errors about a config, a spec, the registry, a state file, the bench
    or the scaffold; a bad argument to a sampler's own calls raises ``TypeError`` or
    ``ValueError``."""


class UnknownSamplerError(SamplerError, LookupError):
    """No installed sampler has the requested name.

    The message lists the available names, suggests the closest one and mentions
    plugins that failed to load and might have provided it.
    """


class InvalidSamplerConfig(SamplerError, ValueError):
    """A sampler spec or its parameters are malformed.

    The message names the sampler and its valid parameters with their defaults.
    """


class SamplerConflictError(SamplerError):
    """Two distributions provide the same sampler name.

    The message names both distributions; select one with ``provider=``.
    """


class PluginLoadError(SamplerError):
    """A plugin failed to import, failed in its hook, or registered something invalid.

    Raised when such a plugin's sampler is selected (chained to the original
    exception), or at load time when ``AGENTDESCENT_SAMPLERS_STRICT=1``.
    """


class RegistrationError(SamplerError, ValueError):
    """A sampler registered in-process was refused: not a sampler factory, or a bad name.

    The message says which rule the registration broke and how to fix it.
    """


class StateError(SamplerError, ValueError):
    """A state file or dict is unreadable, corrupt, of another version or of another sampler."""


class ScaffoldError(SamplerError, ValueError):
    """``new-plugin`` cannot write the plugin: a bad name, or the directory already exists."""


class BenchError(SamplerError):
    """A bench run cannot go on: bad configuration, an unreadable log or a broken sampler.

    The message names the offending value, what was expected and what to try.
    """
