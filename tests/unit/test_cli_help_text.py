"""Help text agrees with the defaults: ``export-verifier`` writes fp16 weights unless told."""

from __future__ import annotations

import argparse
import contextlib
import io

from guardrail.cli import build_parser, main


def subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[name]


def help_of(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--help"]) == 0
    return " ".join(out.getvalue().split())


def test_export_verifier_help_names_the_default_weights() -> None:
    for name, option in (("export-verifier", "--weights"), ("train-verifier", "--export-weights")):
        [action] = [a for a in subparser(name)._actions if option in a.option_strings]
        assert action.default == "fp16"
    top = help_of()
    line = top[top.index("export-verifier export") :][:120]
    assert "fp16" in line, line
    text = help_of("export-verifier")
    assert "fp16" in text and "by default" in text
