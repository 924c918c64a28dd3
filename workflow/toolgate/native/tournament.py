"""The multiple-choice tournament ranker: the second seed's "Laya" backend, ported to a chat model.

Groups of lettered options, winners advancing until one remains (docs/metrics.md, 'Multiple-choice tournament').
An invalid answer advances the group's first option, so it costs one group, not the request; a prompt over the
limit is an error, never truncated, since a shortened list would rank tools the model never saw.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass

from ..core.errors import InputError
from .protocol import is_context_error, openai_tools

LETTERS = string.ascii_uppercase  # the schema caps tournament.group_size at 26
SYSTEM_PROMPT = ("You route requests on a device. Pick the one option that best fits the user's request. "
                 "Answer with the option's letter only.")
_LETTER = re.compile(r"\(?([A-Z])(?:[).:](.*))?", re.DOTALL)  # "B", "B)", "(B)", "B. set_alarm", "B: ..."
_NAME = re.compile(r"\s*\)?\s*([A-Za-z0-9_.\-]+)")  # the first word after the letter: a tool id, when it names one


class PromptTooLong(InputError):
    """A group prompt over the configured limit or the server's context: the request is not ranked."""


@dataclass(frozen=True)
class Bracket:
    """One request's tournament: the full ranking (best first), prompts sent per round, invalid answers."""
    ranking: list[str]
    prompts_by_round: list[int]
    invalid: int


def option_texts(actions: list[dict], lang: str) -> dict[str, str]:
    """Option text per action id, in catalog order: "tool_id: name: description" as the native stage offers it."""
    return {t["function"]["name"]: f"{t['function']['name']}: {t['function']['description']}"
            for t in openai_tools(actions, lang)}


def choice_prompt(text: str, options: list[str]) -> str:
    """The user message for one group: the request, the lettered options, the answer asked for."""
    lines = [f"{LETTERS[i]}) {o}" for i, o in enumerate(options)]
    return (f"Request: {text}\n\nOptions:\n" + "\n".join(lines)
            + f"\n\nWhich option fits the request best? Answer with one letter, A-{LETTERS[len(options) - 1]}.")


def parse_letter(answer: str, options: list[str]) -> int | None:
    """The index of the option an answer names by letter; None when the letter is not one of the group's, or when
    the text after it begins with the id of another of ``options`` (the group's tool ids, in letter order)."""
    m = _LETTER.fullmatch((answer or "").strip())
    if m is None or LETTERS.index(m.group(1)) >= len(options):
        return None
    pick = LETTERS.index(m.group(1))
    name = _NAME.match(m.group(2) or "")
    said = name.group(1).rstrip(".:") if name else ""
    return None if said in options and said != options[pick] else pick


def run_bracket(candidates: list[str], ask, group_size: int) -> Bracket:
    """The tournament over ``candidates`` (catalog order); ``ask(group, round, group_number)`` -> the winner's
    index in ``group``, or None for an invalid answer (the group's first option advances)."""
    if group_size < 2:
        raise ValueError(f"group_size must be at least 2, not {group_size}")
    alive, out_in, prompts, invalid = list(candidates), {}, [], 0
    while len(alive) > 1:
        rnd, winners, sent = len(prompts) + 1, [], 0
        for g, start in enumerate(range(0, len(alive), group_size), 1):
            group, pick = alive[start:start + group_size], 0
            if len(group) > 1:
                sent += 1
                answer = ask(group, rnd, g)
                invalid += answer is None
                pick = answer or 0
            winners.append(group[pick])
            out_in.update((t, rnd) for t in group if t != group[pick])
        prompts.append(sent)
        alive = winners
    position = {t: i for i, t in enumerate(candidates)}
    last = len(prompts) + 1  # the winner outlasts every round
    return Bracket(sorted(candidates, key=lambda t: (-out_in.get(t, last), position[t])), prompts, invalid)


def rank_request(utterance_id: str, text: str, options: dict[str, str], answer, group_size: int,
                 max_chars: int) -> Bracket:
    """One request's bracket over ``options`` (id -> option text, catalog order).

    ``answer(system, user)`` returns the model's text for one prompt; it raises
    RuntimeError when the request fails (a context-length message becomes
    :class:`PromptTooLong`). Every prompt is checked against ``max_chars``
    (system + user characters) before it is sent.
    """
    def ask(group: list[str], rnd: int, g: int) -> int | None:
        user = choice_prompt(text, [options[t] for t in group])
        n_chars = len(SYSTEM_PROMPT) + len(user)
        where = f"round {rnd}, group {g}: prompt of {n_chars} characters"
        if n_chars > max_chars:
            raise PromptTooLong(f"request '{utterance_id}'", f"{where} is over the limit of {max_chars}; prompts are "
                                                             "never truncated", field="tournament.max_prompt_chars")
        try:
            return parse_letter(answer(SYSTEM_PROMPT, user), group)
        except RuntimeError as exc:
            if is_context_error(str(exc)):
                raise PromptTooLong(f"request '{utterance_id}'", f"{where} is over the server's context ({exc}); "
                                                                 "prompts are never truncated") from None
            raise

    return run_bracket(list(options), ask, group_size)
