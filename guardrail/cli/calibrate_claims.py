"""``guardrail calibrate-claims``: fit the claim calibration for a verifier from labelled claims."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EPILOG = """\
rows (JSONL): {"evidence": "..." or ["...", ...], "claim": "...", "label": 1 or 0,
"dataset": "qags", "group": "item-7"}. Rows of one group stay on one side of the held-out
split; sets are weighted equally. Fit on development data only, never on a test part.

use the result: hallucination.calibration: FILE in the config (or a directory of such files:
the one whose meta.verifier_id names the verifier in use is applied). A verifier with no
calibration of its own is used uncalibrated (its own probability, threshold 0.5) and
verdict.method says so.

other languages: fit a routed verifier on labelled claims in one language and record it,
e.g. `--verifier multilingual-minilmv2-l6-xnli=DIR --language zh`; the file then applies to
the claims in that language routed to that verifier (models.verifier_languages)."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate-claims",
        help="fit the claim calibration and cut-offs for a verifier from labelled claims",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--verifier", default=None, help="preset, path or HF id (default: bundled)")
    p.add_argument("--data", required=True, help="labelled claims (JSONL, see below)")
    p.add_argument("--out", required=True, help="calibration JSON to write")
    p.add_argument("--holdout", type=float, default=0.3, help="held-out share (by group)")
    p.add_argument("--l2", type=float, default=10.0, help="L2 penalty of the logistic fit")
    p.add_argument(
        "--features",
        default=None,
        help="comma-separated calibration features (default: the shipped calibration's)",
    )
    p.add_argument("--threads", type=int, default=0, help="verifier threads (0 = default)")
    p.add_argument(
        "--language",
        default=None,
        help="the rows' language (ISO 639-1, e.g. zh): the calibration applies to claims in it",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guardrail.evaluation.claim_calibration import (
        DEFAULT_FEATURES,
        fit_claims,
        read_rows,
        score_rows,
    )
    from guardrail.hallucination.calibration_registry import (
        calibration_for,
        model_sha16,
        verifier_id,
    )
    from guardrail.verifiers import bundled_dir, load_verifier

    spec = args.verifier or None  # A,B and NAME=DIR parse when it loads
    verifier = load_verifier(spec, **({"threads": args.threads} if args.threads else {}))
    rows = read_rows(args.data)
    scored = score_rows(rows, verifier)
    language = args.language.strip().lower() if args.language else None
    previous = calibration_for(verifier, language=language).calibrator
    calibrator, report = fit_claims(
        scored,
        verifier_id(verifier),
        features=_features(args.features) or list(DEFAULT_FEATURES),
        holdout=args.holdout,
        l2=args.l2,
        previous=previous,
        source=f"{Path(args.data).name}: {len(rows)} labelled claims",
    )
    if language:
        calibrator.meta["language"] = language
    path = spec.get("path") if isinstance(spec, dict) else spec
    folder = bundled_dir() if spec in (None, "bundled") else Path(str(path))
    sha = model_sha16(folder) if folder.is_dir() else None
    if sha:
        calibrator.meta["verifier_model_sha256_16"] = sha
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(calibrator.to_json(), indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(
        json.dumps({"out": str(out), "verifier": verifier_id(verifier), **report}, indent=1) + "\n"
    )
    return 0


def _features(given: str | None) -> list[str]:
    """The features of ``--features`` (comma-separated); none given: an empty list."""
    return [f.strip() for f in (given or "").split(",") if f.strip()]
