"""Shared pytest configuration: hypothesis profiles.

FW_HYPOTHESIS_PROFILE=thorough runs many more examples (the fast "ci" profile is
the default)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=8, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.load_profile(os.environ.get("FW_HYPOTHESIS_PROFILE", "ci"))
