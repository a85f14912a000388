"""Whether a transcript is written in the language it was forced to: Whisper's translations and
romanisations are the recogniser's, not the voice's.

Forcing the language does not stop Whisper base from writing a sentence it understood as its
English translation, or Hindi in Latin letters as Hindi is typed in chat (``krypya darwaza dhire
se bhandkijiye`` for कृपया दरवाज़ा धीरे से बंद कीजिए). Scored as written, either is a chunk heard
wholly wrong, a false alarm on a voice that said every word. The recogniser decodes such a
transcript again with :data:`PROMPTS` (``speech.asr.recognizer``); a Hindi transcript that stays
romanised is compared as consonants (``speech.asr.scoring``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from speech.asr.script import script

# A neutral sentence in each language ("this is a sentence in ..."), no test sentence's words:
# the prompt of the second decoding. Hindi's is in Urdu script, the script Whisper base writes
# Hindustani in (a Devanagari prompt made its transcripts far worse: ``tests/support/asr_multilingual``).
PROMPTS: Final[dict[str, str]] = {
    "en": "This is a sentence in English.",
    "es": "Hola, esta es una frase en español.",
    "fr": "Bonjour, voici une phrase en français.",
    "pt": "Olá, esta é uma frase em português.",
    "de": "Hallo, das ist ein Satz auf Deutsch.",
    "it": "Ciao, questa è una frase in italiano.",
    "nl": "Hallo, dit is een zin in het Nederlands.",
    "ja": "こんにちは、これは日本語の文です。",
    "ar": "مرحبا، هذه جملة باللغة العربية.",
    "hi": "یہ ہندی کا ایک جملہ ہے۔",
}
_SCRIPTS = {"ja": {"japanese"}, "ar": {"arabic"}, "hi": {"devanagari", "arabic"}}
# Short, frequent words: English's, and each Latin-script language's, to tell an English
# translation from a transcript in the language (words both languages use are left out).
_ENGLISH = frozenset(
    "the and are were of to you your it that this with for my they he she have has will would "
    "can could please there their at be not but from by his her our we what where when".split()
)
_FUNCTION_WORDS = {
    "es": "el la los las de del y que en un una es por con para su al se no mi lo",
    "fr": "le la les de des du et que en un une est pour dans au il elle ne pas sur mon ma",
    "pt": "o os as de do da dos das e que em um uma é para com no na ao se não meu minha",
    "de": "der die das den dem des und ist nicht ein eine einen mit zu auf im sie er wir ich",
    "it": "il lo la gli le di del della e che un una è per con non nel al si mi",
    "nl": "de het een en van dat is niet met op te voor zijn ik je hij ze naar er",
}
_OWN_WORDS = {lang: frozenset(words.split()) for lang, words in _FUNCTION_WORDS.items()}


def _foreign_words(text: str) -> list[str]:
    """The words of ``text`` with a Latin, Cyrillic or Greek letter, in a language written in
    another script. Whisper base, forced to
    Hindi, wrote a sentence it understood partly in Latin letters ("Krippya Ghar سے نکلنے", for
    कृपया घर से निकलने) or with Cyrillic ones (مسкуرا for मुस्कुरा): the recogniser's spelling, not
    the voice's error, so such a transcript is decoded again as a translation is."""
    return [word for word in text.split() if any(_alphabet(ch) for ch in word)]


def _alphabet(char: str) -> bool:
    """Whether ``char`` is a letter of the Latin, Cyrillic or Greek alphabet."""
    return char.isalpha() and unicodedata.name(char, "").startswith(("LATIN", "CYRILLIC", "GREEK"))


def in_language(text: str, lang: str) -> bool:
    """Whether a transcript is written in ``lang`` (its script, with no word in Latin, Cyrillic
    or Greek letters; for Latin-script languages, more of its own short function words than
    English ones, and not mostly English words its word list lacks): the check that tells a
    recogniser's translation into English, or its romanisation, from what it heard. Empty text
    passes (nothing to redo)."""
    if lang == "en" or not text.strip():
        return True
    if lang in _SCRIPTS:
        return script(text) in _SCRIPTS[lang] and not _foreign_words(text)
    if script(text) != "latin":
        return True
    words = [w.strip(".,;:!?¿¡\"'«»()").casefold() for w in text.split()]
    english = sum(w in _ENGLISH for w in words)
    own = sum(w in _OWN_WORDS[lang] for w in words)
    return not (english >= 2 and english > own) and not _mostly_english(text, lang)


def _mostly_english(text: str, lang: str) -> bool:
    """Whether most words of ``text`` are English words that ``lang``'s word list lacks (the
    dictionaries of ``/oov``): Whisper base, forced to German, wrote "Wo ist hier die nächste
    Apotheke, bitte?" as "Voiced here the next up or take a better.", an English reading of the
    sounds with one short English word of ``_ENGLISH`` in it, which the count above let pass."""
    from speech.text.oov import oov_words

    words = re.findall(r"[^\W\d_]+", text)
    english = [w for w in words if not oov_words(w, "en") and oov_words(w, lang)]
    return len(english) >= 3 and 2 * len(english) > len(words)


# Short, frequent words of romanised Hindi; a few are English words too (the, to, main), which
# then do not count as English.
_ROMAN_HINDI = frozenset(
    "hai hain ka ki ke ko se mein me main par aur nahi nahin bhi to tha thi the ek yeh ye woh wo "
    "kya hum ham aap tum mera meri mere koi kuch".split()
)


def romanised_hindi(text: str) -> bool:
    """Whether a transcript of Hindi speech is Hindi in Latin letters: most of its letters Latin,
    and not English (the English function words of :func:`in_language` outnumber none of
    romanised Hindi's own, and at most half its words are English dictionary words that are not
    romanised Hindi ones). An English translation keeps its full error; so does a transcript in
    a mix of scripts, which the recogniser has already decoded again (``speech.asr.recognizer``)."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    if not letters or 2 * latin <= len(letters):
        return False
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]
    own = sum(w in _ROMAN_HINDI for w in words)
    english = sum(w in _ENGLISH and w not in _ROMAN_HINDI for w in words)
    if english >= 2 and english > own:
        return False
    from speech.text.oov import oov_words

    dictionary = [w for w in words if w not in _ROMAN_HINDI and not oov_words(w, "en")]
    return not (len(dictionary) >= 3 and 2 * len(dictionary) > len(words))
