"""The refs a run spec may name, and nothing else: allow this module alone.

A run spec's ``allow`` entry admits every callable of the modules it names, so
``"allow": ["agentdescent_sampling."]`` would let a ref call any function of this package
(write a file, import every installed plugin). Allow ``"agentdescent_sampling.refs"``
instead: this module holds only the three functions a spec needs::

    "policies": {
      "task_sampler": {"ref": "agentdescent_sampling.refs:from_run_spec",
                       "spec": "fixable-first", "link": "main"},
      "acceptance": {"ref": "agentdescent_sampling.refs:evidence_acceptance", "link": "main"},
      "promotion": {"ref": "agentdescent_sampling.refs:evidence_promotion", "link": "main"}
    },
    "allow": ["agentdescent_sampling.refs"]

Each refuses, while the engine builds the spec, an ``allow`` entry that admits more of
this package than this module.
"""

from .runspec import evidence_acceptance, evidence_promotion, from_run_spec

__all__ = ["evidence_acceptance", "evidence_promotion", "from_run_spec"]
