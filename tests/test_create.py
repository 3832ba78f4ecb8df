"""create() and available() against the built-ins, which this package defines in code."""

import json
import re
import sys
from pathlib import Path

import pytest

from agentdescent_sampling import (
    DifficultyWeighted,
    InvalidSamplerConfig,
    Registry,
    RoundRobin,
    SamplerInfo,
    SamplerSpec,
    UnknownSamplerError,
    available,
    create,
    spec_from_file,
)
from agentdescent_sampling.errors import PluginLoadError, SamplerConflictError
from tests.support.distinfo import FIRST_KEY, HOOK_FORM, install_plugins


@pytest.mark.parametrize(
    "spec",
    [
        "difficulty-weighted:c=0.1,pass_threshold=0.8",
        {"name": "difficulty-weighted", "c": 0.1, "pass_threshold": 0.8},
        SamplerSpec("difficulty-weighted", {"c": 0.1, "pass_threshold": 0.8}),
        {"name": "DifficultyWeighted", "c": 0.1, "pass_threshold": 0.8},
        "Difficulty_Weighted:c=0.1,pass_threshold=0.8",
        {
            "name": "difficulty-weighted",
            "provider": "agentdescent-sampling",
            "c": 0.1,
            "pass_threshold": 0.8,
        },
    ],
)
def test_every_spec_form_builds_a_working_sampler(spec: object) -> None:
    sampler = create(spec)  # type: ignore[arg-type]
    assert isinstance(sampler, DifficultyWeighted)
    assert (sampler.c, sampler.pass_threshold) == (0.1, 0.8)
    sampler.record("a", 0.85)
    assert sampler.stats() == {"a": (1, 1)}
    assert sampler.pick(["a", "b"], 0) == "b"


def test_a_spec_read_from_toml_builds_the_sampler(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[task_sampler]\nname = "round-robin"\n')
    assert isinstance(create(spec_from_file(path)), RoundRobin)


def test_each_create_returns_a_fresh_instance() -> None:
    assert create("difficulty-weighted") is not create("difficulty-weighted")


def test_an_unknown_name_lists_the_available_ones_and_suggests_the_closest() -> None:
    with pytest.raises(UnknownSamplerError) as caught:
        create("difficulty-weigted")
    message = str(caught.value)
    assert "Did you mean 'difficulty-weighted'?" in message
    available_part = message.split("Available: ")[1].split(".")[0].split(", ")
    assert {"difficulty-weighted", "round-robin"} <= set(available_part)
    assert available_part == sorted(available_part)
    assert isinstance(caught.value, LookupError)


def test_an_unknown_name_says_a_plugin_that_provides_it_may_not_be_installed() -> None:
    # Only the built-ins: 'hardest-first' is a plugin's, and the closest built-in is no typo.
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    with pytest.raises(UnknownSamplerError) as caught:
        registry.create("hardest-first")
    message = str(caught.value)
    assert message.startswith("no sampler named 'hardest-first'. Available: ")
    assert message.endswith(
        "If a plugin provides 'hardest-first', its distribution may not be installed in this "
        "Python environment; run 'agentdescent-sampling list' to see what is installed and "
        "which plugins failed to load."
    )


def test_a_typo_of_a_builtin_is_still_suggested_the_name_meant() -> None:
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    with pytest.raises(UnknownSamplerError, match=r"Did you mean 'fixable-first'\?"):
        registry.create("fixable-frist")


@pytest.mark.parametrize("name", ["hardest-first", "failing-first", "easiest-first", "first"])
def test_a_name_sharing_only_a_word_with_a_builtin_is_suggested_nothing(name: str) -> None:
    # The guide's own failing-first is a plugin's: told 'fixable-first', a user would select
    # a sampler that picks otherwise, thinking it the one they meant.
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    with pytest.raises(UnknownSamplerError) as caught:
        registry.create(name)
    assert "Did you mean" not in str(caught.value)


def _registry_with(*names: str) -> Registry:
    """A registry of the built-ins and a round-robin under each of ``names``, no plugin."""
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    for name in names:
        registry.register(RoundRobin, name=name)
    return registry


@pytest.mark.parametrize("name", ["easiest-first", "fastest-first", "newest-first"])
def test_a_name_with_one_other_word_than_a_plugins_is_suggested_nothing(name: str) -> None:
    # The shared '-first' pads the edit-distance bound: the word that differs is judged alone.
    with pytest.raises(UnknownSamplerError) as caught:
        _registry_with("hardest-first").create(name)
    assert "Did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "meant"),
    [("gepa", "gepa-learnability"), ("alp-gmm", "alp"), ("hardset-first", "hardest-first")],
)
def test_a_plugins_name_cut_short_given_a_word_more_or_mistyped_is_suggested(
    name: str, meant: str
) -> None:
    with pytest.raises(UnknownSamplerError, match=rf"Did you mean '{meant}'\?"):
        _registry_with("gepa-learnability", "alp", "hardest-first").create(name)


@pytest.mark.parametrize(
    ("name", "meant"),
    [("difficulty", "difficulty-weighted"), ("informative", "informative-band"),
     ("round-robbin", "round-robin"), ("fixable-firts", "fixable-first")],
)  # fmt: skip
def test_a_builtin_cut_short_or_mistyped_is_suggested(name: str, meant: str) -> None:
    registry = Registry(group="agentdescent.samplers.none-installed", disable=(), strict=False)
    with pytest.raises(UnknownSamplerError, match=rf"Did you mean '{meant}'\?"):
        registry.create(name)


@pytest.mark.parametrize(
    ("name", "meant"),
    [("fixable__first", "fixable-first"), ("difficulty-weighted-", "difficulty-weighted"),
     ("round robin", "round-robin"), (" Fixable__First_", "fixable-first")],
)  # fmt: skip
def test_an_invalid_name_a_separator_slip_away_from_a_built_in_is_told_the_built_in(
    name: str, meant: str
) -> None:
    with pytest.raises(InvalidSamplerConfig, match=rf"Did you mean '{meant}'\? A config"):
        create(name)


@pytest.mark.parametrize(
    "spec",
    ["'round-robin'", '"fixable-first"', "'difficulty-weighted:c=0.1'", {"name": "'plr'"}],
)
def test_a_name_written_in_quotes_is_told_to_drop_them(spec: object) -> None:
    with pytest.raises(InvalidSamplerConfig, match=r"; it is written in quotes: drop them\. "):
        create(spec)


@pytest.mark.parametrize("name", ["'", "'a b'", "'9lives'", "round-robin'"])
def test_a_quote_around_no_name_is_told_nothing_of_quotes(name: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create(name)
    assert "quotes" not in str(caught.value)


def test_an_invalid_name_no_separator_slip_away_from_a_built_in_is_told_no_name() -> None:
    # A mended plugin name may not exist, and a name may be a secret read by the wrong key.
    for name in ("9lives", "a.b", "os.path:join", "-", "my__plugin", "correct horse battery"):
        with pytest.raises(InvalidSamplerConfig) as caught:
            create(name)
        assert "Did you mean" not in str(caught.value)


def test_an_unknown_parameter_names_the_sampler_and_its_valid_parameters() -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create("difficulty-weighted:cc=0.1")
    assert str(caught.value) == (
        "sampler 'difficulty-weighted': unknown parameter 'cc'. Did you mean 'c'? "
        "Valid parameters: c=0.2, pass_threshold=0.999, prior=0.5, spread_in_flight=False"
    )
    assert isinstance(caught.value, ValueError)


def test_an_unknown_parameter_error_stands_alone_and_a_refused_value_keeps_the_factorys() -> None:
    with pytest.raises(InvalidSamplerConfig) as misspelt:
        create("difficulty-weighted:cc=0.1")
    # Python's "unexpected keyword argument" would print above it and say less.
    assert misspelt.value.__cause__ is None
    assert misspelt.value.__suppress_context__
    with pytest.raises(InvalidSamplerConfig) as refused:
        create("difficulty-weighted:c=-1")
    # The factory's own error says where the value was checked.
    assert isinstance(refused.value.__cause__, ValueError)


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("difficulty-weighted:C=0.1", "unknown parameter 'C'. Did you mean 'c'? "),
        ("difficulty-weighted:c=0.1,pass_thresold=0.9",
         "unknown parameter 'pass_thresold'. Did you mean 'pass_threshold'? Valid"),
        ("fixable-first:pass-threshold=0.8",
         "bad parameter name 'pass-threshold' (write it as 'pass_threshold'); "),
    ],
)  # fmt: skip
def test_a_parameter_misspelt_by_case_or_dash_gets_the_name_meant(spec: str, hint: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create(spec)
    assert hint in str(caught.value)


def test_a_state_path_in_the_sampler_table_is_told_to_go_beside_the_spec(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(
        '[task_sampler]\nname = "fixable-first"\nstate = "runs/sampler.sqlite"\n', encoding="utf-8"
    )
    with pytest.raises(InvalidSamplerConfig) as caught:
        create(spec_from_file(path))
    assert (
        "unknown parameter 'state'. A state file is not a parameter: give it beside the "
        'spec, as create(spec, state=PATH) or a run spec\'s "state".' in str(caught.value)
    )
    assert not (tmp_path / "runs").exists()


def test_a_parameter_name_of_dashes_alone_is_not_told_to_become_underscores() -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create("fixable-first:---=1")
    assert "bad parameter name '---'; expected a Python identifier" in str(caught.value)


def test_a_correct_parameter_beside_a_misspelt_one_is_not_suggested_as_itself() -> None:
    with pytest.raises(InvalidSamplerConfig) as caught:
        create("difficulty-weighted:c=0.1,pass_thresold=0.9")
    assert str(caught.value).count("Did you mean") == 1
    assert "Did you mean 'c'?" not in str(caught.value)


def test_a_bad_parameter_value_is_an_invalid_config_chained_to_the_validator() -> None:
    with pytest.raises(
        InvalidSamplerConfig, match=r"c=-1\): expected a finite number in \[0, 1e\+06\]; try 0.2"
    ) as caught:
        create({"name": "difficulty-weighted", "c": -1})
    assert isinstance(caught.value.__cause__, ValueError)


def test_round_robin_takes_only_spread_in_flight() -> None:
    with pytest.raises(InvalidSamplerConfig, match=r"Valid parameters: spread_in_flight=False$"):
        create("round-robin:c=1")


def test_an_unknown_provider_names_the_real_one() -> None:
    with pytest.raises(UnknownSamplerError, match="provided by agentdescent-sampling"):
        create({"name": "round-robin", "provider": "someone-else"})


def test_a_misspelt_provider_of_a_hook_form_plugin_is_suggested_the_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hook-form plugin's names are known only once it is imported, and a provider imports
    # only its own: the misspelt provider must be told from its metadata, not said to lack
    # the name while its distribution "may not be installed".
    install_plugins(tmp_path, monkeypatch, {"kit-test-curricula": (HOOK_FORM, {"hooks": ""})})

    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "shuffled", "provider": "kit-test-curricul"})

    message = str(refused.value)
    assert message.startswith(
        "no sampler named 'shuffled' provided by 'kit-test-curricul'. No distribution of that "
        f"name is installed in this Python environment ({sys.executable!r}); if it is a plugin, "
        "install it there. If it is misspelt, did you mean 'kit-test-curricula'?"
    )
    assert "may not be installed" not in message
    assert create({"name": "shuffled", "provider": "kit-test-curricula"}).name == "shuffled"


def _first_key_as(name: str) -> tuple[str, dict[str, str]]:
    """``FIRST_KEY``'s module and entry point, its sampler named ``name``."""
    return FIRST_KEY.replace("kit-dup", name), {name: "FirstKey"}


def _alpha_and_beta() -> dict[str, tuple[str, dict[str, str]]]:
    """Two distributions, ``kit-test-alpha`` and ``kit-test-beta``, of one sampler each."""
    return {
        "kit-test-alpha": _first_key_as("kit-alpha"),
        "kit-test-beta": _first_key_as("kit-beta"),
    }


def test_a_name_missing_from_a_given_provider_is_told_that_providers_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a provider given, the list and the suggestion are of that provider's samplers:
    # another distribution's names (or the built-ins) would read as if it offered them.
    install_plugins(
        tmp_path,
        monkeypatch,
        {
            **_alpha_and_beta(),
            "kit-test-broken": ("raise ImportError('boom')\n", {"kit-broken": ""}),
        },
    )
    with pytest.raises(UnknownSamplerError) as refused:
        create("kit-bet")  # with no provider, the hook-form plugin loads, and fails
    assert "Plugins that failed to load might provide it: kit-test-broken" in str(refused.value)
    assert "The plugin policy blocks" in str(refused.value)  # installed packs, out of only=

    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "kit-bet", "provider": "kit-test-alpha"})
    assert str(refused.value).startswith(
        "no sampler named 'kit-bet' provided by 'kit-test-alpha'. Available from "
        "'kit-test-alpha': kit-alpha. If "
    )
    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "kit-alpa", "provider": "kit-test-alpha"})
    assert str(refused.value).startswith(
        "no sampler named 'kit-alpa' provided by 'kit-test-alpha'. Did you mean 'kit-alpha'? "
        "Available from 'kit-test-alpha': kit-alpha. If 'kit-test-alpha' should provide "
        "'kit-alpa', the installed version may not; run 'agentdescent-sampling list' to see "
        "what each plugin provides and which failed to load."
    )

    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "round-robn", "provider": "agentdescent-sampling"})
    message = str(refused.value)
    assert message.startswith(
        "no sampler named 'round-robn' provided by 'agentdescent-sampling'. Did you mean "
        "'round-robin'? Available from 'agentdescent-sampling': difficulty-weighted, "
    )
    assert "kit-alpha" not in message
    assert "kit-beta" not in message
    assert "kit-test-broken" not in message


@pytest.mark.parametrize("loaded_before", [False, True], ids=["unloaded", "failed-before"])
def test_a_name_another_providers_broken_plugin_has_is_told_its_provider_however_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded_before: bool
) -> None:
    # Once the other distribution's plugin had failed to load in this process, asking another
    # provider for its name raised that plugin's PluginLoadError.
    install_plugins(
        tmp_path,
        monkeypatch,
        {
            "kit-test-alpha": ("raise ImportError('boom')\n", {"kit-x": "FirstKey"}),
            "kit-test-beta": _first_key_as("kit-beta"),
        },
    )
    if loaded_before:
        with pytest.raises(PluginLoadError):
            create("kit-x")

    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "kit-x", "provider": "kit-test-beta"})
    assert str(refused.value) == (
        "sampler 'kit-x' is not provided by 'kit-test-beta'; it is provided by kit-test-alpha; "
        "set provider to one of those or leave it out"
    )


def test_a_name_near_one_whose_plugin_failed_is_suggested_that_one_after_it_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before its plugin was imported, 'kit-broke' was suggested 'kit-broken'; once it had
    # failed, the suggestion moved to another sampler ('round-robin').
    install_plugins(
        tmp_path,
        monkeypatch,
        {"kit-test-broken": ("raise ImportError('boom')\n", {"kit-broken": "X"})},
    )
    with pytest.raises(UnknownSamplerError, match="Did you mean 'kit-broken'\\?"):
        create("kit-broke")
    with pytest.raises(PluginLoadError):
        create("kit-broken")

    with pytest.raises(UnknownSamplerError) as refused:
        create("kit-broke")
    assert "Did you mean 'kit-broken'? Its plugin failed: kit-test-broken 0.1 (entry point " in (
        str(refused.value)
    )
    assert "failed to load might provide it" not in str(refused.value)  # told once, above


def test_a_provider_the_policy_blocks_is_told_so_whatever_the_form_of_its_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugins(tmp_path, monkeypatch, _alpha_and_beta())
    blocking = Registry(only=("kit-test-beta",), strict=False)

    with pytest.raises(UnknownSamplerError) as refused:
        blocking.create({"name": "kit-alpa", "provider": "kit-test-alpha"})
    assert (
        "Available from 'kit-test-alpha': none. The plugin policy blocks 1 plugin distribution "
        "that might provide it: kit-test-alpha (not in Registry(only=...) (kit-test-beta)); "
        "unset or change that setting to use it." in str(refused.value)
    )


def test_a_provider_installed_without_samplers_is_told_so_not_to_install_it() -> None:
    # pytest is installed wherever these tests run, and declares no samplers.
    with pytest.raises(UnknownSamplerError) as refused:
        create({"name": "no-such-sampler", "provider": "pytest"})
    message = str(refused.value)
    assert message.startswith(
        "no sampler named 'no-such-sampler' provided by 'pytest'. 'pytest' is installed but "
        "declares no samplers (no entry point in the 'agentdescent.samplers' group). Those that "
        "may load: "
    )
    assert "agentdescent-sampling" in message.partition("Those that may load: ")[2]
    assert "pip install" not in message


@pytest.mark.parametrize("key", ["provder", "Provider", "providers"])
def test_a_misspelt_provider_key_is_told_the_key_not_only_the_parameters(key: str) -> None:
    with pytest.raises(InvalidSamplerConfig) as refused:
        create({"name": "round-robin", key: "agentdescent-sampling"})
    assert str(refused.value) == (
        f"sampler 'round-robin': unknown parameter {key!r}. Did you mean 'provider' (the "
        "distribution that provides the sampler, a key beside 'name')? Valid parameters: "
        "spread_in_flight=False"
    )


def test_a_misspelt_provider_key_near_a_parameter_is_told_both() -> None:
    # 'provder' is nearer 'prior' than 'provider' by difflib's measure: only 'prior' was told.
    with pytest.raises(InvalidSamplerConfig) as refused:
        create({"name": "difficulty-weighted", "provder": "agentdescent-sampling"})
    assert (
        "unknown parameter 'provder'. Did you mean 'prior', or 'provider' (the distribution "
        "that provides the sampler, a key beside 'name')? Valid parameters:"
    ) in str(refused.value)


def test_a_provider_in_the_string_form_is_told_the_form_has_no_place_for_it() -> None:
    with pytest.raises(InvalidSamplerConfig) as refused:
        create("difficulty-weighted:provider=agentdescent-sampling")
    assert str(refused.value).startswith(
        "sampler 'difficulty-weighted': unknown parameter 'provider'. 'provider' is a key beside "
        "'name', which the NAME:key=value form has no place for: give a mapping or a table, such "
        'as {"name": ..., "provider": ...}. Valid parameters:'
    )


def test_a_misspelt_provider_key_is_told_where_two_distributions_provide_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The conflict came first, and said "Pick one with provider" to a user who had tried.
    install_plugins(
        tmp_path,
        monkeypatch,
        {
            "kit-test-alpha": (FIRST_KEY, {"kit-dup": "FirstKey"}),
            "kit-test-beta": (FIRST_KEY, {"kit-dup": "FirstKey"}),
        },
    )
    with pytest.raises(SamplerConflictError) as refused:
        create({"name": "kit-dup", "provder": "kit-test-alpha"})
    assert str(refused.value).endswith(
        "or uninstall one of them. 'provder': did you mean 'provider' (the distribution that "
        "provides the sampler, a key beside 'name')?"
    )
    with pytest.raises(SamplerConflictError, match="NAME:key=value form has no place for"):
        create("kit-dup:provider=kit-test-alpha")
    with pytest.raises(SamplerConflictError) as refused:
        create("kit-dup")
    # JSON, which a run spec's author can paste as it is (and Python reads too).
    example = re.search(r"for example (\{.*?\}), or", str(refused.value))
    assert example is not None, str(refused.value)
    assert json.loads(example.group(1))["name"] == "kit-dup"


def test_available_describes_both_builtins() -> None:
    records = {r.name: r for r in available() if isinstance(r, SamplerInfo)}
    weighted = records["difficulty-weighted"].to_dict()
    assert weighted["distribution"] == "agentdescent-sampling"
    assert weighted["aliases"] == ["DifficultyWeighted"]
    assert weighted["status"] == "ok"
    assert [(p["name"], p["default"]) for p in weighted["parameters"]] == [
        ("c", 0.2),
        ("pass_threshold", 0.999),
        ("prior", 0.5),
        ("spread_in_flight", False),
    ]
    round_robin = records["round-robin"].to_dict()["parameters"]
    assert [(p["name"], p["default"]) for p in round_robin] == [("spread_in_flight", False)]


@pytest.mark.parametrize(
    ("state", "advice"),
    [
        (b"sampler.sqlite", "decode it with os.fsdecode()"),
        (3, "give the path of the state file, for example 'sampler-state.sqlite'"),
        (False, "or no state (None) for a sampler that keeps none"),
    ],
    ids=["bytes", "an-int", "false"],
)
def test_a_state_that_is_not_a_path_is_refused_naming_it_and_what_to_give_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: object, advice: str
) -> None:
    monkeypatch.chdir(tmp_path)
    built = []

    class Counted(RoundRobin):
        name = "counted"

        def __init__(self) -> None:
            built.append(self)
            super().__init__()

    registry = Registry()
    registry.register(Counted)

    with pytest.raises(TypeError) as raised:
        registry.create("counted", state=state)  # type: ignore[call-overload]

    message = str(raised.value)
    assert message.startswith(
        f"a state path must be a str or an os.PathLike of one, not {type(state).__name__} "
        f"({state!r}); "
    )
    assert advice in message
    assert built == []
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_name_quotes_a_failed_hook_before_a_failed_class_of_one_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The distribution's first failure was quoted, a class-form entry point that can provide
    # only its own name (and its class's aliases); the hook that may register any was hidden.
    source = """
        from agentdescent_sampling.plugin import hookimpl

        @hookimpl
        def agentdescent_register_samplers(register):
            raise KeyError("boom in hook")
    """
    entry_points = {"bad.name": "Missing", "hooks": ""}  # a name refused from metadata
    install_plugins(tmp_path, monkeypatch, {"kit-test-mixed": (source, entry_points)})

    with pytest.raises(UnknownSamplerError) as refused:
        create("y-sampler")

    quoted = str(refused.value).split("Plugins that failed to load might provide it: ")[1]
    assert quoted.startswith("kit-test-mixed 0.1 (entry point 'hooks = ")
    assert "boom in hook" in quoted


def test_an_unknown_name_quotes_no_refused_registration_as_a_plugin_that_might_provide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A refused registration is recorded under its own names, which the name asked for is not
    # among; quoting it first hid the one plugin whose hook raised, behind "And 3 more".
    refused_source = """
        from agentdescent_sampling.plugin import hookimpl

        class OldPick:
            name = "old-pick"
            def pick(self, keys):
                return keys[0]
            def record(self, task_id, score):
                pass

        @hookimpl
        def agentdescent_register_samplers(register):
            register(OldPick)
            register(OldPick, name="r\u043eund-robin")
    """
    raising_source = """
        from agentdescent_sampling.plugin import hookimpl

        @hookimpl
        def agentdescent_register_samplers(register):
            raise KeyError("boom in hook")
    """
    install_plugins(
        tmp_path,
        monkeypatch,
        {
            "kit-test-refused": (refused_source, {"refused-pack": ""}),
            "kit-test-raising": (raising_source, {"raising-pack": ""}),
        },
    )

    with pytest.raises(UnknownSamplerError) as unknown:
        create("y-sampler")

    quoted = str(unknown.value).split("Plugins that failed to load might provide it: ")[1]
    assert quoted.startswith("kit-test-raising 0.1 (entry point 'raising-pack = ")
    assert "kit-test-refused" not in quoted


def test_a_hook_form_plugins_entry_point_name_is_told_to_be_a_label_naming_its_samplers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `list` shows the label; selecting it was told the distribution "may not be installed".
    source = """
        from agentdescent_sampling.plugin import check_keys, hookimpl

        class First:
            def pick(self, keys, round_index):
                return check_keys(keys)[0]
            def record(self, task_id, score):
                pass

        @hookimpl
        def agentdescent_register_samplers(register):
            register(First, name="hooky")
    """
    install_plugins(tmp_path, monkeypatch, {"kit-test-hooky": (source, {"hooky-hooks": ""})})

    with pytest.raises(UnknownSamplerError) as unknown:
        create("hooky-hooks")

    assert (
        "'hooky-hooks' is the entry point of the hook-form plugin kit-test-hooky, not a "
        "sampler: its hook registers hooky."
    ) in str(unknown.value)


def test_a_plugin_that_imports_a_module_not_installed_is_told_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was told to check its entry point against the package's code, or reinstall it.
    source = "    import kit_test_dependency_nobody_installed\n" + FIRST_KEY  # dedented with it
    install_plugins(
        tmp_path, monkeypatch, {"kit-test-needs-more": (source, {"kit-dup": "FirstKey"})}
    )

    with pytest.raises(PluginLoadError) as refused:
        create("kit-dup")

    assert re.search(
        r"\(at kit_test_plugin_\d+\.py:1\); it imports 'kit_test_dependency_nobody_installed', "
        r"which is not installed: if that is the module meant, install it \(and list it in its "
        r"dependencies\); if not, correct the import$",
        str(refused.value),
    )


@pytest.mark.parametrize(
    "hook",
    [
        "def agentdescent_register_samplers(register):\n    register(FirstKey)\n",
        "@hookimpl\ndef agentdescent_register_samplers(register):\n    return [FirstKey]\n",
    ],
    ids=["a-hook-not-marked", "a-hook-returning-its-classes"],
)
def test_a_name_unknown_while_a_hook_plugin_registered_nothing_quotes_that_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: str
) -> None:
    # Its hooks ran and registered nothing, so it may have meant any name: 'check NAME' said
    # only that the distribution may not be installed, naming no plugin.
    source = (
        "from agentdescent_sampling.plugin import hookimpl\n\n"
        "class FirstKey:\n    name = 'least-tried'\n\n"
        "    def pick(self, keys, round_index):\n        return keys[0]\n\n"
        "    def record(self, task_id, score):\n        pass\n\n" + hook
    )
    install_plugins(tmp_path, monkeypatch, {"kit-test-hookless": (source, {"kit-hooks": ""})})
    with pytest.raises(UnknownSamplerError) as refused:
        create("least-tried")
    assert (
        "Plugins that failed to load might provide it: kit-test-hookless 0.1 (entry point "
        "'kit-hooks = kit_test_plugin_"
    ) in str(refused.value)
    assert "its hooks registered no sampler" in str(refused.value)
