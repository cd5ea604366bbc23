"""``guardrail.cli.main`` returns exit statuses; argparse's usage errors do not escape as SystemExit."""

from __future__ import annotations

import pytest

from guardrail.cli import main


def test_a_usage_error_returns_2_with_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    # a one-word response starting with "-" reads as an option (``--response=-x`` works)
    assert main(["check", "--response", "-x"]) == 2
    assert "usage:" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2


def test_help_returns_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "usage:" in capsys.readouterr().out
