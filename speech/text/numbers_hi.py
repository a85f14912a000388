"""Hindi number words, which num2words does not provide.

Hindi names every number from 0 to 99 with its own word (no regular tens + units pattern), and
groups large numbers in the Indian system: hazaar (10^3), laakh (10^5), karod (10^7).
"""

from __future__ import annotations

from typing import Final

_UNDER_100: Final[tuple[str, ...]] = tuple(
    """
    शून्य एक दो तीन चार पाँच छह सात आठ नौ
    दस ग्यारह बारह तेरह चौदह पंद्रह सोलह सत्रह अठारह उन्नीस
    बीस इक्कीस बाईस तेईस चौबीस पच्चीस छब्बीस सत्ताईस अट्ठाईस उनतीस
    तीस इकतीस बत्तीस तैंतीस चौंतीस पैंतीस छत्तीस सैंतीस अड़तीस उनतालीस
    चालीस इकतालीस बयालीस तैंतालीस चवालीस पैंतालीस छियालीस सैंतालीस अड़तालीस उनचास
    पचास इक्यावन बावन तिरपन चौवन पचपन छप्पन सत्तावन अट्ठावन उनसठ
    साठ इकसठ बासठ तिरसठ चौंसठ पैंसठ छियासठ सड़सठ अड़सठ उनहत्तर
    सत्तर इकहत्तर बहत्तर तिहत्तर चौहत्तर पचहत्तर छिहत्तर सतहत्तर अठहत्तर उनासी
    अस्सी इक्यासी बयासी तिरासी चौरासी पचासी छियासी सत्तासी अट्ठासी नवासी
    नब्बे इक्यानबे बानबे तिरानबे चौरानबे पचानबे छियानबे सत्तानबे अट्ठानबे निन्यानबे
    """.split()
)
assert len(_UNDER_100) == 100

_SCALES: Final[tuple[tuple[int, str], ...]] = (
    (10**7, "करोड़"),
    (10**5, "लाख"),
    (10**3, "हज़ार"),
    (10**2, "सौ"),
)

_IRREGULAR_ORDINALS: Final[dict[int, str]] = {1: "पहला", 2: "दूसरा", 3: "तीसरा", 4: "चौथा", 6: "छठा"}


def cardinal_hi(n: int) -> str:
    """``1234567`` -> ``बारह लाख चौंतीस हज़ार पाँच सौ सड़सठ``."""
    if n < 0:
        return "ऋण " + cardinal_hi(-n)
    if n < 100:
        return _UNDER_100[n]
    words: list[str] = []
    rest = n
    for value, name in _SCALES:
        if rest >= value:
            count, rest = divmod(rest, value)
            words.append(f"{cardinal_hi(count)} {name}")
    if rest:
        words.append(_UNDER_100[rest])
    return " ".join(words)


def ordinal_hi(n: int) -> str:
    """``1`` -> ``पहला``, ``5`` -> ``पाँचवाँ``: irregular below 7, then the ``-वाँ`` suffix."""
    if n in _IRREGULAR_ORDINALS:
        return _IRREGULAR_ORDINALS[n]
    return cardinal_hi(n) + "वाँ"
