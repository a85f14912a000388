"""French text normalisation data."""

from __future__ import annotations

import re
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal, roman_value

LANG = "fr"

_FRACTION_NAMES = {2: ("demi", "demis"), 3: ("tiers", "tiers"), 4: ("quart", "quarts")}


def fraction(num: int, den: int) -> str:
    """``1/2`` un demi, ``3/4`` trois quarts, ``5/8`` cinq huitièmes."""
    if den in _FRACTION_NAMES:
        singular, plural = _FRACTION_NAMES[den]
    else:
        singular = ordinal(den, LANG)
        plural = singular + "s"
    return f"{cardinal(num, LANG)} {singular if num == 1 else plural}"


def _clock(m: Match[str]) -> str:
    """``14h30`` quatorze heures trente; ``1h`` une heure."""
    hour = int(m.group(1))
    if hour > 24:
        return m.group(0)
    words = f"{cardinal(hour, LANG, gender='f')} {'heure' if hour <= 1 else 'heures'}"
    if m.group(2) and int(m.group(2)):
        words += " " + cardinal(int(m.group(2)), LANG)
    return words


def _roman_ordinal(m: Match[str]) -> str:
    """``XIXe siècle`` dix-neuvième siècle; ``François Ier`` François premier."""
    value = roman_value(m.group(1))
    if value is None:
        return m.group(0)
    return "premier" if value == 1 and m.group(2) == "er" else ordinal(value, LANG)


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="pour cent",
    range_word="à",
    currency_joiner=" et ",
    and_word=" et ",
    months=tuple(
        "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split()
    ),
    date=DateStyle(template="{day} {month} {year}", template_no_year="{day} {month}", first_day="premier"),
    time=TimeStyle(template="{h} heures {m}", on_the_hour="{h} heures", hour_gender="f"),
    abbreviations={
        "Mme": "Madame",
        "Mmes": "Mesdames",
        "Mlle": "Mademoiselle",
        "MM.": "Messieurs",
        "Dr": "docteur",
        "Dr.": "docteur",
        "Pr": "professeur",
        "St": "Saint",
        "Ste": "Sainte",
        "etc.": "et cetera",
        "p. ex.": "par exemple",
        "c.-à-d.": "c'est-à-dire",
        "n°": "numéro",
        "N°": "numéro",
        "av.": "avenue",
        "bd": "boulevard",
        "env.": "environ",
        "tél.": "téléphone",
        "chap.": "chapitre",
        "vol.": "volume",
        "cf.": "confer",
    },
    may_end_sentence=frozenset({"etc."}),
    units={
        "mm": Unit("millimètre", "millimètres"),
        "cm": Unit("centimètre", "centimètres"),
        "m": Unit("mètre", "mètres"),
        "km": Unit("kilomètre", "kilomètres"),
        "mg": Unit("milligramme", "milligrammes"),
        "g": Unit("gramme", "grammes"),
        "kg": Unit("kilogramme", "kilogrammes"),
        "ml": Unit("millilitre", "millilitres"),
        "l": Unit("litre", "litres"),
        "L": Unit("litre", "litres"),
        "km/h": Unit("kilomètre à l'heure", "kilomètres à l'heure"),
        "m/s": Unit("mètre par seconde", "mètres par seconde"),
        "°C": Unit("degré Celsius", "degrés Celsius"),
        "ºC": Unit("degré Celsius", "degrés Celsius"),
        "°F": Unit("degré Fahrenheit", "degrés Fahrenheit"),
        "°": Unit("degré", "degrés"),
        "min": Unit("minute", "minutes", "f"),
        "s": Unit("seconde", "secondes", "f"),
        "ms": Unit("milliseconde", "millisecondes", "f"),
        "Go": Unit("gigaoctet", "gigaoctets"),
        "Mo": Unit("mégaoctet", "mégaoctets"),
        "kWh": Unit("kilowattheure", "kilowattheures"),
        "m²": Unit("mètre carré", "mètres carrés"),
        "ha": Unit("hectare", "hectares"),
    },
    currencies={
        "€": Currency("euro", "euros", "centime", "centimes"),
        "EUR": Currency("euro", "euros", "centime", "centimes"),
        "$": Currency("dollar", "dollars", "cent", "cents"),
        "USD": Currency("dollar", "dollars", "cent", "cents"),
        "£": Currency("livre", "livres", "penny", "pence", gender="f"),
        "¥": Currency("yen", "yens"),
        "CHF": Currency("franc suisse", "francs suisses", "centime", "centimes"),
        "₹": Currency("roupie", "roupies", gender="f"),
    },
    symbols={
        "&": "et",
        "+": "plus",
        "=": "égale",
        "×": "fois",
        "#": "numéro",
        "@": "arobase",
        "~": "environ",
    },
    web={
        ".": "point",
        "@": "arobase",
        "/": "slash",
        ":": "deux-points",
        "-": "tiret",
        "_": "tiret bas",
        "+": "plus",
        "www": "trois w",
    },
    chapter_words=frozenset("chapitre partie livre tome volume acte scène section article titre".split()),
    regnal=lambda n: "premier" if n == 1 else cardinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={
        "er": "m",
        "re": "f",
        "ère": "f",
        "e": "m",
        "ème": "m",
        "eme": "m",
        "ᵉ": "m",
        "ᵉʳ": "m",
        "ʳᵉ": "f",
    },
    plural_from_two=True,
    rules=(
        (re.compile(r"(?<![\w:])(\d{1,2}) ?h ?(\d{2})?(?![\w:])"), _clock),
        # Single letters only where no French word looks the same ("Ce", "De", "Le" are words).
        (re.compile(r"\b([IVXLCDM]{2,}|[IVX])(er|e|ème|ᵉ)\b"), _roman_ordinal),
        (re.compile(r"\bM\.(?= [A-ZÀ-Ý])"), lambda m: "Monsieur"),
    ),
)
