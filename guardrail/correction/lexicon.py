"""Technical words pyspellchecker's English list lacks, so the spelling pass never "fixes" them.

Only base forms are listed: derivations (``configs``, ``tokenizers``) and compounds
(``webhook``) are recognised by :mod:`guardrail.correction.variants`.
"""

from __future__ import annotations

import functools

_TERMS = """
api apis async auth backend bool boolean bot cli codebase config crypto csv dataframe dataset
devops dns docstring dropdown enum env frontend github gitlab gpu html http https hyperlink iframe
init ip javascript jpeg json jwt kotlin kubernetes lambda linter llm llms localhost logit lora
metadata middleware mutex namespace netcat nginx nlp npm numpy onnx pandas param params pdf
pipelines png postgres postgresql pytorch qlora quantization readme regex repo runtime sdk sql
sqlite ssh svg sysadmin tensorflow tensor timestamp tokenization tokenizer toolchain tuple typescript
ui unicode uri url urls utf uuid vram webpage websocket wiki xml yaml
ai ml gpt bert roberta deberta transformer embedding embeddings finetune finetuned finetuning
softmax relu sigmoid logits perceptron dropout minibatch hyperparameter backprop convolutional
autoencoder autoregressive inferencing reranker retriever chatbot chatbots llama mistral
dataloader checkpointing checkpoint overfit overfits underfit upsample downsample pretrain
epoch epochs optimizer optimizers scikit keras jupyter docker dockerfile kubectl terraform
ansible redis kafka mongodb mysql graphql grpc protobuf oauth saml ldap cron crontab bash zsh
stdin stdout stderr const endl cout printf println modulo
app apps blog blogs vlog emoji emojis login logout signup username hashtag selfie podcast wifi
webinar ebook inbox startup startups fintech smartphone vid vids pic pics prix matcha
lorem ipsum
"""


@functools.cache
def technical_terms() -> frozenset[str]:
    """Lower-case technical words treated as known by the spelling pass."""
    return frozenset(_TERMS.split())
