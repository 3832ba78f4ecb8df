"""Task samplers for agentdescent's ``evolve()``, selectable by name, extensible by plugins.

>>> from agentdescent_sampling import create
>>> sampler = create("difficulty-weighted:c=0.1")
>>> sampler.pick(["a", "b"], 0)
'a'
"""

from .errors import (
    InvalidSamplerConfig,
    PluginLoadError,
    RegistrationError,
    SamplerConflictError,
    SamplerError,
    UnknownSamplerError,
)
from .hookspecs import hookimpl
from .params import REQUIRED, Parameter, Signature
from .protocol import SOLVED, TaskSampler, check_keys, check_name, check_score
from .registry import (
    PluginFailure,
    Registry,
    SamplerInfo,
    available,
    create,
    default_registry,
    register,
)
from .samplers import DifficultyWeighted, InformativeBand, RoundRobin
from .samplers._graded import GradedScoreWarning
from .spec import SamplerSpec, parse_spec, spec_from_file
from .state import StateError, Stateful, load_state, save_state
from .sync import Synchronized, synchronized

__all__ = [
    "REQUIRED",
    "SOLVED",
    "DifficultyWeighted",
    "GradedScoreWarning",
    "InformativeBand",
    "InvalidSamplerConfig",
    "Parameter",
    "PluginFailure",
    "PluginLoadError",
    "RegistrationError",
    "Registry",
    "RoundRobin",
    "SamplerConflictError",
    "SamplerError",
    "SamplerInfo",
    "SamplerSpec",
    "Signature",
    "StateError",
    "Stateful",
    "Synchronized",
    "TaskSampler",
    "UnknownSamplerError",
    "available",
    "check_keys",
    "check_name",
    "check_score",
    "create",
    "default_registry",
    "hookimpl",
    "load_state",
    "parse_spec",
    "register",
    "save_state",
    "spec_from_file",
    "synchronized",
]
