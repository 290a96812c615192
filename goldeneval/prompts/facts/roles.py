"""Roles: two facts of the reference stated the other way round ("A reports to B" as "B reports to A").

Every fact of "Adults pay €6 and children pay €12" is in the reference "Adults pay €12 and
children pay €6", so the presence of facts cannot see the swap; the order can.  Two facts of one
reference sentence, with the words that relate them in between, must not stand in one answer
sentence the other way round with the same relating words between them (docs/guide/answers.md,
"Reference grading: the facts decide", round 6).
"""

from __future__ import annotations

import re
from itertools import combinations

from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.assertions import normalise_answer
from goldeneval.prompts.facts.entities import entity_facts
from goldeneval.prompts.facts.equality import same_value
from goldeneval.prompts.facts.model import Fact, values_of
from goldeneval.prompts.facts.text import NOTE, SENTENCES, prepare, stem
from goldeneval.prompts.facts.values import value_facts

__all__ = ["swapped_roles"]

Placed = tuple[int, int, Fact]


def _placed(sentence: str) -> list[Placed]:
    """The values and names of a sentence with where each is written (facts written twice are left out)."""
    facts = [*values_of(value_facts(sentence)), *(f for f in entity_facts(sentence) if not f.initial)]
    placed: list[Placed] = []
    for fact in facts:
        if sentence.count(fact.text) == 1:
            start = sentence.index(fact.text)
            placed.append((start, start + len(fact.text), fact))
    return sorted(placed, key=lambda item: item[0])


def _words(text: str) -> set[str]:
    return {stem(w) for w in normalise_answer(text).split() if w not in ENGLISH_STOPWORDS and len(w) > 1}


def _alike(wanted: Fact, got: Fact) -> bool:
    if wanted.kind == "entity" or got.kind == "entity":
        return wanted.kind == got.kind and wanted.key == got.key
    return same_value(wanted, got)


def _follows_a_fact(word: str, sentence: str, placed: list[Placed]) -> bool:
    """Whether ``word`` stands right after one of the sentence's facts ("the QA lead")."""
    for _, end, _ in placed:
        following = re.match(r"\s+([A-Za-z][\w'\u2019-]*)", sentence[end:])
        if following is not None and stem(normalise_answer(following.group(1)) or "-") == word:
            return True
    return False


def swapped_roles(reference: str, answer: str) -> tuple[str, str] | None:
    """Two reference facts an answer sentence states in the opposite order with the same words
    relating them in between ("The Pro plan is cheaper than the Basic plan" against "The Basic plan
    is cheaper than the Pro plan", "Check-in from 11:00, check-out by 15:00" against "Check-in from
    15:00, check-out by 11:00"); a relating word the answer leaves out of the gap must stand right
    after one of its facts ("Priya Shah reports to the QA lead" against "The QA lead reports to
    Priya Shah").  The texts of the two swapped sides, or None when there are none."""
    answer_sentences = [(s, _placed(s)) for s in SENTENCES.split(prepare(answer)) if s.strip()]
    for sentence in SENTENCES.split(prepare(NOTE.sub("", reference))):
        for (_, first_end, first), (second_start, _, second) in combinations(_placed(sentence), 2):
            relation = _words(sentence[first_end:second_start])
            if not relation:
                continue
            for answer_sentence, placed in answer_sentences:
                firsts = [p for p in placed if _alike(first, p[2])]
                seconds = [p for p in placed if _alike(second, p[2])]
                if len(firsts) != 1 or len(seconds) != 1 or not seconds[0][1] <= firsts[0][0]:
                    continue
                between = _words(answer_sentence[seconds[0][1] : firsts[0][0]])
                if not between or between - relation:
                    continue
                if all(_follows_a_fact(word, answer_sentence, placed) for word in relation - between):
                    return first.text, second.text
    return _swapped_between_sentences(reference, answer_sentences) or _swapped_around_a_word(reference, answer)


def _sequence(text: str) -> list[str]:
    return [stem(w) for w in normalise_answer(text).split() if w not in ENGLISH_STOPWORDS and len(w) > 1]


def _swapped_around_a_word(reference: str, answer: str) -> tuple[str, str] | None:
    """An answer sentence with the very words of a reference sentence, those before one of its
    words and those after it exchanged ("The Head of Customer Experience reports to the support
    team lead" against "The support team lead reports to the Head of Customer Experience"), where
    a side may hold no fact at all."""
    for sentence in SENTENCES.split(prepare(NOTE.sub("", reference))):
        words = _sequence(sentence)
        for answer_sentence in SENTENCES.split(prepare(answer)):
            said = _sequence(answer_sentence)
            if len(words) < 3 or sorted(said) != sorted(words):
                continue
            for position, pivot in enumerate(words):
                before, after = set(words[:position]), set(words[position + 1 :])
                if not before or not after or before & after or words.count(pivot) != 1:
                    continue
                middle = said.index(pivot)
                if set(said[middle + 1 :]) == before and set(said[:middle]) == after:
                    return " ".join(words[:position]), " ".join(words[position + 1 :])
    return None


def _roles(sentence: str, placed: list[Placed]) -> set[str]:
    """The words of a sentence besides its facts: what it says about them."""
    kept, cursor = [], 0
    for start, end, _ in placed:
        kept.append(sentence[cursor:start])
        cursor = end
    return _words(" ".join([*kept, sentence[cursor:]]))


def _swapped_between_sentences(
    reference: str, answer_sentences: list[tuple[str, list[Placed]]]
) -> tuple[str, str] | None:
    """Two facts of two reference sentences, each said in the answer with the other's words
    ("Technical questions go to Sarah Kim; the project lead is Tom Baker" against "The project
    lead is Sarah Kim. Technical questions go to Tom Baker.")."""
    sentences = [(s, _placed(s)) for s in SENTENCES.split(prepare(NOTE.sub("", reference))) if s.strip()]
    for (one, one_placed), (other, other_placed) in combinations(sentences, 2):
        one_roles, other_roles = _roles(one, one_placed), _roles(other, other_placed)
        only_one, only_other = one_roles - other_roles, other_roles - one_roles
        if not only_one or not only_other:
            continue
        for _, _, first in one_placed:
            for _, _, second in other_placed:
                said_first = [_roles(s, p) for s, p in answer_sentences if any(_alike(first, f) for _, _, f in p)]
                said_second = [_roles(s, p) for s, p in answer_sentences if any(_alike(second, f) for _, _, f in p)]
                if len(said_first) != 1 or len(said_second) != 1:
                    continue
                if (
                    only_other <= said_first[0]
                    and not only_one & said_first[0]
                    and only_one <= said_second[0]
                    and not only_other & said_second[0]
                ):
                    return first.text, second.text
    return None
