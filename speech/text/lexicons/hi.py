"""Hindi text normalisation data (numbers from ``speech.text.numbers_hi``)."""

from __future__ import annotations

import re
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal

LANG = "hi"


def _clock(m: Match[str]) -> str:
    """``3:30 बजे`` तीन बजकर तीस मिनट; ``3 बजे`` stays as tīn baje."""
    hour, minute = int(m.group(1)), int(m.group(2))
    if hour > 24 or minute > 59:
        return m.group(0)
    if minute == 0:
        return f"{cardinal(hour, LANG)} बजे"
    return f"{cardinal(hour, LANG)} बजकर {cardinal(minute, LANG)} मिनट"


_RUPEE = Currency("रुपया", "रुपये", "पैसा", "पैसे")

LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=False,
    percent="प्रतिशत",
    range_word="से",
    currency_joiner=" और ",
    and_word=" और ",
    months=tuple("जनवरी फ़रवरी मार्च अप्रैल मई जून जुलाई अगस्त सितंबर अक्टूबर नवंबर दिसंबर".split()),
    date=DateStyle(template="{day} {month} {year}", template_no_year="{day} {month}"),
    time=TimeStyle(template="{h} बजकर {m} मिनट", on_the_hour="{h} बजे"),
    abbreviations={"डॉ.": "डॉक्टर", "श्री.": "श्री", "सं.": "संख्या"},
    units={
        "km": Unit("किलोमीटर", "किलोमीटर"),
        "m": Unit("मीटर", "मीटर"),
        "cm": Unit("सेंटीमीटर", "सेंटीमीटर"),
        "kg": Unit("किलोग्राम", "किलोग्राम"),
        "g": Unit("ग्राम", "ग्राम"),
        "l": Unit("लीटर", "लीटर"),
        "°C": Unit("डिग्री सेल्सियस", "डिग्री सेल्सियस"),
        "°": Unit("डिग्री", "डिग्री"),
        "km/h": Unit("किलोमीटर प्रति घंटा", "किलोमीटर प्रति घंटा"),
        "h": Unit("घंटा", "घंटे"),
        "min": Unit("मिनट", "मिनट"),
        "GB": Unit("जीबी", "जीबी"),
        "कि.मी.": Unit("किलोमीटर", "किलोमीटर"),
    },
    currencies={
        "₹": _RUPEE,
        "Rs.": _RUPEE,
        "Rs": _RUPEE,
        "INR": _RUPEE,
        "रु.": _RUPEE,
        "$": Currency("डॉलर", "डॉलर", "सेंट", "सेंट"),
        "€": Currency("यूरो", "यूरो"),
        "£": Currency("पाउंड", "पाउंड"),
    },
    symbols={"&": "और", "+": "प्लस", "=": "बराबर"},
    web={
        ".": "डॉट",
        "@": "एट द रेट",
        "/": "स्लैश",
        ":": "कोलन",
        "-": "डैश",
        "_": "अंडरस्कोर",
        "+": "प्लस",
        "www": "डब्ल्यू डब्ल्यू डब्ल्यू",
    },
    regnal_names=frozenset(),
    latin_script=False,
    rules=((re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})\s?बजे"), _clock),),
)
