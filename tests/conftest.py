"""Shared test configuration: fixture paths, vector parametrization, Hypothesis profiles.

Test data lives in ``fixtures/`` at the repository root (see each folder's
PROVENANCE.md). Tests find it through :func:`fixture_path` or the
``fixtures_dir`` fixture, never through a path of the machine they run on.

Hypothesis runs under the ``dev`` profile by default and under ``ci``
(derandomized: the same examples on every run, fewer of them) when the ``CI``
environment variable is set. ``HYPOTHESIS_PROFILE`` overrides both.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = REPO_ROOT / "fixtures"

settings.register_profile(
    "dev",
    max_examples=150,
    deadline=None,
    print_blob=True,
)
settings.register_profile(
    "ci",
    max_examples=75,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
_default_profile = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or _default_profile)


def fixture_path(*parts: str) -> Path:
    """The path of a file or folder under the repository's ``fixtures/``."""
    return FIXTURES_DIR.joinpath(*parts)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The repository's ``fixtures/`` folder."""
    return FIXTURES_DIR


def load_sse_cases() -> list[dict[str, Any]]:
    """The WHATWG SSE conformance vectors, each with its input decoded to ``raw``."""
    with fixture_path("sse", "cases.json").open(encoding="utf-8") as fh:
        cases: list[dict[str, Any]] = json.load(fh)
    for case in cases:
        case["raw"] = base64.b64decode(case["input_b64"])
    return cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # A test that takes ``sse_case`` runs once per vector, named by the case.
    if "sse_case" in metafunc.fixturenames:
        cases = load_sse_cases()
        metafunc.parametrize("sse_case", cases, ids=[c["name"] for c in cases])
