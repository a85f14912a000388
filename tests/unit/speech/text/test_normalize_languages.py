"""Normalisation in the nine other API languages: a few concrete pairs per rule family."""

import pytest

from speech.text.normalize import normalize

CASES = [
    (
        "es",
        "El Sr. García pagó 5,20 € el 22/11/2026 a las 14:30.",
        "El señor García pagó cinco euros con veinte céntimos el veintidós de noviembre de dos mil veintiséis a las catorce y treinta.",
    ),
    ("es", "Tengo 21 años, 1 perro y 1 casa.", "Tengo veintiún años, un perro y una casa."),
    (
        "es",
        "Son 1.000.000 € y 3,14 y 2.500 personas.",
        "Son un millón de euros y tres coma catorce y dos mil quinientas personas.",
    ),
    ("es", "Es el 1º y la 2ª, 50 %.", "Es el primero y la segunda, cincuenta por ciento."),
    ("es", "Carlos V y Felipe II; capítulo IV.", "Carlos quinto y Felipe segundo; capítulo cuatro."),
    ("es", "Medio: 1/2 y 3/4.", "Medio: un medio y tres cuartos."),
    ("es", "p. ej. 10 km a 5 °C.", "por ejemplo diez kilómetros a cinco grados centígrados."),
    (
        "es",
        "Llama al +34 912 345 678.",
        "Llama al más tres cuatro, nueve uno dos, tres cuatro cinco, seis siete ocho.",
    ),
    ("es", "spell(ABC)", "A B C"),
    ("es", "Escribe a ana@correo.es.", "Escribe a ana arroba correo punto es."),
    (
        "fr",
        "M. Dupont a payé 5,20 € le 22/11/2026 à 14h30.",
        "Monsieur Dupont a payé cinq euros et vingt centimes le vingt-deux novembre deux mille vingt-six à quatorze heures trente.",
    ),
    (
        "fr",
        "Le 1er mai, la 1re fois, le XIXe siècle, Louis XIV, François Ier.",
        "Le premier mai, la première fois, le dix-neuvième siècle, Louis quatorze, François premier.",
    ),
    (
        "fr",
        "Il y a 10 000 personnes et 3,5 km, 50 %.",
        "Il y a dix mille personnes et trois virgule cinq kilomètres, cinquante pour cent.",
    ),
    ("fr", "1/2 et 3/4.", "un demi et trois quarts."),
    ("fr", "Appelez le 01 23 45 67 89.", "Appelez le zéro un, deux trois, quatre cinq, six sept, huit neuf."),
    ("fr", "Mme Martin, etc.", "Madame Martin, et cetera."),
    ("fr", "Ce livre et Le chat.", "Ce livre et Le chat."),
    (
        "de",
        "Am 3. Mai 2026 zahlte Hr. Müller 5,20 € um 14:30 Uhr.",
        "Am dritten Mai zweitausendsechsundzwanzig zahlte Herr Müller fünf Euro und zwanzig Cent um vierzehn Uhr dreißig.",
    ),
    (
        "de",
        "Der 2. Weltkrieg, z. B. 1.000 Euro, 3,14 und 1999.",
        "Der zweite Weltkrieg, zum Beispiel eintausend Euro, drei Komma eins vier und neunzehnhundertneunundneunzig.",
    ),
    (
        "de",
        "Am 22.11.2026 war es 20 °C.",
        "Am zweiundzwanzigsten November zweitausendsechsundzwanzig war es zwanzig Grad Celsius.",
    ),
    ("de", "Ludwig XIV. war König; Kapitel IV.", "Ludwig der Vierzehnte war König; Kapitel vier."),
    ("de", "1/2 und 3/4, 1 km, 5 km.", "ein halb und drei Viertel, ein Kilometer, fünf Kilometer."),
    ("de", "Das kostet 1 Euro.", "Das kostet ein Euro."),
    (
        "it",
        "Il Sig. Rossi ha pagato 5,20 € il 22/11/2026 alle 14:30.",
        "Il signor Rossi ha pagato cinque euro e venti centesimi il ventidue novembre duemilaventisei alle quattordici e trenta.",
    ),
    (
        "it",
        "Il 1º maggio, 3,14 e 1.000, 50%.",
        "Il primo maggio, tre virgola quattordici e mille, cinquanta per cento.",
    ),
    (
        "it",
        "Luigi XIV; capitolo IV; 1/2 e 3/4.",
        "Luigi quattordicesimo; capitolo quattro; un mezzo e tre quarti.",
    ),
    ("it", "Ho 1 libro e 1 casa.", "Ho un libro e una casa."),
    (
        "pt",
        "O Sr. Silva pagou R$ 5,20 em 22/11/2026 às 14h30.",
        "O senhor Silva pagou cinco reais e vinte centavos em vinte e dois de novembro de dois mil e vinte e seis às catorze e trinta.",
    ),
    (
        "pt",
        "O 1º e a 2ª, 3,14, 1.000, 50%.",
        "O primeiro e a segunda, três vírgula catorze, mil, cinquenta por cento.",
    ),
    (
        "pt",
        "Pedro II, capítulo IV, 1/2 e 3/4, 2 horas.",
        "Pedro segundo, capítulo quatro, um meio e três quartos, duas horas.",
    ),
    (
        "nl",
        "Dhr. de Vries betaalde € 5,20 op 22-11-2026 om 14:30.",
        "de heer de Vries betaalde vijf euro en twintig cent op tweeëntwintig november tweeduizendzesentwintig om veertien uur dertig.",
    ),
    (
        "nl",
        "De 1e en 2de, 3,14 en 1.000, 50%.",
        "De eerste en tweede, drie komma veertien en duizend, vijftig procent.",
    ),
    (
        "nl",
        "Willem III; hoofdstuk IV; 1/2 en 3/4.",
        "Willem de derde; hoofdstuk vier; een half en drie kwart.",
    ),
    ("nl", "Bijv. 10 km.", "Bijvoorbeeld tien kilometer."),
    (
        "ja",
        "2026年11月22日の14:30に500円払いました。",
        "にせんにじゅうろくねんじゅういちがつにじゅうににちのじゅうよじ さんじゅうふんにごひゃく えんはらいました。",
    ),
    (
        "ja",
        "3.14と1000と50%、¥500、21人、1日、4時。",
        "さん てん いち よんとせんとごじゅう パーセント、ごひゃく えん、にじゅういちにん、ついたち、よじ。",
    ),
    ("ja", "spell(AB)", "エー ビー"),
    ("ja", "2026-11-22", "にせんにじゅうろくねん じゅういちがつ にじゅうににち"),
    (
        "ar",
        "دفع د. أحمد 5.20 $ في 22/11/2026 الساعة 14:30.",
        "دفع الدكتور أحمد خمسة دولار وعشرون سنت في اثنان وعشرون نوفمبر ألفان وستة وعشرون الساعة أربعة عشر وثلاثون دقيقة.",
    ),
    ("ar", "لدي ٢١ كتابا و50%.", "لدي واحد وعشرون كتابا وخمسون بالمئة."),
    ("ar", "٣٫١٤", "ثلاثة فاصلة واحد أربعة"),
    (
        "hi",
        "डॉ. शर्मा ने 22/11/2026 को 14:30 बजे ₹500 दिए।",
        "डॉक्टर शर्मा ने बाईस नवंबर दो हज़ार छब्बीस को चौदह बजकर तीस मिनट पाँच सौ रुपये दिए।",
    ),
    (
        "hi",
        "मेरे पास 21 किताबें और 50% और 1234567 हैं।",
        "मेरे पास इक्कीस किताबें और पचास प्रतिशत और बारह लाख चौंतीस हज़ार पाँच सौ सड़सठ हैं।",
    ),
    ("hi", "३.१४ और १९९९", "तीन दशमलव एक चार और उन्नीस सौ निन्यानबे"),
    ("hi", "Rs. 20", "बीस रुपये"),
]


@pytest.mark.parametrize(("lang", "text", "expected"), CASES)
def test_language(lang, text, expected):
    assert normalize(text, lang) == expected


@pytest.mark.parametrize("lang", ["es", "fr", "pt", "de", "ja", "ar", "hi", "it", "nl"])
def test_every_language_speaks_digits(lang):
    out = normalize("Test 42", lang)
    assert not any(ch.isdigit() for ch in out)


@pytest.mark.parametrize("lang", ["es", "fr", "pt", "de", "it", "nl"])
def test_decimal_comma_languages_group_thousands_with_dots(lang):
    assert normalize("1.000", lang) == normalize("1000", lang)
    assert normalize("3,5", lang) != normalize("35", lang)


def test_japanese_output_has_no_kanji_numbers():
    # eSpeak NG's Japanese voice reads kana only; numerals must not come out as kanji.
    out = normalize("21人と300円", "ja")
    assert "二" not in out and "百" not in out and out.startswith("にじゅういち")


def test_arabic_indic_and_devanagari_digits():
    assert normalize("٢١", "ar") == normalize("21", "ar")
    assert normalize("२१", "hi") == normalize("21", "hi") == "इक्कीस"


def test_french_roman_lookalike_words_are_left_alone():
    assert normalize("Ce livre, De Gaulle, Le chat.", "fr") == "Ce livre, De Gaulle, Le chat."
