"""Task samplers for agentdescent's ``evolve()``, selectable by name, extensible by plugins.

>>> from agentdescent_sampling import create
>>> sampler = create("difficulty-weighted:c=0.1")
>>> sampler.pick(["a", "b"], 0)
'a'

What a user selects, builds, wires and keeps. A plugin author imports from one module,
:mod:`agentdescent_sampling.plugin`; the other public submodules are ``errors`` (every
exception), ``testing`` (the conformance kit), ``refs`` (what a run spec's refs name) and
``bench``.

Names are imported on first use (PEP 562), so selecting one sampler by name imports
that sampler's module and the registry, not the bench, the conformance kit or the
other built-ins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names

if TYPE_CHECKING:
    from ._version import __version__
    from .durable import DurableSampler
    from .errors import InvalidSamplerConfig, SamplerError, StateError, UnknownSamplerError
    from .protocol import SOLVED, Sampler, TaskSampler
    from .records import PluginFailure, SamplerInfo
    from .registry import Registry, available, create, register
    from .samplers import DifficultyWeighted, FixableFirst, InformativeBand, RoundRobin
    from .samplers._graded import GradedScoreWarning
    from .spec import SamplerSpec
    from .spec_file import spec_from_file
    from .state import load_state, save_state
    from .wiring import wire

__all__ = [
    "SOLVED",
    "DifficultyWeighted",
    "DurableSampler",
    "FixableFirst",
    "GradedScoreWarning",
    "InformativeBand",
    "InvalidSamplerConfig",
    "PluginFailure",
    "Registry",
    "RoundRobin",
    "Sampler",
    "SamplerError",
    "SamplerInfo",
    "SamplerSpec",
    "StateError",
    "TaskSampler",
    "UnknownSamplerError",
    "__version__",
    "available",
    "create",
    "load_state",
    "register",
    "save_state",
    "spec_from_file",
    "wire",
]

#: Where each public name lives, for the lazy imports below.
_MODULES: dict[str, tuple[str, ...]] = {
    ".durable": ("DurableSampler",),
    ".errors": ("InvalidSamplerConfig", "SamplerError", "StateError", "UnknownSamplerError"),
    ".protocol": ("SOLVED", "Sampler", "TaskSampler"),
    ".records": ("PluginFailure", "SamplerInfo"),
    ".registry": ("Registry", "available", "create", "register"),
    ".samplers.difficulty_weighted": ("DifficultyWeighted",),
    ".samplers.fixable_first": ("FixableFirst",),
    ".samplers.informative_band": ("InformativeBand",),
    ".samplers.round_robin": ("RoundRobin",),
    ".samplers._graded": ("GradedScoreWarning",),
    ".spec": ("SamplerSpec",),
    ".spec_file": ("spec_from_file",),
    ".state": ("load_state", "save_state"),
    ".wiring": ("wire",),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


# Hidden from type checkers, which read the imports above instead: to them a module
# __getattr__ makes every name exist, typed Any, so a misspelt import would pass.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(
        __name__, {"__version__": "._version", **_HOME}, globals(), __all__
    )
