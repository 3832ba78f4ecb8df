"""Parameter meanings come from the factory's Google-style ``Args:`` section."""

from __future__ import annotations

import functools

import attrs

from agentdescent_sampling import DifficultyWeighted
from agentdescent_sampling.paramdoc import parameter_help


def test_each_documented_parameter_gets_its_whole_description() -> None:
    meanings = parameter_help(DifficultyWeighted)
    assert set(meanings) == {"c", "pass_threshold", "prior", "spread_in_flight"}
    assert meanings["c"] == (
        "exploration constant. Lower focuses harder, higher explores more; the "
        "default 0.2 is the choice agentdescent's task-sampling guide measured."
    )


def test_a_plain_class_is_read_from_its_init_docstring_and_a_function_from_its_own() -> None:
    class Plain:
        def __init__(self, floor: float = 0.0) -> None:
            """Build it.

            Args:
                floor (float): scores below this
                    count as 0.
            """

    def factory(seed: int = 0) -> None:
        """A factory.

        Args:
            seed: the random seed.

        Returns:
            nothing useful.
        """

    assert parameter_help(Plain) == {"floor": "scores below this count as 0."}
    assert parameter_help(factory) == {"seed": "the random seed."}


def test_a_preset_made_with_partial_is_read_from_the_function_it_wraps() -> None:
    preset = functools.partial(functools.partial(DifficultyWeighted, c=0.4), prior=0.3)
    assert parameter_help(preset) == parameter_help(DifficultyWeighted)


def test_a_factory_without_an_args_section_has_no_meanings() -> None:
    @attrs.define
    class Bare:
        """No parameters documented."""

        x: int = 0

    assert parameter_help(Bare) == {}
    assert parameter_help(len) == {}


def test_reading_the_help_runs_no_property_or_metaclass_of_the_plugins() -> None:
    # Read for show outside the plugin's isolation: a partial subclass's func property, or a
    # metaclass's __doc__, ran (and could exit or print).
    def tuned(window: int = 3) -> None:
        """A preset.

        Args:
            window: how many outcomes to keep.
        """

    class Wrapped(functools.partial):  # type: ignore[type-arg]
        @property
        def func(self) -> None:  # type: ignore[override]
            raise SystemExit("func ran")

    class Documented(type):
        @property
        def __doc__(cls) -> str:  # type: ignore[override]
            raise SystemExit("__doc__ ran")

    class Sampler(metaclass=Documented):
        def __init__(self, window: int = 3) -> None:
            """Build it.

            Args:
                window: how many outcomes to keep.
            """

    assert parameter_help(Wrapped(tuned)) == {"window": "how many outcomes to keep."}
    assert parameter_help(Sampler) == {"window": "how many outcomes to keep."}
