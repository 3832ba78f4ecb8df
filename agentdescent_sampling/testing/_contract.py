"""The checks of the contract every sampler keeps: it is a TaskSampler, picks and records,
has a stable name, picks a member without changing the shard, refuses an empty shard,
takes a record from outside the shard, and picks alike under one seed."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._display import safe_repr
from ..errors import PluginLoadError
from ..loading import describe
from ..params import Parameter
from ..policy import RESERVED, builtin_of, normalize
from ..protocol import check_name, method_problem
from ..served import ServedSampler
from ._calls import (
    _PACKAGE,
    _SCRIPTED,
    _SHARD,
    _building,
    _fault_of,
    _member,
    _not_a_str,
    _scripted_picks,
    _show,
    _signature,
    _where,
)
from ._report import _MISCOUNTS_OUTSIDE, _NON_MEMBER, Factory, Finding, Violation, _Fault
from ._settings import _check_seconds
from ._threads import _counted, _stats_counts
from ._time import _in_thread


def _check_protocol(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    try:
        sampler = factory(**params)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001  # the sampler's own failure, SystemExit too
        # The registry's PluginLoadError is chained to the plugin's own error, whose
        # traceback reaches the plugin's line.
        cause = error.__cause__ if isinstance(error, PluginLoadError) else None
        yield Violation(
            "protocol",
            f"building it, {_building(factory, params)}, raised {describe(error)}"
            f"{_where(cause or error)}; every other check builds one, so none ran",
        )
        return
    problem = method_problem(sampler)
    if problem is not None:
        yield Violation(
            "protocol",
            f"{type(sampler).__name__} is not a TaskSampler: {problem}. Every other check "
            f"calls pick(keys, round_index) and record(task_id, score), so none ran",
        )


_NONE_RAN = "every other check picks and records, so none ran"


def _check_pick_and_record(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    failed = _first_pick_and_record(factory(**params))
    if failed is None:
        return
    blamed = _blamed_parameter(factory, params)
    if blamed is not None:
        given = f"{blamed.name}={safe_repr(params[blamed.name], 40)}"
        failed += (
            f"; it was built with {given} without complaint, and at {blamed.name}'s default, "
            f"{safe_repr(blamed.default, 40)}, it picks and records. If {blamed.name} takes "
            f"that value, make pick() and record() work with it; if not, refuse it in "
            f"__init__ (an attrs validator, or a check that raises TypeError or ValueError), so "
            f"that create() names the parameter rather than a pick failing later"
        )
    yield Violation("pick-and-record", f"{failed}; {_NONE_RAN}")


def _first_pick_and_record(sampler: Any) -> str | None:
    """What ``sampler``'s first two picks, or the records of what they picked (a pass, then a
    failure), raised, as a report says it; ``None`` if each works."""
    for round_index, score in enumerate((1.0, 0.0)):
        call = f"pick({_show(list(_SHARD))}, {round_index})"
        try:
            picked = _member(sampler.pick(list(_SHARD), round_index), _SHARD)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001  # any, SystemExit too, is the violation
            return f"{call} raised {describe(error)}{_where(error)}"
        try:
            sampler.record(picked, score)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001  # any, SystemExit too, is the violation
            outcome = "a pass" if score else "a failure"
            return (
                f"record({picked!r}, {score}) after {call} raised {describe(error)}"
                f"{_where(error)}; record() must take {outcome} ({score})"
            )
    return None


def _blamed_parameter(factory: Factory, params: dict[str, Any]) -> Parameter | None:
    """The first of ``params`` that, left at its default, has the first pick and record
    work where with its value given they raise, again when it is given back: the value that
    breaks them, which the sampler took without complaint. ``None`` if no one parameter
    does, or if the tries outlast half of :data:`CHECK_SECONDS` between them (a try that
    hangs is left behind, and the failure is reported as it was)."""
    deadline = time.monotonic() + _check_seconds() / 2

    def fails(given: dict[str, Any]) -> bool | None:
        """Whether the first pick and record fail when built with ``given``; ``None`` if
        building raised, or the try did not end by the deadline."""
        outcome, _ = _in_thread("blame", lambda: _first_pick_and_record(factory(**given)),
                                max(deadline - time.monotonic(), 0.0))  # fmt: skip
        if not outcome or isinstance(outcome[0], BaseException):
            if outcome and isinstance(outcome[0], KeyboardInterrupt):
                raise outcome[0]
            return None
        return outcome[0] is not None

    for parameter in _signature(factory).parameters:
        if parameter.name not in params or parameter.required:
            continue
        rest = {key: value for key, value in params.items() if key != parameter.name}
        if fails(rest) is False and fails(params) is True:
            return parameter
        if time.monotonic() >= deadline:
            break
    return None


def _check_name(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    # A class's own name, as the fixture reads it: the registry serves a class selected by
    # another name under that one, which would supply a missing or invalid name. A preset's
    # is the name it is registered under, which the registry serves it by.
    own = getattr(factory, "own_name", True)
    first, second = (
        each.wrapped if own and isinstance(each, ServedSampler) else each
        for each in (factory(**params), factory(**params))
    )
    name = getattr(first, "name", _MISSING)
    cls = type(first).__qualname__
    # Checked by the name its entry point gives it, that is the name to give the class.
    selected = getattr(factory, "selected", None)
    suggested = (
        selected
        if isinstance(selected, str) and normalize(selected) not in RESERVED
        else _suggested_name(type(first).__name__)
    )
    add = f"add name = {suggested!r} to the class (the name configs select it by)"
    if name is _MISSING:
        yield Violation("name", f"{cls} has no name attribute; {add}")
        return
    if not isinstance(name, str):
        yield Violation("name", f"{cls}'s name attribute is {safe_repr(name)}, not a string; {add}")
        return
    try:
        check_name(name)
    except ValueError as error:
        yield Violation("name", f"the sampler's name attribute is wrong: {error}")
        return
    builtin = _claimed_builtin(name, type(first))
    if builtin is not None:
        yield Violation(
            "name",
            f"{cls}'s name {name!r} selects the built-in {builtin}, and built-in names are "
            f"reserved: registered under it, the plugin is refused and a config naming it gets "
            f"the built-in, and under another name its samplers would still call themselves the "
            f"built-in; give the class its own (name = {_suffixed_name(suggested)!r})",
        )
        return
    first.pick(list(_SHARD), 0)
    first.record(_SHARD[0], 1.0)
    if getattr(first, "name", None) != name or getattr(second, "name", None) != name:
        yield Violation("name", f"name {name!r} is not stable across instances and calls")


_MISSING = object()


def _claimed_builtin(name: str, owner: object) -> str | None:
    """The built-in ``name`` selects, when ``owner`` (a class or a factory) is not this
    package's own: a name that would pass it off as the built-in. Its own is what one of its
    modules holds under the owner's name; a plugin's class may claim the module."""
    module = str(getattr(owner, "__module__", None))
    if module.partition(".")[0] == _PACKAGE:
        held = getattr(sys.modules.get(module), str(getattr(owner, "__qualname__", "")), None)
        if held is owner:
            return None
    return builtin_of(name)


def _suffixed_name(name: str) -> str:
    """``name``, or ``my-<name>`` if it is a built-in's: a name the registry takes."""
    return name if normalize(name) not in RESERVED else check_name(f"my-{name}"[:64])


def _suggested_name(class_name: str) -> str:
    """A sampler name made of a class's name (``HardestFirst`` -> ``hardest-first``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", class_name).lower().replace("_", "-")
    try:
        return check_name(words)
    except ValueError:
        return "my-sampler"


def _check_pick_returns_a_member(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    shards: list[Sequence[str]] = [list(_SHARD), tuple(_SHARD[:5]), ["only-task"], list(_ODD_IDS)]
    strays: list[tuple[Sequence[str], int, object]] = []  # the first non-member of each shard
    for shard in shards:
        sampler = factory(**params)
        for round_index in range(3 * len(shard)):
            # A copy for each call: a pick that mutates what it is given (the keys-unchanged
            # check reports that) must not have a member it took out called a non-member.
            picked = sampler.pick(list(shard) if isinstance(shard, list) else shard, round_index)
            if picked not in shard:
                strays.append((shard, round_index, picked))
                break
            sampler.record(picked, float(round_index % 2))
    if strays:  # one bug, whichever shards show it: one violation, naming each
        (shard, round_index, picked), *more = strays
        also = ", and ".join(f"pick({_show(s)}, {r}), returning {safe_repr(p)}" for s, r, p in more)
        violation = Violation(
            "pick-returns-a-member",
            f"pick({_show(shard)}, {round_index}) returned {safe_repr(picked)}"
            f"{_not_a_str(picked)}{_changed_key(picked, shard)}, which is not in the "
            f"{type(shard).__name__} it was given{f'; so did {also}' if also else ''}",
        )
        yield _Fault(violation, _NON_MEMBER)


#: Task ids as benchmarks name them, which a pick that changes a key (lower-cases it, strips
#: it) returns changed: the engine then looks up a task it does not have.
_ODD_IDS = ("HumanEval/0", "Dates-Train", "task 2", "t\u00e2che-3", "Q&A #4", " spaced-5 ")


def _changed_key(picked: object, shard: Sequence[str]) -> str:
    """`` ('Dates-Train' changed: return a key as it is given)`` where ``picked`` is a member
    of ``shard`` lower-cased, stripped or both; else ``""``."""
    if not isinstance(picked, str):
        return ""
    same = next((key for key in shard if key.casefold().strip() == picked.casefold().strip()), None)
    if same is None:
        return ""
    return f" ({safe_repr(same)} changed: return a key as it is given, as the engine looks it up)"


#: The scores the keys-unchanged check records between its picks, in turn: passes, failures
#: and a partial score, so that a pick that changes its shard only once a task has some
#: outcome (one that drops solved tasks from it) does so under the check.
_MIXED_SCORES = (1.0, 0.0, 0.5, 0.0)


def _check_keys_unchanged(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    shard = list(_SHARD)
    last = ""
    for round_index in range(2 * len(shard)):
        picked = sampler.pick(shard, round_index)
        call = f"pick({_show(list(_SHARD))}, {round_index})"
        if shard != list(_SHARD):
            records = f"{round_index} record{'s' if round_index > 1 else ''}"
            after = f", made after {records} (the last {last})," if last else ""
            yield Violation(
                "keys-unchanged",
                f"{call}{after} mutated the shard it was given: {_change(list(_SHARD), shard)}; "
                f"copy it (sorted(keys), list(keys)) before reordering or removing",
            )
            return
        task, score = _member(picked, _SHARD), _MIXED_SCORES[round_index % len(_MIXED_SCORES)]
        sampler.record(task, score)
        last = f"record({task!r}, {score!r})"
        if shard != list(_SHARD):  # through the shard a pick kept
            yield Violation(
                "keys-unchanged",
                f"{last}, after {call}, mutated the shard that pick was given: "
                f"{_change(list(_SHARD), shard)}; keep a copy of the shard (list(keys)), not "
                f"the list evolve() passes",
            )
            return


def _change(before: Sequence[str], after: Sequence[str]) -> str:
    """What a pick did to the shard it was given, ``before`` it and ``after``: the keys it
    took out or put in, else the first position it reordered."""
    removed = [key for key in before if key not in after]
    added = [key for key in after if key not in before]
    if removed or added or len(before) != len(after):
        parts = [f"{len(before)} keys became {len(after)}"]
        for verb, keys in (("removed", removed), ("added", added)):
            if keys:
                parts.append(f"{verb} {_show(keys)}")
        return ", ".join(parts)
    index = next(i for i, (was, now) in enumerate(zip(before, after, strict=True)) if was != now)
    return (
        f"reordered it, keys[{index}] was {safe_repr(before[index])} and is now "
        f"{safe_repr(after[index])} ({_show(before)} became {_show(after)})"
    )


def _check_empty_shard(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    sampler = factory(**params)
    yield from _expect(
        lambda: sampler.pick([], 0), ValueError, "empty-shard", "pick([], 0)", "check_keys"
    )


def _expect(
    call: Callable[[], object], expected: type[Exception], check: str, what: str, helper: str
) -> Iterator[Violation]:
    """Yield a violation unless ``call`` raises ``expected``."""
    try:
        result = call()
    except expected:
        return
    except Exception as error:  # noqa: BLE001  # the wrong exception is the violation
        outcome = f"raised {describe(error)}{_where(error)}"
    else:
        outcome = f"returned {safe_repr(result)}"
    yield Violation(
        check,
        f"{what} {outcome}; expected {expected.__name__} "
        f"(agentdescent_sampling.plugin.{helper} raises it for you)",
    )


def _check_record_outside_the_shard(factory: Factory, params: dict[str, Any]) -> Iterator[Finding]:
    counts, _ = _stats_counts(factory(**params))  # whether stats() counts every record
    sampler = factory(**params)
    sampler.pick(list(_SHARD[:3]), 0)
    outside = "a-task-from-another-shard"
    before = _counted(sampler) if counts else None
    try:
        sampler.record(outside, 0.5)
    except Exception as error:  # noqa: BLE001  # any exception is the violation
        violation = Violation(
            "record-outside-the-shard",
            f"record({outside!r}, 0.5) of a task outside the current shard raised "
            f"{describe(error)}{_where(error)}; shards rotate between rounds, so this must be "
            f"accepted",
        )
        yield _Fault(violation, _fault_of(error))  # raised on 0.5 anywhere: reported there
        return
    after = _counted(sampler) if counts else None
    if before is not None and after is not None and after != before + 1:
        counted = "was not counted" if after <= before else f"counted {after - before} times"
        violation = Violation(
            "record-outside-the-shard",
            f"record({outside!r}, 0.5) of a task outside the current shard {counted}: "
            f"stats() counts {after - before} trials more, not 1; shards rotate between "
            f"rounds, so count the score of every task recorded once, in the shard or not",
        )
        yield _Fault(violation, _MISCOUNTS_OUTSIDE)
    picked = sampler.pick(list(_SHARD[:3]), 1)
    if picked == outside:  # what it was told of, not in the shard: this check's own fault
        yield Violation(
            "record-outside-the-shard",
            f"after record({outside!r}, 0.5), pick({_show(list(_SHARD[:3]))}, 1) returned "
            f"{outside!r}, the task recorded, which is not in the shard it was given; pick "
            f"only from keys",
        )
    elif picked not in _SHARD[:3]:  # any non-member, which the members check may have seen
        violation = Violation(
            "record-outside-the-shard",
            f"after recording a task outside the shard, pick() returned {safe_repr(picked)}, "
            f"not a member",
        )
        yield _Fault(violation, _NON_MEMBER)


def _check_seeds(factory: Factory, params: dict[str, Any]) -> Iterator[Violation]:
    parted: list[tuple[int, int, list[list[str]]]] = []  # each seed's first pick apart, runs
    for seed in (0, 12345):
        # Both built before either picks, and called in turn: a sampler that seeds the random
        # module in __init__ and draws from it then splits one stream between the two.
        twins = [factory(**{**params, "seed": seed}) for _ in range(2)]
        runs: list[list[str]] = [[], []]
        for round_index in range(_SCRIPTED):
            for twin, run in zip(twins, runs, strict=True):
                run += _scripted_picks(twin, round_index, round_index + 1)
        if runs[0] != runs[1]:
            # Shown from the first pick that differs: the first eight may agree.
            first = next(
                (i for i, (one, other) in enumerate(zip(*runs, strict=False)) if one != other),
                min(map(len, runs)),
            )
            parted.append((seed, first, runs))
    if parted:  # one fault, whichever seeds show it: one violation
        (seed, first, runs), *more = parted
        also = "".join(f" (and so did two with seed={other})" for other, _, _ in more)
        shown_from = slice(first, first + 8)
        yield Violation(
            "seeds",
            f"two instances with seed={seed} picked differently{also}, built together and "
            f"called in turn (a pick and a record each), from pick {first + 1} on: "
            f"{runs[0][shown_from]} vs {runs[1][shown_from]}; draw randomness only from the "
            f"instance's own generator, self.rng = random.Random(seed), never from the random "
            f"module's (random.seed() in __init__ seeds one generator that every instance "
            f"shares), and keep what an instance learns on it (a class attribute or a mutable "
            f"default argument shares it between instances)",
        )
