"""Suite-wide settings: every test runs the guardrail in strict mode.

Under ``GUARDRAIL_STRICT=1`` an unexpected exception inside a stage (a bug) is raised instead of
being recorded as a failed stage, which the fail-closed policy turns into ``human_review``: a test
that expects review then fails on a crash instead of passing on it. A test of the fail-closed
promise itself marks the fault it injects::

    @pytest.mark.injects_fault("the verifier raises RuntimeError")
    def test_crashing_verifier_goes_to_review(): ...

and runs with strict mode off.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    os.environ["GUARDRAIL_STRICT"] = "1"  # guardrails built by module-scoped fixtures too
    config.addinivalue_line(
        "markers",
        "injects_fault(fault): the test injects this fault to check the fail-closed promise "
        "(strict mode off)",
    )


@pytest.fixture(autouse=True)
def _strict_stages(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = request.node.get_closest_marker("injects_fault")
    if marker is None:
        return
    if not marker.args or not str(marker.args[0]).strip():
        raise pytest.UsageError(f"{request.node.nodeid}: injects_fault needs the fault it injects")
    monkeypatch.delenv("GUARDRAIL_STRICT", raising=False)
