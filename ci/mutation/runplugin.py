"""pytest plugin for the test runs of mutants (loaded as ``-p _fwmut_runplugin`` by
`runner`): Hypothesis stops at the first failing example instead of shrinking it.

A mutant only needs *a* failure; shrinking one can take minutes of CPU (a planted
TypeError under a property test of fw-core's op records shrank for 30 CPU seconds),
which on a busy machine ran past the mutant's timeout. The profile keeps the
loaded one (conftest.py's ``ci``) and drops only the shrink and explain phases.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after conftest.py loaded its profile
def pytest_configure(config):
    try:
        from hypothesis import Phase, settings
    except ImportError:
        return
    base = settings.default
    phases = tuple(p for p in base.phases if p not in (Phase.shrink, Phase.explain))
    settings.register_profile("fwmut", settings(base, phases=phases))
    settings.load_profile("fwmut")
