"""Requests that talk about an action without asking for it (toolgate.core.mood), written for these tests (never
the probes): each form in both languages, and requests that carry the same words but ask."""
import pytest

from toolgate.core.mood import clauses, talks_about

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
