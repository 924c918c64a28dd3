"""Does a request ask for an action now, or only talk about one? Two readers: ``talks_about`` (exact patterns) and
the mood model (:func:`mood`, a classifier over character n-grams fitted on a bank of request frames).

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

import numpy as np

from .examples import CharGrams
from .io import request_lang
from .lang import KO_PAST, KO_REQUEST_END, SYLLABLES, listed
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


def _filler_only(text: str) -> bool:
    """Is every word of the text filler (please, ok, 좀)? Such a clause or sentence neither asks nor talks."""
    return set(re.findall(r"\w+", normalize(text))) <= _FILLER


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
    forms = [clause_form(c) for c in clauses(text) if not _filler_only(c)]  # "Please, never ...": no ask
    if "ask" in forms:
        return None
    return next((f for f in forms if f), None)


# The frames of the mood bank (data/lang/mood_bank.jsonl; docs/router.md, 'Reading a request'): a command asks for
# an action now, every other frame only talks about one.
FRAMES = ("command", "negation", "prohibition", "state_question", "howto", "conditional", "reported", "mention",
          "past", "complaint")
# A quoted span is data, not an order ("Translate 'turn on wifi'", "'알람 맞춰 줘'를 영어로"): the model reads a
# placeholder in its place. A quote opens after the start, a space or a colon and closes before the end, a space,
# punctuation or a Korean particle, so an apostrophe inside a word (don't) opens nothing.
_QUOTED = re.compile(f"(?:(?<=^)|(?<=[\\s:(]))(['\"])[^'\"]+\\1(?=$|[\\s.,!?;:)]|[{SYLLABLES}])")
MOOD_SPAN = (1, 4)
_MYEON_NOUNS = tuple(sorted(listed("myeon_nouns", ("ko",))))
_FILLER = listed("filler")
_POLITE = sorted(listed("polite_conditionals", ("ko",)), key=len, reverse=True)
MOOD_C = 30.0  # the logistic regression's inverse L2 strength
MOOD_SEED = 0  # the seed of the bank's folds, for the shipped model and its table alike


# a word ending in -면, not -면서 (while) nor -려면 (in order to)
_MYEON = re.compile(f"[{SYLLABLES}]*(?<!려)면(?!서)")


def conditions(text: str) -> list[str]:
    """The words of a Korean request ending in -면 that are no noun (비 오면 알람 맞춰 줘: 오면; 화면 잠가 줘: none) and
    no conditional of politeness (가능하면)."""
    norm = normalize(text)
    for polite in _POLITE:
        norm = norm.replace(polite, " ")
    return [m.group() for m in _MYEON.finditer(norm) if not m.group().endswith(_MYEON_NOUNS)]


def masked(text: str) -> str:
    """The text with each quoted span replaced by ``"q"``."""
    return _QUOTED.sub('"q"', text)


class MoodModel:
    """Multinomial logistic regression over :class:`CharGrams` of the masked text: P(frame) per request; below
    ``command_min`` of the command frame a request is read as talking (chosen on the bank's held-out folds:
    :func:`toolgate.router.mood.command_threshold`)."""

    def __init__(self, classes, grams: CharGrams, coef: np.ndarray, intercept: np.ndarray, command_min: float = 0.5):
        self.classes, self.grams, self.coef, self.intercept = tuple(classes), grams, coef, intercept
        self.command_min = float(command_min)

    def proba(self, texts) -> np.ndarray:
        z = np.tile(self.intercept, (len(texts), 1))
        for i, t in enumerate(texts):
            j, w = self.grams.weights(masked(t))
            z[i] += self.coef[:, j] @ w
        z = np.exp(z - z.max(1, keepdims=True))
        return z / z.sum(1, keepdims=True)

    @classmethod
    def fit(cls, texts, frames, c: float = 10.0, command_min: float = 0.5) -> "MoodModel":
        """Fitted with scikit-learn (lbfgs: deterministic) on the masked texts; applied with numpy."""
        from sklearn.linear_model import LogisticRegression

        texts = [masked(t) for t in texts]
        grams = CharGrams.fit(texts, MOOD_SPAN)
        lr = LogisticRegression(C=c, max_iter=5000).fit(grams.matrix(texts), np.asarray(frames))
        coef, intercept = lr.coef_, lr.intercept_
        if len(lr.classes_) == 2:  # scikit-learn keeps one row for two classes: the second class's log-odds
            coef, intercept = np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
        return cls([str(k) for k in lr.classes_], grams, coef.astype(np.float32), intercept.astype(np.float32),
                   command_min)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"classes": np.array(self.classes), "vocabulary": np.array(self.grams.vocabulary),
                "span": np.array([self.grams.lo, self.grams.hi]), "idf": self.grams.idf, "coef": self.coef,
                "intercept": self.intercept, "command_min": np.array(self.command_min)}

    @classmethod
    def of(cls, arrays) -> "MoodModel":
        lo, hi = (int(x) for x in arrays["span"])
        grams = CharGrams(lo, hi, tuple(str(v) for v in arrays["vocabulary"]), np.asarray(arrays["idf"], np.float32))
        return cls([str(k) for k in arrays["classes"]], grams, np.asarray(arrays["coef"]), np.asarray(arrays["intercept"]),
                   float(arrays["command_min"]))


def load_mood(path) -> MoodModel:
    with np.load(path, allow_pickle=False) as z:
        return MoodModel.of(dict(z))


@lru_cache(maxsize=1)
def shipped_mood() -> MoodModel:
    """The model fitted on the whole bank, shipped beside the language data (``toolgate mood``)."""
    from importlib import resources

    with resources.as_file(resources.files("toolgate.core.lang").joinpath("mood.npz")) as path:
        return load_mood(path)


# A sentence ends at . ! ? or a line break followed by a space or the end (3.5, example.com and 10:30 go on)
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")


@lru_cache(maxsize=4096)  # read once per candidate router in a study
def mood(text: str) -> tuple[str, float]:
    """(the request's frame, its probability of the command frame): the reading of its most command-like sentence
    (:func:`sentence_mood`), so that details after a command (이 이미지 올려 줘. 제목은 ...) or a question before one
    (Why is it dark? Turn on the light) leave it a command."""
    sentences = [s for s in _SENTENCE.split(text.strip()) if s.strip()]
    worded = [s for s in sentences if not _filler_only(s)] or sentences  # "Don't delete it. Please." : no command
    return max(map(sentence_mood, worded), key=lambda r: r[1])


def sentence_mood(text: str) -> tuple[str, float]:
    """(the sentence's frame, its probability of the command frame) under the shipped model; the frame is ``command``
    when that probability reaches the model's ``command_min``, else the most probable other frame."""
    model = shipped_mood()
    p = model.proba([text])[0]
    if request_lang(text) == "ko":  # the ending read exactly: the model's n-grams see -면 in 화면 too, and a request
        found = conditions(text)  # ending after a condition (회의 끝나면 전화해 줘) as a command
        if found and _KO_ASK.search(text.rstrip(" .!")):
            return "conditional", 0.0
        if not found:  # no condition: the model's odds among the other frames
            p[model.classes.index("conditional")] = 0.0
            p /= p.sum()
    k = model.classes.index("command")
    if p[k] >= model.command_min:
        return "command", float(p[k])
    return model.classes[max((j for j in range(len(p)) if j != k), key=lambda j: p[j])], float(p[k])
