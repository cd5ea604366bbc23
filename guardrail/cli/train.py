"""``guardrail train-verifier`` and ``guardrail export-verifier``.

``train-verifier`` fine-tunes the NLI cross-encoder (resuming from ``OUT/checkpoint`` when
rerun with the same arguments), evaluates it on the held-out dev split, exports it to ONNX in
``OUT/export/`` (fp16 weights computed in fp32 by default; ``--export-weights`` int8-channel,
int8 or fp32) and writes the model card there. ``export-verifier`` exports any transformers NLI
model directory the same way (``--weights``, default fp16).

Training continues across sessions from what is committed: ``--init-from bundled`` rebuilds
trainable fp32 weights from the shipped int8 ONNX model (or ``--init-from PATH``: another
export, or a transformers/safetensors checkpoint folder) and records that parent (path, sha256,
earlier versions) in ``train_config.json`` and the model card. ``build-verifier-data`` writes
the generated hard examples (see ``guardrail/verifiers/training/hardgen.py``).

Example::

    guardrail build-verifier-data --data ../shared/data/nli-train/pairs.jsonl.gz \\
        --out runs/hard.jsonl.gz --n 60000 --seed 13
    guardrail train-verifier --data ../shared/data/nli-train/pairs.jsonl.gz --out runs/v3 \\
        --extra-data runs/hard.jsonl.gz --init-from bundled --max-steps 3600 --threads 2 --bf16 \\
        --exclude ../shared/data/nli-eval/pairs.jsonl.gz
    guardrail export-verifier runs/v3/model --out /tmp/verifier-onnx
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_SOURCES = "SOURCES.md"
CHECK_PAIRS = 300
WEIGHT_CHOICES = ("fp16", "int8-channel", "int8", "fp32")
"""``export_onnx(weights=...)`` values (``guardrail.verifiers.export.WEIGHT_STORAGE``)."""
DEV_EVAL_PAIRS = 3000
"""Dev pairs scored at the end of a run (evenly spread over the dev split)."""


def register(sub: Any) -> None:
    """Add the ``train-verifier`` and ``export-verifier`` subcommands."""
    train = sub.add_parser(
        "train-verifier",
        help="fine-tune, evaluate and export the NLI verifier",
        description="Fine-tune the NLI cross-encoder, evaluate it on its dev split, export it to "
        "ONNX (--export-weights, default fp16) and write its model card. Rerun the same command "
        "to resume from OUT/checkpoint. --init-from bundled continues training from the shipped "
        "model, --init-from checkpoints/verifier-v4 from the committed training checkpoint (the "
        "stored weights are rebuilt into trainable fp32; the parent's sha256 and history go into "
        "the card).",
    )
    train.add_argument(
        "--data", required=True, help="JSONL(.gz) of premise/hypothesis/label/dataset"
    )
    train.add_argument(
        "--out", required=True, help="run directory (rerun the same command to resume)"
    )
    train.add_argument("--num-samples", type=int, default=240_000, help="pairs drawn for the run")
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument("--lr", type=float, default=1e-4, help="peak learning rate")
    train.add_argument("--seed", type=int, default=13)
    train.add_argument(
        "--max-minutes", type=float, default=0.0, help="stop (checkpointed) after M minutes"
    )
    train.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    train.add_argument(
        "--checkpoint-every", type=int, default=250, help="steps between checkpoints"
    )
    train.add_argument("--max-length", type=int, default=0, help="pair tokens (0 = from the data)")
    train.add_argument(
        "--max-steps", type=int, default=0, help="end the run (and LR decay) at this step"
    )
    train.add_argument(
        "--base-model", default=None, help="starting weights (default: all-MiniLM-L6-v2)"
    )
    train.add_argument(
        "--sources", default=None, help="SOURCES.md for licence notes (default: beside --data)"
    )
    train.add_argument(
        "--bf16",
        action="store_true",
        help="bfloat16 autocast (about 1.5x faster on CPUs with AVX512-BF16/AMX; emulated and far slower without)",
    )
    train.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATH",
        help="JSONL(.gz) pairs to keep out of training (e.g. evaluation sets); repeatable",
    )
    train.add_argument(
        "--init-from",
        default=None,
        metavar="bundled|PATH",
        help="continue from the shipped model ('bundled'), an exported ONNX folder or a "
        "transformers/safetensors checkpoint folder, instead of --base-model",
    )
    train.add_argument(
        "--extra-data",
        action="append",
        default=[],
        metavar="PATH",
        help="more JSONL(.gz) pairs to mix in (e.g. build-verifier-data output); repeatable",
    )
    train.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="DATASET=W",
        help="sampling weight of a dataset (default 1.0 for sets without one); repeatable",
    )
    train.add_argument(
        "--freeze-layers",
        type=int,
        default=0,
        help="keep the embeddings and the lowest N encoder layers fixed (cheaper continuation)",
    )
    train.add_argument("--no-export", action="store_true", help="skip the ONNX export")
    train.add_argument(
        "--export-weights",
        choices=WEIGHT_CHOICES,
        default="fp16",
        help="how the export stores weights (see export-verifier --weights)",
    )
    train.set_defaults(func=run_train)

    build = sub.add_parser(
        "build-verifier-data",
        help="generate hard NLI pairs (swaps, negations, invented details, windows) from nli-train",
    )
    build.add_argument("--data", required=True, help="nli-train pairs.jsonl.gz (evidence source)")
    build.add_argument("--out", required=True, help="output JSONL.gz")
    build.add_argument("--n", type=int, default=60_000, help="pairs to generate (about)")
    build.add_argument("--seed", type=int, default=13)
    build.add_argument("--sample", default=None, help="also write a review sample (markdown) here")
    build.set_defaults(func=run_build)

    export = sub.add_parser(
        "export-verifier",
        help="export an NLI model directory to ONNX (default fp16 weights; --weights int8 …)",
        description="Export a transformers NLI model directory to an ONNX verifier folder. "
        "Weights are stored as fp16 (computed in fp32) by default; --weights int8-channel, "
        "int8 or fp32 for the others. The export is checked against fp32 on dev pairs.",
    )
    export.add_argument("model_dir", help="transformers sequence-classification model directory")
    export.add_argument(
        "--out", required=True, help="output folder (model.onnx, tokenizer.json, ...)"
    )
    export.add_argument(
        "--no-quantize", action="store_true", help="keep fp32 weights (same as --weights fp32)"
    )
    export.add_argument(
        "--weights",
        choices=WEIGHT_CHOICES,
        default="fp16",
        help="fp16: fp16 weights and int8 embeddings, computed in fp32 (99.8%% label agreement "
        "with fp32, about 32 MB); int8-channel / int8: dynamic int8 per channel / per tensor "
        "(97 / 94 %%, 22 MB); fp32: as trained (87 MB)",
    )
    export.add_argument("--max-length", type=int, default=None, help="pair tokens to record")
    export.add_argument(
        "--check-data",
        default=None,
        help="JSONL(.gz) pairs for the agreement check of the stored weights against fp32",
    )
    export.add_argument("--check-pairs", type=int, default=CHECK_PAIRS)
    export.add_argument(
        "--preset",
        default=None,
        help="export a fact-checker preset's model (see guardrail verifiers; not the nli and "
        "bundled kinds) for its calling format; the folder loads as that preset on ONNX Runtime",
    )
    export.set_defaults(func=run_export)


def run_train(args: argparse.Namespace) -> int:
    from guardrail.verifiers.training.trainer import TrainConfig, Trainer

    config = TrainConfig(
        data=str(args.data),
        out=str(args.out),
        base_model=args.base_model,
        num_samples=args.num_samples,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        seed=args.seed,
        max_minutes=args.max_minutes,
        threads=args.threads,
        checkpoint_every=args.checkpoint_every,
        max_length=args.max_length,
        max_steps=args.max_steps,
        bf16=args.bf16,
        exclude=[str(Path(p)) for p in args.exclude],
        extra_data=[str(Path(p)) for p in args.extra_data],
        init_from=args.init_from,
        freeze_layers=args.freeze_layers,
    )
    for item in args.weight:
        name, _, value = item.partition("=")
        try:
            config.dataset_weights[name] = float(value)
        except ValueError:
            print(f"--weight {item!r}: expected DATASET=NUMBER")
            return 2
    final = Trainer(config).run()
    if config.parent.get("rebuild_agreement"):
        agree = config.parent["rebuild_agreement"]
        print(
            f"continued from {config.parent['path']} (sha256 {str(config.parent['sha256'])[:12]}…); "
            f"rebuilt torch vs ONNX label agreement {100 * agree['label_agreement']:.1f} % on "
            f"{int(agree['pairs'])} dev pairs (mean prob. diff {agree['mean_abs_diff']:.4f})"
        )
    if final.name != "model":
        state = json.loads((final / "state.json").read_text())
        print(f"stopped at step {state['step']} (time limit); rerun the same command to resume")
        return 0
    print(f"trained model: {final}")
    finish_run(
        config, final, sources=args.sources, export=not args.no_export, weights=args.export_weights
    )
    return 0


def finish_run(
    config: Any, final: Path, *, sources: str | None, export: bool, weights: str = "fp16"
) -> Path:
    """Evaluate on the dev split, export to ``OUT/export`` and write the model card."""
    import numpy as np

    from guardrail.verifiers.card import build_card, data_mix, render_card
    from guardrail.verifiers.training.data import bucketed_batches, sampling_order
    from guardrail.verifiers.training.trainer import approx_lengths, evaluate_dev, load_split

    out = Path(config.out)
    train, dev, _ = load_split(config)
    order = sampling_order(train, config.num_samples, config.dataset_weights, config.seed)
    batches = bucketed_batches(order, approx_lengths(train), config.batch_size, 64, config.seed)
    steps = min(config.max_steps or len(batches), len(batches))
    mix = data_mix([p.dataset for p in train], np.concatenate(batches[:steps]))
    if len(dev) > DEV_EVAL_PAIRS:  # an even spread keeps every dataset of the mix represented
        step = len(dev) / DEV_EVAL_PAIRS
        dev = [dev[int(i * step)] for i in range(DEV_EVAL_PAIRS)]
    scores = evaluate_dev(final, dev)
    (out / "dev_scores.json").write_text(json.dumps(scores, indent=2))
    print("dev scores: " + ", ".join(f"{k}={v:.4f}" for k, v in scores.items()))
    result = None
    target = out / "export"
    if export:
        from guardrail.verifiers.export import export_onnx

        check = [(p.premise, p.hypothesis) for p in dev[:CHECK_PAIRS]]
        result = export_onnx(
            final, target, max_length=config.max_length, check_pairs=check, weights=weights
        )
        print(_describe(result))
    else:
        target.mkdir(parents=True, exist_ok=True)
    source_file = Path(sources) if sources else Path(config.data).parent / DEFAULT_SOURCES
    card = build_card(
        out, data_mix_counts=mix, dev_scores=scores, export=result, sources=source_file
    )
    text = render_card(card)
    (target / "MODEL_CARD.md").write_text(text, encoding="utf-8")
    (out / "MODEL_CARD.md").write_text(text, encoding="utf-8")
    print(f"model card: {target / 'MODEL_CARD.md'}")
    return target


def run_build(args: argparse.Namespace) -> int:
    from guardrail.verifiers.training import hardgen

    pairs = hardgen.generate(args.data, n=args.n, seed=args.seed)
    counts = hardgen.write(pairs, args.out)
    print(f"wrote {len(pairs)} pairs to {args.out}")
    for kind, n in counts.items():
        print(f"  {kind:<28} {n}")
    if args.sample:
        Path(args.sample).write_text(hardgen.review_table(hardgen.sample(pairs, 2, args.seed)))
        print(f"review sample: {args.sample}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from guardrail.verifiers.export import export_onnx

    model_dir = Path(args.model_dir)
    if args.preset:
        from guardrail.verifiers.preset_export import export_preset

        weights = "fp32" if args.no_quantize else args.weights
        summary = export_preset(args.preset, model_dir, args.out, weights=weights)
        print(
            f"exported preset {summary['preset']} to {summary['out_dir']}: {summary['size_mb']} "
            f"MB, weights {weights}, torch vs ONNX {summary['torch_vs_onnx_max_abs_diff']:.1e}"
        )
        return 0
    check = _check_pairs(model_dir, args.check_data, args.check_pairs)
    result = export_onnx(
        model_dir,
        args.out,
        max_length=args.max_length,
        check_pairs=check,
        weights="fp32" if args.no_quantize else args.weights,
    )
    print(_describe(result))
    return 0


def _check_pairs(model_dir: Path, data: str | None, n: int) -> list[tuple[str, str]]:
    """Pairs for the agreement check (stored weights vs fp32): ``--check-data``, else the dev
    split of the model's training run."""
    from guardrail.verifiers.training.data import read_pairs, split_dev

    seed, fraction = 13, 0.02
    if data is None:
        for cfg_file in (model_dir / "train_config.json", model_dir.parent / "train_config.json"):
            if cfg_file.exists():
                cfg = json.loads(cfg_file.read_text())
                data, seed, fraction = cfg.get("data"), int(cfg["seed"]), float(cfg["dev_fraction"])
                break
    if not data or not Path(data).exists():
        logger.warning("no data for the agreement check against fp32; pass --check-data")
        return []
    pairs = read_pairs(data)
    _, dev = split_dev(pairs, fraction, seed)
    return [(p.premise, p.hypothesis) for p in (dev or pairs)[:n]]


def _describe(result: Any) -> str:
    text = f"exported to {result.out_dir}: {result.size_mb} MB, weights {result.weights}"
    if result.int8_agreement is not None:
        text += (
            f", {result.weights} vs fp32 agreement {100 * result.int8_agreement:.1f} % on "
            f"{result.checked_pairs} pairs (max prob. diff {result.int8_max_abs_diff:.3f})"
        )
    if not result.within_size_limit:
        text += " — over the 40 MB budget"
    return text
