"""What a request must show before the router executes an action (rules checked after the band).

The gate's probability says whether a request *looks* in-catalog; these rules ask what the text itself
carries, so that no request is executed on nothing:

* **no evidence** (:func:`content_free`, :meth:`Evidence.has_evidence`): a request made only of
  punctuation, emoji, symbols, Hangul jamo (ㅋㅋㅋ, ㅠㅠ), bare numbers and conversational filler
  (ok, yes, 응, 고마워, please, now, 지금 ...), or one whose every BM25 score is 0 while no word of it
  occurs in the catalog's texts, never reaches an action: it takes the route step.
* **a tie at the top** (equal ranker scores) is never executed: which tool comes first would be the
  catalog's order, not the request's.
* **a required slot left empty**: the generator's slot rule (a template that neither fills nor states
  a required parameter is an ``ask`` template, :mod:`toolgate.data.banks`) read back from the text: an
  action with required parameters is executed only when the request carries something that could fill
  one, a number, an enum value of a parameter (or its on/off verb), or a word its catalog text does not
  explain. Otherwise the router asks ("Send a message", "Delete the file", 알람 맞춰 줘).
* **two actions in one request** (:meth:`Evidence.steps`): split at connectives (and, then, a Korean
  verb ending in -고 or -다가); when two parts each have lexical evidence for a different top action,
  the request is delegated: executing one half of it would be wrong either way.
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np

from ..data.catalog import index_text
from ..retrieval.text import normalize

_WORD = re.compile(r"\w+")
_JAMO = re.compile("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\ud7b0-\ud7ff]+")  # jamo and the Hangul filler
_HANGUL = re.compile("^[\uac00-\ud7a3]")
# Conversational filler of both languages: words that carry no action and fill no slot on their own.
FILLER = frozenset("""
a an the my me i you it this that please pls now right just do it's its can could would will to for of with
ok okay yes yeah yep no nope hi hello hey thanks thank bye hmm um uh so well oh lol good nice sure fine
응 네 예 아니 아니요 그래 좋아 고마워 감사 감사합니다 안녕 안녕하세요 음 어 아 지금 빨리 좀 해 줘 해줘 주세요 줄래
제발 그냥 이거 그거 저거 한번 잘 자 어서 얼른 부탁해 부탁
""".split())
ON_OFF = {"on": ("켜", "on", "enable", "activate"), "off": ("꺼", "끄", "off", "disable", "deactivate")}
_CONNECTIVE = re.compile(r"\s*(?:\band then\b|\band\b|\bthen\b|\bafter that\b|그리고|그 다음에|다음에)\s*")
# A verb that links to the next one (끄고, 껐다가), not a quotation (늦는다고, 하라고) nor a -고 있다/싶다 form.
_KO_LINK = re.compile("[\uac00-\ud7a3](?<![다라자냐])(?:고|다가)$")
_KO_AUX = ("있", "싶")


def words(text: str) -> list[str]:
    """The normalised words of a text (NFKC, case-folded); punctuation, emoji and loose jamo are not words.

    Jamo left over after NFC (ㅋㅋ, ㅠㅠ) are removed before NFKC, which would compose ㅋ + ㅠ into 큐."""
    return _WORD.findall(normalize(_JAMO.sub(" ", unicodedata.normalize("NFC", text))).replace("_", " "))


def content_words(text: str) -> list[str]:
    """Words that could name an action: not a bare number, not filler."""
    return [w for w in words(text) if not w.isdigit() and w not in FILLER]


def content_free(text: str) -> bool:
    """Only punctuation, emoji, symbols, jamo, numbers and filler: nothing an action could be chosen on."""
    return not content_words(text)


def _stem(word: str) -> str:
    """A crude stem for matching a request word with catalog text: the first syllable of a Korean word
    (verb endings and particles change the rest: 맞춰/맞추기, 알람을/알람), the first four letters otherwise."""
    return word[0] if _HANGUL.match(word) else word[:4]


class Evidence:
    """The rules above for one catalog (index text variant E1: names, descriptions, parameters, keywords)."""

    def __init__(self, catalog: list[dict], langs):
        self.tools = {t["id"]: t for t in catalog if t["kind"] == "action"}
        self.vocab = {i: set(words(index_text(t, "E1", langs))) for i, t in self.tools.items()}
        self.stems = {i: {_stem(w) for w in v} for i, v in self.vocab.items()}
        self.catalog_words = set().union(*self.vocab.values()) if self.vocab else set()

    def has_evidence(self, text: str, lexical_max: float) -> bool:
        """False when the request is content-free, or no BM25 score is above 0 and no word is a catalog word."""
        content = content_words(text)
        return bool(content) and (lexical_max > 0 or any(w in self.catalog_words for w in content))

    def fills_a_slot(self, text: str, tool_id: str) -> bool:
        """Does the request carry anything that could fill a required parameter of ``tool_id``?"""
        params = self.tools[tool_id]["parameters"]
        required = params.get("required") or []
        if not required:
            return True
        ws = words(text)
        if any(ch.isdigit() for w in ws for ch in w):
            return True
        for name in required:
            for value in params.get("properties", {}).get(name, {}).get("enum", []):
                forms = ON_OFF.get(str(value).lower(), (str(value).lower(),))
                if any(w == f or (_HANGUL.match(f) and w.startswith(f)) for w in ws for f in forms):
                    return True
        return any(w not in self.vocab[tool_id] and _stem(w) not in self.stems[tool_id] for w in content_words(text))

    @staticmethod
    def parts(text: str) -> list[str]:
        """The text cut at connectives (and, then, commas, -고 / -다가 verb endings); one part when none."""
        out = []
        for piece in _CONNECTIVE.split(unicodedata.normalize("NFC", text)):
            part = []
            tokens = piece.split()
            for k, token in enumerate(tokens):
                part.append(token)
                if _KO_LINK.search(token.rstrip(",.")) and not (k + 1 < len(tokens) and tokens[k + 1].startswith(_KO_AUX)):
                    out.append(" ".join(part))
                    part = []
            out.append(" ".join(part))
        return [p for p in out if p]

    def steps(self, text: str, score) -> list[str]:
        """The distinct top actions of the parts that have lexical evidence; two or more make a multistep request.

        ``score(part)``: the lexical ranker's scores of the catalog's actions, in :attr:`tools` order.
        """
        ids, tops = list(self.tools), []
        for part in self.parts(text):
            s = np.asarray(score(part), float)
            if s.max() > 0 and (s == s.max()).sum() == 1 and self.names(part, ids[int(s.argmax())]):
                tops.append(ids[int(s.argmax())])
        return list(dict.fromkeys(tops))

    def names(self, text: str, tool_id: str) -> bool:
        """Does a content word of ``text`` occur in the tool's catalog text (Korean: its first two syllables)?"""
        vocab = self.vocab[tool_id]
        return any(w in vocab or (_HANGUL.match(w) and len(w) > 1 and any(v.startswith(w[:2]) for v in vocab))
                   for w in content_words(text))
