"""The engine bench: samplers measured by the artifact they buy in the real ``evolve()``.

Needs the ``engine`` extra (agentdescent); importing this package does not import it.
"""
