"""Shared pytest configuration.

Hypothesis runs derandomized (a fixed sequence of examples per test) so that the
suite gives the same verdict on every run and every machine; the number of
examples can be raised locally with ``--hypothesis-profile=thorough``.

The repository root is defined once, in ``booktools.ROOT`` (the scripts in tests/ use it
too); tests take it as the ``root`` fixture or import it from there, never recompute it.
Helpers shared by the tests (anchored error matching, finite differences) are in
``helpers.py``.
"""

import pathlib

import pytest
from hypothesis import HealthCheck, settings

from booktools import ROOT

settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile("ci")


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    """The repository's root directory."""
    return ROOT
