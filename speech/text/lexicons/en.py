"""English (US) text normalisation data: it feeds the neural voice, so it is the richest."""

from __future__ import annotations

import re
from collections.abc import Callable
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal

LANG = "en"

MONTHS = "January February March April May June July August September October November December".split()


def _plural(word: str) -> str:
    if word.endswith("y"):
        return word[:-1] + "ies"
    if word == "half":
        return "halves"
    return word + "s"


def fraction(num: int, den: int) -> str:
    """``1/2`` one half, ``3/4`` three quarters, ``5/8`` five eighths."""
    name = {2: "half", 4: "quarter"}.get(den) or ordinal(den, LANG)
    return f"{cardinal(num, LANG)} {name if num == 1 else _plural(name)}"


def say_time(hour: int, minute: int, meridiem: str | None) -> str:
    """``3:45 pm`` three forty-five p m; ``3:05`` three oh five; ``14:00`` fourteen hundred."""
    if meridiem is not None:
        spoken_hour = hour % 12 or 12
        suffix = " a m" if meridiem == "am" else " p m"
    else:
        spoken_hour, suffix = hour, ""
    head = cardinal(spoken_hour, LANG)
    if minute == 0:
        if meridiem is not None:
            return head + suffix
        if hour == 0:
            return "midnight"
        return f"{head} hundred" if hour > 12 else f"{head} o'clock"
    tail = f"oh {cardinal(minute, LANG)}" if minute < 10 else cardinal(minute, LANG)
    if meridiem is None and hour == 0:
        head = "zero"
    return f"{head} {tail}{suffix}"


def _saint_or_street(m: Match[str]) -> str:
    """``St. Paul`` is a saint; ``Main St.`` is a street."""
    before, after = m.group("before"), m.group("after")
    if after and after[0].isupper():
        return "Saint"
    return "Street" if before else "Saint"


def _doctor_or_drive(m: Match[str]) -> str:
    before, after = m.group("before"), m.group("after")
    if after and after[0].isupper():
        return "Doctor"
    return "Drive" if before else "Doctor"


def _with_prefix(fn: Callable[[Match[str]], str]) -> Callable[[Match[str]], str]:
    """Keep the captured preceding word, which the pattern consumed to look at it."""

    def sub(m: Match[str]) -> str:
        before = m.group("before") or ""
        final = "." if m.group(0).endswith(".") and not m.string[m.end() :].strip() else ""
        return before + fn(m) + final

    return sub


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=False,
    percent="percent",
    range_word="to",
    currency_joiner=" and ",
    and_word=" and ",
    months=tuple(MONTHS),
    date=DateStyle(
        template="{month} {day}, {year}", template_no_year="{month} {day}", day_ordinal=True, day_first=False
    ),
    time=TimeStyle(template="{h} {m}", on_the_hour="{h} o'clock", custom=say_time),
    abbreviations={
        "Mr.": "Mister",
        "Mr": "Mister",
        "Mrs.": "Missus",
        "Mrs": "Missus",
        "Ms.": "Miz",
        "Ms": "Miz",
        "Prof.": "Professor",
        "Jr.": "Junior",
        "Sr.": "Senior",
        "Rev.": "Reverend",
        "Hon.": "Honorable",
        "Gen.": "General",
        "Capt.": "Captain",
        "Lt.": "Lieutenant",
        "Col.": "Colonel",
        "Sgt.": "Sergeant",
        "Gov.": "Governor",
        "Sen.": "Senator",
        "Rep.": "Representative",
        "Pres.": "President",
        "Mt.": "Mount",
        "Ft.": "Fort",
        "Ave.": "Avenue",
        "Blvd.": "Boulevard",
        "Rd.": "Road",
        "Hwy.": "Highway",
        "Apt.": "Apartment",
        "Dept.": "Department",
        "Univ.": "University",
        "Bros.": "Brothers",
        "Inc.": "Incorporated",
        "Ltd.": "Limited",
        "Co.": "Company",
        "Corp.": "Corporation",
        "etc.": "et cetera",
        "e.g.": "for example",
        "i.e.": "that is",
        "vs.": "versus",
        "vs": "versus",
        "approx.": "approximately",
        "Fig.": "Figure",
        "fig.": "figure",
        "Vol.": "Volume",
        "vol.": "volume",
        "ch.": "chapter",
        "pp.": "pages",
        "cf.": "compare",
        "et al.": "et al",
        "Jan.": "January",
        "Feb.": "February",
        "Mar.": "March",
        "Apr.": "April",
        "Jun.": "June",
        "Jul.": "July",
        "Aug.": "August",
        "Sep.": "September",
        "Sept.": "September",
        "Oct.": "October",
        "Nov.": "November",
        "Dec.": "December",
        "min.": "minutes",
        "max.": "maximum",
        "misc.": "miscellaneous",
        "dept.": "department",
        "est.": "established",
    },
    may_end_sentence=frozenset(
        {"etc.", "Inc.", "Ltd.", "Co.", "Corp.", "Jr.", "Sr.", "Bros.", "et al.", "est.", "misc.", "approx."}
    ),
    units={
        "mm": Unit("millimeter", "millimeters"),
        "cm": Unit("centimeter", "centimeters"),
        "m": Unit("meter", "meters"),
        "km": Unit("kilometer", "kilometers"),
        "mi": Unit("mile", "miles"),
        "ft": Unit("foot", "feet"),
        "yd": Unit("yard", "yards"),
        "in.": Unit("inch", "inches"),
        "mg": Unit("milligram", "milligrams"),
        "g": Unit("gram", "grams"),
        "kg": Unit("kilogram", "kilograms"),
        "lb": Unit("pound", "pounds"),
        "lbs": Unit("pound", "pounds"),
        "oz": Unit("ounce", "ounces"),
        "ml": Unit("milliliter", "milliliters"),
        "mL": Unit("milliliter", "milliliters"),
        "l": Unit("liter", "liters"),
        "L": Unit("liter", "liters"),
        "gal": Unit("gallon", "gallons"),
        "mph": Unit("mile per hour", "miles per hour"),
        "km/h": Unit("kilometer per hour", "kilometers per hour"),
        "kph": Unit("kilometer per hour", "kilometers per hour"),
        "m/s": Unit("meter per second", "meters per second"),
        "°C": Unit("degree Celsius", "degrees Celsius"),
        "ºC": Unit("degree Celsius", "degrees Celsius"),
        "℃": Unit("degree Celsius", "degrees Celsius"),
        "°F": Unit("degree Fahrenheit", "degrees Fahrenheit"),
        "ºF": Unit("degree Fahrenheit", "degrees Fahrenheit"),
        "℉": Unit("degree Fahrenheit", "degrees Fahrenheit"),
        "°": Unit("degree", "degrees"),
        "ms": Unit("millisecond", "milliseconds"),
        "sec": Unit("second", "seconds"),
        "min": Unit("minute", "minutes"),
        "h": Unit("hour", "hours"),
        "hr": Unit("hour", "hours"),
        "hrs": Unit("hour", "hours"),
        "Hz": Unit("hertz", "hertz"),
        "kHz": Unit("kilohertz", "kilohertz"),
        "MHz": Unit("megahertz", "megahertz"),
        "GHz": Unit("gigahertz", "gigahertz"),
        "KB": Unit("kilobyte", "kilobytes"),
        "kB": Unit("kilobyte", "kilobytes"),
        "MB": Unit("megabyte", "megabytes"),
        "GB": Unit("gigabyte", "gigabytes"),
        "TB": Unit("terabyte", "terabytes"),
        "Mbps": Unit("megabit per second", "megabits per second"),
        "W": Unit("watt", "watts"),
        "kW": Unit("kilowatt", "kilowatts"),
        "kWh": Unit("kilowatt hour", "kilowatt hours"),
        "V": Unit("volt", "volts"),
        "mAh": Unit("milliamp hour", "milliamp hours"),
        "m²": Unit("square meter", "square meters"),
        "km²": Unit("square kilometer", "square kilometers"),
        "sq ft": Unit("square foot", "square feet"),
        "ha": Unit("hectare", "hectares"),
        "kcal": Unit("kilocalorie", "kilocalories"),
        "cal": Unit("calorie", "calories"),
    },
    currencies={
        "$": Currency("dollar", "dollars", "cent", "cents"),
        "US$": Currency("dollar", "dollars", "cent", "cents"),
        "USD": Currency("dollar", "dollars", "cent", "cents"),
        "€": Currency("euro", "euros", "cent", "cents"),
        "EUR": Currency("euro", "euros", "cent", "cents"),
        "£": Currency("pound", "pounds", "penny", "pence"),
        "GBP": Currency("pound", "pounds", "penny", "pence"),
        "¥": Currency("yen", "yen"),
        "JPY": Currency("yen", "yen"),
        "₹": Currency("rupee", "rupees", "paisa", "paise"),
        "INR": Currency("rupee", "rupees", "paisa", "paise"),
        "R$": Currency("real", "reais", "centavo", "centavos"),
    },
    symbols={"&": "and", "+": "plus", "=": "equals", "×": "times", "#": "number", "@": "at", "~": "about"},
    web={
        ".": "dot",
        "@": "at",
        "/": "slash",
        ":": "colon",
        "-": "dash",
        "_": "underscore",
        "+": "plus",
        "www": "w w w",
        "~": "tilde",
        "?": "question mark",
        "=": "equals",
        "&": "and",
        "#": "hash",
    },
    letter_separator=", ",
    chapter_words=frozenset(
        """chapter part book volume vol. act scene section appendix article title phase stage level
        round class type episode season canto psalm track unit lesson war bowl""".split()
    ),
    regnal=lambda n: "the " + ordinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={"st": "m", "nd": "m", "rd": "m", "th": "m"},
    rules=(
        (re.compile(r"\bNos\.?(?=\s*\d)"), lambda m: "numbers"),
        (re.compile(r"\bNo\.?(?=\s*\d)"), lambda m: "number"),
        (
            re.compile(r"(?<![\w.])(?P<before>[A-Z][a-z]+ )?St\b\.?(?: (?=(?P<after>\w+)))?"),
            _with_prefix(lambda m: _saint_or_street(m) + (" " if m.group("after") else "")),
        ),
        (
            re.compile(r"(?<![\w.])(?P<before>[A-Z][a-z]+ )?Dr\b\.?(?: (?=(?P<after>\w+)))?"),
            _with_prefix(lambda m: _doctor_or_drive(m) + (" " if m.group("after") else "")),
        ),
    ),
)
