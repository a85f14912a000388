"""Portuguese (Brazilian numbers, shared vocabulary) text normalisation data."""

from __future__ import annotations

import re
from re import Match

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal

LANG = "pt"

_FRACTION_NAMES = {2: ("meio", "meios"), 3: ("terço", "terços")}


def fraction(num: int, den: int) -> str:
    """``1/2`` um meio, ``3/4`` três quartos, ``3/16`` três dezesseis avos."""
    if den in _FRACTION_NAMES:
        singular, plural = _FRACTION_NAMES[den]
    elif den <= 10 or den in (100, 1000):
        singular = ordinal(den, LANG)
        plural = singular + "s"
    else:
        singular = plural = f"{cardinal(den, LANG)} avos"
    return f"{cardinal(num, LANG)} {singular if num == 1 else plural}"


def _clock(m: Match[str]) -> str:
    """``14h30`` catorze e trinta; ``2h`` duas horas."""
    hour = int(m.group(1))
    if hour > 24:
        return m.group(0)
    words = cardinal(hour, LANG, gender="f")
    if m.group(2) and int(m.group(2)):
        return f"{words} e {cardinal(int(m.group(2)), LANG)}"
    return f"{words} {'hora' if hour == 1 else 'horas'}"


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="por cento",
    range_word="a",
    currency_joiner=" e ",
    and_word=" e ",
    months=tuple(
        "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro".split()
    ),
    date=DateStyle(
        template="{day} de {month} de {year}", template_no_year="{day} de {month}", first_day="primeiro"
    ),
    time=TimeStyle(template="{h} e {m}", on_the_hour="{h} horas", hour_gender="f"),
    abbreviations={
        "Sr.": "senhor",
        "Sra.": "senhora",
        "Srta.": "senhorita",
        "Dr.": "doutor",
        "Dra.": "doutora",
        "Prof.": "professor",
        "Profa.": "professora",
        "etc.": "et cetera",
        "p. ex.": "por exemplo",
        "p.ex.": "por exemplo",
        "aprox.": "aproximadamente",
        "nº": "número",
        "n.º": "número",
        "Av.": "avenida",
        "pág.": "página",
        "tel.": "telefone",
        "cap.": "capítulo",
        "vol.": "volume",
        "V. Exa.": "Vossa Excelência",
        "Ltda.": "limitada",
        "S.A.": "sociedade anônima",
    },
    may_end_sentence=frozenset({"etc.", "Ltda.", "S.A."}),
    units={
        "mm": Unit("milímetro", "milímetros"),
        "cm": Unit("centímetro", "centímetros"),
        "m": Unit("metro", "metros"),
        "km": Unit("quilômetro", "quilômetros"),
        "mg": Unit("miligrama", "miligramas"),
        "g": Unit("grama", "gramas"),
        "kg": Unit("quilo", "quilos"),
        "ml": Unit("mililitro", "mililitros"),
        "l": Unit("litro", "litros"),
        "L": Unit("litro", "litros"),
        "km/h": Unit("quilômetro por hora", "quilômetros por hora"),
        "°C": Unit("grau Celsius", "graus Celsius"),
        "ºC": Unit("grau Celsius", "graus Celsius"),
        "°F": Unit("grau Fahrenheit", "graus Fahrenheit"),
        "°": Unit("grau", "graus"),
        "min": Unit("minuto", "minutos"),
        "s": Unit("segundo", "segundos"),
        "GB": Unit("gigabyte", "gigabytes"),
        "MB": Unit("megabyte", "megabytes"),
        "m²": Unit("metro quadrado", "metros quadrados"),
        "ha": Unit("hectare", "hectares"),
    },
    currencies={
        "R$": Currency("real", "reais", "centavo", "centavos"),
        "BRL": Currency("real", "reais", "centavo", "centavos"),
        "€": Currency("euro", "euros", "cêntimo", "cêntimos"),
        "EUR": Currency("euro", "euros", "cêntimo", "cêntimos"),
        "$": Currency("dólar", "dólares", "centavo", "centavos"),
        "US$": Currency("dólar", "dólares", "centavo", "centavos"),
        "USD": Currency("dólar", "dólares", "centavo", "centavos"),
        "£": Currency("libra", "libras", gender="f"),
        "¥": Currency("iene", "ienes"),
        "₹": Currency("rupia", "rupias", gender="f"),
    },
    symbols={
        "&": "e",
        "+": "mais",
        "=": "igual a",
        "×": "vezes",
        "#": "número",
        "@": "arroba",
        "~": "cerca de",
    },
    web={
        ".": "ponto",
        "@": "arroba",
        "/": "barra",
        ":": "dois pontos",
        "-": "hífen",
        "_": "sublinhado",
        "+": "mais",
        "www": "dáblio dáblio dáblio",
    },
    chapter_words=frozenset("capítulo parte livro tomo volume ato cena seção artigo título".split()),
    regnal=lambda n: ordinal(n, LANG) if n <= 10 else cardinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={"º": "m", "ª": "f", ".º": "m", ".ª": "f"},
    rules=((re.compile(r"(?<![\w:])(\d{1,2})h(\d{2})?(?![\w:])"), _clock),),
)
