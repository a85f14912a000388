"""Dutch text normalisation data."""

from __future__ import annotations

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal

LANG = "nl"


def fraction(num: int, den: int) -> str:
    """``1/2`` een half, ``3/4`` drie kwart, ``2/3`` twee derde."""
    head = "een" if num == 1 else cardinal(num, LANG)
    name = {2: "half", 4: "kwart"}.get(den) or ordinal(den, LANG)
    return f"{head} {name}"


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="procent",
    range_word="tot",
    currency_joiner=" en ",
    and_word=" en ",
    months=tuple(
        "januari februari maart april mei juni juli augustus september oktober november december".split()
    ),
    date=DateStyle(template="{day} {month} {year}", template_no_year="{day} {month}"),
    time=TimeStyle(template="{h} uur {m}", on_the_hour="{h} uur"),
    abbreviations={
        "dhr.": "de heer",
        "Dhr.": "de heer",
        "mevr.": "mevrouw",
        "Mevr.": "mevrouw",
        "dr.": "dokter",
        "Dr.": "dokter",
        "prof.": "professor",
        "Prof.": "professor",
        "bijv.": "bijvoorbeeld",
        "bv.": "bijvoorbeeld",
        "enz.": "enzovoort",
        "d.w.z.": "dat wil zeggen",
        "o.a.": "onder andere",
        "ca.": "circa",
        "nr.": "nummer",
        "Nr.": "nummer",
        "blz.": "bladzijde",
        "m.b.t.": "met betrekking tot",
        "t.o.v.": "ten opzichte van",
        "i.p.v.": "in plaats van",
        "z.s.m.": "zo snel mogelijk",
        "tel.": "telefoon",
        "hfdst.": "hoofdstuk",
        "etc.": "et cetera",
        "St.": "Sint",
    },
    may_end_sentence=frozenset({"enz.", "etc."}),
    units={
        "mm": Unit("millimeter", "millimeter"),
        "cm": Unit("centimeter", "centimeter"),
        "m": Unit("meter", "meter"),
        "km": Unit("kilometer", "kilometer"),
        "mg": Unit("milligram", "milligram"),
        "g": Unit("gram", "gram"),
        "kg": Unit("kilo", "kilo"),
        "ml": Unit("milliliter", "milliliter"),
        "l": Unit("liter", "liter"),
        "L": Unit("liter", "liter"),
        "km/u": Unit("kilometer per uur", "kilometer per uur"),
        "km/h": Unit("kilometer per uur", "kilometer per uur"),
        "°C": Unit("graad Celsius", "graden Celsius"),
        "ºC": Unit("graad Celsius", "graden Celsius"),
        "°": Unit("graad", "graden"),
        "min": Unit("minuut", "minuten"),
        "s": Unit("seconde", "seconden"),
        "GB": Unit("gigabyte", "gigabyte"),
        "MB": Unit("megabyte", "megabyte"),
        "kWh": Unit("kilowattuur", "kilowattuur"),
        "m²": Unit("vierkante meter", "vierkante meter"),
        "ha": Unit("hectare", "hectare"),
    },
    currencies={
        "€": Currency("euro", "euro", "cent", "cent"),
        "EUR": Currency("euro", "euro", "cent", "cent"),
        "$": Currency("dollar", "dollar", "cent", "cent"),
        "USD": Currency("dollar", "dollar", "cent", "cent"),
        "£": Currency("pond", "pond", "penny", "pence"),
        "¥": Currency("yen", "yen"),
        "₹": Currency("roepie", "roepies"),
    },
    symbols={
        "&": "en",
        "+": "plus",
        "=": "is gelijk aan",
        "×": "keer",
        "#": "nummer",
        "@": "apenstaartje",
        "~": "ongeveer",
    },
    web={
        ".": "punt",
        "@": "apenstaartje",
        "/": "slash",
        ":": "dubbele punt",
        "-": "streepje",
        "_": "underscore",
        "+": "plus",
        "www": "w w w",
    },
    chapter_words=frozenset("hoofdstuk deel boek band akte scène sectie artikel".split()),
    regnal=lambda n: "de " + ordinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={"e": "m", "ste": "m", "de": "m"},
)
