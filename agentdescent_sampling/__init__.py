"""Task samplers for agentdescent's ``evolve()``, selectable by name, extensible by plugins.

>>> from agentdescent_sampling import create
>>> sampler = create("difficulty-weighted:c=0.1")
>>> sampler.pick(["a", "b"], 0)
'a'

What users select, build and keep; what plugin authors implement and call. The whole plugin
contract is :mod:`agentdescent_sampling.protocol`; the public submodules ``errors``,
``validators``, ``pending``, ``hookspecs``, ``testing``, ``refs`` (run-spec refs) and ``bench``
hold the rest.

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
    from .errors import (
        InvalidSamplerConfig,
        PluginLoadError,
        RegistrationError,
        SamplerConflictError,
        SamplerError,
        StateError,
        UnknownSamplerError,
    )
    from .hookspecs import Register, hookimpl
    from .pending import Pending
    from .protocol import (
        SOLVED,
        Sampler,
        Stateful,
        TaskSampler,
        check_keys,
        check_pick,
        check_score,
        check_state,
    )
    from .records import PluginFailure, SamplerInfo
    from .registry import Registry, available, create, register
    from .runspec import evidence_acceptance, evidence_promotion, from_run_spec
    from .samplers import DifficultyWeighted, FixableFirst, InformativeBand, RoundRobin
    from .samplers._graded import GradedScoreWarning
    from .served import ServedSampler, synchronized
    from .spec import SamplerSpec, spec_from_file
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
    "Pending",
    "PluginFailure",
    "PluginLoadError",
    "Register",
    "RegistrationError",
    "Registry",
    "RoundRobin",
    "Sampler",
    "SamplerConflictError",
    "SamplerError",
    "SamplerInfo",
    "SamplerSpec",
    "ServedSampler",
    "StateError",
    "Stateful",
    "TaskSampler",
    "UnknownSamplerError",
    "__version__",
    "available",
    "check_keys",
    "check_pick",
    "check_score",
    "check_state",
    "create",
    "evidence_acceptance",
    "evidence_promotion",
    "from_run_spec",
    "hookimpl",
    "load_state",
    "register",
    "save_state",
    "spec_from_file",
    "synchronized",
    "wire",
]

#: Where each public name lives, for the lazy imports below.
_MODULES: dict[str, tuple[str, ...]] = {
    ".durable": ("DurableSampler",),
    ".errors": (
        "InvalidSamplerConfig",
        "PluginLoadError",
        "RegistrationError",
        "SamplerConflictError",
        "SamplerError",
        "StateError",
        "UnknownSamplerError",
    ),
    ".hookspecs": ("Register", "hookimpl"),
    ".pending": ("Pending",),
    ".protocol": (
        "SOLVED",
        "Sampler",
        "Stateful",
        "TaskSampler",
        "check_keys",
        "check_pick",
        "check_score",
        "check_state",
    ),
    ".records": ("PluginFailure", "SamplerInfo"),
    ".registry": ("Registry", "available", "create", "register"),
    ".runspec": ("evidence_acceptance", "evidence_promotion", "from_run_spec"),
    ".samplers.difficulty_weighted": ("DifficultyWeighted",),
    ".samplers.fixable_first": ("FixableFirst",),
    ".samplers.informative_band": ("InformativeBand",),
    ".samplers.round_robin": ("RoundRobin",),
    ".samplers._graded": ("GradedScoreWarning",),
    ".spec": ("SamplerSpec", "spec_from_file"),
    ".state": ("load_state", "save_state"),
    ".served": ("ServedSampler", "synchronized"),
    ".wiring": ("wire",),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


# Hidden from type checkers, which read the imports above instead: to them a module
# __getattr__ makes every name exist, typed Any, so a misspelt import would pass.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(
        __name__, {"__version__": "._version", **_HOME}, globals(), __all__
    )
