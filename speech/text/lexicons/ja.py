"""Japanese text normalisation data.

Everything is written in hiragana/katakana because eSpeak NG's Japanese voice reads kana only.
Counters after numbers (年 月 日 時 分 人 ...) are rewritten with their readings, including the
irregular day and month readings; other kanji are left for the phonemiser.
"""

from __future__ import annotations

import re
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal

LANG = "ja"
MONTHS = tuple(
    "いちがつ にがつ さんがつ しがつ ごがつ ろくがつ しちがつ はちがつ くがつ じゅうがつ じゅういちがつ じゅうにがつ".split()
)
_DAYS = {
    1: "ついたち",
    2: "ふつか",
    3: "みっか",
    4: "よっか",
    5: "いつか",
    6: "むいか",
    7: "なのか",
    8: "ようか",
    9: "ここのか",
    10: "とおか",
    14: "じゅうよっか",
    20: "はつか",
    24: "にじゅうよっか",
}
_HOURS = {4: "よじ", 7: "しちじ", 9: "くじ"}
_PEOPLE = {1: "ひとり", 2: "ふたり"}


def day(n: int) -> str:
    return _DAYS.get(n, cardinal(n, LANG) + "にち")


def say_time(hour: int, minute: int, meridiem: str | None) -> str:
    """``14:30`` じゅうよじ さんじゅうふん."""
    h = _HOURS.get(hour % 10 if hour >= 10 and hour % 10 in _HOURS else hour)
    head = (
        (cardinal(hour - hour % 10, LANG) if hour >= 10 and h else "") + h
        if h
        else cardinal(hour, LANG) + "じ"
    )
    return head if minute == 0 else f"{head} {cardinal(minute, LANG)}ふん"


def _counter(m: Match[str]) -> str:
    n, unit = int(m.group(1)), m.group(2)
    if unit == "年":
        return "よねん" if n == 4 else cardinal(n, LANG) + "ねん"
    if unit == "月" and 1 <= n <= 12:
        return MONTHS[n - 1]
    if unit == "日":
        return day(n)
    if unit == "時":
        return say_time(n, 0, None)
    if unit == "人":
        return _PEOPLE.get(n, cardinal(n, LANG) + "にん")
    reading = {
        "分": "ふん",
        "秒": "びょう",
        "歳": "さい",
        "個": "こ",
        "回": "かい",
        "番": "ばん",
        "月": "かげつ",
    }
    return cardinal(n, LANG) + reading[unit]


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=False,
    percent="パーセント",
    range_word="から",
    currency_joiner=" ",
    and_word=" と ",
    months=MONTHS,
    date=DateStyle(
        template="{year}ねん {month} {day}", template_no_year="{month} {day}", day_first=False, day_word=day
    ),
    time=TimeStyle(template="{h}じ {m}ふん", on_the_hour="{h}じ", custom=say_time),
    units={
        "mm": Unit("ミリメートル", "ミリメートル"),
        "cm": Unit("センチメートル", "センチメートル"),
        "m": Unit("メートル", "メートル"),
        "km": Unit("キロメートル", "キロメートル"),
        "g": Unit("グラム", "グラム"),
        "kg": Unit("キログラム", "キログラム"),
        "ml": Unit("ミリリットル", "ミリリットル"),
        "l": Unit("リットル", "リットル"),
        "L": Unit("リットル", "リットル"),
        "km/h": Unit("キロ", "キロ"),
        "°C": Unit("ど", "ど"),
        "℃": Unit("ど", "ど"),
        "°": Unit("ど", "ど"),
        "GB": Unit("ギガバイト", "ギガバイト"),
        "MB": Unit("メガバイト", "メガバイト"),
    },
    currencies={
        "¥": Currency("えん", "えん"),
        "￥": Currency("えん", "えん"),
        "円": Currency("えん", "えん"),
        "JPY": Currency("えん", "えん"),
        "$": Currency("ドル", "ドル", "セント", "セント"),
        "€": Currency("ユーロ", "ユーロ"),
        "£": Currency("ポンド", "ポンド"),
    },
    symbols={"&": "アンド", "+": "プラス", "=": "イコール", "@": "アット"},
    web={
        ".": "ドット",
        "@": "アットマーク",
        "/": "スラッシュ",
        ":": "コロン",
        "-": "ハイフン",
        "_": "アンダーバー",
        "+": "プラス",
        "www": "ダブリューダブリューダブリュー",
    },
    regnal_names=frozenset(),
    latin_script=False,
    rules=((re.compile(r"(\d+)\s?(年|月|日|時|分|秒|人|歳|個|回|番)"), _counter),),
)
