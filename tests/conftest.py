"""Shared test setup: hypothesis profile sized for a 2-core CI machine, GPU skipping."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None,
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
