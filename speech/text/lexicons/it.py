"""Italian text normalisation data."""

from __future__ import annotations

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal

LANG = "it"


def fraction(num: int, den: int) -> str:
    """``1/2`` un mezzo, ``3/4`` tre quarti, ``2/3`` due terzi."""
    singular = "mezzo" if den == 2 else ordinal(den, LANG)
    plural = singular[:-1] + "i"
    return f"{'un' if num == 1 else cardinal(num, LANG)} {singular if num == 1 else plural}"


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="per cento",
    range_word="a",
    currency_joiner=" e ",
    and_word=" e ",
    months=tuple(
        "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre".split()
    ),
    date=DateStyle(template="{day} {month} {year}", template_no_year="{day} {month}", first_day="primo"),
    time=TimeStyle(template="{h} e {m}", on_the_hour="{h} in punto", hour_gender="f"),
    abbreviations={
        "Sig.": "signor",
        "Sig.ra": "signora",
        "Sig.na": "signorina",
        "Sigg.": "signori",
        "Dott.": "dottor",
        "Dott.ssa": "dottoressa",
        "Dr.": "dottor",
        "Prof.": "professor",
        "Prof.ssa": "professoressa",
        "Avv.": "avvocato",
        "Ing.": "ingegner",
        "ecc.": "eccetera",
        "etc.": "eccetera",
        "p.es.": "per esempio",
        "p. es.": "per esempio",
        "pag.": "pagina",
        "tel.": "telefono",
        "cap.": "capitolo",
        "vol.": "volume",
        "S.p.A.": "società per azioni",
        "n.": "numero",
        "c.a.": "corrente anno",
    },
    may_end_sentence=frozenset({"ecc.", "etc.", "S.p.A."}),
    units={
        "mm": Unit("millimetro", "millimetri"),
        "cm": Unit("centimetro", "centimetri"),
        "m": Unit("metro", "metri"),
        "km": Unit("chilometro", "chilometri"),
        "mg": Unit("milligrammo", "milligrammi"),
        "g": Unit("grammo", "grammi"),
        "kg": Unit("chilogrammo", "chilogrammi"),
        "ml": Unit("millilitro", "millilitri"),
        "l": Unit("litro", "litri"),
        "L": Unit("litro", "litri"),
        "km/h": Unit("chilometro orario", "chilometri orari"),
        "°C": Unit("grado centigrado", "gradi centigradi"),
        "ºC": Unit("grado centigrado", "gradi centigradi"),
        "°F": Unit("grado Fahrenheit", "gradi Fahrenheit"),
        "°": Unit("grado", "gradi"),
        "h": Unit("ora", "ore", "f"),
        "min": Unit("minuto", "minuti"),
        "s": Unit("secondo", "secondi"),
        "GB": Unit("gigabyte", "gigabyte"),
        "MB": Unit("megabyte", "megabyte"),
        "kWh": Unit("chilowattora", "chilowattora"),
        "m²": Unit("metro quadrato", "metri quadrati"),
        "ha": Unit("ettaro", "ettari"),
    },
    currencies={
        "€": Currency("euro", "euro", "centesimo", "centesimi"),
        "EUR": Currency("euro", "euro", "centesimo", "centesimi"),
        "$": Currency("dollaro", "dollari", "centesimo", "centesimi"),
        "USD": Currency("dollaro", "dollari", "centesimo", "centesimi"),
        "£": Currency("sterlina", "sterline", "penny", "pence", gender="f"),
        "¥": Currency("yen", "yen"),
        "₹": Currency("rupia", "rupie", gender="f"),
    },
    symbols={"&": "e", "+": "più", "=": "uguale", "×": "per", "#": "numero", "@": "chiocciola", "~": "circa"},
    web={
        ".": "punto",
        "@": "chiocciola",
        "/": "barra",
        ":": "due punti",
        "-": "trattino",
        "_": "trattino basso",
        "+": "più",
        "www": "vu vu vu",
    },
    chapter_words=frozenset("capitolo parte libro volume atto scena sezione articolo titolo".split()),
    regnal=lambda n: ordinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={"º": "m", "ª": "f", ".º": "m", ".ª": "f"},
)
