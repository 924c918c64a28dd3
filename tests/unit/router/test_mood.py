"""Requests that talk about an action without asking for it (toolgate.core.mood), written for these tests (never
the probes): each form in both languages, and requests that carry the same words but ask."""
import numpy as np
import pytest

from conftest import ROOT
from toolgate.core.artifact import sha256
from toolgate.core.mood import FRAMES, MoodModel, clauses, conditions, masked, mood, talks_about
from toolgate.router.mood import command_threshold

TALKS = [
    ("howto", "와이파이 어떻게 꺼?"), ("howto", "알람 지우는 거 어떻게 해?"), ("howto", "핫스팟 켜는 방법 좀 알려 줘"),
    ("howto", "How do I turn on dark mode?"), ("howto", "Where's the setting for the screen magnifier?"),
    ("negation", "사진 지우지 마"), ("negation", "엄마한테 아직 문자 보내지 마"), ("negation", "모바일 데이터는 건드리지 마"),
    ("negation", "7시 알람은 안 맞춰도 돼"), ("negation", "와이파이안꺼도괜찮아"),  # no need to: 안 ...도 돼
    ("negation", "Don't lock the screen yet, I'm still reading."), ("negation", "Please don't clear my notifications."),
    ("past", "아까 와이파이 껐어"), ("past", "회의 일정 이미 추가해 놨어"), ("past", "어젯밤에 비행기 모드 켜 놓고 잤어"),
    ("past", "I already set my alarm for tomorrow."), ("past", "I turned on battery saver this morning."),
    ("conditional", "나중에 비행기 모드 켤지도 몰라"), ("conditional", "화면 잠그면 음악 멈춰?"),
    ("conditional", "If I turn off mobile data, will I still get texts?"),
    ("conditional", "Maybe I'll set a timer later when the pasta goes in."),
    ("why", "왜 블루투스가 꺼졌지?"), ("why", "Why did my hotspot turn off by itself?"),
]
ASKS = ["와이파이 꺼 줘", "안내 시작해도 되니까 길 안내해 줘", "7시 알람 지워 줘", "블루투스 꺼", "방해 금지 모드 켜 줘", "내일 아침 9시에 약 먹으라고 잊지 말고 알려 줘",
        "손전등 어떻게 켜는지 모르겠다, 그냥 켜 줘", "왜 이렇게 눈부셔, 밝기 좀 낮춰 줘", "지도에 나 어디 있는지 띄워 줘",
        "Turn off wifi.", "Don't forget to remind me to call mom at 5.", "Do not disturb mode on.",
        "Don't wait, call Sarah right now.", "Why is it so dark in here? Turn on the flashlight.",
        "I already asked once, turn on battery saver now.", "Can you turn on airplane mode?", "I need the flashlight",
        "I've left the house, so cut the Wi-Fi", "Set an alarm for 6:30 tomorrow."]


@pytest.mark.parametrize("form,text", TALKS)
def test_a_request_that_talks_about_an_action_is_read_as_such(form, text):
    assert talks_about(text) == form


@pytest.mark.parametrize("text", ASKS)
def test_a_request_that_asks_is_not(text):
    assert talks_about(text) is None


def test_clauses_keep_the_question_mark_and_split_at_connectives():
    assert clauses("Why is it dark? Turn on the light and then play music") == [
        "why is it dark?", "turn on the light", "play music"]


# The mood model and its exact readings (toolgate.core.mood, toolgate.router.mood), on sentences written here.
@pytest.mark.parametrize("text,read", [
    ("Translate 'set an alarm for 7 am' into French", 'Translate "q" into French'),
    ("don't delete 'report.pdf'", "don't delete \"q\""),             # the apostrophe of don't opens no quote
    ("'알람 맞춰 줘'를 영어로 뭐야?", '"q"를 영어로 뭐야?'),             # a quote closes before a particle
    ("It's Sam's phone", "It's Sam's phone"),
])
def test_quoted_spans_are_masked(text, read):
    assert masked(text) == read


@pytest.mark.parametrize("text,found", [
    ("비 오면 알람 맞춰 줘", ["오면"]), ("회의끝나면 전화해줘", ["회의끝나면"]),
    ("화면 잠가 줘", []), ("잠금화면 바꿔 줘", []), ("가능하면 와이파이 꺼 줘", []), ("라면 타이머 3분", []),
])
def test_a_korean_condition_is_a_non_noun_word_ending_in_myeon(text, found):
    assert conditions(text) == found


@pytest.mark.parametrize("text,frame", [
    ("회의 끝나면 엄마한테 전화해 줘", "conditional"), ("퇴근하면 블루투스 켜 줘", "conditional"),
    ("화면 밝기 좀 올려 줘", "command"), ("Please lock the screen", "command"), ("노래 다음 곡으로 넘겨 줘", "command"),
    ("Don't delete the photos", "negation"),
])
def test_the_shipped_model_reads_clear_frames(text, frame):
    assert mood(text)[0] == frame


def test_the_shipped_model_was_fitted_on_the_bank_in_the_checkout():
    with np.load(ROOT / "workflow" / "toolgate" / "core" / "lang" / "mood.npz") as z:
        assert str(z["bank_sha256"]) == sha256((ROOT / "data" / "lang" / "mood_bank.jsonl").read_bytes()), \
            "the bank changed: refit the model with `toolgate mood`"
        assert 0.05 <= float(z["command_min"]) <= 0.5


def test_a_fitted_model_round_trips_and_its_probabilities_sum_to_one():
    texts = ["turn on the lights", "lock the door", "don't lock the door", "never turn on the lights"] * 3
    frames = ["command", "command", "negation", "negation"] * 3
    model = MoodModel.fit(texts, frames, c=10.0, command_min=0.3)
    again = MoodModel.of(model.arrays())
    p = again.proba(["turn on the door", "don't turn on the lights"])
    assert np.allclose(p.sum(1), 1) and np.allclose(p, model.proba(["turn on the door", "don't turn on the lights"]))
    assert again.command_min == 0.3 and p[0, again.classes.index("command")] > 0.5
    assert p[1, again.classes.index("negation")] > 0.5


def test_the_command_threshold_is_the_largest_that_keeps_command_recall():
    rows = [{"lang": lg, "frame": "command"} for lg in ("en", "ko") for _ in range(100)]
    proba = np.zeros((200, len(FRAMES)))
    proba[:, 0] = 0.9
    proba[:4, 0] = 0.12  # four English commands at 0.12: at 0.15 their recall is 0.96, at 0.1 it is 1
    assert command_threshold(rows, proba) == 0.1
    proba[:3, 0] = 0.9
    assert command_threshold(rows, proba) == 0.5


def test_the_hand_reader_agrees_with_kiwi_on_korean_conditions(tmp_path):
    pytest.importorskip("kiwipiepy")
    from toolgate.router.mood import kiwi_agreement

    texts = ["비 오면 알람 맞춰 줘", "화면 잠가 줘", "아까 나오면서 불 껐어", "에어컨 켜려면 어떻게 해?", "퇴근하면 전화해 줘"]
    row = kiwi_agreement({"t": texts}).iloc[0]
    assert (row["n"], row["hand"], row["kiwi"], row["agreement"]) == (5, 2, 2, 1.0)
