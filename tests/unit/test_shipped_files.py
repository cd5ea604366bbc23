"""Nothing machine-specific ships: no shipped file names the build machine's
folders, and the bundled verifier has a stable name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("guardrail", "chains", "checkpoints", "examples")
TEXT = {".py", ".json", ".md", ".txt", ".yaml", ".yml", ".csv", ".jsonl", ".html", ".js", ".css"}
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|root|home|Users)/[\w.-]+")


def test_no_shipped_file_holds_an_absolute_path_of_the_build_machine() -> None:
    found = []
    for top in SHIPPED:
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in TEXT or "__pycache__" in path.parts or not path.is_file():
                continue
            for n, line in enumerate(
                path.read_text(encoding="utf-8", errors="replace").splitlines()
            ):
                if ABSOLUTE.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n + 1}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_the_bundled_verifier_is_named_the_same_wherever_it_is_installed() -> None:
    from guardrail.verifiers.onnx_backend import OnnxVerifier

    verifier = OnnxVerifier(ROOT / "guardrail" / "verifiers" / "bundled")
    assert verifier.name == "guardrail-nli-v2"
