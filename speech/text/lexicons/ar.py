"""Arabic text normalisation data (Modern Standard Arabic, Gregorian month names).

Arabic number agreement (the counted noun's case and number change with the count) is not
modelled: nouns stay singular. Arabic-Indic digits are turned into ASCII before any pass.
"""

from __future__ import annotations

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit

LANG = "ar"

LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=False,
    percent="بالمئة",
    range_word="إلى",
    currency_joiner=" و",
    and_word=" و",
    months=tuple("يناير فبراير مارس أبريل مايو يونيو يوليو أغسطس سبتمبر أكتوبر نوفمبر ديسمبر".split()),
    date=DateStyle(template="{day} {month} {year}", template_no_year="{day} {month}"),
    time=TimeStyle(template="{h} و{m} دقيقة", on_the_hour="{h}", hour_gender="f"),
    abbreviations={"د.": "الدكتور", "أ.": "الأستاذ", "م.": "المهندس", "ص.": "صفحة"},
    units={
        "km": Unit("كيلومتر", "كيلومتر"),
        "m": Unit("متر", "متر"),
        "cm": Unit("سنتيمتر", "سنتيمتر"),
        "kg": Unit("كيلوغرام", "كيلوغرام"),
        "g": Unit("غرام", "غرام"),
        "l": Unit("لتر", "لتر"),
        "°C": Unit("درجة مئوية", "درجة مئوية"),
        "°": Unit("درجة", "درجة"),
        "km/h": Unit("كيلومتر في الساعة", "كيلومتر في الساعة"),
        "كم": Unit("كيلومتر", "كيلومتر"),
        "كغ": Unit("كيلوغرام", "كيلوغرام"),
    },
    currencies={
        "$": Currency("دولار", "دولار", "سنت", "سنت"),
        "USD": Currency("دولار", "دولار", "سنت", "سنت"),
        "€": Currency("يورو", "يورو", "سنت", "سنت"),
        "£": Currency("جنيه إسترليني", "جنيه إسترليني"),
        "SAR": Currency("ريال", "ريال", "هللة", "هللة"),
        "ر.س": Currency("ريال", "ريال", "هللة", "هللة"),
        "AED": Currency("درهم", "درهم", "فلس", "فلس"),
        "EGP": Currency("جنيه", "جنيه", "قرش", "قرش"),
    },
    symbols={"&": "و", "+": "زائد", "=": "يساوي"},
    web={
        ".": "نقطة",
        "@": "آت",
        "/": "شرطة مائلة",
        ":": "نقطتان",
        "-": "شرطة",
        "_": "شرطة سفلية",
        "+": "زائد",
        "www": "دبليو دبليو دبليو",
    },
    regnal_names=frozenset(),
    latin_script=False,
)
