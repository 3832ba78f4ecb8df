"""The hook-form entry point: registers the nine rules, each with its citation."""

from __future__ import annotations

from agentdescent_sampling.plugin import Register, hookimpl

from . import (
    AbsoluteLearningProgress,
    DynamicFiltering,
    FailureAware,
    Learnability,
    ModelPredictivePromptSelection,
    PrioritizedLevelReplay,
    SamplingForLearnability,
    Speed,
    TeacherStudentCurriculum,
)


@hookimpl
def agentdescent_register_samplers(register: Register) -> None:
    """Register ``plr``, ``sfl``, ``mopps``, ``tscl``, ``learning-progress``, ``speed``,
    ``dapo-filter``, ``learnability`` and ``failure-aware``."""
    register(
        PrioritizedLevelReplay,
        aliases=("prioritized-level-replay",),
        description="Prioritized Level Replay: rank-prioritised replay mixed with staleness. "
        "Jiang, Grefenstette & Rocktäschel, ICML 2021, arXiv:2010.03934.",
    )
    register(
        SamplingForLearnability,
        aliases=("sampling-for-learnability",),
        description="Sampling For Learnability: a top-K buffer by p(1-p), refreshed "
        "periodically. Rutherford et al., NeurIPS 2024, arXiv:2408.15099.",
    )
    register(
        ModelPredictivePromptSelection,
        aliases=("model-predictive-prompt-selection",),
        description="MoPPS: decayed Beta posteriors, Thompson samples nearest a target pass "
        "rate. Qu et al., 2025, arXiv:2507.04632.",
    )
    register(
        TeacherStudentCurriculum,
        aliases=("teacher-student-curriculum",),
        description="TSCL Window: epsilon-greedy on the |slope| of recent scores. Matiisen, "
        "Oliver, Cohen & Schulman, 2017, arXiv:1707.00183.",
    )
    register(
        AbsoluteLearningProgress,
        aliases=("alp", "absolute-learning-progress"),
        description="Absolute learning progress |r - r_prev| as in ALP-GMM. Portelas, Colas, "
        "Hofmann & Oudeyer, CoRL 2019 (PMLR 100, 2020), arXiv:1910.07224.",
    )
    register(
        Speed,
        aliases=("speed-rl",),
        description="SPEED: screen with a few rollouts, continue on tasks neither solved nor "
        "hopeless. Zhang, Arora, Mei & Zanette, 2025, arXiv:2506.09016.",
    )
    register(
        DynamicFiltering,
        aliases=("dapo", "dynamic-sampling"),
        description="DAPO dynamic sampling: skip tasks whose last G outcomes all pass or all "
        "fail. Yu et al., 2025, arXiv:2503.14476.",
    )
    register(
        Learnability,
        aliases=("gepa-learnability",),
        description="GEPA's LearnabilityBatchSampler: tasks in proportion to the variance of "
        "their recent scores, across artifact versions. gepa-ai/gepa PR #338.",
    )
    register(
        FailureAware,
        aliases=("opik-failure-aware",),
        description="Opik GEPA v2's FailureAwareBatchSampler: failing and passing tasks half "
        "and half, to avoid regressions. comet-ml/opik PR #5547.",
    )
