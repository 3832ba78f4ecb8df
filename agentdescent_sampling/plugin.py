"""Everything a sampler plugin imports, in one line, and the whole contract it implements.

::

    from agentdescent_sampling.plugin import SOLVED, check_pick, check_score, hookimpl

(and whatever else below you use, all from here).

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

Its class attribute ``name`` is the name a config selects (the class form's entry point names
it instead, below). :func:`check_name` says what a name may be: up to 64 ASCII letters and
digits in words joined by single ``-`` or ``_``, a letter first; case, and ``-`` against
``_``, do not tell two names apart. Its parameters are keyword arguments, best as an attrs
class (declare ``attrs`` among your own dependencies) whose fields carry the validators below
(:func:`number_in`, :func:`whole_number_in`, :func:`seed_number`, :func:`boolean`): their errors
name the class, the parameter and the value, and, given ``hint=`` (``"; try 0.2"``), what to
try; :func:`short_repr` cuts a value quoted in your own messages.

**Optional methods.** ``state_dict()`` and ``load_state_dict(state)`` (:class:`Stateful`) let
its statistics survive a restart. A state is a JSON-ready dict, ``{"sampler": name,
"version": 1, ...}`` with your own keys beside those two (and ``"params"``, where statistics
mean something else under other parameters), which :func:`check_state` checks first in
``load_state_dict``; read its numbers with :func:`is_count`, :func:`is_real` and
:func:`is_tally`, a seeded generator with :func:`rng_state` and :func:`restore_rng`, and raise
:class:`StateError` for anything else, leaving the sampler unchanged. ``stats()``, returning
``{task_id: (passes, trials)}`` that counts every record, lets the conformance kit catch
records lost between threads.

**Threads.** With ``evolve(max_concurrency=N)`` the workers share one instance and call both
methods at once: guard mutable state with a lock, or set ``thread_safe = False`` and
``create()`` serves the sampler under one lock (:func:`synchronized` does the same for an
instance); either is a :class:`ServedSampler`, whose ``wrapped`` is your sampler.
:class:`Pending` tells which tasks are in flight, so a pick can leave them out: ``add(task_id,
pick)`` at a pick, numbered by your own counter, ``remove(task_id)`` at its record,
``holds(task_id, now)`` or ``tasks(now)`` to ask; a task counts as in flight until more than
:data:`TTL_PICKS` picks have passed since its latest ``add`` (a lost rollout).

**Two plugin forms**, both under the ``agentdescent.samplers`` entry-point group:

- *class form*, ``my-sampler = "package.module:Class"``: the entry point's name is the one a
  config selects (it serves the class under that name), and only the selected one is
  imported;
- *hook form*, ``my-pack = "package.module"`` (its name a label that ``list`` shows, though
  never a built-in's, which is refused unimported): a module whose function
  marked :data:`hookimpl`, ``agentdescent_register_samplers(register)``, calls ``register``
  (a :class:`Register`) once per sampler, optionally with ``aliases=`` and ``description=``.

A sampler in your own script needs neither: ``agentdescent_sampling.register(Class)`` makes it
selectable by name. The conformance kit, :mod:`agentdescent_sampling.testing`, tells you what
your sampler breaks (``check_sampler``, or the ``sampler_conformance`` pytest fixture).
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
from .served import ServedSampler, synchronized
from .validators import (
    boolean,
    number_in,
    seed_number,
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
    "ServedSampler",
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
    "is_count",
    "is_real",
    "is_tally",
    "number_in",
    "restore_rng",
    "rng_state",
    "seed_number",
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
