"""Does a request ask for an action now, or only talk about one? (``talks_about``)

A request that names an action without asking for it must not execute: a question about how to do it, a negation,
a report of the past, a conditional or speculative remark, a why-question. The text is cut into clauses (punctuation
and connectives); a clause that carries one of these forms talks, one with a request form (an imperative, please,
can you, a Korean request ending) asks. The request talks about an action when some clause talks and none asks:
"Why is it so dark? Turn on the flashlight" asks; "Don't lock the screen yet" talks.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .lang import KO_PAST, KO_REQUEST_END
from .text import normalize

_CLAUSE = re.compile(r"([^,.!?;:…~]+)([,.!?;:…~]*)")
_CONNECTIVE = re.compile(r"\s+(?:and then|but|and|so)\s+|(?<=[고서데])\s+(?=그냥|그럼|근데)")
# Fixed phrases whose negation asks for something (don't forget = remind me; do not disturb is a mode).
_NOT_NEGATION = re.compile(r"\b(?:don'?t|do not) (?:forget|disturb|wait|hesitate)\b|방해\s?금지|잊지\s?(?:말|마)")
_EN_TALK = {
    "howto": re.compile(r"\bhow (?:do|can|could|should|would|to|does)\b|\bwhat'?s the way\b|\bwhere(?:'s| is| do| can)\b"
                        r"|\bsteps to\b|\bis there a way\b"),
    "negation": re.compile(r"\b(?:don'?t|do not|never|doesn'?t)\b"),
    "past": re.compile(r"^(?:i|we|i'?ve|we'?ve|someone|somebody)\s+(?:\w+\s+)?(?:already\s+|just\s+)?"
                       r"(?:\w*[^\We]ed|took|made|sent|set|did|put|got|went|ran|shut|wrote|left|had)\b"),
    "conditional": re.compile(r"^(?:if|when|whether)\b|\b(?:might|maybe|may be|probably)\b|\bwould (?:it|that|this)\b"
                              r"|\bwill (?:i|it|that|this|my)\b|^(?:would|will|does|do|is|are|can|could) (?!you\b|i\b|we\b)\w+.*\?$"),
    "why": re.compile(r"^(?:why|how come)\b"),
}
_KO_TALK = {
    "howto": re.compile(r"어떻게|방법|어디서|어디에서|어딨|어디\s?있"),
    "negation": re.compile(r"지\s?마|지\s?말|하지\s?않|안\s?돼|건드리지|안\s?\S+도\s?(?:돼|되|괜찮)|지\s?않아도|필요\s?없"),
    "conditional": re.compile(r"지도\s?몰라|수도\s?있|[을ㄹ]까\s?봐|(?<!화)(?<!라)면\s?.*(?:\?|[나까냐니]$)"),
    "why": re.compile(r"^왜|\s왜\s|왜$"),
}
_KO_STRONG = re.compile(r"방법|어떻게|지도\s?몰라|수도\s?있|지\s?마|지\s?말|하지\s?않|건드리지")
_EN_ASK = re.compile(r"\b(?:please|pls|can you|could you|would you|will you|let'?s|i want|i'd like|i need|for me)\b"
                     r"|\bnow\b|^(?:just\s+)?(?:turn|switch|set|put|make|start|stop|open|close|play|pause|skip|take|"
                     r"record|call|text|send|show|read|find|search|delete|remove|clear|lock|restart|reboot|block|"
                     r"add|create|remind|share|move|rename|compress|zip|calculate|convert|navigate|scan|check|cut|"
                     r"mute|unmute|enable|disable|activate|cancel|dim|raise|lower|increase|decrease|go|give|tell|"
                     r"wake|get|change|save|write|note|capture|snap|shoot|look|list)\b")
_KO_ASK = re.compile(KO_REQUEST_END + r"\??$")
_LEAD = re.compile(r"^(?:so|and|then|but|ok|okay|well)\s+")  # a connective that opens a clause


def clauses(text: str) -> list[str]:
    """The normalised text cut at punctuation and connectives; a question keeps its question mark."""
    out = []
    for m in _CLAUSE.finditer(normalize(unicodedata.normalize("NFC", text))):
        parts = [p.strip() for p in _CONNECTIVE.split(m.group(1)) if p.strip()]
        out += parts[:-1] + [p + "?" for p in parts[-1:]] if "?" in m.group(2) else parts
    return out


def _ko_past(clause: str) -> bool:
    """The clause's predicate (its last word) is in the past tense: a past-stem syllable before a plain ending."""
    last = clause.rstrip("?").split()[-1] if clause.rstrip("?").split() else ""
    return bool(re.search(f"[{KO_PAST}](?:어|어요|다|지|네|는데|잖아|거든|어\\?)?$", last)) and not \
        last.endswith(("했으면", "였으면"))


def clause_form(clause: str) -> str | None:
    """'ask', a talk form (howto, negation, past, conditional, why), or None (neither). A Korean request ending
    asks whatever question it embeds (어디 있는지 알려 줘), unless it asks how, forbids or speculates."""
    clause = _LEAD.sub("", clause)
    if _KO_ASK.search(clause) and not _KO_STRONG.search(clause):
        return "ask"
    plain = _NOT_NEGATION.sub(" ", clause)
    for table in (_EN_TALK, _KO_TALK):
        form = next((f for f, pattern in table.items() if pattern.search(plain)), None)
        if form:
            return form
    if _ko_past(clause):
        return "past"
    if _EN_ASK.search(clause) or _KO_ASK.search(clause):
        return "ask"
    return None


@lru_cache(maxsize=4096)  # read once per candidate router in a study
def talks_about(text: str) -> str | None:
    """The talk form of a request that asks for nothing now (None: it asks, or carries no form at all). Read for
    actions that change something: a question is how one asks for a read-only action (Is my storage full?)."""
    forms = [clause_form(c) for c in clauses(text)]
    if "ask" in forms:
        return None
    return next((f for f in forms if f), None)
