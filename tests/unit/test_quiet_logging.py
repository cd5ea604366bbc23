"""Quiet by default: the library adds a ``NullHandler`` and configures nothing, so a check whose
record is a WARNING (``regenerate``) writes nothing on stderr unless the app sets up logging;
the CLI sets up its own (``-v`` / ``--quiet``) and puts the logging state back afterwards."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A regenerate report logged exactly as the pipeline logs every check (log_check).
REGENERATE = """
from guardrail.observability import log_check
from guardrail.report import GuardReport
report = GuardReport.model_validate({
    "original": "x", "corrected": "x", "annotated": "x", "confidence": 0.4,
    "recommendation": {"action": "regenerate", "guidance": "fix it"},
})
log_check(report)
data = report.model_dump()
data["recommendation"] = {"action": "human_review", "reason": "nothing checked"}
log_check(GuardReport.model_validate(data))
import logging
logging.getLogger("guardrail.stages.hallucination").warning("a library warning")
print("done")
"""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_a_regenerate_check_prints_nothing_on_stderr_without_logging_config() -> None:
    proc = run_python(REGENERATE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert proc.stderr == ""  # before: "Requesting response regeneration …" (last resort)


def test_the_app_that_configures_logging_still_gets_the_records() -> None:
    proc = run_python("import logging; logging.basicConfig(level=logging.INFO)\n" + REGENERATE)
    assert "Requesting response regeneration (regenerate)" in proc.stderr
    assert "a library warning" in proc.stderr


def test_import_adds_only_a_null_handler() -> None:
    import guardrail

    handlers = logging.getLogger(guardrail.__name__).handlers
    assert [type(h) for h in handlers] == [logging.NullHandler]


def records(verbose: int, quiet: bool, command: str) -> list[str]:
    from guardrail.cli import command_logging

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(f"{record.name}:{record.levelname}")

    root = logging.getLogger()
    before = (root.level, logging.getLogger("guardrail.check").level, list(root.handlers))
    # another test's in-process main() may have left a level on the library's logger (the
    # benchmarks' main sets "guardrail" to ERROR): start from the library's own default
    library = logging.getLogger("guardrail")
    library_level = library.level
    library.setLevel(logging.NOTSET)
    keep = Keep()
    with command_logging(verbose, quiet, command):
        root.addHandler(keep)
        logging.getLogger("guardrail.check").warning("Requesting response regeneration")
        logging.getLogger("guardrail.stages").warning("verifier slow")
        logging.getLogger("guardrail.stages").info("detail")
        root.removeHandler(keep)
    library.setLevel(library_level)
    after = (root.level, logging.getLogger("guardrail.check").level, list(root.handlers))
    assert after == before  # main() may run in-process (tests): nothing leaks
    return seen


def test_cli_logging_levels() -> None:
    # Default: warnings, but not the per-check record (the command prints the outcome itself).
    assert records(0, False, "check") == ["guardrail.stages:WARNING"]
    assert records(1, False, "check") == [
        "guardrail.check:WARNING",
        "guardrail.stages:WARNING",
        "guardrail.stages:INFO",
    ]
    assert records(0, True, "check") == []
    # `guardrail serve` keeps its per-check records (it has --log-level).
    assert "guardrail.check:WARNING" in records(0, False, "serve")


def test_verbose_and_quiet_flags() -> None:
    from guardrail.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["--quiet", "demo"]).quiet is True
    assert parser.parse_args(["-vv", "demo"]).verbose == 2
