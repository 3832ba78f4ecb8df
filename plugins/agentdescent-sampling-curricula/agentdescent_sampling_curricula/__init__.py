"""Seven published task-selection rules as agentdescent samplers, one module each."""

from .alp import AbsoluteLearningProgress
from .dapo import DynamicFiltering
from .mopps import ModelPredictivePromptSelection
from .plr import PrioritizedLevelReplay
from .sfl import SamplingForLearnability
from .speed import Speed
from .tscl import TeacherStudentCurriculum

__all__ = [
    "AbsoluteLearningProgress",
    "DynamicFiltering",
    "ModelPredictivePromptSelection",
    "PrioritizedLevelReplay",
    "SamplingForLearnability",
    "Speed",
    "TeacherStudentCurriculum",
]
