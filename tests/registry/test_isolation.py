"""Whatever a plugin does while being imported, described, hooked or built, the host goes on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.registry.probes import error_of, failure_of, failures_of, records
from tests.registry.test_trust import first_on_path
from tests.support.venv import PATIENT, Venv


def test_describing_parameters_never_calls_an_attrs_default_factory(zoo: Venv) -> None:
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import available
        from agentdescent_sampling.registry import default_registry
        available()
        info = default_registry().get("with-factory")
        import ads_describe
        print(json.dumps([ads_describe.FACTORY_CALLS, info.to_dict()["parameters"]]))
        """
    )
    assert outcome[0] == []
    assert outcome[1] == [
        {"name": "seen", "default": "noisy_default()", "required": False, "type": "list"}
    ]
    assert "with-factory" in zoo.run("agentdescent-sampling", "list").stdout


def test_hostile_descriptions_signatures_and_metaclasses_are_recorded_not_raised(
    zoo: Venv,
) -> None:
    found = failures_of(records(zoo), "ads-test-hostile-describe")
    errors = {str(r["names"][0]) if r["names"] else "": str(r["error"]) for r in found}  # type: ignore[index]
    assert "description must be text, got int 42" in errors["bad-description"]
    assert "RuntimeError: no signature for you" in errors["raising-signature"]
    assert any("RuntimeError: metaclass attribute" in error for error in errors.values())
    assert "aliases='xyz' is not a list or tuple of names" in errors["xyz-holder"]
    names = {r["name"] for r in records(zoo) if r["kind"] == "sampler"}
    assert "describe-survivor" in names
    assert not {"x", "y", "z"} & names


def test_text_and_defaults_a_plugin_hands_over_run_none_of_its_code_once_registered(
    zoo: Venv,
) -> None:
    # Each ran after its registration's isolation: list and available() exited 9 (a name
    # sorted) or 7 (a default compared), or raised TypeError (a description stripped to no
    # text); show printed the built-in's heading for a name's __format__; a default's class
    # claiming typing's module, or a hint or a namespace holding a plugin's object, had its
    # repr print into list --json; show exited on a parameter's name, annotation or a
    # computed docstring, check --all on a failed registration's name.
    for command in ("list", "check --all"):  # 1: the zoo's other plugins fail their checks
        assert zoo.run("agentdescent-sampling", *command.split(), check=False).returncode in (0, 1)
    for name in ("hashing-parameter", "truthy-annotation", "computed-doc"):
        shown = zoo.run("agentdescent-sampling", "show", name).stdout
        assert shown.startswith(name)
        assert "PRINTED-BY-REPR" not in shown
    hints = zoo.run("agentdescent-sampling", "show", "hints-holding-code").stdout
    assert "a = <GenericAlias object>\n    b = <SimpleNamespace object>" in hints
    assert "PRINTED-BY-REPR" not in hints
    assert "no aliases for you" in zoo.run("agentdescent-sampling", "list").stdout
    listed = zoo.run("agentdescent-sampling", "list", "--json")
    names = {record["name"]: record for record in json.loads(listed.stdout) if "name" in record}
    assert {"exits-when-sorted", "formats-as-builtin", "strips-to-no-text"} <= set(names)
    assert names["strips-to-no-text"]["description"] == "x"
    shown = zoo.run("agentdescent-sampling", "show", "formats-as-builtin").stdout
    assert shown.startswith("formats-as-builtin (ads-test-hostile-text 1.2.3)")
    assert "round-robin" not in shown
    assert "PRINTED-BY-REPR" not in listed.stdout + shown
    assert (
        "    hint = <Typing object>\n"
        in zoo.run("agentdescent-sampling", "show", "exits-when-sorted").stdout
    )
    assert zoo.run("agentdescent-sampling", "list").returncode == 0


def test_a_pick_without_round_index_is_refused_at_registration_naming_the_signature(
    zoo: Venv,
) -> None:
    found = failures_of(records(zoo), "ads-test-hostile-describe")
    (refused,) = [r for r in found if r["names"] == ["pick-without-round"]]
    assert refused["status"] == "failed"
    assert "pick(self, keys) can't be called as pick(keys, round_index)" in str(refused["error"])


def test_base_exceptions_at_import_and_in_a_hook_are_recorded(zoo: Venv) -> None:
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import available
        from agentdescent_sampling.registry import default_registry
        available()
        print(json.dumps([f.message for f in default_registry().failures()
                          if f.distribution == "ads-test-base-exceptions"]))
        """
    )
    assert sorted(outcome) == [
        "hook failed: GeneratorExit: closing (at ads_base_hook.py:6)",
        "import failed: Escape: out of isolation (at ads_base_import.py:5)",
    ]
    assert failure_of(records(zoo), "ads-test-exits")["status"] == "failed"


def test_a_plugin_whose_error_or_object_raises_when_shown_is_recorded(zoo: Venv) -> None:
    # Wording the failure read the exception's __str__ and the object's __repr__, plugin
    # code outside the isolation: their SystemExit ended the host.
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import available, create
        from agentdescent_sampling.errors import PluginLoadError
        from agentdescent_sampling.registry import default_registry
        said = []
        for name in ("raising-str", "raising-repr"):
            try:
                create(name)
            except PluginLoadError as error:
                said.append(str(error))
        available()
        said += sorted(f.message for f in default_registry().failures()
                       if f.distribution == "ads-test-raising-text")
        print(json.dumps(said))
        """
    )
    assert "import failed: Unprintable: an exception that could not be printed" in outcome[0]
    assert "VALUE is Unshowable <Unshowable object>, neither a sampler factory" in outcome[1]
    assert "escaped" not in " ".join(outcome)
    assert len(outcome) == 4


def test_a_factory_calling_sys_exit_is_our_error_and_the_host_goes_on(zoo: Venv) -> None:
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        from agentdescent_sampling.errors import PluginLoadError
        try:
            create("exits-on-bad-params:level=3")
        except PluginLoadError as error:
            print(json.dumps([str(error), type(error.__cause__).__name__]))
        """
    )
    assert "SystemExit: level must be at most 1, got 3" in outcome[0]
    assert outcome[1] == "SystemExit"


def test_a_keyboard_interrupt_at_import_propagates_and_the_plugin_stays_in_failures(
    zoo: Venv, aside: dict[str, str]
) -> None:
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        from agentdescent_sampling.registry import default_registry
        try:
            create("interrupts")
        except KeyboardInterrupt as interrupt:
            interrupted = str(interrupt)
        else:
            interrupted = None
        print(json.dumps([interrupted, [f.message for f in default_registry().failures()
                                        if f.distribution == "ads-test-interrupts"]]))
        """,
        env={"PYTHONPATH": aside["ads-test-interrupts"]},
    )
    assert outcome == [
        # No Ctrl-C may have been pressed: the interrupt names the plugin that raised it.
        "while loading the plugin ads-test-interrupts 9.9.9 (entry point 'interrupts = "
        "ads_interrupts:X', import); if no one pressed Ctrl-C, it raised "
        "KeyboardInterrupt itself: AGENTDESCENT_SAMPLERS_DISABLE=ads-test-interrupts keeps it "
        "from loading",
        [
            "import interrupted by KeyboardInterrupt; this process will not try it again: "
            "restart Python to load it"
        ],
    ]


def test_a_command_a_plugin_interrupts_names_the_plugin_and_exits_130(
    zoo: Venv, aside: dict[str, str]
) -> None:
    ran = zoo.run(
        "agentdescent-sampling", "list", env={"PYTHONPATH": aside["ads-test-interrupts"]},
        check=False,
    )  # fmt: skip
    assert ran.returncode == 130
    assert ran.stderr.startswith(
        "agentdescent-sampling: error: interrupted while loading the plugin ads-test-interrupts "
    )
    assert "AGENTDESCENT_SAMPLERS_DISABLE=ads-test-interrupts" in ran.stderr


def test_a_typo_among_500_failed_registrations_gets_a_short_message(zoo: Venv) -> None:
    error = error_of(zoo, "survivr")
    assert error["type"] == "UnknownSamplerError"
    assert len(error["message"]) < 2000
    assert "Did you mean 'survivor'?" in error["message"]
    assert "more failures." in error["message"]
    assert ".;" not in error["message"], error["message"]  # each quoted failure a sentence
    assert error["message"].endswith(
        "run 'agentdescent-sampling list' to see what is installed and which plugins failed to "
        "load."
    )


def test_sentences_in_a_not_found_message_each_end_with_a_period(zoo: Venv) -> None:
    env = {"AGENTDESCENT_SAMPLERS_ONLY": "ads-test-hook-raises"}
    message = error_of(zoo, "survivr", env=env)["message"]
    # The quoted failure's own text (ending with where it arose) has no period.
    assert re.search(r"hook exploded \(at ads_raises\.py:\d+\)\. ", message), message
    assert re.search(r"[^.?] (If|And) ", message) is None, message


def test_did_you_mean_tells_a_failed_name_failed_and_never_suggests_a_conflicting_one(
    zoo: Venv,
) -> None:
    assert "Did you mean" not in error_of(zoo, "dupp")["message"]  # dup is a conflict
    # Its failure is told with it: a refused registration is not among the plugins quoted
    # as ones that might provide the name, so "see below" once pointed at nothing.
    refused = error_of(zoo, "no-pik")["message"]
    assert re.search(
        r"Did you mean 'no-pick'\? Its plugin failed: ads-test-bad-registrations 1\.2\.3 "
        r"\(entry point 'badreg = ads_badreg'\): registered class NoPick: .*\(at ads_badreg\.py:"
        r"\d+\)\. ",
        refused,
    ), refused
    # Until its import is tried, broken is a name in metadata, like any class-form plugin's;
    # once it has failed to import, it is suggested as the one that failed.
    assert "Did you mean 'broken'?" in error_of(zoo, "brokn")["message"]
    after_its_failure = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        for name in ("broken", "brokn"):
            try:
                create(name)
            except Exception as error:
                message = str(error)
        print(json.dumps(message))
        """
    )
    assert "Did you mean 'broken'? Its plugin failed: ads-test-broken-import " in (
        after_its_failure
    )


def test_a_builtin_does_not_wait_for_another_threads_plugin_import(
    zoo: Venv, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    outcome = zoo.json(
        f"""
        import json, pathlib, sys, threading, time
        from agentdescent_sampling import create
        importer = threading.Thread(target=create, args=("blocking",))
        importer.start()
        while "ads_blocking" not in sys.modules:
            assert importer.is_alive(), "the plugin finished importing before the test began"
            time.sleep(0.001)
        create("round-robin")
        create("informative-band:window=3")
        waited_for_plugin = not importer.is_alive()
        pathlib.Path({str(release)!r}).touch()
        importer.join()
        print(json.dumps(waited_for_plugin))
        """,
        env={"ADS_RELEASE": str(release)},
    )
    assert outcome is False


def test_one_class_under_two_entry_point_names_works_in_either_order(zoo: Venv) -> None:
    code = """
        import json
        from agentdescent_sampling import create
        # A class served under another name than its own is wrapped: look inside.
        served = [create(name) for name in {names!r}]
        print(json.dumps([type(getattr(s, "wrapped", s)).__name__ for s in served]))
    """
    assert zoo.json(code.format(names=("lrt", "least-recently-tried"))) == ["LRT", "LRT"]
    assert zoo.json(code.format(names=("least-recently-tried", "lrt"))) == ["LRT", "LRT"]
    listed = {r["name"]: r["status"] for r in records(zoo) if r["kind"] == "sampler"}
    assert listed["lrt"] == listed["least-recently-tried"] == "ok"
    assert not failures_of(records(zoo), "ads-test-two-names")


def test_classes_sharing_a_class_name_across_distributions_do_not_conflict(zoo: Venv) -> None:
    for first in ("alpha", "list"):
        made = zoo.json(
            f"""
            import json
            from agentdescent_sampling import available, create
            if {first!r} == "list":
                available()
            else:
                create("alpha")
            print(json.dumps(type(create("beta")).__module__))
            """
        )
        assert made == "ads_beta"
    listed = {r["name"]: r["status"] for r in records(zoo) if r["kind"] == "sampler"}
    assert listed["alpha"] == listed["beta"] == "ok"
    assert error_of(zoo, "Sampler")["type"] == "UnknownSamplerError"


def test_a_hook_form_preset_answers_to_its_own_name_and_shows_it_is_a_preset(
    zoo: Venv,
) -> None:
    made = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        sampler = create("lrt-shuffled")
        sampler.record("a", 1.0)
        print(json.dumps([sampler.name, repr(sampler), sampler.pick(["a", "b"], 0),
                          create("lrt").name]))
        """
    )
    assert made == [
        "lrt-shuffled",
        "ServedSampler(LRT(shuffle=True), name='lrt-shuffled')",
        "b",
        "lrt",  # the name it was selected by, though the class calls itself least-recently-tried
    ]
    check = zoo.run("agentdescent-sampling", "check", "lrt-shuffled", *PATIENT)
    assert "checks passed" in check.stdout
    assert (
        json.loads(zoo.run("agentdescent-sampling", "show", "lrt-shuffled", "--json").stdout)[
            "form"
        ]
        == "hook"
    )


# -- exceptions whose attributes run the plugin's code ------------------------------------


def test_an_exception_whose_attributes_raise_when_read_is_recorded_as_its_plugins(
    zoo: Venv, aside: dict[str, str]
) -> None:
    # Wording the failure read the error's __class__ (isinstance), an import error's name,
    # an attribute error's obj: plugin code, whose SystemExit ended list, check and create().
    env = first_on_path(aside["ads-test-crafted-errors"])
    found = records(zoo, env=env)
    errors = {
        str(r["entry_point"]).partition(" ")[0]: str(r["error"])
        for r in failures_of(found, "ads-test-crafted-errors")
    }
    for name in ("crafted-class", "crafted-name", "crafted-obj", "crafted-notes", "crafted-hooks"):
        assert errors[name].startswith("import failed: Crafted: crafted"), errors[name]
    assert "escaped" not in " ".join(errors.values())
    built = "from agentdescent_sampling import create; print(create('shuffled').name)"
    assert zoo.python(built, env=env).stdout.split() == ["shuffled"]  # another hook plugin's
    listed = zoo.run("agentdescent-sampling", "list", "--tracebacks", env=env, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "crafted-notes" in listed.stdout


def test_an_attrs_default_or_a_refusal_that_raises_when_shown_is_the_plugins_failure(
    zoo: Venv, aside: dict[str, str]
) -> None:
    env = first_on_path(aside["ads-test-crafted-errors"])
    for command in (
        ["list", "--json"],
        ["show", "crafted-default"],
        ["check", "crafted-default", *PATIENT],
    ):
        shown = zoo.run("agentdescent-sampling", *command, env=env, check=False)
        # 1: check's violations (the sampler has no name); SystemExit's 8 ended the command.
        assert shown.returncode in (0, 1), (command, shown.stdout, shown.stderr)
        assert "a new value per instance" in shown.stdout, command
    outcome = zoo.json(
        """
        import json
        from agentdescent_sampling import create
        from agentdescent_sampling.errors import PluginLoadError
        try:
            create("crafted-refusal:level=2")
        except PluginLoadError as error:
            print(json.dumps(str(error)))
        """,
        env=env,
    )
    assert "Unsayable: an exception that could not be printed" in outcome
