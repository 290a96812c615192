"""Abstention as an outcome (issue 24): telling "the context does not answer this" apart.

A RAG system that says it cannot answer a question no document answers is right, and one that
says so when the documents do answer is wrong in its own way (``over_abstention``), which a
team fixes differently from a wrong answer.  Detection is deterministic and documented:

* the answer and every phrase are tokenised the same way — English contractions are
  spelled out first (``doesn't`` -> ``does not``, ``can't`` and ``cannot`` -> ``can not``,
  ``won't`` -> ``will not``, ``I'm`` -> ``i am``, ``there's`` -> ``there is``), then
  :func:`~goldeneval.prompts.assertions.normalise_answer` (the SQuAD normalisation: lower
  case, no punctuation, no articles); a clause is also read without the :data:`QUALIFIERS`
  ("provided", "given", "any", ...);
* an answer abstains when one phrase occurs in it as a run of whole tokens, and the answer
  has at most ``max_words`` tokens: a long answer that happens to contain "not covered by the
  context" is an answer with a caveat (or an echo of the prompt), and is graded as one.

Phrases are plain text, never regular expressions, so no pattern can hang grading.  The
default list is :data:`DEFAULT_ABSTENTION_PHRASES`, a phrase model of five families (issue 42,
:func:`_default_phrases`) that reads every phrasing of :data:`ABSTENTION_EXAMPLES`; a run may replace it
(:class:`AbstentionRules`), and the rules' identity is part of the grader's identity, so a
changed list makes the next comparison a ``mismatch``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from goldeneval.core.errors import InputError, one_line
from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.assertions import normalise_answer

__all__ = [
    "ABSTENTION_EXAMPLES",
    "ABSTENTION_RULES_VERSION",
    "DEFAULT_ABSTENTION_PHRASES",
    "DEFAULT_MAX_ABSTENTION_WORDS",
    "QUALIFIERS",
    "AbstentionRules",
    "abstention_tokens",
]

ABSTENTION_RULES_VERSION = "abstention/v8"
MIN_CLAUSE_WORDS = 4
"""A clause of fewer words (after normalisation) is filler: it neither abstains nor answers."""
_CLAUSE_BREAK = re.compile(r"[.!?;:\n]+|,?\s+\b(?:but|however|although|though|yet|whereas)\b", re.IGNORECASE)
"""Where one clause of an answer ends and the next begins."""
DEFAULT_MAX_ABSTENTION_WORDS = 50

ABSTENTION_EXAMPLES: tuple[str, ...] = (
    "I don't know.",
    "I do not know the answer to that.",
    "I'm not sure.",
    "The documents do not say.",
    "The context does not contain that information.",
    "The provided context doesn't mention this.",
    "The passages don't cover this topic.",
    "The sources do not specify that.",
    "I could not find that.",
    "I couldn't find an answer in the provided context.",
    "I cannot find any information on that.",
    "I was unable to find this in the documents.",
    "I am unable to answer from the given documents.",
    "I'm not able to answer that based on the context.",
    "I can't answer that question.",
    "I can't help with that based on the documents.",
    "There is no information about this in the context.",
    "There's no mention of that in the documents.",
    "No relevant information was found.",
    "I have no information about that.",
    "I don't have enough information to answer.",
    "There is not enough information to answer this.",
    "This is not mentioned in the documents.",
    "That is not stated in the provided passages.",
    "The answer is not in the documents.",
    "Nothing in the documents addresses this.",
    "It is unclear from the context.",
    "This cannot be determined from the information provided.",
    "The question cannot be answered from the context.",
    "That isn't covered by the corpus.",
    "The information is not available in the documents.",
    "Unfortunately, the documents are silent on this.",
)
"""The common English abstentions collected for issue 42 (each a distinct phrasing); the
default phrase model reads every one of them, and tests/test_answers_abstention_phrases.py
checks so, with variants that are not listed here."""

_SOURCES = (
    "context", "contexts", "document", "documents", "passage", "passages", "source", "sources", "corpus",
    "text", "texts", "excerpt", "excerpts", "material", "materials", "information", "snippets", "data",
    "knowledge base", "records", "search results", "results", "docs", "files", "pages", "articles", "content",
    "references", "documentation", "what i was given", "what i have", "what i have been given", "what i found",
    "anything i can see", "anything i have", "anything i was given",
)  # fmt: skip
QUALIFIERS = frozenset(
    {"provided", "given", "retrieved", "supplied", "available", "above", "here", "these", "those", "this", "any",
     "relevant", "specific", "attached", "shared", "your", "my", "our", "anything", "anywhere", "really",
     "that", "such", "exact", "precise", "detailed", "accurate", "reliable", "current", "further", "more",
     "enough", "sufficient", "100", "entirely", "completely", "totally", "quite", "fully", "absolutely", "actually",
     "been"}
)  # fmt: skip
"""Words a clause is also read without ("the provided documents do not say" is "documents do not
say", "I do not have any information" is "i do not have information"): a phrase matches the
clause's tokens as they are, or with these left out."""
_SOURCE_VERBS = (
    "say", "mention", "contain", "provide", "cover", "include", "specify", "state", "address", "answer",
    "give", "discuss", "indicate", "tell", "list", "describe", "show", "explain", "offer", "reference",
    "detail", "have", "touch on", "go into", "talk about", "refer to", "deal with", "clarify", "confirm",
    "record", "document", "note", "name", "give details", "get into", "identify", "specify",
)  # fmt: skip
_PARTICIPLES = (
    "mentioned", "stated", "specified", "covered", "provided", "found", "given", "included", "listed",
    "addressed", "discussed", "described", "available", "contained", "indicated", "shown", "explained",
    "answered", "documented", "recorded", "referenced", "touched on", "dealt with", "present", "included anywhere",
)  # fmt: skip
DOCUMENT_KINDS = frozenset(
    {"policy", "policies", "handbook", "handbooks", "manual", "manuals", "guide", "guides", "guideline",
     "guidelines", "faq", "faqs", "website", "site", "page", "article", "file", "leaflet", "brochure", "booklet",
     "wiki", "readme", "specification", "documentation"}
)  # fmt: skip
"""A source named by its kind (round 6): "The handbook doesn't mention lunch breaks" abstains (a
verb of saying, :data:`_SAYING_VERBS`, with any object), and "The manual doesn't cover it" too,
while "The policy does not cover dental work" answers: "cover", "include" and "contain" abstain
only with "it", "this" or "that" (the question's subject) as their object."""
_SAYING_VERBS = (
    "say", "mention", "specify", "state", "address", "discuss", "describe", "explain", "talk about", "go into",
    "give details", "refer to", "clarify", "touch on", "deal with",
)  # fmt: skip
_HOLDING_VERBS = frozenset({"cover", "include", "contain", "answer"})
_SEARCH_VERBS = frozenset(
    {"looked", "checked", "searched", "went", "read", "reviewed", "scanned", "looking", "checking", "searching",
     "reviewing", "scanning", "consulted"}
)  # fmt: skip
"""A clause that reports a search of the sources ("I looked through the documents", "I checked the
context") neither abstains nor answers (round 6)."""
_FIRST_PERSON = ("i", "we")
_PRONOUN_SOURCES = ("they", "it")
"""A pronoun for a source named in an earlier clause: "The documents only cover weekdays; they
don't mention holidays" (round 4)."""
_SCOPE_VERBS = frozenset(
    {"cover", "covers", "list", "lists", "mention", "mentions", "include", "includes", "state", "states", "give",
     "gives", "show", "shows", "describe", "describes", "discuss", "discusses", "only", "just"}
)  # fmt: skip
"""A clause that says what the sources hold ("The documents only cover weekday schedules", "The
passages list the 2024 fares") neither abstains nor answers: the answer is read from its other
clauses (round 4)."""
_FOLLOW_UP = re.compile(
    r"(?:^|(?<=[.!?;:]))\s*(?:could|would|can|do|shall|should|may|will|is\s+there|are\s+there)\s+"
    r"(?:you|i|we|there|anything|something)\b[^.!?]*\?",
    re.IGNORECASE,
)
"""A polite follow-up question ("Could you rephrase the question?", "Would you like me to search
something else?"): it neither abstains nor answers (round 4)."""
_INABILITY = (
    "can not", "could not", "am unable to", "was unable to", "are unable to", "were unable to", "am not able to",
    "was not able to", "are not able to", "did not", "do not", "unable to", "not able to",
)  # fmt: skip
_TASKS = (
    "find", "answer", "tell", "say", "determine", "help", "locate", "see", "identify", "confirm", "provide", "give",
    "know", "verify", "check", "access", "work out", "figure out", "retrieve", "spot", "pin down",
)  # fmt: skip
HEDGES = frozenset({"i am not sure", "i am not certain", "not sure", "not certain", "i am unsure", "unsure"})
"""Phrases of uncertainty: a clause that holds one and then a value or a guess ("I'm not
certain, it costs 7.80", "Not certain, maybe 350.00") answers, hedged."""
GUESSES = frozenset({"maybe", "probably", "perhaps", "possibly", "likely", "think", "believe", "guess", "suppose"})
"""Words that make a short clause a guess, that is an answer ("probably Eastgate")."""
REDIRECTS = frozenset(
    {"contact", "call", "ask", "check", "visit", "consult", "refer", "reach", "email", "phone", "see", "look",
     "try", "speak", "get", "go", "contacting", "calling", "asking", "checking", "visiting", "consulting", "write"}
)  # fmt: skip
"""Verbs that send the user elsewhere: a clause that opens with one ("please contact customer
service", "you may want to call HMT on 0800 468 2000") neither abstains nor answers."""
_REDIRECT_OPENERS = frozenset(
    {"please", "so", "and", "then", "you", "may", "might", "could", "can", "should", "would", "want", "wish", "to",
     "i", "we", "recommend", "suggest", "advise", "it", "is", "best", "better", "perhaps", "maybe", "instead",
     "alternatively", "also", "kindly", "directly", "feel", "free", "id", "consider", "for", "more", "information",
     "details", "further", "help", "assistance", "advice", "this", "that", "recommended", "suggested"}
)  # fmt: skip


def _default_phrases() -> tuple[str, ...]:
    """The default phrase model (docs/guide/answers.md, "Abstention"), as plain phrases:

    1. not knowing: "i do not know", "i am not sure", "no idea", "i have no information";
    2. inability, first person: "i" or "we" + "can not", "could not", "am unable to", ... +
       "find", "answer", "tell", "determine", ... ("I couldn't find that");
    3. the source is silent: a source ("context", "documents", "passages", "sources", ...)
       + "does not", "do not", "did not" +
       "say", "mention", "contain", "cover", "specify", ... ("The documents do not say");
       "nothing in" + a source; "not in" + a source; a source + "is silent" or "are silent";
    4. absence: "no information", "no relevant information", "no mention of", "no details",
       "not enough information", "insufficient information"; "not mentioned", "not stated",
       "not specified" (and "is" / "are" / "was" before them); "not covered by", "not found in",
       "not provided in", "not available in", ... + a source;
    5. unanswerable: "does not answer", "can not be answered", "can not be determined",
       "unclear from", "unknown from", "not possible to answer", "answer is not in".

    Round 3 of issue 42 widened each family with phrasings a review found missed ("That isn't
    something the documents cover", "None of the passages mention it", "The documents say
    nothing about this", "I have no way of knowing", "That's outside what the documents
    cover"); the guide lists them.

    Contractions are spelled out before matching (``couldn't`` -> ``could not``, ``I'm`` ->
    ``i am``, ``there's`` -> ``there is``), articles are dropped, and a clause also matches
    without the words of :data:`QUALIFIERS` ("the passages provided do not address")."""
    phrases = [
        "does not answer", "do not answer", "can not answer", "can not be answered", "is not answered",
        "i do not know", "we do not know", "i am not sure", "i am not certain", "no idea", "i have no information",
        "i have no data", "i do not have information", "i do not have any information", "i do not have enough",
        "i do not have details", "i do not have answer", "no information", "no relevant information",
        "no specific information", "no further information", "no details", "no mention of", "no reference to",
        "no data about", "no data on", "not enough information", "insufficient information",
        "not enough context", "insufficient context", "not mentioned", "not stated", "not specified",
        "not explicitly mentioned", "not explicitly stated", "can not be determined", "can not determine",
        "could not be determined", "could not determine", "can not be found", "could not be found",
        "unclear from", "unknown from", "not clear from", "not possible to answer", "not possible to determine",
        "answer is not in", "answer is not available", "answer is not provided", "information is not available",
        "information is not provided", "no answer in", "no answer to",
        # issue 42, round 3: fresh phrasings
        "no way of knowing", "no way to know", "no way to tell", "no way of telling", "not something i can",
        "not something we can", "nothing i was given", "nothing i have", "nothing i found", "nothing i could find",
        "nothing i can find", "i have nothing", "we have nothing", "i found nothing", "i have found nothing",
        "we found nothing", "there is nothing about", "there is nothing on", "there is nothing regarding",
        "there is nothing in", "outside scope of", "beyond scope of", "outside of scope of", "not available to me",
        "not available to us", "no record of", "no records of", "no record", "i lack", "we lack", "i am unsure",
        "unsure", "not sure", "not certain", "not in position to", "i have not found", "we have not found",
        "i have not been able to", "we have not been able to", "i have been unable to", "we have been unable to",
        "i do not have data", "i do not have knowledge", "i do not have details", "i do not have facts",
        "i do not have access", "i do not have record", "i do not have records", "we do not have information",
        "we do not have details", "we do not have data",
        # issue 42, round 6: an answer without a subject, a way to verify, a search that saw nothing
        "unable to answer", "unable to determine", "unable to confirm", "unable to verify", "unable to say",
        "unable to tell", "not able to answer", "no answer found", "information not available",
        "information unavailable", "details not available", "answer not available", "did not see anything about",
        "did not find anything about", "do not see anything about", "can not see anything about",
        "could not see anything about", "could not find anything about",
    ]  # fmt: skip
    phrases += [f"no way {how}" for how in ("to verify", "of verifying", "to confirm", "of confirming", "to check",
                "of checking", "to say", "to determine", "of determining")]  # fmt: skip
    phrases += [f"there {aux} not {seem} to be anything {prep}" for aux in ("does", "do") for seem in ("seem", "appear")
                for prep in ("on", "about", "in", "regarding")]  # fmt: skip
    phrases += [f"{who} {can} {task}" for who in _FIRST_PERSON for can in _INABILITY for task in _TASKS]
    phrases += [f"{neg} possible to {task}" for neg in ("not", "impossible") for task in _TASKS]
    phrases += [f"impossible to {task}" for task in _TASKS]
    phrases += ["i am not aware", "we are not aware", "insufficient to answer", "not sufficient to answer",
                "not enough to answer", "falls outside", "fall outside"]  # fmt: skip
    for pronoun in _PRONOUN_SOURCES:
        phrases += [f"{pronoun} {aux} not {verb}" for aux in ("does", "do", "did") for verb in _SOURCE_VERBS
                    if verb not in ("have", "answer", "tell", "give", "show", "offer", "note", "record")]  # fmt: skip
        phrases += [f"{pronoun} {verb} nothing about" for verb in ("say", "says", "mention", "mentions")]
    for kind in sorted(DOCUMENT_KINDS):
        phrases += [f"{kind} {aux} not {verb}" for aux in ("does", "do", "did") for verb in _SAYING_VERBS]
    for noun in _SOURCES:
        phrases += [f"{noun} {aux} not {verb}" for aux in ("does", "do", "did") for verb in _SOURCE_VERBS]
        phrases += [f"{noun} {aux} not {seem} to {verb}" for aux in ("does", "do", "did") for seem in ("seem", "appear")
                    for verb in _SOURCE_VERBS]  # fmt: skip
        phrases += [f"{noun} is silent", f"{noun} are silent", f"{noun} is unclear", f"{noun} are unclear"]
        phrases += [f"{noun} {verb} {nothing}" for verb in ("say", "says", "mention", "mentions", "contain",
                    "contains", "give", "gives", "provide", "provides", "make", "makes", "offer", "offers",
                    "include", "includes", "have", "has") for nothing in ("nothing", "no")]  # fmt: skip
        phrases += [f"{noun} lack", f"{noun} lacks", f"none of {noun}", f"not something {noun}"]
        phrases += [f"{noun} is insufficient", f"{noun} are insufficient", f"outside {noun}", f"outside of {noun}"]
        phrases += [f"no {noun} {verb}" for verb in ("mentions", "says", "covers", "addresses", "contains",
                    "specifies", "answers", "states", "includes", "discusses", "gives", "provides")]  # fmt: skip
        phrases += [f"{where} {noun}" for where in ("missing from", "absent from", "not part of", "outside what",
                    "beyond what", "outside of what")]  # fmt: skip
        phrases += [f"nothing in {noun}", f"not in {noun}", f"not from {noun}"]
        phrases += [f"not {part} {prep} {noun}" for part in _PARTICIPLES for prep in ("in", "by", "within")]
    return tuple(dict.fromkeys(phrases))


DEFAULT_ABSTENTION_PHRASES: tuple[str, ...] = _default_phrases()
"""What counts as "I cannot answer this from the context", after normalisation (so "The
context doesn't answer the question." matches ``does not answer``): the phrase model of
:func:`_default_phrases`."""

_CONTRACTIONS = (
    (re.compile(r"\bcan['\u2019]t\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"n['\u2019]t\b", re.IGNORECASE), " not"),
    (re.compile(r"\bi['\u2019]m\b", re.IGNORECASE), "i am"),
    (re.compile(r"['\u2019]re\b", re.IGNORECASE), " are"),
    (re.compile(r"['\u2019]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"\b(there|it|that|what|here)['\u2019]s\b", re.IGNORECASE), r"\1 is"),
)


def abstention_tokens(text: str) -> list[str]:
    """The tokens an answer and a phrase are compared on: contractions spelled out, then the
    SQuAD normalisation."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return normalise_answer(text).split()


def _find(lookup: dict[str, str], lengths: tuple[int, ...], words: list[str]) -> str | None:
    """The configured phrase of the first run of ``words`` that is a phrase, or None."""
    for start in range(len(words)):
        for length in lengths:
            if start + length <= len(words):
                hit = lookup.get(" ".join(words[start : start + length]))
                if hit is not None:
                    return hit
    return None


@lru_cache(maxsize=32)
def _compiled(
    phrases: tuple[str, ...],
) -> tuple[tuple[str, ...], dict[str, str], tuple[int, ...], dict[str, str], tuple[int, ...]]:
    """The phrases normalised, each normalised phrase to the first configured phrase that gives
    it, and the phrase lengths in tokens; then the same for the clause read bare (:func:`_bare`:
    the phrases read bare too); a phrase with nothing left is invalid input."""
    normalised: list[str] = []
    lookup: dict[str, str] = {}
    bare: dict[str, str] = {}
    for position, phrase in enumerate(phrases, start=1):
        tokens = abstention_tokens(phrase)
        if not tokens:
            raise InputError(
                f"abstention phrase #{position} {one_line(phrase, 60)!r}: nothing is left after normalisation "
                "(lower case, no punctuation, no articles)"
            )
        normalised.append(" ".join(tokens))
        lookup.setdefault(normalised[-1], phrase)
        bare.setdefault(" ".join(_bare(tokens)) or normalised[-1], phrase)
    for key, phrase in lookup.items():
        bare.setdefault(key, phrase)
    return (
        tuple(normalised),
        lookup,
        tuple(sorted({len(n.split()) for n in lookup})),
        bare,
        tuple(sorted({len(n.split()) for n in bare})),
    )


_SOURCE_NOUNS = frozenset(n for n in _SOURCES if " " not in n)
_RELATIVES = (("i", "have", "access", "to"), ("we", "have", "access", "to"), ("i", "have", "been", "given"),
              ("i", "was", "given"), ("you", "gave", "me"), ("i", "have"),
              ("i", "found"), ("i", "received"), ("i", "got"), ("i", "can", "see"), ("we", "have"))  # fmt: skip
"""What may follow a source and is read past: "the pages I have don't go into that"."""


@lru_cache(maxsize=32)
def _vocabulary(phrases: tuple[str, ...]) -> frozenset[str]:
    """Every word of the phrases: a word that names which sources is dropped only when it is none."""
    return frozenset(word for phrase in phrases for word in abstention_tokens(phrase))


def _bare(words: list[str], vocabulary: frozenset[str] | None = None) -> list[str]:
    """A clause read without :data:`QUALIFIERS`, without a relative clause after a source
    (:data:`_RELATIVES`: "the pages i have do not say" is read "pages do not say") and, given
    the phrases' ``vocabulary``, without a word that names which sources and is no word of a
    phrase ("the policy documents" is read "documents", round 6)."""
    out: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        position += 1
        if word in QUALIFIERS:
            continue
        if (
            vocabulary is not None
            and (word not in vocabulary or word in DOCUMENT_KINDS)
            and position < len(words)
            and words[position] in _SOURCE_NOUNS
            and word not in _SOURCE_NOUNS
            and word not in ENGLISH_STOPWORDS
        ):
            continue
        out.append(word)
        if word in _SOURCE_NOUNS or word in DOCUMENT_KINDS:
            for run in _RELATIVES:
                if tuple(words[position : position + len(run)]) == run:
                    position += len(run)
                    break
    return out


_DETERMINER = r"(?:the|this|these|those|my|your|our)"
_NOUN_WORD = (
    r"(?!(?:does|do|did|is|are|was|were|has|have|not|and|or|but|that|which|of|the|a|an|in|on|for|to|about|with"
    r"|from|by|at|this|these|those|my|your|our|what|whether|any|anything)\b)[a-z][\w-]*"
)
_SAYING = "|".join(v.replace(" ", r"\s+") for v in _SAYING_VERBS)
_GENERAL_SAYS = re.compile(
    rf"\b{_DETERMINER}\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\s+"
    rf"(?=(?:does|do|did)\s*(?:n['\u2019]t|\s+not)\s+(?:{_SAYING})\b|(?:says|say|mentions|mention)\s+nothing\b)",
    re.IGNORECASE,
)
_MARKED_BEFORE = re.compile(
    rf"\b{_DETERMINER}\s+(?:provided|given|supplied|attached|retrieved)\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\b",
    re.IGNORECASE,
)
_MARKED_AFTER = re.compile(
    rf"\b{_DETERMINER}\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\s+"
    r"(?:provided|given|supplied|i\s+have(?:\s+access\s+to)?|i\s+was\s+given|you\s+gave\s+me)"
    r"(?=\s*(?:$|[,.;:!?\u2014-]|(?:does|do|did|is|are)\b|(?:says|say|mentions|mention)\s+nothing\b))",
    re.IGNORECASE,
)
"""A source named by any noun phrase (round 7): "the recipe", "the recipe card", "this leaflet".
A determiner and one to four words are read as "the documents" where they are followed by a
verb of saying in the negative ("The timetable doesn't say when ...", "the listing says nothing
about ..."), or are marked as what the model was given ("the provided leaflet", "the rate sheet
provided", "the IT knowledge base articles I have"); "The policy does not cover dental work"
names no saying and no given source, and stays an answer."""


def _general_source(clause: str) -> str:
    """The clause with a source named by any noun phrase (:data:`_GENERAL_SAYS`) read as "the
    documents"."""
    for pattern in (_MARKED_BEFORE, _MARKED_AFTER, _GENERAL_SAYS):
        clause = pattern.sub("the documents ", clause)
    return clause


@dataclass(frozen=True)
class AbstentionRules:
    """Which answers abstain: any of ``phrases`` (as whole tokens) in an answer of at most
    ``max_words`` tokens."""

    phrases: tuple[str, ...] = DEFAULT_ABSTENTION_PHRASES
    max_words: int = DEFAULT_MAX_ABSTENTION_WORDS

    def __post_init__(self) -> None:
        if not self.phrases:
            raise InputError("abstention phrases: give at least one phrase")
        _compiled(self.phrases)
        if not 1 <= self.max_words <= 10_000:
            raise InputError(f"abstention: max_words must be between 1 and 10000, got {self.max_words}")

    @property
    def _normalised(self) -> tuple[str, ...]:
        return _compiled(self.phrases)[0]

    @property
    def _lookup(self) -> tuple[dict[str, str], tuple[int, ...]]:
        _, lookup, lengths, _, _ = _compiled(self.phrases)
        return lookup, lengths

    @property
    def _bare_lookup(self) -> tuple[dict[str, str], tuple[int, ...]]:
        _, _, _, bare, lengths = _compiled(self.phrases)
        return bare, lengths

    @property
    def identity(self) -> str:
        """``abstention/v8(default;max_words=50)`` or, for a replaced list, a digest of it."""
        if self.phrases == DEFAULT_ABSTENTION_PHRASES:
            which = "default"
        else:
            encoded = "\n".join(sorted(set(self._normalised))).encode("utf-8")
            which = f"phrases=sha256:{hashlib.sha256(encoded).hexdigest()[:16]}"
        return f"{ABSTENTION_RULES_VERSION}({which};max_words={self.max_words})"

    def match(self, answer: str) -> str | None:
        """The phrase (as configured) the answer abstains with, or None when it does not abstain.

        Every clause of the answer (sentences, and the parts a "but" or "however" joins) that
        says something must abstain: "The context does not mention the 2025 price, but a day
        ticket costs 7.80" answers, and so does "The ferry does not answer to the harbour
        master; it departs at 08:00".  A clause says something when it has
        :data:`MIN_CLAUSE_WORDS` words or more, states a number (``7.80``, ``08:00``) or guesses
        (:data:`GUESSES`: "probably Eastgate"), unless it sends the user elsewhere
        (:data:`REDIRECTS`: "please contact customer service"); a clause that holds only a
        hedge (:data:`HEDGES`: "I'm not certain") and then a number or a guess answers too."""
        tokens = abstention_tokens(answer)
        if not tokens or len(tokens) > self.max_words:
            return None
        lookup, lengths = self._lookup
        bare_lookup, bare_lengths = self._bare_lookup
        found: str | None = None
        limited: str | None = None
        for clause in _CLAUSE_BREAK.split(_FOLLOW_UP.sub(" ", answer)):
            words = abstention_tokens(_general_source(clause))
            bare = _bare(words, _vocabulary(self.phrases))
            hit = _find(lookup, lengths, words) or _find(bare_lookup, bare_lengths, bare) or _holds_nothing(words)
            if hit is not None:
                if " ".join(abstention_tokens(hit)) in HEDGES and _guesses(bare, hedge=True):
                    return None  # "I'm not certain, it costs 7.80": a hedged answer
                found = found or hit
            elif _searched(words):
                continue  # "I looked through the documents"
            elif _redirects(words) or _scope(bare):
                if _scope(bare) and _ONLY & set(bare) and not _guesses(bare, hedge=False):
                    limited = limited or " ".join(bare[: bare.index(next(w for w in bare if w in _ONLY)) + 2])
                continue  # "please contact customer service", "the documents only cover weekdays"
            elif len(words) >= MIN_CLAUSE_WORDS or _guesses(words, hedge=False):
                return None  # this clause says something: the answer answers
            # else filler: "Sorry", "Yes", "Thanks"
        if found is None and limited is not None and _FOLLOW_UP.search(answer):
            return limited  # "The documents only describe X. Would you like me to look for something else?"
        return found


_HEDGE_WORDS = frozenset({"i", "am", "we", "are", "not", "sure", "certain", "unsure", "sorry", "but", "so", "well"})


def _guesses(words: list[str], *, hedge: bool) -> bool:
    """Whether a clause states a number or guesses (for a hedge: beside the hedge's own words)."""
    rest = [w for w in words if w not in _HEDGE_WORDS] if hedge else words
    return any(any(c.isdigit() for c in w) or w in GUESSES for w in rest)


_ONLY = frozenset({"only", "just"})


def _scope(bare: list[str]) -> bool:
    """Whether a clause (read bare) says what the sources hold: a source (after at most one
    word: "the policy documents"), then "only", "cover", "list", ... ("the documents only cover
    weekday schedules").  An answer whose only says are such a clause with "only" and a
    follow-up question (:data:`_FOLLOW_UP`) abstains: it offers to look elsewhere (round 5)."""
    return any(
        len(bare) >= start + 2 and bare[start] in _SOURCE_NOUNS and bare[start + 1] in _SCOPE_VERBS for start in (0, 1)
    )


def _holds_nothing(words: list[str]) -> str | None:
    """A source or a document kind that does not cover, include or contain "it", "this" or
    "that", ending the clause ("The manual doesn't cover it"), as a phrase; else None."""
    if len(words) < 5 or words[-1] not in ("it", "this", "that") or words[-2] not in _HOLDING_VERBS:
        return None
    if words[-3] != "not" or words[-4] not in ("does", "do", "did", "has", "have"):
        return None
    if not any(w in DOCUMENT_KINDS or w in _SOURCE_NOUNS for w in words[:-4]):
        return None
    return " ".join(words[-4:])


def _searched(words: list[str]) -> bool:
    """Whether a clause reports a search of the sources: "i" or "we", a search verb, a source."""
    return (
        bool(set(words) & {"i", "we"})
        and bool(set(words) & _SEARCH_VERBS)
        and any(w in _SOURCE_NOUNS or w in DOCUMENT_KINDS for w in words)
        and not any(any(c.isdigit() for c in w) for w in words)
    )


def _redirects(words: list[str]) -> bool:
    """Whether a clause sends the user elsewhere: its first word past the openers is a redirect."""
    for word in words:
        if word not in _REDIRECT_OPENERS:
            return word in REDIRECTS
    return False
