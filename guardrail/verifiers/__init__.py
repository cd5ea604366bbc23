"""NLI verifiers: score (premise, hypothesis) pairs with entailment / neutral / contradiction.

``load_verifier()`` returns the offline default shipped in this package (ONNX Runtime); a
Hugging Face id or path gives the transformers backend; ``"llm:groq:<model>"`` or a LangChain
chat model gives an LLM judge. Backends import their heavy dependencies lazily.

Example::

    from guardrail.verifiers import load_verifier
    [p] = load_verifier().predict([("It rained all day.", "The ground stayed dry.")])
    p.contradiction
"""

from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.loader import bundled_dir, clear_cache, load_verifier

__all__ = ["NLIPrediction", "Pair", "Verifier", "bundled_dir", "clear_cache", "load_verifier"]
