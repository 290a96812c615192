"""Named entities: capitalised names, codes, weekday names, e-mail addresses and links.

A wrong place, line, office or person is a wrong answer that shares nearly all of the right
answer's words ("Eastgate" for "Westfield").  Names are read as runs of capitalised tokens; a
capitalised word that opens a sentence is read as a name only when it is not an ordinary
opening word (a stop word, an adverb, an instruction verb), and such a "possible name" is
required only when the answer names nothing else (docs/guide/answers.md, "Reference grading:
the facts decide", rule 2, "A name at the start of a sentence", and rounds 4 and 5).
"""

from __future__ import annotations

import re

from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.text import IDENTIFIER, identifier_key, stem
from goldeneval.prompts.facts.vocabulary import (
    DAY_GROUPS,
    GENERIC_NAME_WORDS,
    ISO_CURRENCIES,
    LEAD_FILLER,
    MONTHS,
    NO,
    NUMBER_WORDS,
    UNITS,
    WEEKDAYS,
    YES,
)

__all__ = [
    "acronyms",
    "answer_entity_keys",
    "distinctive_word",
    "entity_facts",
    "entity_key",
    "foreign_names",
    "named_by_part",
    "opening_word",
]

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_URL = re.compile(r"\bhttps?://\S+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\u2019]*")
_SENTENCE_END = re.compile(r"[.;:!?]\s*$")
_CONNECTORS = frozenset({"and", "of", "&"})
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st"})
_NOT_NAMES = frozenset({"i", "yes", "no", "the", "a", "an", "am", "pm", "ok", *(c.lower() for c in ISO_CURRENCIES)})
_OPENING_WORDS = frozenset(
    {*YES, *NO, *LEAD_FILLER, "according", "based", "please", "note", "also", "however", "overall", "thanks",
     "hope", "hi", "hello", "alternatively", "additionally", "furthermore", "moreover", "otherwise", "instead",
     "besides", "therefore", "thus", "hence", "still", "maybe", "perhaps", "probably", "every", "either", "none",
     "nothing", "everyone", "everything", "someone", "something", "anyone", "anything", "one", "another", "many",
     "much", "several", "whether", "although", "though", "since", "unless", "yet", "per", "via", "within",
     "without", "upon", "across", "around", "along", "among", "beyond", "towards", "till", "like", "plus", "next",
     "last", "first", "then", "today", "tomorrow", "tonight", "early", "daily", "weekly", "yearly", "hourly",
     "let", "it's", "there's", "that's", "here's", "you'll", "you're", "i'm", "i'd", "we're"}
)  # fmt: skip
"""Words that open a sentence capitalised without being names, beyond the stop-word list."""
IMPERATIVES = frozenset(
    {"add", "apply", "ask", "avoid", "book", "bring", "buy", "call", "cancel", "change", "check", "choose", "click",
     "close", "collect", "complete", "confirm", "contact", "continue", "discard", "dispose", "do", "download",
     "drink", "drop", "eat", "email", "enter", "fill", "find", "follow", "get", "give", "go", "help", "hold",
     "include", "inform", "install", "keep", "leave", "log", "make", "merge", "move", "note", "notify", "open",
     "order", "pay", "phone", "pick", "place", "post", "press", "print", "put", "read", "register", "remember",
     "remove", "renew", "report", "request", "reset", "return", "ring", "run", "save", "see", "select", "send",
     "set", "shake", "show", "sign", "start", "stop", "store", "submit", "swallow", "switch", "take", "tap",
     "tell", "text", "throw", "turn", "type", "update", "upload", "use", "visit", "wait", "wash", "wear", "write"}
)  # fmt: skip
"""Verbs that open an instruction ("Store it in a fridge", "Call your line manager"): a
documented list (no verb lexicon ships with the project's packages; nltk is installed without
its data).  Sentence-initial, they are no names; nor is any sentence-initial word followed by an
object a verb takes (:data:`_OBJECTS`: "Coat it with oil", "Wipe the wand", round 6)."""
_OBJECTS = frozenset(
    {"it", "them", "the", "a", "an", "your", "this", "these", "those", "each", "all", "any", "some", "every", "both",
     "our", "my", "his", "her", "their", "its", "him", "us", "me"}
)  # fmt: skip
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
"""A day or rank in figures ("the 1st"): a number, not a code."""


def _is_name_like(token: str) -> bool:
    return token[0].isupper() or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)) or "_" in token


def entity_facts(text: str) -> list[Fact]:
    """Named entities: runs of capitalised tokens and codes, identifiers ("eu-north-1", each one
    entity), weekday names, e-mail addresses."""
    facts = [Fact("entity", m.group(0), (m.group(0).lower(),)) for m in _EMAIL.finditer(text)]
    facts += [Fact("entity", m.group(0), (m.group(0).lower(),)) for m in _URL.finditer(text)]
    text = _URL.sub(" ", _EMAIL.sub(" ", text))
    facts += [Fact("entity", m.group(0), (identifier_key(m.group(0)),)) for m in IDENTIFIER.finditer(text)]
    text = IDENTIFIER.sub(lambda m: " " * len(m.group(0)), text)
    tokens = list(_TOKEN.finditer(text))
    run: list[str] = []

    def close() -> None:
        while run and run[-1].lower() in _CONNECTORS:
            run.pop()
        keys = tuple(key for key in (entity_key(t) for t in run if t.lower() not in _CONNECTORS) if key is not None)
        if keys:
            facts.append(Fact("entity", " ".join(run), keys))
        run.clear()

    previous_end = 0
    for position, match in enumerate(tokens):
        token = match.group(0)
        separator = text[previous_end : match.start()]
        if run and not re.fullmatch(r"[\s\-\u2013]*", separator):
            close()  # a name does not run over punctuation: "Council, Department"
        previous_end = match.end()
        initial = position == 0 or _SENTENCE_END.search(separator) is not None
        lower = token.lower()
        if separator.endswith("\u00b0") or separator.endswith("\u00b0 "):
            close()  # "28 °C": a unit of temperature, not a name
            continue
        if run and lower in _CONNECTORS:
            run.append(token)  # "Department of Mobility", "Park and Ride"
            continue
        weekday = lower in WEEKDAYS
        month = lower.rstrip(".") in MONTHS and token[0].isupper()
        letter = token == "A" and not initial  # "zones A and B"; a sentence-initial "A" is the article
        common = lower in _NOT_NAMES and not letter
        magnitude = re.fullmatch(r"\d+k", lower) is not None  # "5k" is 5,000, not a code
        suffix = re.fullmatch(r"\d+(?:[.,]\d+)?([a-z]+)", lower)
        magnitude = magnitude or (suffix is not None and suffix.group(1) in UNITS)  # "50MB", "45p": a value
        number = lower in NUMBER_WORDS or _ORDINAL.fullmatch(lower) is not None  # "Six months", "the 1st"
        after_number = position > 0 and tokens[position - 1].group(0)[-1].isdigit()
        after_per = position > 0 and (tokens[position - 1].group(0).lower() == "per" or separator.endswith("/"))
        unit = lower in UNITS and (after_number or after_per or not (len(token) >= 2 and token.isupper()))  # "in HR"
        if month or common or magnitude or number or unit or token.isdigit() or not _is_name_like(token):
            close()
            continue
        if initial and not weekday and not _is_code(token) and opening_word(lower):
            close()  # "On Saturdays", "From Monday": the stop word is no part of the name
            continue
        following_word = tokens[position + 1].group(0).lower() if position + 1 < len(tokens) else ""
        if initial and not weekday and not _is_code(token) and following_word in _OBJECTS:
            close()  # "Coat it with oil": an instruction verb
            continue
        if initial and not weekday and not _is_code(token):
            following = tokens[position + 1].group(0) if position + 1 < len(tokens) else ""
            joined = text[match.end() : tokens[position + 1].start()] if following else ""
            if not following or not re.fullmatch(r"\s+", joined) or not _is_name_like(following):
                close()
                key = entity_key(token)
                if not opening_word(lower) and key is not None:
                    facts.append(Fact("entity", token, (key,), initial=True))
                continue
        run.append(token)
    close()
    return facts


def opening_word(lower: str) -> bool:
    """An ordinary word that opens a sentence capitalised: a stop word
    (:data:`goldeneval.core.text.ENGLISH_STOPWORDS`), an opening word that list lacks, or an
    adverb in ``-ly`` ("Unfortunately", "Currently"), or an imperative verb
    (:data:`IMPERATIVES`: "Store", "Call")."""
    return (
        lower in ENGLISH_STOPWORDS
        or lower in _OPENING_WORDS
        or lower in IMPERATIVES
        or (len(lower) >= 7 and lower.endswith("ly"))
        or lower.replace("\u2019", "'").split("'")[0] in ENGLISH_STOPWORDS
    )


def _is_code(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return (
        "_" in token
        or (any(c.isdigit() for c in token) and bool(letters))
        or (len(letters) >= 2 and all(c.isupper() for c in letters))
    )


def entity_key(token: str) -> str | None:
    """The key a name's word compares on (a weekday's full name, a stem), or None for a title."""
    lower = token.lower()
    if lower in _TITLES or lower.isdigit():
        return None if lower in _TITLES else lower
    if lower in WEEKDAYS:
        return WEEKDAYS[lower]
    if len(token) == 1:
        return token  # a single letter ("zone C") compares case-sensitively: "a" is an article
    return stem(token)


def answer_entity_keys(answer: str) -> set[str]:
    """The keys of every word of a text, capitalised or not ("eastgate" names Eastgate): what a
    reference's name is looked up in."""
    keys = {m.group(0).lower() for m in _EMAIL.finditer(answer)} | {m.group(0).lower() for m in _URL.finditer(answer)}
    keys |= {identifier_key(m.group(0)) for m in IDENTIFIER.finditer(answer)}
    for match in _TOKEN.finditer(_URL.sub(" ", _EMAIL.sub(" ", answer))):
        token = match.group(0)
        lower = token.lower()
        if len(token) == 1:
            keys.add(token)
            continue
        keys.add(WEEKDAYS.get(lower, stem(token)))
        keys.update(DAY_GROUPS.get(stem(token), ()))
    return keys


def acronyms(text: str) -> set[str]:
    """The initials of each name of several words ("Chief Financial Officer": "cfo"): a name
    and its acronym are the same name (round 6)."""
    found = set()
    for fact in entity_facts(text):
        words = [w for w in re.split(r"[\s\-\u2013]+", fact.text) if w and w.lower() not in _CONNECTORS]
        if len(words) >= 2 and all(w[0].isupper() for w in words):
            found.add("".join(w[0] for w in words).lower())
    return found


def foreign_names(answer: str, known: set[str]) -> list[Fact]:
    """The answer's names that neither the reference nor the question has."""
    return [f for f in entity_facts(answer) if not all(key in known for key in f.key)]


def distinctive_word(fact: Fact) -> str | None:
    """The word that says which one a name of several words is (round 9): its last word that is
    no generic word of places, organisations and roles (:data:`GENERIC_NAME_WORDS`: "Heathrow" of
    "London Heathrow" and of "Heathrow Airport"), no stop word, no number and longer than two
    letters; None for a name of one word or of generic words only ("Central Station")."""
    if fact.kind != "entity" or len(fact.key) < 2:
        return None
    words = [str(k) for k in fact.key]
    usable = [w for w in words if w not in GENERIC_NAME_WORDS and w not in ENGLISH_STOPWORDS and len(w) > 2]
    usable = [w for w in usable if not w.isdigit() and "@" not in w]
    return usable[-1] if usable else None


def named_by_part(fact: Fact, answer: str, known: set[str]) -> bool:
    """Whether the answer names a reference name of several words by its distinctive word
    (:func:`distinctive_word`, round 9): "Heathrow" for "London Heathrow", "Lopez" for "Maria
    Lopez", in a name of the answer whose other words are all ``known`` (the reference's and the
    question's words) or generic ("Heathrow Airport"); "London Gatwick" names no Heathrow, and
    "Ana Lopez" names someone else."""
    part = distinctive_word(fact)
    if part is None:
        return False
    return any(
        part in named.key and all(str(k) in known or str(k) in GENERIC_NAME_WORDS for k in named.key)
        for named in entity_facts(answer)
    )
