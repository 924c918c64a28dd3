"""What a request must show before the router executes an action (rules checked after the band).

The gate says whether a request looks in-catalog; these rules ask what the text itself carries, so that nothing
is executed on nothing: no evidence, ties, empty slots, vague or sweeping requests, two actions in one
(docs/router.md, 'Evidence rules').
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import numpy as np

from .catalog import DIGEST_ID, actions, index_text
from .io import request_lang
from .lang import JAMO, KO_REQUEST_END, SYLLABLE, SYLLABLES, listed
from .mood import clauses
from .scores import top_order
from .text import normalize

_WORD = re.compile(r"\w+")
_JAMO = re.compile(f"[{JAMO}]+")  # jamo and the Hangul filler
# The listed words (lang/<language>/<name>.txt): filler that carries no action and fills no slot; deictic words that
# point at something said before or name nothing (그 파일, again, the usual); intensifiers and vague quantities
# (quickly, someone, 하나); verbs that say "do something" without naming what (turn, 켜): a request of these alone is
# vague; a sweeping scope (no catalog action means "everything", so a mutating action is asked); a reset or wipe (no
# catalog action does that to the device, unless its own text says so).
FILLER, DEICTIC, MODIFIERS, GENERIC_VERBS, SWEEPING, WIPE = (
    listed(name) for name in ("filler", "deictic", "modifiers", "generic_verbs", "sweeping", "wipe"))
# A Korean word in a verb's informal ending (지워, 맞춰, 꺼, 해): it says what to do, it fills no free slot.
_KO_VERB = re.compile(f"(?:[워줘해봐와]|[{SYLLABLES}]어)$")
# Candidates scoring within this share of the top one are too close for the scores to tell which the request means:
# its own words decide which of them is asked about (Evidence.preferred), and one of another effect is never executed.
CLOSE = 0.1
# Values of a value slot (time, date, duration, level, number): digits, or these words.
_NUMBER_EN = frozenset("""zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty
forty fifty sixty hundred half quarter""".split())
VALUE_WORDS = {
    "time": _NUMBER_EN | {"noon", "midnight", "정오", "자정", "o'clock", "oclock"},
    "date": frozenset("""today tomorrow tonight yesterday monday tuesday wednesday thursday friday saturday sunday
weekend 오늘 내일 모레 글피 주말 어제""".split()),
    "duration": _NUMBER_EN | {"hour", "hours", "minute", "minutes", "second", "seconds"},
    "value": _NUMBER_EN | {"max", "maximum", "min", "minimum", "full", "default", "최대", "최소", "절반", "중간", "기본",
                           # an extreme or a superlative is a level too (제일 밝게, the lowest, as loud as it goes)
                           "lowest", "highest", "loudest", "quietest", "brightest", "dimmest", "제일", "가장", "최고",
                           "최저"},
}
_AS_FAR = re.compile(r"\bas \w+ as (?:it|they|possible|you|i) ?\w*|\ball the way\b")
VALUE_SLOTS = {"time": "time", "date": "date", "day": "date", "duration": "duration", "level": "value",
               "number": "value", "phone": "value", "value": "value", "amount": "value", "count": "value",
               "expression": "value", "percent": "value", "minutes": "duration", "seconds": "duration"}
# Korean number words count with a unit after them (일곱 시, 세시 반, 다섯 분): alone they are quantities (하나, 한 번).
_KO_NUMBER = re.compile("^(?:열한|열두|다섯|여섯|일곱|여덟|아홉|스무|서른|마흔|한|두|세|네|열|쉰)")
_KO_UNIT = re.compile("^(?:시|분|초|시간)")
# Sino-Korean number words count with the units they are said with (삼십 분, 백이십 초, 오십 퍼센트로), the unit
# ending its word or followed by a particle or a time word (구분해서, 사분기, 오프로드 are no numbers); a lone 이
# is left out: 이 분 is "this person" as often as two minutes.
_KO_SINO = re.compile("^(?=[일이삼사오육칠팔구십백천])(?:[이삼사오육칠팔구]?천)?(?:[이삼사오육칠팔구]?백)?"
                      "(?:[이삼사오육칠팔구]?십)?[일이삼사오육칠팔구]?")
_KO_SINO_UNIT = re.compile("^(?:분|초|퍼센트|프로|단계)(?:$|만|간|동안|뒤|후|전|쯤|에|으로|로|이|짜리|씩|까지|정도)")
# Korean enum values of a toggle (켜기, 켬; 끄기, 끔) name it by its verbs, as on and off do.
_KO_TOGGLE = {"켜": "on", "켬": "on", "끄": "off", "끔": "off", "꺼": "off"}
# A reported or quoted message: saying ..., says ..., that ..., a colon or quotes; Korean -다고/-라고/-자고.
_QUOTE = re.compile(r"\b(?:saying|says|that)\b|[:\"“”‘’]|[다라자냐까요]고(?:\s|$|,)")
_VERB = re.compile(r"[A-Za-z][a-z0-9]*|[^_\W]+")
# The verbs that say which way a toggle goes: connecting, starting or going into a mode is on (연결해, 모드로 해);
# releasing, cutting or killing it is off (해제해, 풀어, 끊어).
ON_OFF = {"on": ("켜", "on", "enable", "activate", "start", "connect", "시작", "연결", "모드로"),
          "off": ("꺼", "끄", "off", "disable", "deactivate", "stop", "kill", "disconnect", "해제", "풀어", "끊", "cut",
                  "shut", "막아", "차단")}
# How requests say the values that device settings' enums commonly take, in both languages (진동으로 for vibrate,
# 제일 크게 for the largest size): the enum names them in English only.
ENUM_FORMS = {"sound": ("소리", "loud", "ring"), "vibrate": ("진동", "매너", "vibration"),
              "silent": ("무음", "mute", "silence"), "default": ("기본", "원래", "normal"),
              "small": ("작게", "작은", "smaller"), "large": ("크게", "큰", "키워", "bigger", "larger", "big"),
              "extra_large": ("제일", "가장", "최대", "biggest", "largest"), "driving": ("운전", "차로", "drive", "car"),
              "walking": ("걸어", "도보", "walk", "foot"), "transit": ("대중교통", "버스", "지하철", "bus", "subway"),
              "front": ("전면", "셀카", "selfie"), "back": ("후면", "rear"), "next": ("다음",), "previous": ("이전",),
              "home": ("홈",), "lock": ("잠금",), "missed": ("부재중",), "media": ("미디어", "music"),
              "ringtone": ("벨소리",), "call": ("통화",)}
# Going into a feature switches it on: "switch to dark mode", "put it in flight mode", 어두운 테마로.
_INTO = ("to", "into", "in")
_CONNECTIVE = re.compile(r"\s*(?:\band then\b|\band\b|\bthen\b|\bafter that\b|그리고|그 다음에|다음에)\s*")
# A verb that links to the next one (끄고, 껐다가), not a quotation (늦는다고, 하라고), an intention (신청하려고) nor a
# -고 있다/싶다 form.
_LINK = f"(?<=[{SYLLABLES}])(?<![다라자냐려])(?:고|다가)"
_KO_LINK = re.compile(_LINK + "$")
_LINKED = re.compile(_LINK)
_KO_AUX = ("있", "싶")
# Korean typed without spaces (와이파이꺼줘, 알람7시로맞춰줘) is read as its spaced form: a Hangul word the catalog
# does not know is covered, in the fewest pieces, by known words, numbers and the one-syllable words below, each
# piece keeping what follows it as spaced Korean keeps it attached: particles (와이파이를), a number's unit (7시),
# 하다 after a noun (설정해), a linking -고/-다가 (켜고), after which nothing attaches. A word no such cover spells
# stays whole (docs/router.md, 'Evidence rules'). Words longer than SPACED_MAX are left whole: no request runs that
# many syllables together, and the cover's cost grows with the length.
_PARTICLES, _HADA, _NUMBER_UNITS, _ONE_VERBS, _ONE_WORDS = (
    listed(name, ("ko",)) for name in ("particles", "hada", "number_units", "one_verbs", "one_words"))
_LINKS = frozenset(("고", "다가"))
_LEAD = listed("lead", ("en",))
_READ_VERBS = listed("read_verbs", ("en",))
_TRAILING = re.compile("(?:%s)+" % "|".join(sorted(_PARTICLES | _HADA, key=len, reverse=True)))
_ALNUM = re.compile("[0-9a-z]+")  # one piece, as spaced text keeps it (5g, b2): digits alone are a number
SPACED_MAX = 64
# What may attach to a piece, by the piece's kind: (n)oun, (v)erb, (d)igits, (o)ther, after a (p)article, (l)inked,
# (f)iller.
_ATTACH = {"n": ("p", "h"), "v": ("p", "k"), "d": ("p", "u"), "o": ("p",), "p": ("p",), "l": (), "f": ()}
# A word no cover spells is read in part (a compound the catalog does not know, 배경화면을, or a verb written with its
# ending, 이체해주세요, reads the same way, so only these count): a command run together, ending on a request ending
# after UNREAD_MIN syllables or more that hold a known word other than filler (잔잔한재즈틀어줘) is unread; a sweeping
# word inside one is seen (흐린거전부), and a linking -고 before a known word or a number ends a part (맞추고화면).
UNREAD_MIN = 5
_REQUEST_END = re.compile(f"(?:해)?{KO_REQUEST_END}$")


def words(text: str) -> list[str]:
    """The normalised words of a text (NFKC, case-folded); punctuation, emoji and loose jamo are not words.

    Jamo left over after NFC (ㅋㅋ, ㅠㅠ) are removed before NFKC, which would compose ㅋ + ㅠ into 큐."""
    return list(_words(text))


@lru_cache(maxsize=4096)  # a request's words are asked for by several rules, a catalog's by every router over it
def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalize(_JAMO.sub(" ", unicodedata.normalize("NFC", text))).replace("_", " ")))


def _stem(word: str) -> str:
    """A crude stem for matching a request word with catalog text: the first syllable of a Korean word
    (verb endings and particles change the rest: 맞춰/맞추기, 알람을/알람), the first four letters otherwise."""
    return word[0] if SYLLABLE.match(word) else word[:4]


class Evidence:
    """The rules above for one catalog (index text variant E1: names, descriptions, parameters, keywords)."""

    def __init__(self, catalog: list[dict], langs):
        self.tools = {t["id"]: t for t in actions(catalog)}
        self.vocab = {i: set(words(index_text(t, "E1", langs))) for i, t in self.tools.items()}
        self.stems = {i: {_stem(w) for w in v} for i, v in self.vocab.items()}
        # an action's examples name it as its own texts do (깨워 for an alarm); they explain no slot, since their
        # words are slot values too (엄마한테 in 엄마한테 전화해)
        self.named = {i: self.vocab[i] | {w for e in t.get("examples", []) if e["lang"] in langs for w in words(e["text"])}
                      for i, t in self.tools.items()}
        self.catalog_words = set().union(*self.named.values()) if self.named else set()
        self.bare = {i: {_bare(w) for w in v if SYLLABLE.match(w)} for i, v in self.named.items()}
        # the words an unspaced request is read in (_spaced): the catalog's and the rules' own, of two syllables or
        # more, particles aside
        self.known = frozenset(w for w in self.catalog_words.union(FILLER, DEICTIC, MODIFIERS, GENERIC_VERBS, SWEEPING,
                                                                   WIPE, *VALUE_WORDS.values())
                               if len(w) > 1 and SYLLABLE.fullmatch(w[0]) and w not in _PARTICLES)
        self.longest = max(map(len, self.known), default=0)
        self.content_known = self.known - FILLER
        self.described = {lang for t in self.tools.values() for lang in langs if _described(t, lang)}
        # what each action does, as its own texts state it: the predicates of its names, descriptions and examples,
        # and the verb of its id (list_alarms: list, show, 보여; not set, though "the alarms I set" is an example)
        self.does = {i: {effect(i), *self.predicates([c for x in _own_texts(t, langs) for c in clauses(x)])}
                     for i, t in self.tools.items()}
        self.does_bare = {i: {_bare(d) for d in v if SYLLABLE.match(d)} for i, v in self.does.items()}

    def words(self, text: str) -> list[str]:
        """:func:`words`, a Korean word typed without spaces read as the words it runs together (:func:`_spaced`)."""
        return [piece for w in words(text) for piece in self._split(w)]

    def content_words(self, text: str) -> list[str]:
        """Words that could name an action: not a bare number, not filler."""
        return [w for w in self.words(text) if not w.isdigit() and w not in FILLER]

    def content_free(self, text: str) -> bool:
        """Only punctuation, emoji, symbols, jamo, numbers and filler: nothing an action could be chosen on."""
        return not self.content_words(text)

    def _split(self, word: str) -> tuple[str, ...]:
        if word in self.known or not SYLLABLE.search(word) or len(word) > SPACED_MAX:
            return (word,)
        return _spaced(word, self.known, self.longest) or (word,)

    def unread(self, text: str) -> bool:
        """Is a word a command typed without spaces that no cover spells (see ``UNREAD_MIN``)? What else it says is
        not seen by the other rules."""
        return any((m := _REQUEST_END.search(w)) and m.start() >= UNREAD_MIN and self._unspelled(w)
                   and self._holds(w[:m.start()], self.content_known) for w in words(text))

    def _unspelled(self, word: str) -> bool:
        return bool(SYLLABLE.search(word)) and word not in self.known and self._split(word) == (word,)

    def _holds(self, word: str, listed) -> list[str]:
        """The Korean words of two syllables or more of ``listed`` that occur inside ``word``."""
        return [word[i:i + k] for i in range(len(word)) if SYLLABLE.match(word[i])
                for k in range(2, min(self.longest, len(word) - i) + 1) if word[i:i + k] in listed]

    def _starts_known(self, rest: str) -> bool:
        """Does ``rest`` start with a known word of two syllables or more, or a number?"""
        return rest[:1].isdigit() or any(rest[:k] in self.known for k in range(2, min(self.longest, len(rest)) + 1))

    def has_evidence(self, text: str, lexical_max: float) -> bool:
        """False when the request is content-free, or no BM25 score is above 0 and no word is a catalog word, in a
        language the catalog is described in (a Korean request over English-only tools shares no word with them
        whatever it asks: there a score of 0 is no evidence against it, and the ranker decides)."""
        content = self.content_words(text)
        return bool(content) and (lexical_max > 0 or any(w in self.catalog_words for w in content)
                                  or request_lang(text) not in self.described | {None})

    def _unexplained(self, text: str, tool_id: str) -> list[str]:
        """Words that could fill a free slot of ``tool_id``: content words its catalog text does not explain that are
        neither deictic, modifiers, verbs (generic ones, Korean informal endings) nor single letters."""
        return [w for w in self.content_words(text) if not self._explains(tool_id, w) and len(w) > 1
                and not (w in DEICTIC or w in MODIFIERS or w in GENERIC_VERBS or _KO_VERB.search(w))]

    def missing_slot(self, text: str, tool_id: str) -> str | None:
        """The first required parameter of ``tool_id`` that nothing in the request could fill (None: all filled).

        A value slot needs a number or a value word of its kind, an enum slot one of its values, a ``message`` a
        quoted or reported span; the free slots share the request's unexplained words, one at least each."""
        params = self.tools[tool_id]["parameters"]
        props, ws = params.get("properties") or {}, self.words(text)
        spare = len(self._unexplained(text, tool_id)) + sum(w.isdigit() for w in ws)
        for name in params.get("required") or []:
            spec = props.get(name) or {}
            if spec.get("enum"):
                filled = any(_names_value(ws, v) or _spans_value(ws, v) for v in spec["enum"]) or (
                    set(spec["enum"]) == {"on", "off"} and self._into(ws, tool_id))
            elif name in VALUE_SLOTS or spec.get("type") in ("integer", "number"):
                filled = _has_value(ws, VALUE_SLOTS.get(name, "value"))
            elif name == "message":
                filled = bool(_QUOTE.search(unicodedata.normalize("NFC", text)))
            else:  # a free slot takes one of the words no other free slot took
                filled, spare = spare > 0, spare - 1
            if not filled:
                return name
        return None

    def _into(self, ws: list[str], tool_id: str) -> bool:
        """Does the request go into the feature (to/into/in and a word its text explains; a word of it with -로)?"""
        content = [w for w in ws if w not in FILLER or w in _INTO]
        return any(w in _INTO and k + 1 < len(content) and self._explains(tool_id, content[k + 1])
                   for k, w in enumerate(content)) or any(
            SYLLABLE.match(w) and w.endswith("로") and (w[:-1] in self.vocab[tool_id] or w[:-2] in self.vocab[tool_id])
            for w in ws)

    def vague(self, text: str) -> bool:
        """One content word, or nothing but deictic words, modifiers and generic verbs ("Restart", "off", "켜 줘",
        "again", "the usual", "turn it up"): too little to execute on, whatever the ranker says."""
        numbers = [w for w in self.words(text) if w.isdigit()]  # a number is a value: "Block 555-0199" is not vague
        content = [w for w in self.content_words(text) if w not in DEICTIC and w not in MODIFIERS] + numbers
        return len(content) <= 1 or all(w in GENERIC_VERBS or w.isdigit() for w in content)

    def sweeping(self, text: str, tool_id: str) -> bool:
        """A wipe or reset, or a sweeping scope (everything, all, 전부) for a mutating action, that the action's own
        text does not state ("Clear all notifications" states it): more than the action does."""
        scope = WIPE | SWEEPING if self.changes(tool_id) and self._targets(tool_id) else WIPE
        inside = [s for w in words(text) if self._unspelled(w) for s in self._holds(w, scope)]
        return any((w in scope or _bare(w) in scope) and not self._explains(tool_id, w)
                   for w in [*self.words(text), *inside])

    def _targets(self, tool_id: str) -> bool:
        """Does the action take a target (a required slot neither an enum nor a value)? One without acts on its whole
        domain already (clear the notifications, a toggle, a level), so a sweeping word adds nothing to it."""
        params = self.tools[tool_id]["parameters"]
        props = params.get("properties") or {}
        return any(not (props.get(n) or {}).get("enum") and n not in VALUE_SLOTS
                   and (props.get(n) or {}).get("type") not in ("integer", "number") for n in params.get("required") or [])

    def _explains(self, tool_id: str, word: str) -> bool:
        return word in self.vocab[tool_id] or _stem(word) in self.stems[tool_id]

    def preferred(self, text: str, ids: list[str]) -> str:
        """Of candidates ``ids`` whose scores are too close to tell apart (best first), the one the request's own words
        support most: words only its catalog text explains, and the verb of its id when the others' differ; ties keep
        the ranker's order."""
        ws = [w for w in self.content_words(text) if w not in DEICTIC and w not in MODIFIERS]

        def support(c: str) -> int:
            others = [o for o in ids if o != c]
            own = sum(self._explains(c, w) and not any(self._explains(o, w) for o in others) for w in ws)
            return own + (effect(c) in ws and all(effect(o) != effect(c) for o in others))
        return max(ids, key=lambda c: (support(c), -ids.index(c)))

    def parts(self, text: str) -> list[str]:
        """The text cut at connectives (and, then, -고 / -다가 verb endings, in a word typed without spaces too); one
        part when none."""
        out = []
        for piece in _CONNECTIVE.split(unicodedata.normalize("NFC", text)):
            part = []
            tokens = [p for token in piece.split() for p in self._token(token)]
            for k, token in enumerate(tokens):
                part.append(token)
                if _KO_LINK.search(token.rstrip(",.")) and not (k + 1 < len(tokens) and tokens[k + 1].startswith(_KO_AUX)):
                    out.append(" ".join(part))
                    part = []
            out.append(" ".join(part))
        return [p for p in out if p]

    def steps(self, text: str, score) -> list[str]:
        """The distinct top actions of the parts that have lexical evidence (as typed, else read as :meth:`words`
        reads them), and ``?k`` for a part after a named step's linked verb that asks for something no score names;
        two or more make a multistep request.

        ``score(part)``: the lexical ranker's scores of the catalog's actions, in :attr:`tools` order.
        """
        tops, parts = [], self.parts(text)
        for k, part in enumerate(parts):
            read = self.words(part)
            top = self._top(part, score) or (len(read) > len(words(part)) and self._top(" ".join(read), score))
            if top:
                tops.append(top)
            elif tops and _KO_LINK.search(parts[k - 1].rstrip(",.")) and self._asks(part):
                tops.append(f"?{k}")  # what a linked verb after a named step leads to, unscored: a step all the same
        return list(dict.fromkeys(tops))

    def _top(self, part: str, score) -> str | None:
        """The part's top action: a unique top BM25 score above 0 that a word of the part names."""
        s = np.asarray(score(part), float)
        top = list(self.tools)[int(s.argmax())]
        return top if s.max() > 0 and (s == s.max()).sum() == 1 and self.names(part, top) else None

    def _asks(self, part: str) -> bool:
        """Does a part carry a request of its own: a content word that is not deictic, a modifier or a generic verb,
        and a request ending (틀어 줘, 보내 주세요)?"""
        ws = [w for w in self.content_words(part) if w not in DEICTIC and w not in MODIFIERS and w not in GENERIC_VERBS
              and not _REQUEST_END.fullmatch(w)]  # a request ending alone (해요) asks for nothing
        return bool(ws) and bool(_REQUEST_END.search("".join(self.words(part))))

    def _token(self, token: str) -> tuple[str, ...]:
        """A token of the text as written, or the pieces of its words (:func:`words`, :meth:`_split`, a word no cover
        spells cut after a linking -고 before a known word or a number) where it runs a linked verb and the next words
        together."""
        pieces = tuple(p for w in words(token) for p in self._linked(w))
        return pieces if any(_KO_LINK.search(p) for p in pieces[:-1]) else (token,)

    def _linked(self, word: str) -> list[str]:
        """:meth:`_split`'s pieces of a word, one no cover spells cut after each linking -고 before a known word."""
        pieces = []
        while self._unspelled(word):
            cut = next((m.end() for m in _LINKED.finditer(word) if self._starts_known(word[m.end():])), None)
            if cut is None:
                break
            pieces.append(word[:cut])
            word = word[cut:]
        return [*pieces, *self._split(word)]

    def predicates(self, clauses: list[str]) -> list[str]:
        """The predicate of each clause (:func:`toolgate.core.mood.clauses`): a Korean clause's last word before its
        request ending (문자 보내 줘: 보내; 전화해: 전화), an English clause's first word after filler and the words that
        lead to a verb (can you, I want to, please)."""
        out = []
        for clause in clauses:
            ws = [w for w in self.words(clause) if w not in DEICTIC and w not in MODIFIERS]
            if ws and SYLLABLE.match(ws[-1]):
                ws = [w for w in ws if w not in FILLER and not _REQUEST_END.fullmatch(w)]
                pred = _REQUEST_END.sub("", ws[-1]) if ws else ""
            else:
                pred = next((w for w in ws if w not in FILLER and w not in _LEAD and not w.isdigit()), "")
            out += [pred] if pred else []
        return out

    def operation(self, clauses: list[str], tool_id: str, among) -> str | None:
        """Another action whose operation the request asks for where ``tool_id``'s is not: in the clauses that hold an
        object word of ``tool_id`` (a word it names, not its verb), no predicate is named by ``tool_id``, and another
        action ``among`` the request's top candidates names a predicate and an object word (민수한테 문자 보내 줘 over
        read_messages: send_message). None when
        the operation agrees, or no other action states it (a predicate the catalog does not know tells nothing, nor
        a generic verb: turn, 켜)."""
        held = [(c, self._objects(c, tool_id)) for c in clauses]
        held = [(c, objects) for c, objects in held if objects]
        preds = [p for c, _ in held for p in self.predicates([c]) if len(p) > 1]
        if not preds or any(self._does(tool_id, p) for p in preds):
            return None
        objects = {w for _, ws in held for w in ws} - set(preds)
        others = [o for o in among if o != tool_id and any(self._does(o, p) for p in preds)
                  and any(self._states(o, w) for w in objects)]
        words = self.content_words(" ".join(clauses))
        return max(others, key=lambda o: (sum(self._states(o, w) for w in words), -among.index(o)), default=None)

    def _does(self, tool_id: str, predicate: str) -> bool:
        """Is the predicate one of the action's own (:attr:`does`), read as :func:`_among` reads a word?"""
        return _among(predicate, self.does[tool_id], self.does_bare[tool_id])

    def _objects(self, clause: str, tool_id: str) -> list[str]:
        """The clause's words that the tool names, its verbs, particles, numbers and the rules' lists aside."""
        return [w for w in self.content_words(clause) if len(w) > 1 and not w.isdigit() and w not in _PARTICLES
                and w not in DEICTIC and w not in MODIFIERS and w not in GENERIC_VERBS and self._states(tool_id, w)]

    def _states(self, tool_id: str, word: str) -> bool:
        """Does the tool's catalog text or examples hold the word, read as :func:`_among` reads it?"""
        return _among(word, self.named[tool_id], self.bare[tool_id])

    def reads_only(self, tool_id: str) -> bool:
        """Does the action only read? Its mutating flag where the catalog gives one, else a read verb among the words
        of its id (stock_price_get, find_contact)."""
        tool = self.tools[tool_id]
        if "mutating" in tool:
            return not tool["mutating"]
        return bool(set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", tool_id).lower())) & _READ_VERBS)

    def changes(self, tool_id: str) -> bool:
        """Does the action change something? (True where the catalog carries no mutating flags.)"""
        return self.tools[tool_id].get("mutating", True)

    def names(self, text: str, tool_id: str) -> bool:
        """Does a content word of ``text`` occur in the tool's catalog text or examples (Korean: its first two
        syllables)?"""
        vocab = self.named[tool_id]
        return any(w in vocab or (SYLLABLE.match(w) and len(w) > 1 and any(v.startswith(w[:2]) for v in vocab))
                   for w in self.content_words(text))


@lru_cache(maxsize=8192)
def _bare(word: str) -> str:
    """A Korean word without its trailing particles or 하다 (전부를: 전부, 초기화해: 초기화); two syllables at least are
    kept (아이 is not 아 with a particle)."""
    for k in range(2, len(word)):
        if _TRAILING.fullmatch(word[k:]):
            return word[:k]
    return word


@lru_cache(maxsize=8192)  # several rules read each request's words; a study decides the same requests again
def _spaced(word: str, known: frozenset, longest: int) -> tuple[str, ...] | None:
    """``word`` as the fewest pieces that spell it (see ``_ATTACH``), or None when none does. A new piece is a known
    word (n; filler f), a one-syllable verb (v) or word (o), a number (d) or a run with Latin letters (o); an
    attachment is a particle (p), 하다 after a noun (h), a number's unit (u) or a link (k), after which nothing
    attaches."""
    n = len(word)
    # position -> {kind of the last piece: (cost, back, new piece)}; the cost is (pieces, one-syllable words,
    # -attachments): the fewest pieces, then the fewest one-syllable words (빨리 이거, not 빨리이 거), then the most
    # attached (설정해 줘, not 설정 해줘)
    best: list[dict] = [{} for _ in range(n + 1)]
    best[0][""] = ((0, 0, 0), None, False)

    def relax(i: int, j: int, kind: str, new: bool, came: tuple):
        pieces, single, attached = best[i][came[1]][0]
        cost = ((pieces + 1, single + (kind == "o" and j - i == 1), attached) if new
                else (pieces, single, attached - 1))
        if j <= n and (kind not in best[j] or best[j][kind][0] > cost):
            best[j][kind] = (cost, came, new)

    for i in range(n):
        for last in list(best[i]):
            for how in _ATTACH.get(last, ()):
                for size in range(1, 4):
                    piece = word[i:i + size]
                    if how == "p" and piece in _PARTICLES:
                        relax(i, i + size, "p", False, (i, last))
                    elif how == "h" and piece in _HADA:
                        relax(i, i + size, "l" if piece.endswith("고") else "v", False, (i, last))
                    elif how == "u" and piece in _NUMBER_UNITS:
                        relax(i, i + size, "o", False, (i, last))
                    elif how == "k" and piece in _LINKS:
                        relax(i, i + size, "l", False, (i, last))
        if not best[i]:
            continue
        came = (i, min(best[i], key=lambda k: best[i][k][0]))
        for size in range(2, min(longest, n - i) + 1):
            if word[i:i + size] in known:  # filler takes nothing after it (지금 이 번호, not 지금이 번호)
                relax(i, i + size, "f" if word[i:i + size] in FILLER else "n", True, came)
        if word[i] in _ONE_VERBS or word[i] in _ONE_WORDS:
            relax(i, i + 1, "v" if word[i] in _ONE_VERBS else "o", True, came)
        if m := _ALNUM.match(word, i):
            relax(i, m.end(), "d" if m.group(0).isdigit() else "o", True, came)
    if not any(k for k in best[n]):
        return None
    end, kind, pieces, piece = n, min((k for k in best[n] if k), key=lambda k: best[n][k][0]), [], ""
    while end:
        _, (start, before), new = best[end][kind]
        piece = word[start:end] + piece
        if new:
            pieces.append(piece)
            piece = ""
        end, kind = start, before
    return tuple(reversed(pieces))


def _among(word: str, words, bare) -> bool:
    """Is ``word`` one of ``words``: as written, a Korean one by its form without particles or 하다 (``bare``: those
    forms of ``words``; 메모를 is 메모, not 메모리), an English one of four letters or more by its first four (texts: a
    text, sending: send)?"""
    if word in words:
        return True
    if SYLLABLE.match(word):
        return _bare(word) in bare
    return word.isascii() and len(word) > 3 and any(v[:4] == word[:4] for v in words)


def _own_texts(tool: dict, langs) -> list[str]:
    """The action's names, descriptions and examples in ``langs``."""
    return [x for lang in langs for x in (tool["names"].get(lang), tool["descriptions"].get(lang)) if x] + [
        e["text"] for e in tool.get("examples", []) if e["lang"] in langs]


def _described(tool: dict, lang: str) -> bool:
    """Does the tool carry text BM25 indexes in ``lang``: a name, description or keywords, or a parameter's
    description given for that language? (Examples are not indexed; a plain-string parameter description is any
    language's.)"""
    props = tool["parameters"].get("properties") or {}
    return bool(tool["names"].get(lang) or tool["descriptions"].get(lang) or tool.get("keywords", {}).get(lang)
                or any(isinstance(p.get("description"), dict) and p["description"].get(lang) for p in props.values()))


def _names_value(ws: list[str], value) -> bool:
    """Does a word name the value (on/off, 켜기/끄기 by their verbs too; a Korean form as a word's start)?"""
    v = str(value).lower()
    forms = ON_OFF.get(v) or ON_OFF.get(_KO_TOGGLE.get(v[:1], "")) or (v, *ENUM_FORMS.get(v, ()))
    return any(w == f or (SYLLABLE.match(f) and w.startswith(f)) for w in ws for f in forms)


def _spans_value(ws: list[str], value) -> bool:
    """Does a run of words, from a word's start, spell a Korean enum value however the request spaces it (한 곡 for
    한곡, 베이스강조로 for 베이스 강조)? Whole words, the last one's ending aside: 목소리 is not 소리."""
    v = str(value).replace(" ", "")
    if not (SYLLABLE.match(v) and len(v) > 1):
        return False
    for i in range(len(ws)):
        run = ""
        for w in ws[i:]:
            if not v.startswith(run) or len(run) >= len(v):
                break
            run += w
            if run.startswith(v):
                return True
    return False


def _has_value(ws: list[str], kind: str) -> bool:
    """A digit, a value word of ``kind`` (time, date, duration, value; a Korean one with its particle: 최대로), or a
    Korean number word with its unit."""
    if any(ch.isdigit() for w in ws for ch in w) or any(_names_value(ws, v) for v in VALUE_WORDS[kind]):
        return True
    if kind == "value" and _AS_FAR.search(" ".join(ws)):
        return True
    if kind == "date":
        return any(w.endswith("요일") for w in ws)
    return _with_unit(ws, _KO_NUMBER, _KO_UNIT) or _with_unit(ws, _KO_SINO, _KO_SINO_UNIT)


def _with_unit(ws: list[str], number: re.Pattern, unit: re.Pattern) -> bool:
    """A number word followed by a unit, in the word (세시) or the next (일곱 시)."""
    after = [w[m.end():] or (ws[i + 1] if i + 1 < len(ws) else "") for i, w in enumerate(ws) if (m := number.match(w))]
    return any(unit.match(u) for u in after)


def effect(tool_id: str) -> str:
    """What an action does, read from its id's verb (set_alarm: set; deleteFile: delete); an id that is a digest of
    its name (a Korean one: 음악_재생) has no verb to read, so the action is taken to differ from every other."""
    if DIGEST_ID.fullmatch(tool_id):
        return tool_id
    m = _VERB.match(tool_id)
    return (m.group(0) if m else tool_id).lower()


def near_tie(first: float, second: float, margin: float) -> bool:
    """Is the runner-up's score within ``margin`` (relative to the top score's size) of the top score?"""
    return second >= first - margin * abs(first)


def tie_margin(acts: np.ndarray, action_ids, decided: tuple, margins, cost: float) -> float:
    """The largest of ``margins`` whose near-tie asks stay within ``cost`` on every fold: of a fold's requests whose
    gold is an action, the share the band executes that a margin would ask instead (top two of ``acts``, requests x
    actions, of different effect); 0.0 when even the smallest costs more, or a catalog has one action.
    ``decided``: (the band's kind per request, gold-is-an-action per request, fold per request)."""
    kind, action_gold, folds = decided
    if acts.shape[1] < 2:
        return 0.0
    order = top_order(acts, 2)
    first, second = np.take_along_axis(acts, order, 1).T
    ids = np.asarray(action_ids)
    differ = np.array([effect(a) != effect(b) for a, b in zip(ids[order[:, 0]], ids[order[:, 1]])], bool)
    chosen = 0.0
    for margin in sorted(margins):
        asked = (kind == "action") & action_gold & differ & near_tie(first, second, margin)
        if max(asked[folds == f].sum() / max(action_gold[folds == f].sum(), 1) for f in np.unique(folds)) > cost:
            break
        chosen = float(margin)
    return chosen
