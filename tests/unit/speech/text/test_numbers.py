import pytest

from speech.text.numbers import cardinal, decimal, digits, integer, ordinal, roman_value, year
from speech.text.numbers_hi import cardinal_hi, ordinal_hi


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (21, "twenty-one"),
        (101, "one hundred one"),
        (1234567, "one million two hundred thirty-four thousand five hundred sixty-seven"),
    ],
)
def test_english_cardinals_are_american(n, words):
    assert cardinal(n, "en") == words


def test_english_ordinals_and_years():
    assert ordinal(101, "en") == "one hundred first"
    assert year(1999, "en") == "nineteen ninety-nine"
    assert year(2005, "en") == "two thousand five"
    assert year(1905, "en") == "nineteen oh five"


@pytest.mark.parametrize(
    ("n", "lang", "kwargs", "words"),
    [
        (21, "es", {}, "veintiuno"),
        (21, "es", {"before_noun": True}, "veintiún"),
        (1, "es", {"gender": "f"}, "una"),
        (200, "es", {"gender": "f"}, "doscientas"),
        (21000, "es", {}, "veintiún mil"),
        (2, "pt", {"gender": "f"}, "duas"),
        (16, "pt", {}, "dezesseis"),
        (21, "fr", {"gender": "f"}, "vingt et une"),
        (1, "de", {"before_noun": True}, "ein"),
        (21, "ja", {}, "にじゅういち"),
        (21, "ar", {}, "واحد وعشرون"),
        (21, "hi", {}, "इक्कीस"),
    ],
)
def test_cardinals_agree_with_nouns(n, lang, kwargs, words):
    assert cardinal(n, lang, **kwargs) == words


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "शून्य"),
        (99, "निन्यानबे"),
        (100, "एक सौ"),
        (1234567, "बारह लाख चौंतीस हज़ार पाँच सौ सड़सठ"),
        (10**7, "एक करोड़"),
        (-5, "ऋण पाँच"),
    ],
)
def test_hindi_cardinals_use_the_indian_system(n, words):
    assert cardinal_hi(n) == words


def test_hindi_ordinals_and_years():
    assert ordinal_hi(1) == "पहला"
    assert ordinal_hi(5) == "पाँचवाँ"
    assert year(1999, "hi") == "उन्नीस सौ निन्यानबे"


def test_feminine_ordinals():
    assert ordinal(1, "fr", gender="f") == "première"
    assert ordinal(2, "es", gender="f") == "segunda"


@pytest.mark.parametrize(
    ("whole", "frac", "lang", "words"),
    [
        ("3", "14", "en", "three point one four"),
        ("3", "14", "es", "tres coma catorce"),
        ("3", "05", "es", "tres coma cero cinco"),
        ("3", "14", "de", "drei Komma eins vier"),
        ("3", "14", "fr", "trois virgule quatorze"),
        ("0", "5", "en", "zero point five"),
    ],
)
def test_decimals_read_the_fraction_per_language(whole, frac, lang, words):
    assert decimal(whole, frac, lang) == words


def test_ids_are_read_digit_by_digit():
    assert integer("007", "en") == "zero zero seven"
    assert integer("1234567890123456", "en").startswith("one two three")
    assert digits("4-8", "en") == "four eight"


@pytest.mark.parametrize(
    ("numeral", "value"),
    [("I", 1), ("IV", 4), ("XIV", 14), ("MCMXCIX", 1999), ("IIII", None), ("", None), ("IC", None)],
)
def test_roman_values(numeral, value):
    assert roman_value(numeral) == value
