"""Whatever a plugin, its metadata or an exception says is shown escaped and bounded."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from agentdescent_sampling import cli
from agentdescent_sampling import registry as registry_module
from agentdescent_sampling._display import MAX_SHOWN, safe_repr, shown
from agentdescent_sampling.cli import main
from agentdescent_sampling.params import Parameter, Signature
from agentdescent_sampling.records import PluginFailure, SamplerInfo
from agentdescent_sampling.registry import Registry

#: Terminal escapes a hostile string can carry: retitle the window, move the cursor, erase
#: rows, hide text, reverse its direction, a bell, a carriage return, a zero-width space.
ESCAPES = {
    "OSC title": "\x1b]0;pwned\x07",
    "cursor up and erase": "\x1b[2A\x1b[2K",
    "CSI 8-bit": "\x9b2J",
    "carriage return": "ok\rFAKE",
    "newline": "one\ntwo",
    "bidi override": "\u202eevil",
    "zero width": "a\u200bb",
    "line separator": "a\u2028b",
    "backspace": "abc\b\b\b",
    "delete": "x\x7f",
}
HUGE = "v" * 5_000_000
BENCH = [
    sys.executable,
    "-m",
    "agentdescent_sampling",
    "bench",
    "share",
    "--seeds",
    "2",
    "--budget",
    "20",
]


class _Loud:
    def __repr__(self) -> str:
        raise SystemExit("repr ran")


def _hidden(text: str) -> list[str]:
    """The characters of ``text`` that a terminal would act on rather than print."""
    return [char for char in text if shown(char) != char and char != "\n"]


def _records(evil: str) -> list[Any]:
    signature = Signature((Parameter("floor", _Loud(), evil),))
    info = SamplerInfo(
        name="evil-sampler",
        factory=object,
        aliases=(),
        description=evil,
        distribution=evil,
        version=evil,
        entry_point=evil,
        form="class",
        signature=signature,
        synchronized=False,
    )
    failure = PluginFailure(evil, evil, evil, "failed", evil, names=(evil,))
    return [info, failure]


@pytest.fixture(params=[*sorted(ESCAPES), "huge"])
def evil(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    text = HUGE if request.param == "huge" else ESCAPES[request.param] * 3
    monkeypatch.setattr(cli, "available", lambda: _records(text))
    return text


@pytest.mark.parametrize("flags", [[], ["--json"], ["--tracebacks"], ["--json", "--tracebacks"]])
def test_list_shows_plugin_text_escaped_and_bounded(
    evil: str, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", *flags]) == 0
    out = capsys.readouterr().out
    assert not _hidden(out)
    assert len(out) < 20 * MAX_SHOWN
    if "--json" in flags:
        text = json.dumps(json.loads(out))
        assert "\\u001b" not in text
        assert "\\r" not in text


def test_list_keeps_the_summary_line_whatever_a_failure_says(
    evil: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["list"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("1 plugin registration failed or was refused")
    assert len(lines) == 5  # header, two rows, a blank line and the summary


def test_list_rows_fit_the_terminal(
    evil: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("COLUMNS", "72")
    main(["list"])
    rows = capsys.readouterr().out.splitlines()[:3]
    assert all(len(row) <= 72 for row in rows)
    assert rows[0].startswith("NAME")


class Hostile:
    """\x1b]0;retitled\x07A sampler whose texts fight the terminal.

    Args:
        floor: \x1b[2Kerased \u202eright-to-left.
    """

    name = "hostile-display"

    def __init__(self, floor: object = _Loud(), label: object = ("\x1b[31m", 10**5000)) -> None:
        self.floor = floor

    def pick(self, keys: Any, round_index: int) -> str:
        return str(keys[0])

    def record(self, task_id: str, score: float) -> None:
        pass


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> str:
    registry = Registry(only=[])
    registry.register(Hostile)
    monkeypatch.setattr(registry_module, "_default", registry)
    return "hostile-display"


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_show_of_a_hostile_plugin_runs_none_of_its_code_and_escapes_its_text(
    hostile: str, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", hostile, *flags]) == 0
    out = capsys.readouterr().out
    assert not _hidden(out)
    assert "<_Loud object>" in out
    assert "int too large to show" in out


def test_check_of_a_hostile_plugin_runs_no_repr_and_escapes_its_text(
    hostile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", hostile])
    out = capsys.readouterr().out
    assert not _hidden(out)
    assert "<_Loud object>" in out


def test_an_error_quoting_a_plugin_is_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentdescent_sampling import UnknownSamplerError

    def fail(args: object) -> int:
        raise UnknownSamplerError("no \x1b]0;x\x07 here " + "y" * 100_000)

    monkeypatch.setattr(cli, "_list", fail)
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert not _hidden(err)
    assert len(err) < 3000


@pytest.mark.parametrize("lines", [201, 100_000])
def test_an_error_of_many_lines_is_shown_in_a_bounded_number(
    lines: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentdescent_sampling import UnknownSamplerError

    def fail(args: object) -> int:
        raise UnknownSamplerError("line\n" * lines)

    monkeypatch.setattr(cli, "_list", fail)
    main(["list"])
    err = capsys.readouterr().err
    assert err.count("\n") <= 202
    assert "more lines)" in err


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (_Loud(), "<_Loud object>"),
        ([1, _Loud()], "[1, <_Loud object>]"),
        ({"k": (_Loud(),)}, "{'k': (<_Loud object>,)}"),
        (10**5000, "<int too large to show>"),
        (set(), "set()"),
        (int, "int"),
        ("\x1b", "'\\x1b'"),
    ],
    ids=["raising repr", "in a list", "in a dict", "huge int", "empty set", "a type", "escape"],
)
def test_a_safe_repr_runs_no_plugin_code(value: object, expected: str) -> None:
    assert safe_repr(value) == expected


class _Exits:
    def __repr__(self) -> str:
        raise SystemExit("ran")


class _Spoofed(_Exits):
    pass


_Spoofed.__module__ = "typing"


class _Text(str):
    def __str__(self) -> str:
        raise SystemExit("ran")

    __format__ = __repr__ = __eq__ = __hash__ = __str__  # type: ignore[assignment]


class _Named:
    pass


_Named.__qualname__ = _Text("named")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(list[_Exits()], "<GenericAlias object>"),  # type: ignore[misc]
     (types.SimpleNamespace(x=_Exits()), "<SimpleNamespace object>"),
     (typing.Optional[_Named], "<_UnionGenericAlias object>"),  # noqa: UP045  # typing's
     (typing.Optional[_Exits], f"typing.Optional[{__name__}._Exits]"),  # noqa: UP045  # typing's
     (dict[str, typing.Any] | None, "dict[str, typing.Any] | None"),
     (_Spoofed(), "<_Spoofed object>"),
     (typing.Optional[int], "typing.Optional[int]"),  # noqa: UP045  # typing's own form
     (list[int], "list[int]"),
     (int | None, "int | None")],
    ids=["a-hint-holding-an-object", "a-namespace", "a-hint-naming-a-class-of-a-text-name",
         "a-hint-naming-a-class", "any",
         "claiming-typings-module", "optional", "generic-alias", "union"],
)  # fmt: skip
def test_a_type_hint_is_written_out_running_no_code_of_what_it_names(
    value: object, expected: str
) -> None:
    # typing's and types' reprs were trusted whole, and so ran the repr of what a hint
    # held, of a class claiming typing's module, or the str subclass a class named itself by.
    assert safe_repr(value) == expected


def test_a_safe_repr_of_a_self_containing_list_is_bounded() -> None:
    loop: list[object] = []
    loop.append(loop)
    assert len(safe_repr(loop)) < MAX_SHOWN


def test_a_class_lying_about_its_class_is_shown_by_its_real_type() -> None:
    class Sneaky:
        @property
        def __class__(self) -> type:  # type: ignore[override]
            raise SystemExit("ran")

    assert safe_repr(Sneaky()) == "<Sneaky object>"


@pytest.mark.parametrize("text", list(ESCAPES.values()))
def test_shown_escapes_every_control_character(text: str) -> None:
    assert shown(text).isprintable()


def test_shown_reads_a_str_subclass_as_plain_text() -> None:
    class Hostile(str):
        def __str__(self) -> str:
            raise SystemExit("ran")

    assert shown(Hostile("x\x1b")) == "x\\x1b"


@pytest.mark.parametrize("plot", ["shares", "shares.PNG"])
def test_plot_reports_the_path_it_wrote(tmp_path: Path, plot: str) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / plot
    result = subprocess.run(
        [*BENCH, "--workload", "stationary", "--plot", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    written = result.stderr.strip().splitlines()[-1].removeprefix("wrote ")
    assert Path(written).is_file()
    assert [path.name for path in tmp_path.iterdir()] == [Path(written).name]


def test_list_shows_a_look_alike_distribution_name_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Cyrillic o (U+043E) twice: no valid distribution name holds a character past ASCII.
    lookalike = "adsp-g\u043e\u043ed"
    failure = PluginFailure("g\u043e\u043ed = m:C", lookalike, "1.0", "failed", "boom",
                            names=("g\u043e\u043ed",))  # fmt: skip
    monkeypatch.setattr(cli, "available", lambda: [failure])

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "adsp-g\\u043e\\u043ed" in out
    assert "g\\u043e\\u043ed" in out.splitlines()[1].split()[0]
    assert "\u043e" not in out


@pytest.mark.parametrize("text", ["title", "where"])
def test_a_look_alike_failure_is_escaped_where_check_and_errors_name_it(text: str) -> None:
    # check --all heads a failure with its title and an unknown name's error quotes where it
    # is: both printed r\u043eund-robin as it is, reading as the built-in's name.
    failure = PluginFailure("r\u043eund-robin = m:C", "adsp-r\u043eund", "1.0", "failed", "x",
                            names=("r\u043eund-robin",))  # fmt: skip

    shown_text = getattr(failure, text)

    assert shown_text.isascii(), shown_text
    assert "r\\u043eund-robin = m:C" in shown_text
    assert "adsp-r\\u043eund" in shown_text


def test_a_parameter_is_typed_as_declared_unless_init_adds_only_none() -> None:
    from typing import Any as AnyType

    import attrs

    from agentdescent_sampling.params import signature_of

    def default_if_none(value: AnyType) -> float:
        return 0.5 if value is None else value

    def none_is_half(value: float | None) -> float:
        return 0.5 if value is None else value

    @attrs.define
    class Converted:
        anything: float = attrs.field(default=0.5, converter=default_if_none)
        optional: float = attrs.field(default=0.5, converter=none_is_half)

    typed = [parameter.annotation for parameter in signature_of(Converted).parameters]
    # An Any would hide a number from the kit's notes: the declared type stands.
    assert typed == ["float", "float | None"]


def test_a_hostile_init_or_metaclass_leaves_the_declared_types_and_runs_no_code() -> None:
    import attrs

    from agentdescent_sampling.params import signature_of

    ran: list[str] = []

    class Spoof:  # claims to be a function, with annotations that are no dict
        @property
        def __class__(self) -> type:  # type: ignore[override]
            ran.append("__class__")
            raise RuntimeError("plugin code ran")

        __annotations__ = ["not", "a", "dict"]  # type: ignore[assignment]

    @attrs.define(init=False)
    class Spoofed:
        x: float = 0.5

    Spoofed.__init__ = Spoof()  # type: ignore[method-assign,assignment]

    class Meta(type):
        def __getattribute__(cls, name: str) -> Any:
            if name == "__dict__" and ran == ["armed"]:
                raise SystemExit("metaclass code ran")
            return super().__getattribute__(name)

    @attrs.define
    class Guarded(metaclass=Meta):
        x: float = 0.5

    assert [p.annotation for p in signature_of(Spoofed).parameters] == ["float"]
    assert ran == []
    ran.append("armed")
    assert [p.annotation for p in signature_of(Guarded).parameters] == ["float"]
