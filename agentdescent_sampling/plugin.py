"""Everything a sampler plugin imports, in one line, and the whole contract it implements.

::

    from agentdescent_sampling.plugin import SOLVED, check_pick, check_score, hookimpl

**A sampler** has two methods, and no base class (:class:`TaskSampler`):

- ``pick(keys, round_index)`` returns one task id of ``keys``, the worker's shard, and never
  mutates it; it starts with :func:`check_pick`, which checks the shard (:func:`check_keys`)
  and the round index (:func:`check_round_index`) and raises ``ValueError`` for an empty one.
  :func:`check_task_id` checks an id read from the shard, :func:`check_task_ids` a whole shard's.
- ``record(task_id, score)`` reports the score in [0, 1] of a rollout; it starts with
  :func:`check_score`, so a NaN, an infinity, a value out of range or a non-number is refused
  and changes nothing. A score at or above ``pass_threshold`` is a pass: default it to
  :data:`SOLVED`, the engine's, with the :func:`solved_threshold` validator and the
  :func:`solved_if_none` converter.

Its class attribute ``name`` is what a config selects (:func:`check_name`: 1 to 64 ASCII
characters, a letter first). Its parameters are keyword arguments, best as an attrs class
whose fields carry the validators below (:func:`number_in`, :func:`whole_number_in`,
:func:`integer`, :func:`boolean`): their errors name the class, the parameter, the value and
what to try; :func:`short_repr` cuts a value quoted in your own messages.

**Optional methods.** ``state_dict()`` and ``load_state_dict(state)`` (:class:`Stateful`) let
its statistics survive a restart: ``load_state_dict`` starts with :func:`check_state`, reads
numbers with :func:`is_count`, :func:`is_real` and :func:`is_tally`, a seeded generator with
:func:`rng_state` and :func:`restore_rng`, and raises :class:`StateError` for anything else,
leaving the sampler unchanged. ``stats()`` returns a JSON-ready dict the bench prints.

**Threads.** With ``evolve(max_concurrency=N)`` the workers share one instance and call both
methods at once: guard mutable state with a lock, or set ``thread_safe = False`` and
``create()`` serves the sampler under one lock (:func:`synchronized` does the same for an
instance). :class:`Pending` spreads concurrent picks over the shard (``add`` at a pick,
``remove`` at a record; a pick unrecorded after :data:`TTL_PICKS` later picks is lost).

**Two plugin forms**, both under the ``agentdescent.samplers`` entry-point group:

- *class form*, ``name = "package.module:Class"``: the entry point's name is the sampler's,
  and only the selected one is imported;
- *hook form*, ``name = "package.module"``: a module whose function marked :data:`hookimpl`,
  ``agentdescent_register_samplers(register)``, calls ``register`` (a :class:`Register`) once
  per sampler, with ``aliases=`` and ``description=``.

The conformance kit, :mod:`agentdescent_sampling.testing`, tells you what your sampler breaks
(``check_sampler``, or the ``sampler_conformance`` pytest fixture).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names
from .errors import StateError
from .pending import TTL_PICKS, Pending
from .protocol import (
    SOLVED,
    Stateful,
    TaskSampler,
    check_keys,
    check_name,
    check_pick,
    check_round_index,
    check_score,
    check_state,
    check_task_id,
    check_task_ids,
    is_count,
    is_real,
    is_tally,
    restore_rng,
    rng_state,
    short_repr,
)
from .served import synchronized
from .validators import (
    boolean,
    integer,
    number_in,
    solved_if_none,
    solved_threshold,
    whole_number_in,
)

if TYPE_CHECKING:
    from .hookspecs import Register, hookimpl

__all__ = [
    "SOLVED",
    "TTL_PICKS",
    "Pending",
    "Register",
    "StateError",
    "Stateful",
    "TaskSampler",
    "boolean",
    "check_keys",
    "check_name",
    "check_pick",
    "check_round_index",
    "check_score",
    "check_state",
    "check_task_id",
    "check_task_ids",
    "hookimpl",
    "integer",
    "is_count",
    "is_real",
    "is_tally",
    "number_in",
    "restore_rng",
    "rng_state",
    "short_repr",
    "solved_if_none",
    "solved_threshold",
    "synchronized",
    "whole_number_in",
]

# The hook form's two names import pluggy, on first use (PEP 562): a class-form plugin that
# imports its checks from here loads no hook machinery. Hidden from type checkers, which read
# the imports above: a misspelt name stays an error.
_HOOK_FORM = dict.fromkeys(("Register", "hookimpl"), "agentdescent_sampling.hookspecs")
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_names(__name__, _HOOK_FORM, globals(), __all__)
