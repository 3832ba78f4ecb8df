"""Turn what a user writes in a config into a :class:`SamplerSpec`.

Three forms are accepted: a name (``"difficulty-weighted"``), a name with
parameters (``"difficulty-weighted:c=0.1,pass_threshold=0.8"``) and a mapping as
read from TOML, JSON or YAML (``{"name": "difficulty-weighted", "c": 0.1}``, with
an optional ``"provider"``; :mod:`~agentdescent_sampling.spec_file` reads one from a file).
Parsing never imports anything: a spec is only a name that the registry resolves.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from os import PathLike
from types import MappingProxyType
from typing import Any

import attrs

from ._display import shown
from .errors import InvalidSamplerConfig
from .protocol import check_name, short_repr

__all__ = ["SamplerSpec", "SpecLike", "parse_spec"]

_MAX_SPEC = 4096
#: A sampler takes a handful of parameters; thousands would only cost time and flood messages.
_MAX_PARAMS = 64
#: How many of a mapping's keys an error message lists.
_LISTED_KEYS = 20
# Patterns, compiled at first use (``re`` caches them): a name without parameters needs none.
_IDENT = r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z"
# Each part of _PAIR can match in one way only (the key and a bare value are stripped
# afterwards, a quoted value must end where the pair does), so a match costs linear time:
# a pattern with adjacent ``\s*`` and lazy groups backtracked cubically on a run of spaces.
_END = r"(?=\s*(?:,|\Z))"
_PAIR = rf"""(?P<key>[^=,]*)=\s*(?P<value>"(?:[^"\\]|\\.)*"{_END}|'[^']*'{_END}|[^,]*)\s*(?:,|\Z)"""
# ASCII digits only: ``\d`` would read U+0667, the Arabic-Indic seven, as 7.
_INT = r"[+-]?[0-9]+\Z"
_FLOAT = r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?\Z"
_RESERVED = ("name", "provider")
#: The suffixes of the files spec_from_file reads by their format.
_SPEC_FILES = (".toml", ".json", ".yaml", ".yml")


def _frozen(params: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(params, Mapping):  # dict() would take pairs, or raise its own words
        raise InvalidSamplerConfig(
            f"a spec's params must map parameter names to values, such as {{'c': 0.1}} ({{}} "
            f"for none); got {type(params).__name__} {short_repr(params)}"
        )
    return MappingProxyType(dict(params))


def _name_checked(_spec: SamplerSpec, _field: attrs.Attribute[str], name: Any) -> None:
    # Only its type: the bench spells its own entrants in a spec too
    # ('agentdescent.DifficultyWeighted'), and parse_spec() and create() check the rest.
    if not isinstance(name, str):
        _check_name(name)


def _provider_checked(
    spec: SamplerSpec, _field: attrs.Attribute[str | None], provider: Any
) -> None:
    if provider is not None and not isinstance(provider, str):
        raise InvalidSamplerConfig(
            f"sampler {spec.name!r}: 'provider' must be a distribution name (a string), "
            f"got {short_repr(provider)}"
        )


def _params_repr(params: Mapping[str, Any]) -> str:
    """``params`` as a dict's repr; a value whose repr fails (an int of over 4,300 digits,
    read from a config) shown by its type, so that the spec's repr never raises."""
    try:
        return repr(dict(params))
    except ValueError:
        items = (f"{key!r}: {short_repr(value, _MAX_SPEC)}" for key, value in params.items())
        return "{" + ", ".join(items) + "}"


@attrs.frozen(unsafe_hash=False)
class SamplerSpec:
    """Which sampler to build, with which parameters, from which distribution.

    A spec is checked as it is built: a ``name`` or ``provider`` that is not a string
    raises :class:`InvalidSamplerConfig` (the name's form is checked where it is used, by
    :func:`parse_spec` and ``create()``). Specs compare and hash by name, parameters and
    provider, each value as Python compares it (``c=1``, ``c=1.0`` and ``c=True`` are equal,
    though a sampler may take one and refuse another); a spec whose parameters hold an
    unhashable value (a list, a dict) compares but cannot be hashed.

    Args:
        name: a registered sampler name or alias (see ``agentdescent-sampling list``).
        params: keyword parameters for the sampler's factory.
        provider: the distribution to take the sampler from, when two provide it.
        source: where it was read, such as ``'run.toml' under 'task_sampler'``, which
            ``create()`` then names in its errors (:func:`spec_from_file` sets it); not
            part of the spec's value.
    """

    name: str = attrs.field(validator=_name_checked)
    params: Mapping[str, Any] = attrs.field(
        factory=dict, converter=_frozen, repr=lambda params: _params_repr(params)
    )
    provider: str | None = attrs.field(default=None, validator=_provider_checked)
    source: str | None = attrs.field(default=None, eq=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied by its fields, so a spec can be sent to a worker process (its
        parameters are a read-only view, which pickle does not take)."""
        return (SamplerSpec, (self.name, dict(self.params), self.provider, self.source))

    def __hash__(self) -> int:
        """A hash over what equality compares (name, parameters, provider; not ``source``).

        Raises:
            TypeError: a parameter's value is unhashable; the message names the parameter.
        """
        hashes = []
        for key, value in self.params.items():
            try:
                hashes.append((key, hash(value)))
            except TypeError:
                raise TypeError(
                    f"cannot hash sampler spec {self.name!r}: parameter {short_repr(key)} holds "
                    f"a value that cannot be hashed, {type(value).__name__} {short_repr(value)} "
                    f"(a list or a dict, or one inside it); give it as a hashable value (a tuple "
                    f"for a list), or keep such specs in a list rather than a set or dict"
                ) from None
        return hash((self.name, frozenset(hashes), self.provider))

    def __str__(self) -> str:
        """The spec in string form, ``name:key=value,...``, which :func:`parse_spec` reads
        back to an equal spec (less the provider and source, which the form has no place for).

        Only text, numbers, booleans and ``None`` have a string form, and only in a spec of
        at most 4,096 characters. Any other value (a list, a dict, an infinite or NaN float,
        an object) is written as its ``repr``, which is shown but does not read back as that
        value: ``parse_spec`` reads it as text or refuses it. Keep such a spec as a
        ``SamplerSpec`` or a mapping (``{"name": ..., **params}``).
        """
        if not self.params:
            return self.name
        pairs = ",".join(f"{key}={_format_value(value)}" for key, value in self.params.items())
        return f"{self.name}:{pairs}"


#: Anything :func:`parse_spec` and ``create()`` accept.
SpecLike = str | Mapping[str, Any] | SamplerSpec


def parse_spec(spec: SpecLike) -> SamplerSpec:
    """Parse a name, a ``name:key=value,...`` string or a mapping into a :class:`SamplerSpec`.

    Raises:
        InvalidSamplerConfig: the spec is malformed; the message quotes the bad
            part and shows the expected form.
    """
    if isinstance(spec, SamplerSpec):
        return _validated(spec.name, dict(spec.params), spec.provider, spec.source)
    if isinstance(spec, str):
        return _parse_string(spec)
    if isinstance(spec, Mapping):
        return _parse_mapping(spec)
    hint = ""
    if isinstance(spec, PathLike):
        hint = "; to read a spec from a file, give spec_from_file(path)"
    elif isinstance(spec, list) and spec and all(isinstance(item, Mapping) for item in spec):
        hint = (
            "; give one table, not a list of them (in TOML, a table has single brackets, "
            "[task_sampler]; double brackets, [[task_sampler]], make a list)"
        )
    elif isinstance(spec, bool):
        hint = "; in YAML, an unquoted on, off, yes or no is read as a boolean: quote the name"
    elif isinstance(spec, type) or callable(getattr(type(spec), "pick", None)):
        cls = spec if isinstance(spec, type) else type(spec)
        # The class's own, read as it is (no descriptor runs): a subclass's inherited name
        # would select the class it inherits from.
        named = vars(cls).get("name")
        hint = f"; give its name ({short_repr(named)}), or " if isinstance(named, str) else "; "
        hint += (
            f"build the class and use it without a spec: {shown(cls.__name__, 60)}()"
            if spec is cls
            else "use the sampler itself, which is built already"
        )
    raise InvalidSamplerConfig(
        f"a sampler spec must be a name, a 'name:key=value,...' string or a mapping "
        f"with a 'name' key, got {type(spec).__name__} {short_repr(spec)}{hint}"
    )


#: How much of a text read from a config file a message quotes: a key pointed at the wrong
#: entry reads whatever is there, an API key or a password as readily as a sampler name.
#: Every sampler name is whole within it.
SHOWN_READ = 20

#: The form of a sampler name, which a password or a URL seldom has.
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def cut_read(message: str, read: Any) -> str:
    """``message`` with what it quotes of a text in ``read`` (a value read from a config
    file: a string, or a table, whose strings and those of its lists and tables are read) cut:
    a text in a name's form to its first :data:`SHOWN_READ` characters, any other (a password,
    a URL) hidden whole, in each form a message may quote it in (:data:`_ESCAPES`). So are the
    pieces the spec parser cuts from a text (:func:`_read_parts`), and a piece after one not
    shown whole is hidden whatever its form: it may be the rest of a secret cut at a comma."""
    from ._display import plural  # only an error path cuts

    for part, after_hidden in _read_parts(read):  # each one not empty
        if not after_hidden and _shown_whole(part):
            continue
        cut = not after_hidden and _NAME_LIKE.fullmatch(part) is not None
        hidden = f"<{plural(len(part), 'character')}, not shown>"
        # Quoted ('x', "x"), or a parameter's value in a spec string (c=x); each as
        # written, and as each escape (a repr, and a repr of a message quoting it) has it.
        bases = {base: base(part) for base in dict.fromkeys(base for base, _ in _ESCAPES)}
        quoted = {}
        for base, outer in _ESCAPES:
            form = outer(bases[base])  # escaped once, whatever quotes it
            for opener, closer in (("'", "'"), ('"', '"'), ("=", "")):
                quoted[outer(opener), form, outer(closer)] = opener
        for (opener, form, closer), plain in quoted.items():
            shown = (
                f"{opener}{part[:SHOWN_READ]}...{closer}"
                if cut
                else f"{'=' if plain == '=' else ''}{hidden}"
            )
            message = _cut_opened(message, opener + form, closer, shown)
    return message


def _shown_whole(part: str) -> bool:
    """Whether a message may quote ``part``, read from a config file, whole: it is empty, a
    name of at most :data:`SHOWN_READ` characters, or a number written as text."""
    name_like = _NAME_LIKE.fullmatch(part) is not None
    return not part or (name_like and len(part) <= SHOWN_READ) or _number_text(part)


def _read_parts(read: Any) -> Iterator[tuple[str, bool]]:
    """Each text in ``read`` and each piece of it a message may quote, with whether it comes
    after a piece not shown whole (:func:`_shown_whole`).

    An unquoted value in a spec string ends at the first comma, so a secret holding
    ``,key=`` is read as a value and then further parameters, whose names a message quotes
    (``unknown parameter 'key'``): a name after a value not shown whole, in a table as
    :func:`parse_spec` made it, and a piece of a spec string after one, count as its rest.
    """
    parts: list[tuple[str, bool]] = []
    if isinstance(read, Mapping):  # a table, or the parameters of a spec string as parsed
        after_hidden = False
        for key, value in itertools.islice(read.items(), _MAX_PARAMS + 2):
            if after_hidden and isinstance(key, str):
                parts.append((key, True))
            after_hidden |= isinstance(value, str) and not _shown_whole(value)
    for text in itertools.islice(_texts_in(read), 64):
        parts.append((text, False))
        if len(text) > _MAX_SPEC:  # refused whole, unread
            continue
        # The parser quotes the parameters, after the colon, whole; and the spec a name
        # error suggests (``name,key=value`` as ``name:key=value``).
        parts += [(text.partition(":")[2], False), (_colon_meant(text) or "", False)]
        after_hidden = False
        for piece in _spec_pieces(text):
            parts.append((piece, after_hidden))
            after_hidden |= not _shown_whole(piece)
    yield from (part for part in dict.fromkeys(parts) if part[0])


def _spec_pieces(text: str) -> Iterator[str]:
    """What the spec parser cuts from ``text``, in order: the name, each parameter's name
    and value (as written, and as read), and the rest that it cannot read."""
    name, _, rest = text.strip().partition(":")
    yield name.strip()
    pairs, unread = _pairs(rest)
    for key, value in pairs[: _MAX_PARAMS + 1]:
        yield key
        yield value
        with contextlib.suppress(InvalidSamplerConfig):  # a bad quoted value is quoted as is
            if isinstance(parsed := _parse_value(value), str):
                yield parsed
    yield unread


def _quoted_by(show: Callable[[str], str]) -> tuple[Callable[[str], str], Callable[[str], str]]:
    """The escapes ``show`` (``repr`` or ``ascii``) gives a text inside a string it quotes
    with ``'`` (escaping ``'``), and with ``"`` (as it does a string holding ``'`` only)."""

    def single(text: str) -> str:
        return show(text + "'\"")[1:-4]  # holding both quotes: quoted with ', ' escaped

    def double(text: str) -> str:
        return single(text) if '"' in text else show(text)[1:-1]

    return single, double


def _composed(escapes: tuple[Callable[[str], str], ...]) -> Callable[[str], str]:
    def escaped(text: str) -> str:
        for escape in escapes:
            text = escape(text)
        return text

    return escaped


_REPRS = _quoted_by(repr)
#: How a message may quote a text: a form of the text itself (as written, or as JSON writes
#: it, in a spec's string form), then escaped with its quotes by ``repr`` or ``ascii`` (which a
#: name error uses, escaping every non-ASCII character), and by a ``repr`` of a message that
#: quoted it so (a sampler's refusal, quoted in ours).
_ESCAPES: tuple[tuple[Callable[[str], str], Callable[[str], str]], ...] = tuple(
    (base, _composed(layers))
    for base in (str, lambda text: json.dumps(text)[1:-1])
    for layers in (
        (),
        *((first,) for first in (*_REPRS, *_quoted_by(ascii))),
        *((first, second) for first in (*_REPRS, *_quoted_by(ascii)) for second in _REPRS),
    )
)


def _texts_in(read: Any) -> Iterator[str]:
    """The strings in ``read``, and in the lists and tables it holds, keys too, breadth
    first."""
    level = [read]
    for _ in range(8):  # deeper than any parameter a sampler takes
        deeper: list[Any] = []
        for value in level:
            if isinstance(value, str):
                yield value
            elif isinstance(value, Mapping):
                deeper += itertools.islice(itertools.chain.from_iterable(value.items()), 128)
            elif isinstance(value, list | tuple):
                deeper += value[:64]
        level = deeper[:256]  # a hostile file: a bounded walk


def _number_text(text: str) -> bool:
    """Whether ``text`` is a short number, such as a value written in quotes (``"0.5"``), or
    reads like one meant as one (``1,5``, ``0o10``, ``_1``): shown, since the advice for it
    (drop the quotes, write it as a number) quotes it, as the defaults beside it."""
    if len(text) > 40:
        return False
    if len(text) <= _NUMBER_LIKE_CHARACTERS and _NUMBER_LIKE.fullmatch(text):
        return True
    try:
        float(text)  # nan, inf, 1e-3
    except ValueError:
        return False
    return True


#: A short text written as a number is written, but that no parser reads as one (``1,5``,
#: ``0o10``, ``_1``): a number meant, not a secret, up to :data:`_NUMBER_LIKE_CHARACTERS`.
_NUMBER_LIKE = re.compile(r"[-+]?(?:[0-9._,]*[0-9][0-9._,]*|0[oOxXbB][0-9a-fA-F_]+)", re.ASCII)
_NUMBER_LIKE_CHARACTERS = 6


def _cut_opened(message: str, opened: str, closer: str, shown: str) -> str:
    """``message`` with each ``opened`` (an opening quote or ``=``, then a text) put as
    ``shown``: the whole text and the ``closer`` (after ``=``, no character that would go on
    with a value: ``=1`` is not ``=10``), or as much of the text as ``short_repr`` kept and
    its ``...``. A text that only begins the same way is another, and is left as it is."""
    head = opened[: SHOWN_READ + 2]
    pieces: list[str] = []
    done = 0
    start = message.find(head)
    while start >= 0:
        end = start + len(opened)
        dots = message.find("...", start + len(head), end + 3)  # where short_repr cut it
        if message.startswith(opened, start) and (
            message.startswith(closer, end) if closer else not _goes_on(message, end)
        ):
            end += len(closer)
        elif dots >= 0 and opened.startswith(message[start:dots]):
            end = dots + 3
            end += len(closer) * (bool(closer) and message.startswith(closer, end))
        else:  # another text that begins as this one does
            start = message.find(head, start + len(head))
            continue
        pieces += [message[done:start], shown]
        done = end
        start = message.find(head, end)
    return "".join([*pieces, message[done:]])


def _goes_on(message: str, at: int) -> bool:
    """Whether the character at ``at`` would go on with an unquoted value before it."""
    return at < len(message) and (message[at].isalnum() or message[at] in "_.-")


def _sampler_table(document: Any, key: str) -> str | None:
    """The first dotted key other than ``key`` of a table that looks like a sampler's: named
    with ``sampler`` in it, and holding a text ``name``."""

    def samplers(name: str, value: Any) -> bool:
        return (
            "sampler" in name.lower()
            and isinstance(value, Mapping)
            and isinstance(value.get("name"), str)
        )

    return _first_dotted_key(document, samplers, key)


def _first_dotted_key(
    document: Any, wanted: Callable[[str, Any], bool], key: str, depth: int = 4
) -> str | None:
    """The first dotted key other than ``key``, at most ``depth`` levels deep, of an entry
    of ``document`` that is ``wanted(name, value)``.

    A level's name holding a dot is passed over: no dotted key can name it. Paths are kept as
    tuples and joined only for a match: a long name over many entries would otherwise be
    copied into each of their paths (a 1 MiB file, gigabytes).
    """
    level: list[tuple[tuple[str, ...], Any]] = [((), document)]
    for _ in range(depth):
        deeper = []
        for path, value in level:
            if not isinstance(value, Mapping):
                continue
            for name, inner in value.items():
                if not isinstance(name, str) or "." in name:
                    continue
                parts = (*path, name)
                if wanted(name, inner) and (dotted := ".".join(parts)) != key:
                    return dotted
                deeper.append((parts, inner))
        level = deeper[:256]  # a hostile file: a bounded walk
    return None


def closest_name(key: str, names: Sequence[str], cutoff: float = 0.6) -> str | None:
    """The one of ``names`` that ``key`` was probably meant as: the same but for case and
    ``-``/``_``, else the closest spelling at least ``cutoff`` alike (:mod:`difflib`)."""
    import difflib  # only on an error path: building a sampler never needs it

    folded = {name.lower().replace("-", "_"): name for name in names}
    wanted = key.lower().replace("-", "_")
    if wanted in folded:
        return folded[wanted]
    close = difflib.get_close_matches(wanted, sorted(folded), n=1, cutoff=cutoff)
    return folded[close[0]] if close else None


def typo_of(typed: str, name: str) -> bool:
    """Whether ``typed`` is probably the sampler name ``name`` (both compared in their
    ``-`` form) mistyped, or ``name`` cut short to its first words (``informative`` of
    ``informative-band``) or given one word more.

    A typo is an edit distance, each insertion, deletion, substitution or swap of two
    neighbouring letters costing 2, of at most ``(len(typed) + len(name) + 3) // 3``: Python's
    own bound for "Did you mean". Where one word of several differs, that word alone is
    judged: ``easiest-first`` is no typo of ``hardest-first``, whose ``-first`` would pad the
    bound, nor ``hardest-first`` of ``fixable-first``.
    """
    if name.startswith(f"{typed}-") or typed.startswith(f"{name}-"):
        return True
    typed_words, name_words = typed.split("-"), name.split("-")
    if len(typed_words) == len(name_words):
        changed = [pair for pair in zip(typed_words, name_words, strict=True) if len(set(pair)) > 1]
        if len(changed) == 1:
            ((typed, name),) = changed
    bound = (len(typed) + len(name) + 3) // 3
    if 2 * abs(len(typed) - len(name)) > bound:  # as many insertions at least
        return False
    # Optimal string alignment distance, by rows (the last two, and this one), given up once
    # a whole row is past the bound: a row's least cost never falls in the rows after it.
    before: list[int] = []
    last = list(range(0, 2 * len(name) + 1, 2))
    for i, letter in enumerate(typed, 1):
        row = [2 * i]
        for j, other in enumerate(name, 1):
            cost = min(last[j] + 2, row[j - 1] + 2, last[j - 1] + 2 * (letter != other))
            if i > 1 and j > 1 and letter == name[j - 2] and typed[i - 2] == other:
                cost = min(cost, before[j - 2] + 2)
            row.append(cost)
        if min(row) > bound:
            return False
        before, last = last, row
    return last[-1] <= bound


def _past_float(text: str, read: object) -> bool:
    """Whether ``read``, what a parser made of the number written ``text``, is an infinity
    that ``text`` does not spell (``1e400``, past the largest float; not TOML's ``inf``)."""
    return isinstance(read, float) and abs(read) == float("inf") and "inf" not in text.lower()


def _listed(mapping: Mapping[Any, Any]) -> str:
    """Up to 20 of ``mapping``'s keys, sorted, for an error message."""
    keys = sorted(map(str, list(mapping)[: 10 * _LISTED_KEYS]))[:_LISTED_KEYS]
    shown = ", ".join(short_repr(key, 40) for key in keys) or "none"
    more = len(mapping) - len(keys)
    return f"{shown} and {more} more" if more > 0 else shown


def _parse_string(text: str) -> SamplerSpec:
    if len(text) > _MAX_SPEC:
        raise InvalidSamplerConfig(
            f"sampler spec is {len(text)} characters long, over the limit of {_MAX_SPEC}: "
            f"{short_repr(text)}"
        )
    name, sep, rest = text.strip().partition(":")
    try:
        _check_name(name.strip())
    except InvalidSamplerConfig as error:
        if text.lstrip().startswith("{"):  # a run spec's "spec" and state import take one
            raise InvalidSamplerConfig(
                "a sampler spec string is a name or 'name:key=value,...', and this one starts "
                "with '{' as a JSON object does: give the mapping it holds instead (an object in "
                "JSON, a dict in Python, a table in TOML), or write it as 'name:key=value,...'"
            ) from None
        meant = _colon_meant(text)
        if meant is None:
            raise
        raise InvalidSamplerConfig(
            f"{error}. Parameters follow the name after a colon: {short_repr(meant)}"
        ) from None
    params: dict[str, Any] = {}
    pairs, unread = _pairs(rest) if sep else ([], "")
    for key, value in pairs:
        if key in params:
            raise InvalidSamplerConfig(f"parameter {key!r} is given twice in {short_repr(text)}")
        if _missed_comma(value) is not None:  # c=0.1 pass_threshold=0.8
            meant = f"{name.strip()}:{','.join(filter(None, [_with_commas(pairs), unread]))}"
            raise InvalidSamplerConfig(
                f"sampler {name.strip()!r}: the value of {key!r}, {short_repr(value)}, holds "
                f"another parameter; separate parameters with commas: {short_repr(meant)}"
            )
        try:
            params[key] = _parse_value(value, key)
        except InvalidSamplerConfig as error:  # which sampler's, as every parameter error says
            raise InvalidSamplerConfig(f"sampler {name.strip()!r}: {error}") from None
    if unread:
        decimal = ""
        digits = re.compile(r"[0-9]+").match(unread)
        if pairs and pairs[-1][1].isdigit() and digits and unread[digits.end() :][:1] in ("", ","):
            key, whole = pairs[-1]  # c=1,5: a decimal comma
            decimal = f"; a decimal point is '.', not ',': {key}={whole}.{digits[0]}"
        raise InvalidSamplerConfig(
            f"cannot parse parameters {short_repr(unread)} in sampler spec "
            f"{short_repr(text)}: expected 'name:key=value,key=value', for example "
            f"'difficulty-weighted:c=0.1,pass_threshold=0.8'{decimal}"
        )
    return _validated(name.strip(), params, None)


#: A parameter after a space, ``;`` or ``&`` inside a value (``c=0.1 pass_threshold=0.8``,
#: ``c=0.1;pass_threshold=0.8``): where a comma was meant.
_NEXT_PAIR = re.compile(r"(?<=\S)(?:\s*[;&]\s*|\s+)(?=[A-Za-z_][A-Za-z0-9_]*\s*=)")


#: What a quoted value in a spec string starts with.
_QUOTES = ("'", '"')


def _missed_comma(value: str) -> re.Match[str] | None:
    """Where a comma was meant in a spec string's ``value``: a space before another
    parameter, or a ``;`` or ``&`` after a number, ``true``, ``false`` or ``none`` (a URL's
    ``&`` is part of it); never in a quoted value."""
    if value[:1] in _QUOTES:
        return None
    found = _NEXT_PAIR.search(value)
    if found is None or not {";", "&"} & set(found[0]):
        return found
    head = value[: found.start()]
    return found if _number_text(head) or head.lower() in ("true", "false", "none") else None


def _with_commas(pairs: list[tuple[str, str]]) -> str:
    """``pairs`` written back as a spec string's parameters, each separator that
    :func:`_missed_comma` finds in a value made a comma."""
    parts = []
    for key, value in pairs:
        while (found := _missed_comma(value)) is not None:
            parts.append(f"{key}={value[: found.start()]}")
            key, _, value = (part.strip() for part in value[found.end() :].partition("="))
        # A separator left at the end (c=0.1;x=2;) separates nothing; a quoted value is kept.
        parts.append(f"{key}={value if value[:1] in _QUOTES else value.rstrip(' ;&')}")
    return ",".join(parts)


def _pairs(rest: str) -> tuple[list[tuple[str, str]], str]:
    """The ``key=value`` pairs of a spec string's parameters (``rest``, after its colon),
    each key and value stripped, and the rest, from where no pair can be read (or ``""``)."""
    pairs: list[tuple[str, str]] = []
    position = 0
    while position < len(rest):
        match = re.compile(_PAIR).match(rest, position)
        if match is None or match.end() == position:
            return pairs, rest[position:]
        pairs.append((match["key"].strip(), match["value"].strip()))
        position = match.end()
    return pairs, ""


def _colon_meant(text: str) -> str | None:
    """``text`` with its parameters after a colon, if it reads as a name and parameters
    joined otherwise (``fixable-first,failure_cost=2``, ``fixable-first(failure_cost=2)``)
    and that spec parses; else ``None``. Read without a pattern that could backtrack."""
    stripped = text.strip()
    name = re.compile(r"[A-Za-z][A-Za-z0-9_-]*").match(stripped)
    if name is None:
        return None
    rest = stripped[name.end() :]
    after = rest.lstrip()
    if after[:1] in (",", ";", "("):
        after = after[1:].lstrip()
    elif after == rest:  # nothing between the name and what follows
        return None
    params = after.removesuffix(")").replace(";", ",")
    if "=" not in params or ":" in params:
        return None
    meant = f"{name[0]}:{params}"
    try:
        _parse_string(meant)
    except InvalidSamplerConfig:
        return None
    return meant


def _parse_mapping(mapping: Mapping[Any, Any]) -> SamplerSpec:
    if "name" not in mapping:
        spelt = next(
            (key for key in mapping if isinstance(key, str) and key.lower() == "name"), None
        )
        raise InvalidSamplerConfig(
            f"a sampler table needs a 'name' key, got keys {_listed(mapping)}; "
            + (f"write {short_repr(spelt)} as 'name'" if spelt else _nameless_hint(mapping))
        )
    params = {key: value for key, value in mapping.items() if key not in _RESERVED}
    name = mapping["name"]
    if isinstance(name, str) and ":" in name:
        _refuse_joined(name, params)
    return _validated(name, params, mapping.get("provider"))


def _nameless_hint(mapping: Mapping[Any, Any]) -> str:
    """What a table without ``name`` probably meant: the spec is a table inside it (the
    whole document was given), or its one key is the sampler's name over its parameters."""
    inner = _sampler_table(mapping, "")
    if inner is not None:
        return (
            f"the table under {short_repr(inner)} looks like the spec: give that table, not "
            f"the one holding it (reading a file, give that table's dotted key as 'key')"
        )
    if len(mapping) == 1:
        (key, value), *_ = mapping.items()
        if isinstance(value, Mapping) and "name" not in value and is_name(key):
            return (
                f"if {key!r} is the sampler's name, give it as name = {key!r} beside its "
                f"parameters ({_listed(value)}), one level up"
            )
    return 'for example {"name": "difficulty-weighted", "c": 0.1}'


def is_name(name: Any) -> bool:
    """Whether ``name`` has a sampler name's form (so it may be shown as it is)."""
    try:
        check_name(name)
    except ValueError:
        return False
    return True


def _refuse_joined(name: str, params: Mapping[Any, Any]) -> None:
    """Refuse a table's ``name`` that is a whole spec string (``fixable-first:failure_cost=2``),
    saying how the table gives the same: each parameter a key beside ``name``."""
    try:
        joined = _parse_string(name)
    except InvalidSamplerConfig:
        return  # not a spec string: the name's own check says what is wrong
    table = {"name": joined.name, **joined.params, **params}
    raise InvalidSamplerConfig(
        f"sampler name {short_repr(name)} holds parameters; in a table or mapping, each "
        f"parameter is a key of its own beside 'name': {table_text(table)} (in TOML, "
        f"name = {joined.name!r} and one line per parameter)"
    )


def table_text(table: Mapping[str, Any], limit: int = 300) -> str:
    """``table`` as JSON, which a run spec and Python both read, when its values are texts
    and numbers (JSON writes True as true); else as Python writes it. At most ``limit``
    characters."""
    if not all(isinstance(value, (str, int, float)) for value in table.values()) or any(
        isinstance(value, bool) for value in table.values()
    ):
        return short_repr(dict(table), limit)
    text = json.dumps(table)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _check_name(name: Any) -> None:
    try:
        check_name(name)
    except ValueError as error:
        meant = _name_meant(name)
        hint = f" Did you mean {meant!r}?" if meant else ""
        if isinstance(name, str) and name.lower().endswith(_SPEC_FILES):
            hint += (
                " A spec names a sampler; to read one from a file, use spec_from_file(path) "
                "(in a run spec, 'file')."
            )
        elif isinstance(name, bool):
            hint += (
                " (In YAML, an unquoted on, off, yes or no is read as a boolean: quote the name.)"
            )
        elif name is None:
            hint += " The name is empty (null in JSON, or nothing after 'name:' in YAML)."
        raise InvalidSamplerConfig(
            f"{error}.{hint} A config selects an installed sampler by name and never imports "
            f"code; run 'agentdescent-sampling list' to see the names"
        ) from None


def _name_meant(name: Any) -> str | None:
    """The built-in that mending a slip of separators in ``name`` (doubled, at an end, a
    space) selects, as it spells itself (``fixable-first`` for ``fixable__first``,
    ``round-robin`` for ``round robin``); or None."""
    if not isinstance(name, str) or len(name) > 200:
        return None
    from .policy import builtin_of  # only on this error path

    # A built-in's name only: the name may be a secret read from a config file by the wrong
    # key, which its message hides, and a mended copy of it would not be hidden. builtin_of
    # reads '_' and runs of separators as '-': any dash (U+2011, an en dash) and any space
    # (a line break) are separators too, as text copied from a rendered page has them.
    folded = "".join(map(_folded, name))
    return builtin_of(re.sub(r"[-_\s]+", "-", folded).strip("-"))


def _folded(char: str) -> str:
    """``char`` as a name it is suggested for reads it: any dash as ``-``, an invisible
    character (U+200B) as nothing, a look-alike letter (a Cyrillic i, U+0456) as the ASCII
    one it copies, a letter with a mark as the letter without it. Suggested only, never
    selected, so a name passing for another is still refused."""
    import unicodedata  # only on this error path

    category = unicodedata.category(char)
    if category == "Pd":
        return "-"
    if category == "Cf":
        return ""
    return _LOOK_ALIKES.get(char.lower()) or unicodedata.normalize("NFKD", char)[:1]


#: Cyrillic and Greek letters that look like ASCII ones, as the ASCII letter they copy.
_LOOK_ALIKES = dict(
    zip(
        "\u0430\u0432\u0435\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0456\u0458\u0455\u0501"
        "\u03b1\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5",
        "abekmhopctyxijsdaikvoptu",
        strict=True,
    )
)


def _validated(
    name: Any, params: dict[Any, Any], provider: Any, source: str | None = None
) -> SamplerSpec:
    _check_name(name)
    if len(params) > _MAX_PARAMS:
        raise InvalidSamplerConfig(
            f"sampler {name!r} is given {len(params):,} parameters, over the limit of "
            f"{_MAX_PARAMS}; a sampler takes a few (run 'agentdescent-sampling show {name}' "
            f"to see them), so check that the table holds only the sampler's settings"
        )
    for key, value in params.items():
        if isinstance(key, str) and re.match(_IDENT, key):
            continue
        if isinstance(key, str) and isinstance(value, Mapping):
            raise InvalidSamplerConfig(
                f"sampler {name!r}: parameter {_shown_key(key)} holds a table; a sampler's "
                f"parameters are keys beside 'name', not a table of their own: move its keys "
                f"up into the sampler's table"
            )
        raise InvalidSamplerConfig(
            f"sampler {name!r}: bad parameter name {_bad_parameter(key)}; expected a Python "
            f"identifier of ASCII letters, digits and '_', at most 64 characters, such as "
            f"pass_threshold"
        )
    return SamplerSpec(name, params, provider, source)  # which checks the provider


def _shown_key(key: str) -> str:
    """A table's key for a message: escaped if it is not all ASCII, where a look-alike (a
    Cyrillic a, U+0430, in pass_threshold) would read as the real name."""
    from ._display import ascii_name  # only on an error path

    return short_repr(key) if key.isascii() else ascii_name(key, 80)


def _bad_parameter(key: Any) -> str:
    """A parameter name that is no identifier, shown with what was probably meant."""
    if not isinstance(key, str):
        return short_repr(key)
    if not key.isascii():
        return f"{_shown_key(key)}, whose characters are not all ASCII"
    underscored = key.replace("-", "_")
    # Only a name that reads as a name once its dashes are underscores: not '___'.
    meant = underscored[:1].isalpha() and re.match(_IDENT, underscored)
    return short_repr(key) + (f" (write it as {underscored!r})" if meant else "")


def _parse_value(raw: str, key: str = "the value") -> Any:
    """The value ``raw`` of parameter ``key`` in a spec string: text, a number, a bool or None.

    Raises:
        InvalidSamplerConfig: a number past the largest float, or a bad double-quoted text.
    """
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return _quoted(raw) if raw[0] == '"' else raw[1:-1]
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    if re.match(_INT, raw):
        return int(raw)
    if re.match(_FLOAT, raw):
        value = float(raw)
        if _past_float(raw, value):  # an error would quote inf, never written
            from ._files import PAST_LARGEST_FLOAT  # only on this error path

            raise InvalidSamplerConfig(f"({key}={raw[:40]}): {raw[:40]} {PAST_LARGEST_FLOAT}")
        return value
    return raw


def _quoted(raw: str) -> str:
    """A double-quoted value, read as a JSON string."""
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise InvalidSamplerConfig(
            f"cannot read the quoted value {short_repr(raw)}: expected one JSON string such as "
            f'"x, y" (escape a quote inside it as \\"), or single quotes for text taken as is'
        )
    return value


def _format_value(value: Any) -> str:
    if isinstance(value, str):
        try:
            plain = _parse_value(value) == value and "," not in value and value == value.strip()
        except InvalidSamplerConfig:  # 1e400, a bad double-quoted text: quoted, read as text
            plain = False
        return value if plain else json.dumps(value)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    # By int's and float's own repr: a subclass's (an IntEnum's, NumPy's float64) does not
    # read back; a float's inf and nan have no string form and read back as text.
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, int):
        with contextlib.suppress(ValueError):  # over 4,300 digits: over the spec's limit too
            return int.__repr__(value)
    return short_repr(value, _MAX_SPEC)
