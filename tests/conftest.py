"""Shared test setup: hypothesis profile sized for a 2-core CI machine, GPU skipping."""
import os

import pytest
from hypothesis import HealthCheck, settings

# CI draws the same examples on every run (derandomize), so a red run is reproducible and
# a green one stays green; HYPOTHESIS_PROFILE=explore draws fresh, more numerous examples.
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    from trainlib.graph.backend import gpu_available
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a GPU (CuPy found none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
