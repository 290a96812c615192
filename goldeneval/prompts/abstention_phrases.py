"""The default abstention phrase model (issue 42): the phrasings of :data:`ABSTENTION_EXAMPLES`,
the vocabulary its five families are made of (sources, saying, holding and searching verbs,
inabilities, hedges, guesses, redirects), and :data:`DEFAULT_ABSTENTION_PHRASES`, which
:func:`_default_phrases` builds from them.  :mod:`goldeneval.prompts.abstention` reads an answer
with them; a run may replace the phrases (:class:`~goldeneval.prompts.abstention.AbstentionRules`)."""

from __future__ import annotations

import re

__all__ = [
    "ABSTENTION_EXAMPLES",
    "DEFAULT_ABSTENTION_PHRASES",
    "DOCUMENT_KINDS",
    "FOLLOW_UP",
    "GUESSES",
    "HEDGES",
    "HELPER_TAIL",
    "HELPER_VERBS",
    "HOLDING_VERBS",
    "QUALIFIERS",
    "REDIRECTS",
    "REDIRECT_OPENERS",
    "SAYING_VERBS",
    "SCOPE_VERBS",
    "SEARCH_VERBS",
    "SOURCES",
    "WHERE_NOUNS",
]

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

SOURCES = (
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
verb of saying, :data:`SAYING_VERBS`, with any object), and "The manual doesn't cover it" too,
while "The policy does not cover dental work" answers: "cover", "include" and "contain" abstain
only with "it", "this" or "that" (the question's subject) as their object."""
SAYING_VERBS = (
    "say", "mention", "specify", "state", "address", "discuss", "describe", "explain", "talk about", "go into",
    "give details", "refer to", "clarify", "touch on", "deal with",
)  # fmt: skip
HOLDING_VERBS = frozenset({"cover", "include", "contain", "answer"})
SEARCH_VERBS = frozenset(
    {"looked", "checked", "searched", "went", "read", "reviewed", "scanned", "looking", "checking", "searching",
     "reviewing", "scanning", "consulted"}
)  # fmt: skip
"""A clause that reports a search of the sources ("I looked through the documents", "I checked the
context") neither abstains nor answers (round 6)."""
_FIRST_PERSON = ("i", "we")
_PRONOUN_SOURCES = ("they", "it")
"""A pronoun for a source named in an earlier clause: "The documents only cover weekdays; they
don't mention holidays" (round 4)."""
SCOPE_VERBS = frozenset(
    {"cover", "covers", "list", "lists", "mention", "mentions", "include", "includes", "state", "states", "give",
     "gives", "show", "shows", "describe", "describes", "discuss", "discusses", "only", "just"}
)  # fmt: skip
"""A clause that says what the sources hold ("The documents only cover weekday schedules", "The
passages list the 2024 fares") neither abstains nor answers: the answer is read from its other
clauses (round 4)."""
FOLLOW_UP = re.compile(
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
REDIRECT_OPENERS = frozenset(
    {"please", "so", "and", "then", "you", "may", "might", "could", "can", "should", "would", "want", "wish", "to",
     "i", "we", "recommend", "suggest", "advise", "it", "is", "best", "better", "perhaps", "maybe", "instead",
     "alternatively", "also", "kindly", "directly", "feel", "free", "id", "consider", "for", "more", "information",
     "details", "further", "help", "assistance", "advice", "this", "that", "recommended", "suggested"}
)  # fmt: skip


HELPER_VERBS = frozenset({"help", "assist", "advise", "answer", "confirm", "clarify", "tell", "explain"})
"""What someone else can do for the user (round 9): a clause whose subject is not the answerer and
whose verb, after `can`, `could`, `should`, `would`, `may`, `might` or `will` (and `be able
to`), is one of these, with nothing after it but :data:`HELPER_TAIL` ("the registrar's office
should be able to help", "the front desk can help you with that"), sends the user elsewhere."""
HELPER_TAIL = frozenset(
    {"you", "with", "this", "that", "it", "further", "here", "there", "more", "on", "question", "questions",
     "query", "your", "me", "us", "out", "for", "about", "details", "information", "also", "too"}
)  # fmt: skip
WHERE_NOUNS = frozenset({"place", "person", "people", "contact", "team", "department", "office", "source", "one"})
"""Where else to ask (round 9): "the best place to check", "the right person to ask" after `is`,
`are` or `be`, then one of :data:`REDIRECTS` and at most three words of :data:`HELPER_TAIL` ("The
council's website would be the best place to check")."""


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
        # issue 42, round 8: a search that found nothing, its subject in an earlier clause
        "found nothing about", "found nothing on", "found nothing regarding", "found nothing in",
        "found nothing relevant", "found nothing that",
        # issue 42, round 10: a subject the sources do not treat, in the passive ("isn't discussed")
        "not discussed", "not addressed", "not described", "not documented", "not explained",
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
        phrases += [f"{pronoun} {verb} nothing about" for verb in ("say", "says", "said", "mention", "mentions",
                    "mentioned")]  # fmt: skip
    for kind in sorted(DOCUMENT_KINDS):
        phrases += [f"{kind} {aux} not {verb}" for aux in ("does", "do", "did") for verb in SAYING_VERBS]
    for noun in SOURCES:
        phrases += [f"{noun} {aux} not {verb}" for aux in ("does", "do", "did") for verb in _SOURCE_VERBS]
        phrases += [f"{noun} {aux} not {seem} to {verb}" for aux in ("does", "do", "did") for seem in ("seem", "appear")
                    for verb in _SOURCE_VERBS]  # fmt: skip
        phrases += [f"{noun} is silent", f"{noun} are silent", f"{noun} is unclear", f"{noun} are unclear"]
        phrases += [f"{noun} {verb} {nothing}" for verb in ("say", "says", "said", "mention", "mentions", "mentioned",
                    "contain", "contains", "give", "gives", "provide", "provides", "make", "makes", "offer", "offers",
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
