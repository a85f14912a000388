"""Spanish text normalisation data."""

from __future__ import annotations

from speech.text.lexicons.base import Currency, DateStyle, Lexicon, TimeStyle, Unit
from speech.text.numbers import cardinal, ordinal

LANG = "es"

_FRACTION_NAMES = {2: ("medio", "medios"), 3: ("tercio", "tercios"), 4: ("cuarto", "cuartos")}


def fraction(num: int, den: int) -> str:
    """``1/2`` un medio, ``3/4`` tres cuartos, ``5/8`` cinco octavos; ``3/16`` tres sobre dieciséis."""
    if den in _FRACTION_NAMES:
        singular, plural = _FRACTION_NAMES[den]
    elif den <= 10:
        singular = ordinal(den, LANG)
        plural = singular + "s"
    else:
        return f"{cardinal(num, LANG)} sobre {cardinal(den, LANG)}"
    return f"{cardinal(num, LANG, before_noun=True)} {singular if num == 1 else plural}"


LEXICON = Lexicon(
    lang=LANG,
    decimal_comma=True,
    percent="por ciento",
    range_word="a",
    currency_joiner=" con ",
    and_word=" y ",
    months=tuple(
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre".split()
    ),
    date=DateStyle(
        template="{day} de {month} de {year}", template_no_year="{day} de {month}", first_day="primero"
    ),
    time=TimeStyle(template="{h} y {m}", on_the_hour="{h} en punto", hour_gender="f"),
    abbreviations={
        "Sr.": "señor",
        "Sra.": "señora",
        "Srta.": "señorita",
        "Sres.": "señores",
        "Dr.": "doctor",
        "Dra.": "doctora",
        "Prof.": "profesor",
        "Profa.": "profesora",
        "Lic.": "licenciado",
        "Ing.": "ingeniero",
        "Ud.": "usted",
        "Uds.": "ustedes",
        "Vd.": "usted",
        "Dña.": "doña",
        "etc.": "etcétera",
        "p. ej.": "por ejemplo",
        "p.ej.": "por ejemplo",
        "aprox.": "aproximadamente",
        "núm.": "número",
        "Núm.": "número",
        "nº": "número",
        "n.º": "número",
        "Av.": "avenida",
        "Avda.": "avenida",
        "c/": "calle",
        "pág.": "página",
        "págs.": "páginas",
        "EE. UU.": "Estados Unidos",
        "EE.UU.": "Estados Unidos",
        "S.A.": "sociedad anónima",
        "tel.": "teléfono",
        "Tel.": "teléfono",
        "cap.": "capítulo",
        "vol.": "volumen",
        "Sto.": "santo",
        "Sta.": "santa",
    },
    may_end_sentence=frozenset({"etc.", "S.A.", "EE. UU.", "EE.UU."}),
    units={
        "mm": Unit("milímetro", "milímetros"),
        "cm": Unit("centímetro", "centímetros"),
        "m": Unit("metro", "metros"),
        "km": Unit("kilómetro", "kilómetros"),
        "mg": Unit("miligramo", "miligramos"),
        "g": Unit("gramo", "gramos"),
        "kg": Unit("kilogramo", "kilogramos"),
        "ml": Unit("mililitro", "mililitros"),
        "l": Unit("litro", "litros"),
        "L": Unit("litro", "litros"),
        "km/h": Unit("kilómetro por hora", "kilómetros por hora"),
        "m/s": Unit("metro por segundo", "metros por segundo"),
        "°C": Unit("grado centígrado", "grados centígrados"),
        "ºC": Unit("grado centígrado", "grados centígrados"),
        "°F": Unit("grado Fahrenheit", "grados Fahrenheit"),
        "°": Unit("grado", "grados"),
        "h": Unit("hora", "horas", "f"),
        "min": Unit("minuto", "minutos"),
        "s": Unit("segundo", "segundos"),
        "ms": Unit("milisegundo", "milisegundos"),
        "GB": Unit("gigabyte", "gigabytes"),
        "MB": Unit("megabyte", "megabytes"),
        "kWh": Unit("kilovatio hora", "kilovatios hora"),
        "m²": Unit("metro cuadrado", "metros cuadrados"),
        "ha": Unit("hectárea", "hectáreas", "f"),
        "mph": Unit("milla por hora", "millas por hora"),
    },
    currencies={
        "€": Currency("euro", "euros", "céntimo", "céntimos"),
        "EUR": Currency("euro", "euros", "céntimo", "céntimos"),
        "$": Currency("dólar", "dólares", "centavo", "centavos"),
        "USD": Currency("dólar", "dólares", "centavo", "centavos"),
        "US$": Currency("dólar", "dólares", "centavo", "centavos"),
        "£": Currency("libra", "libras", "penique", "peniques", gender="f"),
        "¥": Currency("yen", "yenes"),
        "₹": Currency("rupia", "rupias", gender="f"),
        "MXN": Currency("peso", "pesos", "centavo", "centavos"),
    },
    symbols={
        "&": "y",
        "+": "más",
        "=": "igual a",
        "×": "por",
        "#": "número",
        "@": "arroba",
        "~": "aproximadamente",
    },
    web={
        ".": "punto",
        "@": "arroba",
        "/": "barra",
        ":": "dos puntos",
        "-": "guion",
        "_": "guion bajo",
        "+": "más",
        "www": "uve doble uve doble uve doble",
    },
    chapter_words=frozenset("capítulo parte libro tomo volumen acto escena sección artículo título".split()),
    regnal=lambda n: ordinal(n, LANG) if n <= 10 else cardinal(n, LANG),
    fraction=fraction,
    ordinal_suffixes={
        "º": "m",
        "ª": "f",
        ".º": "m",
        ".ª": "f",
        "er": "m",
        "ro": "m",
        "do": "m",
        "to": "m",
        "vo": "m",
        "mo": "m",
        "no": "m",
        "ra": "f",
        "da": "f",
        "ta": "f",
    },
)
