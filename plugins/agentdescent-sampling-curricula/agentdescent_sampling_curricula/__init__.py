"""Seven published task-selection rules, and two that reflective optimizers ship, as
agentdescent samplers, one module each."""

from .alp import AbsoluteLearningProgress
from .dapo import DynamicFiltering
from .failure_aware import FailureAware
from .learnability import Learnability
from .mopps import ModelPredictivePromptSelection
from .plr import PrioritizedLevelReplay
from .sfl import SamplingForLearnability
from .speed import Speed
from .tscl import TeacherStudentCurriculum

__all__ = [
    "AbsoluteLearningProgress",
    "DynamicFiltering",
    "FailureAware",
    "Learnability",
    "ModelPredictivePromptSelection",
    "PrioritizedLevelReplay",
    "SamplingForLearnability",
    "Speed",
    "TeacherStudentCurriculum",
]
