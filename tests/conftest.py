"""Shared pytest configuration.

Hypothesis runs derandomized (a fixed sequence of examples per test) so that the
suite gives the same verdict on every run and every machine; the number of
examples can be raised locally with ``--hypothesis-profile=thorough``.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile("ci")
