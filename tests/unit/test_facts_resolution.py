"""Subject resolution (aliases, fuzzy, pronouns with gender) and synonym predicate mapping.

No model is loaded: the predicate mapper runs without an embedder here (the embedding step is
tested in ``tests/integration/test_facts_knowledge_base_example.py``).
"""

from __future__ import annotations

from guardrail.facts.predicates import PredicateMapper, concept_of, kind_compatible
from guardrail.facts.resolution import EntityResolver
from guardrail.inputs import EntityInfo
from guardrail.knowledge import Entity, InMemoryKnowledgeBase

KB = InMemoryKnowledgeBase(
    [
        Entity(id="E42", name="John Smith", aliases=["John"], type="person",
               attributes={"email": "john.smith@company.com", "join_date": "2020",
                           "department": "Engineering", "gender": "male"}),
        Entity(id="E43", name="Sarah Lee", aliases=["Sarah"], type="person",
               attributes={"start_date": "2018-03-01", "team": "Finance"}),
        Entity(id="O1", name="Acme Corp", aliases=["Acme"], type="organisation",
               attributes={"location": "Berlin"}),
    ]
)  # fmt: skip
REGISTRY = [EntityInfo(name="Sarah Lee", type="person", gender="female", aliases=["Sarah"])]


def test_names_resolve_through_kb_aliases_and_fuzzy() -> None:
    resolver = EntityResolver(KB, REGISTRY)
    exact = resolver.resolve_name("John Smith")
    assert exact is not None and exact.key == "kb:E42" and exact.via == "kb_name"
    alias = resolver.resolve_name("John")
    assert alias is not None and alias.name == "John Smith" and alias.via == "kb_alias"
    fuzzy = resolver.resolve_name("Jon Smith")
    assert fuzzy is not None and fuzzy.name == "John Smith" and fuzzy.via == "kb_fuzzy"
    assert fuzzy.confidence < alias.confidence < exact.confidence
    assert resolver.resolve_name("I") is None and resolver.resolve_name("he") is None
    # the registry alone (no KB) still resolves
    only_registry = EntityResolver(None, REGISTRY).resolve_name("sarah")
    assert only_registry is not None and only_registry.key == "registry:sarah lee"


def test_pronouns_follow_gender_and_type() -> None:
    resolver = EntityResolver(KB, REGISTRY)
    john, sarah, acme = (resolver.resolve_name(n) for n in ("John Smith", "Sarah Lee", "Acme"))
    assert john and sarah and acme
    earlier = [john, sarah, acme]  # oldest first
    he = resolver.resolve_pronoun("He", earlier)
    assert he is not None and he.name == "John Smith" and he.via == "pronoun:gender"
    she = resolver.resolve_pronoun("she", earlier)
    assert she is not None and she.name == "Sarah Lee"  # gender from the registry
    it = resolver.resolve_pronoun("it", earlier)
    assert it is not None and it.name == "Acme Corp"  # "it" skips people
    assert resolver.resolve_pronoun("she", [john, acme]) is None
    assert resolver.resolve_pronoun("you", earlier) is None


def test_pronoun_with_unknown_gender_resolves_by_recency_with_less_confidence() -> None:
    kb = InMemoryKnowledgeBase([Entity(id="P1", name="Alex Kim", type="person")])
    resolver = EntityResolver(kb, [])
    alex = resolver.resolve_name("Alex Kim")
    assert alex is not None
    he = resolver.resolve_pronoun("he", [alex])
    assert he is not None and he.via == "pronoun:recency" and he.confidence < alex.confidence


def test_predicates_map_through_attribute_nouns_and_synonyms() -> None:
    mapper = PredicateMapper(embedder=None)
    john = {k: v.value for k, v in KB.get("E42").attributes.items()}  # type: ignore[union-attr]
    sarah = {k: v.value for k, v in KB.get("E43").attributes.items()}  # type: ignore[union-attr]
    email = mapper.map("email is", "email", "email", "john.s@company.org", john)
    assert email is not None and email.attribute == "email" and email.via == "attribute_noun"
    joined = mapper.map("joined the company in", "join company in", None, "2019", john)
    assert joined is not None and joined.attribute == "join_date" and joined.via == "synonym"
    works = mapper.map("works in", "work in", None, "Engineering", john)
    assert works is not None and works.attribute == "department"
    dept = mapper.map("works in department", "work in department", "department", "Marketing", john)
    assert dept is not None and dept.attribute == "department"
    # another entity's attribute names: start_date is the join concept, team the department one
    started = mapper.map("was hired in", "hire in", None, "March 2018", sarah)
    assert started is not None and started.attribute == "start_date"
    assert mapper.map("works in", "work in", None, "Finance", sarah).attribute == "team"  # type: ignore[union-attr]
    # nothing to map onto and no embedder: no guess
    assert mapper.map("likes", "like", None, "jazz", john) is None


def test_value_kind_compatibility() -> None:
    assert concept_of("start_date") == "join_date"
    assert not kind_compatible("a@b.com", "join_date", "2020")
    assert kind_compatible("2019", "join_date", "2020")
    assert not kind_compatible("2019", "department", "Engineering")
    assert kind_compatible("2019", "join_date", None)
    assert not kind_compatible("a@b.com", "phone", None)
