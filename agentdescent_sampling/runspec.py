"""The ``policies`` entry points for agentdescent's run specs: the sampler, and the evidence.

A run spec names a sampler with a ref the engine resolves inside the spec's ``allow``
list and calls with the ref's other keys::

    "policies": {"task_sampler": {"ref": "agentdescent_sampling.refs:from_run_spec",
                                  "spec": "informative-band",
                                  "state": "~/.agentdescent/csv-total-sampler.sqlite"}},
    "allow": ["agentdescent_sampling.refs"]

:func:`create` alone would resolve too, but the engine reports only ``ValueError`` as a
spec error: an unknown name (a ``LookupError``) would reach the user as a traceback.
And ``agentdescent resume`` runs in the run's directory while ``agentdescent evolve``
runs where it was typed, so a relative path would name two different files.

To give the sampler the engine's evidence, as :func:`~agentdescent_sampling.wire` does in
Python, name the acceptance and promotion slots too, all three with one ``link`` (checked
while the engine builds the spec, so ``agentdescent plan`` reports a link that differs)::

    "policies": {
      "task_sampler": {"ref": "agentdescent_sampling.refs:from_run_spec",
                       "spec": "fixable-first", "link": "main"},
      "acceptance": {"ref": "agentdescent_sampling.refs:evidence_acceptance", "link": "main"},
      "promotion": {"ref": "agentdescent_sampling.refs:evidence_promotion", "link": "main"}
    }
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import sys
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .errors import InvalidSamplerConfig, SamplerError, StateError
from .protocol import SAVED_WITH, Sampler, short_repr
from .registry import create
from .spec import SamplerSpec, SpecLike, closest_name, is_name, parse_spec
from .spec_file import _SHOWN_KEY, _spec_from_file
from .wiring import (
    LINKED,
    MAX_LINK,
    EvidenceAcceptance,
    EvidencePromotion,
    EvidenceTap,
    links_problem,
    no_evidence,
)

if TYPE_CHECKING:
    from .durable import DurableSampler

__all__ = ["evidence_acceptance", "evidence_promotion", "from_run_spec"]

#: One tap per ``link`` name: the three refs of a spec are resolved apart, in any order.
#: A tap the three have joined is forgotten (:func:`_forget_if_joined`).
_TAPS: dict[str, EvidenceTap] = {}
#: Each state path this process built a sampler on: that sampler, with its record and
#: round counts when built. ``agentdescent evolve`` builds a spec twice in one process (to
#: check it, then to run it) and leaves the first sampler open.
_BUILT: dict[Path, tuple[weakref.ref[Any], int, int]] = {}


class _Default(str):
    """A default told apart from the same text given: ``key`` beside ``spec`` is refused."""

    __slots__ = ()


_TASK_SAMPLER = _Default("task_sampler")


def from_run_spec(
    spec: SpecLike | Mapping[str, Any] | None = None,
    *,
    file: str | None = None,
    key: str | None = _TASK_SAMPLER,
    state: str | None = None,
    link: str | None = None,
    **unknown: Any,
) -> Sampler:
    """Build the sampler a run spec's ``policies.task_sampler`` ref names.

    Args:
        spec: what :func:`create` takes: ``"difficulty-weighted:c=0.1"`` or
            ``{"name": "difficulty-weighted", "c": 0.1, "provider": "..."}``.
        file: instead of ``spec``, a TOML or JSON file to read the spec from under ``key``;
            an absolute path or one starting with ``~``.
        key: the (dotted) key ``file`` holds the spec under, ``task_sampler`` by default;
            ``None`` (``null`` in the run spec) for a file that holds the spec alone.
        state: a state file that keeps the sampler's statistics across a stop and
            ``agentdescent resume``; an absolute path or one starting with ``~``.
        link: a name that :func:`evidence_acceptance` and :func:`evidence_promotion`
            refs also give, so the engine's evidence reaches this sampler.

    Raises:
        InvalidSamplerConfig: an unknown key, neither or both of ``spec`` and ``file``,
            ``key`` without ``file``, a relative path, a bad parameter, a ``link`` the
            sampler cannot use or that the spec's acceptance and promotion refs do not also
            give, or any error of :func:`create` that is not a ``ValueError`` (an unknown
            name, a conflict, a plugin that failed to load), with its message.
        StateError: the ``state`` file belongs to another sampler or other parameters.

    Every message starts with ``policies.task_sampler:``, the slot it is about, but that
    of a ``link`` that differs, which starts with ``policies:``, and that of the ref given in
    another place of the spec, which starts with that place (``policies.selection:``).
    """
    _refuse_elsewhere("task_sampler")
    _refuse_unknown("task_sampler", unknown)
    _refuse_wide_allow("task_sampler")
    if (spec is None) == (file is None):
        raise InvalidSamplerConfig(
            "policies.task_sampler: give exactly one of 'spec' (for example "
            '"spec": "informative-band") and \'file\' (a TOML or JSON file with a '
            f"[task_sampler] table); got {'both' if file is not None else 'neither'}"
        )
    if key is not _TASK_SAMPLER and file is None:
        raise InvalidSamplerConfig(
            f"policies.task_sampler: 'key' ({short_repr(key)}) names the table to read in "
            f"'file', but the ref gives 'spec', which is the sampler itself; remove 'key', or "
            f"replace 'spec' with 'file', an absolute path to a TOML or JSON file"
        )
    if key is not None and not (isinstance(key, str) and key):
        raise InvalidSamplerConfig(
            f"policies.task_sampler: 'key' must be the (dotted) name of the table to read in "
            f"'file', a string such as \"task_sampler\", or null for a file that holds the spec "
            f"alone; got {_json_kind(key)}"
        )
    path = None if state is None else _absolute(state, "state")
    source = None if file is None else _absolute(file, "file")
    again = path is not None and _close_unused(path)
    found = path is not None and path.exists()  # create() makes a missing one
    if source is not None:
        try:
            spec = _spec_from_file(source, key, _json_key)
        except InvalidSamplerConfig as error:
            raise InvalidSamplerConfig(f"policies.task_sampler: {error}") from error
    try:
        assert spec is not None  # for mypy: given, or read from the file
        sampler = create(spec, state=path)
    except SamplerError as error:
        message = str(error)
        if isinstance(error, StateError) and path is not None and spec is not None:
            from ._stateview import _is_json  # only on this error path

            if _is_json(path):
                message = _export_given(path, spec)  # the library's advice is for Python
            elif any(said in message for said in _MISMATCH):
                table = None if source is None else (source, key)
                message += _mismatch_advice(path, _run_being_resumed(), table)
        # Every error of this slot names it; the engine reports only a ValueError as a spec
        # error, so one that is not (an unknown name, a conflict) becomes InvalidSamplerConfig.
        kind = type(error) if isinstance(error, ValueError) else InvalidSamplerConfig
        raise kind(f"policies.task_sampler: {message}") from error
    if link is not None:
        try:
            _link(sampler, link)
        except InvalidSamplerConfig:
            close = getattr(sampler, "close", None)
            if callable(close):
                close()  # not left holding its state file: a new one is removed again
            raise
    if path is not None:
        from .durable import DurableSampler  # only a sampler with a state file is one

        if isinstance(sampler, DurableSampler):
            _BUILT[path] = (weakref.ref(sampler), sampler.records, sampler.rounds)
            if not again:
                _announce(sampler, found, _run_being_resumed())
    return sampler


def _announce(sampler: DurableSampler, found: bool, resumed: Path | None) -> None:
    """Tell the user on stderr (a detached run's ``log.txt``) what the sampler starts from
    when they may not expect it: the run being ``resumed`` (its directory) continues its
    records, or found no state file and starts fresh; a new run takes up earlier records."""
    run = None if resumed is None else resumed.name
    if resumed is not None and not found:
        note = (
            f"warning: resuming run {run}, but found no sampler state at {sampler.path} "
            f"(moved or deleted since the run started?): the sampler starts fresh, and what "
            f"it learned before the stop is lost. To keep it, 'agentdescent cancel {run}', put "
            f"the file back at {sampler.path} (with its -wal file, if it has one), and "
            f"'agentdescent resume {run}'"
        )
    elif not sampler.records:
        made = 0 if resumed is None else _rollouts_made(resumed)
        if not made:
            return
        assert resumed is not None  # for mypy: made is 0 otherwise
        note = (
            f"warning: resuming run {run}, which made {made:,} rollouts, but the sampler state "
            f"at {sampler.path} holds no record of them (its -wal file deleted, or the state "
            f"copied without it?): the sampler starts fresh, and what it learned before the "
            f"stop is lost. To keep it, 'agentdescent cancel {run}', put back the file with "
            f"its -wal file, and 'agentdescent resume {run}'"
        )
    elif resumed is not None:
        note = (
            f"resuming run {run}: continuing the {sampler.records} records of {sampler.path} "
            f"(every run given that state adds its own)"
        )
    else:
        # A run spec names one state path for every run made from it: say so when a new run
        # takes up earlier records, which a fresh run would not want.
        note = (
            f"continuing {sampler.records} records from {sampler.path} "
            f"(a fresh run needs its own state path, or that file deleted)"
        )
    if sampler.records and sampler._respecced is not None:  # an edited spec or file
        import json

        from ._display import shown

        was, now = (shown(json.dumps(spec), 200) for spec in sampler._respecced)
        note += f"; the sampler's spec was {was} and is now {now}"
    print(f"agentdescent-sampling: {note}", file=sys.stderr)


def _rollouts_made(run: Path) -> int:
    """The rollouts the run's ``status.json`` counts (the engine's last process's), or 0 if
    it cannot be read as a count."""
    from ._files import load_document, strict_json  # only on a resume of an empty state

    try:
        status = load_document(run / "status.json", strict_json, 1 << 20)
    except (OSError, UnicodeDecodeError, ValueError):
        return 0
    made = status.get("rollouts") if isinstance(status, dict) else None
    return made if type(made) is int and made > 0 else 0


#: What a state error says of a file kept by another sampler, or with other parameters
#: (``state.check_owner``, ``protocol.check_state``).
_MISMATCH = ("holds the state of sampler", SAVED_WITH)


def _json_key(key: str | None) -> str:
    """``"key": ...``, as the ref gives it in the run spec's JSON, for a file's advice."""
    import json

    shown = json.dumps(key if key is None or len(key) <= _SHOWN_KEY else f"{key[:_SHOWN_KEY]}...")
    return f'"key": {shown}'


def _json_kind(value: object) -> str:
    """``value``, shown with what JSON calls its type: a run spec's values come from JSON."""
    import json

    if value == "":
        return "the empty string"
    try:
        shown = json.dumps(value)  # as the spec wrote it: true, {"a": 1}
    except (TypeError, ValueError):  # not from JSON: a Python caller's
        shown = short_repr(value)
    shown = shown if len(shown) <= 80 else f"{shown[:77]}..."
    return f"{_JSON_KINDS.get(type(value), type(value).__name__)} {shown}"


#: What JSON calls the types its values are read as.
_JSON_KINDS: dict[type, str] = {
    bool: "the boolean",
    int: "the number",
    float: "the number",
    list: "an array",
    dict: "an object",
}


def _mismatch_advice(
    path: Path, resumed: Path | None, table: tuple[Path, str | None] | None
) -> str:
    """What to do, in a run spec's terms, when the state file at ``path`` was kept by another
    sampler or other parameters: a ``resumed`` run cannot change its spec, but the file its
    ``file`` names (``table``: that file and the key read in it, None for the whole file),
    read again on resume, can have been edited."""
    show = f"agentdescent-sampling state show {shlex.quote(str(path))}"
    if table is None:
        where = "'spec'"
    else:
        where = str(table[0]) if table[1] is None else f"the {table[1]!r} table in {table[0]}"
    if resumed is None:
        return (
            f". In this run spec: give {where} the sampler and parameters the file was kept "
            f"with ('{show}' names them), or give 'state' a new path for a fresh start"
        )
    run = resumed.name
    if table is None:
        return (
            f". Run {run} is being resumed with the spec in {resumed / 'spec.json'}, so either "
            f"the file at {path} is not the one it kept, or that spec's sampler was edited "
            f"since the run started: put the run's own state file back there, or the sampler "
            f"and parameters it started with back in that spec, and 'agentdescent resume "
            f"{run}' again, or 'agentdescent cancel {run}' and start a new run"
        )
    return (
        f". Run {run} is being resumed, and its spec reads the sampler from {where}, read "
        f"again on resume; so either that table was edited since the run started, or the "
        f"file at {path} is not the one the run kept: put the sampler and parameters it "
        f"started with back in {table[0]} ('{show}' names them), or the run's own state file "
        f"back at {path}, and 'agentdescent resume {run}' again, or 'agentdescent cancel "
        f"{run}' and start a new run"
    )


def _export_given(path: Path, spec: SpecLike | Mapping[str, Any]) -> str:
    """What to do with a JSON export named as a run spec's ``state``: the command that makes a
    state file of it."""
    from .policy import known_apart  # only on this error path
    from .state import FORMAT, read_state_file

    # A path that names no file yet: state import makes no file over one (the export may
    # have been made from a state file beside it).
    candidates = [path.with_suffix(".sqlite")]
    candidates += [path.with_name(f"{path.stem}-state-{n}.sqlite") for n in range(1, 100)]
    free = [c for c in candidates if c != path and not os.path.lexists(c)]
    target = free[0] if free else candidates[-1]
    selected = parse_spec(spec)
    try:
        document = read_state_file(path)
    except StateError as error:  # no command would take it
        with open(path, "rb") as file:
            marked = FORMAT.encode() in file.read(4096)
        # Unmarked, the reader's words ("not JSON") would contradict what it begins as.
        what = (
            f"is an export of a sampler state that cannot be read ({error})"
            if marked
            else "begins as JSON (a '{'), and is no export of a sampler state"
        )
        instead = (
            "export the state file it was made from again ('agentdescent-sampling state "
            "export'), or give a path of its own"
            if marked
            else "give a path of its own"
        )
        return (
            f"state {short_repr(str(path), 1000)} {what}; a run spec's 'state' is the SQLite "
            f"state file the sampler keeps up to date as it runs: {instead}, such as "
            f"{short_repr(str(target), 1000)}, which the run makes"
        )
    saved, kept = document.get("sampler"), document.get("state")
    other = isinstance(saved, str) and is_name(saved) and known_apart(saved, selected.name)
    # The parameters the export was saved with, which the import checks, over those selected.
    params = {} if other else dict(selected.params)
    if isinstance(kept, Mapping) and isinstance(kept.get("params"), Mapping):
        params.update(kept["params"])
    imported = SamplerSpec(str(saved) if other else selected.name, params)
    command = ["agentdescent-sampling", "state", "import", str(path), "-o", str(target)]
    command += ["--spec", str(imported)]
    advice = (
        f"state {short_repr(str(path), 1000)} is a JSON file, and a run spec's 'state' is "
        f"the SQLite state file the sampler keeps up to date as it runs. If it is an export (from "
        f"'agentdescent-sampling state export' or save_state), make a state file of it with "
        f"{shlex.join(command)} and give {short_repr(str(target), 1000)} as 'state'"
    )
    if other:
        advice += (
            f", and select {short_repr(saved)} in 'spec': it is the state of that sampler, not "
            f"of {selected.name!r}"
        )
    return advice


def _close_unused(path: Path) -> bool:
    """Close the sampler this process built earlier on ``path``, if it has neither picked
    nor recorded since (nothing of it is lost); whether there was one."""
    built = _BUILT.pop(path, None)
    sampler = None if built is None else built[0]()
    if sampler is None or built is None:
        return False
    if (sampler.records, sampler.rounds) != built[1:]:
        _BUILT[path] = built  # in use: opening the path again is refused, as it should be
        return False
    sampler.close()
    return True


def evidence_acceptance(
    link: str | None = None, self_verify: bool = True, **unknown: Any
) -> EvidenceAcceptance:
    """The ``policies.acceptance`` of a run spec: the rule the spec's ``algorithm`` builds, or
    else the engine's own, telling the sampler whose ``policies.task_sampler`` has the same
    ``link`` which cards each candidate holds.

    The spec's own ``self_verify`` need not be repeated here: the directory kinds turn it
    off by default, and a card the engine did not re-run is told without a gain, read from
    the card (see :class:`~agentdescent_sampling.wiring.EvidenceTap`).

    Args:
        link: the name the three refs share.
        self_verify: ``false`` tells the sampler no gain at all, only the commits.

    Raises:
        InvalidSamplerConfig: an unknown key, ``link`` is missing, is not a name or differs
            from the other two refs', ``self_verify`` is not a bool, or the spec's
            ``algorithm`` replaces the engine's merge (its acceptance rule is then never
            called).
    """
    _refuse_elsewhere("acceptance")
    _refuse_unknown("acceptance", unknown)
    _refuse_wide_allow("acceptance")
    if not isinstance(self_verify, bool):
        raise InvalidSamplerConfig(
            f"policies.acceptance: 'self_verify' must be true or false (false: tell the "
            f"sampler no gain at all); got {short_repr(self_verify)}"
        )
    tap = _tap(link, "acceptance")
    _check_links()
    tap.self_verify = None if self_verify else False
    acceptance = tap.acceptance(_algorithms_rule("acceptance"))
    _forget_if_joined(tap)
    return acceptance


def evidence_promotion(link: str | None = None, **unknown: Any) -> EvidencePromotion:
    """The ``policies.promotion`` of a run spec: the rule the spec's ``algorithm`` builds, or
    else the engine's own, telling the sampler whose ``policies.task_sampler`` has the same
    ``link`` what each merge decided.

    Raises:
        InvalidSamplerConfig: an unknown key, ``link`` is missing, is not a name or differs
            from the other two refs', or the spec's ``algorithm`` replaces the engine's merge.
    """
    _refuse_elsewhere("promotion")
    _refuse_unknown("promotion", unknown)
    _refuse_wide_allow("promotion")
    tap = _tap(link, "promotion")
    _check_links()
    promotion = tap.promotion(_algorithms_rule("promotion"))
    _forget_if_joined(tap)
    return promotion


def _refuse_unknown(slot: str, unknown: Mapping[str, Any]) -> None:
    """Refuse keys our ref in ``slot`` does not take, naming the valid ones, not the engine's
    ``TypeError`` (whose advice, ``call=False``, is never the fix here)."""
    if not unknown:
        return

    ref = _OURS[slot]

    # The keys it takes are its parameters (besides the engine's own 'ref' and 'call').
    parameters = inspect.signature(globals()[ref]).parameters.values()
    valid = [p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = sorted(unknown)
    matches = (closest_name(name, valid) for name in names)
    hints = "".join(f" Did you mean {match!r}?" for match in matches if match)
    raise InvalidSamplerConfig(
        f"policies.{slot}: unknown key{'s' if len(names) > 1 else ''} "
        f"{', '.join(short_repr(name) for name in names)} in the "
        f"{REFS_MODULE}:{ref} ref.{hints} Its keys: {', '.join(map(repr, valid))}"
    )


def _link(sampler: Sampler, link: str) -> None:
    """Attach ``sampler`` to the tap of ``link``, once it is known to take the evidence and
    the spec's acceptance and promotion refs to give the same link."""
    tap = _tap(link)
    if not callable(getattr(sampler, "evidence", None)):
        policies = _policies_being_built()
        unwire = "remove 'link' from policies.task_sampler"
        if policies is None or any(_link_of(policies, slot) is not None for slot in LINKED[1:]):
            unwire += (
                " and remove the policies.acceptance and policies.promotion refs "
                f"({REFS_MODULE}:evidence_acceptance and :evidence_promotion) that give "
                f"link {link!r}"
            )
        raise InvalidSamplerConfig(f"policies.task_sampler: {no_evidence(sampler, unwire)}")
    _check_links()
    tap.attach(sampler)
    _forget_if_joined(tap)


def _check_links() -> None:
    """Refuse a spec being built whose three evidence refs do not all give one link: now,
    before any rollout, and in ``agentdescent plan`` too."""
    policies = _policies_being_built()
    if policies is not None:
        for slot in dict.fromkeys([*LINKED, *policies]):  # the linked slots first
            _refuse_misplaced(str(slot), policies.get(slot))
        for slot in LINKED:
            _check_keys(slot, _our_ref(policies.get(slot), _OURS[slot], depth=0))
        _refuse_replaced_merge()
        # A link that is no name is its own ref's fault, whichever ref is resolved first.
        links = {
            slot: None if (link := _link_of(policies, slot)) is None else _checked_link(slot, link)
            for slot in LINKED
        }
        problem = links_problem(links)
        if problem is not None:
            raise InvalidSamplerConfig(problem)


def _refuse_misplaced(slot: str, given: Any) -> None:
    """Refuse one of our refs in ``slot`` of the spec being built that belongs in another
    slot (the engine would build our promotion policy as the acceptance policy, or our
    sampler as the selection policy, say, and fail at the first merge, after rollouts were
    paid for)."""
    for own in LINKED:
        ref = _our_ref(given, _OURS[own], depth=0) if own != slot else None
        if ref is not None:
            _misplaced(f"policies.{slot}", own, ref)


def _refuse_elsewhere(own: str) -> None:
    """Refuse our ref for ``policies.<own>`` that the engine is resolving in another place of
    the spec: the innermost of its frames that names a place (``where``: ``policies.fusion``,
    say) resolves a value holding that ref, whatever refs of the user's it is nested in.
    Outside a spec, or called by code of the user's the spec names, nothing is refused."""
    for local in _engine_locals():
        where = local.get("where")
        if isinstance(where, str):
            ref = _our_ref(local.get("value"), _OURS[own], depth=0)
            if ref is not None and where != f"policies.{own}":
                _misplaced(where, own, ref)
            return


def _misplaced(where: str, own: str, ref: Mapping[str, Any]) -> NoReturn:
    """Raise that ``where`` in the spec holds ``ref``, our ref that builds ``policies.<own>``:
    to move it there, or to remove it where ``policies.<own>`` holds one already; and where it
    gives a link and ``where`` is a linked slot, to give that slot its own ref."""
    policies = _policies_being_built() or {}
    taken = _our_ref(policies.get(own), _OURS[own], depth=0) is not None
    fix = f"remove it (policies.{own} holds one already)" if taken else "move it there"
    slot = where.removeprefix("policies.")
    if slot != where and slot in LINKED and ref.get("link") is not None:
        fix += f", and give {where} the {REFS_MODULE}:{_OURS[slot]} ref with the same 'link'"
    raise InvalidSamplerConfig(
        f"{where}: holds the {REFS_MODULE}:{_OURS[own]} ref, which builds policies.{own}; {fix}"
    )


def _check_keys(slot: str, ref: Mapping[str, Any] | None) -> None:
    """Refuse, as the ref itself would, the keys our ``ref`` in ``slot`` of the spec being
    built does not take, and a ``"call": false`` (the engine would hand over our function
    itself as the policy): whichever of the refs the engine resolves first says so."""
    if ref is None:
        return
    if ref.get("call") is False:  # any other value but true the engine refuses itself
        raise InvalidSamplerConfig(
            f'policies.{slot}: the {REFS_MODULE}:{_OURS[slot]} ref gives "call": false, '
            f"which hands the engine the function itself, not the policy it builds; remove "
            f"'call'"
        )
    parameters = inspect.signature(globals()[_OURS[slot]]).parameters.values()
    valid = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD}
    _refuse_unknown(slot, {key: ref[key] for key in ref if key not in valid | {"ref", "call"}})


def _refuse_replaced_merge() -> None:
    """Refuse linked refs in a spec whose ``algorithm`` brings its own aggregator (evolve's
    ``aggregator_factory``: gepa, skillopt, dgm, evoskill), which calls no acceptance or
    promotion policy, so the evidence would reach no sampler; :func:`wire` refuses an
    ``aggregator_factory`` likewise. The engine's ``compose`` holds the run's ``knobs``,
    the algorithm's among them, while it builds the policies."""
    for local in _engine_locals():
        knobs = local.get("knobs")
        if isinstance(knobs, Mapping) and knobs.get("aggregator_factory") is not None:
            algorithm = _being_built("algorithm", (str, Mapping))
            name = algorithm.get("name") if isinstance(algorithm, Mapping) else algorithm
            which = "" if name is None else f" {short_repr(name)}"
            raise InvalidSamplerConfig(
                f"policies: the spec's algorithm{which} replaces the engine's merge with an "
                f"aggregator of its own, which uses no acceptance or promotion policy, so the "
                f"engine's evidence would reach no sampler; remove 'link' from "
                f"policies.task_sampler and the policies.acceptance and policies.promotion "
                f"refs (the sampler then learns from outcomes alone), or choose an algorithm "
                f"that keeps the engine's merge"
            )


#: The one module a run spec's ``allow`` should admit (:mod:`agentdescent_sampling.refs`).
REFS_MODULE = f"{__package__}.refs"


def _refuse_wide_allow(slot: str) -> None:
    """Refuse a run spec being built whose ``allow`` admits a module of this package other
    than :data:`REFS_MODULE`: its refs could then call any function of this package."""
    allow = _being_built("allow", (list, tuple)) or ()
    wide = next((entry for entry in allow if _admits_more(entry)), None)
    if wide is not None:
        raise InvalidSamplerConfig(
            f"policies.{slot}: the spec's allow entry {short_repr(wide)} admits "
            f"modules of {__package__} besides {REFS_MODULE}, so a ref could call any "
            f"function in them (write files, import every installed plugin). Allow "
            f'"{REFS_MODULE}" instead, and name the refs '
            f'"{REFS_MODULE}:from_run_spec", ":evidence_acceptance" and '
            f'":evidence_promotion"'
        )


def _admits_more(entry: object) -> bool:
    """Whether the engine's ``allow`` prefix ``entry`` admits a module of this package
    other than :data:`REFS_MODULE` (its rule: the module is the entry without its trailing
    dot, or starts with the entry)."""
    import pkgutil  # only while the engine builds a spec

    if not isinstance(entry, str):
        return False
    package = sys.modules[__package__ or ""]
    if package.__name__ == entry.rstrip(".") or package.__name__.startswith(entry):
        return True
    return any(
        module != REFS_MODULE
        and (module == entry.rstrip(".") or module.startswith(entry) or entry.startswith(module))
        for module in (
            f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
        )
    )


def _policies_being_built() -> Mapping[str, Any] | None:
    """The ``policies`` block of the run spec the engine is building, or None outside one.

    The engine resolves each ref with that ref's own keys, in the spec's order, and
    ``agentdescent plan`` runs nothing of ours after the last one: the spec, a local of the
    engine's frames that resolve the refs, is the one place where the three links can be
    compared before a run. Under an engine that builds refs elsewhere this finds nothing,
    and the tap still stops the run at its first card.
    """
    policies: Mapping[str, Any] | None = _being_built("policies", Mapping)
    return policies


def _being_built(attribute: str, kind: type | tuple[type, ...]) -> Any:
    """The ``attribute`` of the run spec the engine is building, from the innermost of its
    frames whose ``spec`` has one of ``kind``; None outside one."""
    for local in _engine_locals():
        value = getattr(local.get("spec"), attribute, None)
        if isinstance(value, kind):
            return value
    return None


def _algorithms_rule(slot: str) -> Any:
    """The rule the spec's ``algorithm`` built for ``policies.<slot>``, which the evidence ref
    there wraps instead of the engine's default, or None (no algorithm, or none for the
    slot): the engine builds the algorithm's slots first and hands them to the function
    that builds the spec's own as ``base``."""
    for local in _engine_locals():
        base = local.get("base")
        if "asked" in local and isinstance(base, Mapping):
            return base.get(slot)
    return None


def _run_being_resumed() -> Path | None:
    """The directory of the run the engine is building the spec to resume, or None.

    The run store builds a run's spec with ``repo_path``, the run's ``ledger`` directory,
    which the engine makes once the run starts, after the spec is built: it is there when
    ``agentdescent resume`` builds the spec, and not when a new run does (``agentdescent
    evolve``'s check of the spec and ``agentdescent plan`` give no ``repo_path``). Under an
    engine that builds refs elsewhere this finds nothing, and every run reads as a new one.
    """
    for local in _engine_locals():
        if "repo_path" in local:
            ledger = local["repo_path"]
            return (
                Path(ledger).parent if isinstance(ledger, str) and os.path.isdir(ledger) else None
            )
    return None


def _engine_locals() -> Iterator[Mapping[str, Any]]:
    """The locals of the engine's frames on this call's stack that build a run spec
    (``agentdescent.evolvespec``'s), innermost first."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_globals.get("__name__") == "agentdescent.evolvespec":
            yield frame.f_locals
        frame = frame.f_back


#: The function of this module whose ref each of wiring.LINKED's slots takes.
_OURS = {
    "task_sampler": "from_run_spec",
    "acceptance": "evidence_acceptance",
    "promotion": "evidence_promotion",
}


def _link_of(policies: Mapping[str, Any], slot: str) -> object:
    """The ``link`` the ref in ``slot`` gives, as given; None if it gives none. Our ref is
    found where the engine would resolve it, in the slot or nested in a policy of the user's
    that takes it; failing that, the slot's own ref is read, which may wrap ours."""
    given = policies.get(slot)
    found = _our_ref(given, _OURS[slot], depth=0) or (given if isinstance(given, Mapping) else None)
    return found.get("link") if found is not None else None


def _our_ref(value: Any, function: str, depth: int) -> Mapping[str, Any] | None:
    """The first mapping in ``value`` whose ``ref`` names ``function`` of this package
    (``agentdescent_sampling:function``, or by a submodule), or a ref written as that text
    alone (as ``{"ref": text}``), nested mappings and lists searched to a depth no spec
    reaches (a hostile one is not walked further)."""
    if depth > 32:
        return None
    if isinstance(value, str):
        return {"ref": value} if _names(value, function) else None
    if isinstance(value, Mapping):
        if _names(value.get("ref"), function):
            return value
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = _our_ref(child, function, depth + 1)
        if found is not None:
            return found
    return None


def _names(ref: object, function: str) -> bool:
    """Whether ``ref`` is a ref text naming ``function`` of this package."""
    return (
        isinstance(ref, str) and ref.startswith(__package__ or "") and ref.endswith(f":{function}")
    )


def _tap(link: object, slot: str = "task_sampler") -> EvidenceTap:
    # An evidence ref without 'link' would get the engine's TypeError, whose advice is call=False.
    if link is None:
        raise InvalidSamplerConfig(
            f"policies.{slot}: the {REFS_MODULE}:{_OURS[slot]} ref gives no 'link': give "
            f"policies.task_sampler, policies.acceptance and policies.promotion one 'link', "
            f'such as "link": "main"'
        )
    link = _checked_link(slot, link)
    tap = _TAPS.get(link)
    # A slot this link's tap already has starts the next build of a spec (agentdescent
    # evolve builds one twice; a server may build several): a fresh tap, so that a part a
    # later spec misspells is missing from it, not given by an earlier spec's.
    if tap is None or slot in tap._parts:
        tap = _TAPS[link] = EvidenceTap(link=link)
    return tap


def _checked_link(slot: str, link: object) -> str:
    """``link``, given in ``slot``, if it is a short name; else refused."""
    if not (
        isinstance(link, str) and link.isascii() and link.isidentifier() and len(link) <= MAX_LINK
    ):
        raise InvalidSamplerConfig(
            f"policies.{slot}: 'link' must be a short name shared by the task_sampler, "
            f"acceptance and promotion refs (ASCII letters, digits and '_', not starting "
            f'with a digit, up to {MAX_LINK}), such as "main"; got {short_repr(link)}'
        )
    return link


def _forget_if_joined(tap: EvidenceTap) -> None:
    """Drop ``tap`` from :data:`_TAPS` once the three refs have joined it.

    The spec's policies hold it from then on, and it holds the sampler: kept here, it would
    keep the sampler, and its state file, open for as long as the process lives, so that a
    process which builds specs and stays up (agentdescent's MCP server, for its plan and
    start tools) would hold the state file of the run it starts.
    """
    if tap._parts.issuperset(LINKED) and tap._link is not None and _TAPS.get(tap._link) is tap:
        del _TAPS[tap._link]


def _absolute(path: object, field: str) -> Path:
    if not isinstance(path, str):
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field!r} must be a path string, got "
            f"{type(path).__name__} {short_repr(path)}"
        )
    if not path:
        example = "~/.agentdescent/sampler-state/my-run.sqlite"
        if field == "file":
            example = "~/runs/sampler.toml"
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field!r} is the empty string; give an absolute path or "
            f"one starting with '~', such as {example!r}"
            + (", or leave 'state' out for a sampler that keeps none" if field == "state" else "")
        )
    from ._files import checked_path  # imported here: a spec without paths reads none

    try:
        expanded = checked_path(path)
    except ValueError as error:
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field} path {short_repr(path)}: {error}"
        ) from None
    variable = re.search(r"\$(\w+|\{[^}]*\}?|\([^)]*\)?)", path)
    if variable is not None:  # the shell's $HOME: a spec is JSON, read by no shell
        home = variable.start() == 0 and variable[1] in ("HOME", "{HOME}")
        shown = short_repr(variable[0], 60)
        instead = (
            short_repr("~" + path[variable.end() :])
            if home
            else f"the path it stands for (or one starting with '~') in place of {shown}"
        )
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field} path {short_repr(path)} holds {shown}, "
            f"which no shell expands in a run spec: it would name a file or directory called "
            f"that; write {instead}"
        )
    if not expanded.is_absolute():
        raise InvalidSamplerConfig(
            f"policies.task_sampler: {field} path {short_repr(path)} is relative, but "
            f"'agentdescent evolve' reads it from the directory it was started in and "
            f"'agentdescent resume' from the run's directory, so it would name two files. "
            f"Give an absolute path or one starting with '~', for example "
            f"{str(Path(os.getcwd(), path))!r}"
        )
    return expanded
