"""The offline letter's fixed words in each language it is written in (English, German,
French, Spanish). The frames that carry the posting's title and company are the truth
gate's own (``LETTER_OPENINGS``, ``LETTER_CLOSINGS``): the gate lets the posting's names
through only in those slots. Every other phrase here holds the profile's facts only.
"""

from __future__ import annotations

from datetime import date

from backend.pipeline.text import text_language
from backend.pipeline.truth import LETTER_CLOSINGS, LETTER_OPENINGS

LETTER_LANGUAGES = ("en", "de", "fr", "es")
LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "nl": "Dutch"}

_MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
}

PHRASES: dict[str, dict[str, str]] = {
    "en": {
        "date": "{month} {day}, {year}",
        "salutation": "Dear {company} hiring team,",
        "recipient": "Hiring team, {company}",
        "sign_off": "Kind regards,",
        "thanks": "Thank you for your time and consideration.",
        "current": "In my current role, I work as {position} at {employer}.",
        "past": "Most recently, I worked as {position} at {employer}.",
        # A bullet that reads as "I <bullet>" (English only: see cover.as_clause).
        "did_first": "At {employer}, I {clause}.",
        "did_same": "In the same role, I {clause}.",
        "did_same_again": "Also at {employer}, I {clause}.",
        "did_same_third": "At {employer}, I also {clause}.",
        "did_also": "There, I also {clause}.",
        "did_before": "Before that, at {employer}, I {clause}.",
        "did_after": "Later, at {employer}, I {clause}.",
        # Any other bullet, as the noun phrase it is.
        "does": "My work at {employer} includes {text}.",
        "did": "My work at {employer} included {text}.",
        "does_also": "My work there also includes {text}.",
        "did_also_noun": "My work there also included {text}.",
        "ask": "You ask for {labels}.",
        "speak": "I speak {languages}.",
        "studied": "I studied {area} at {institution}.",
        "hold": "My credentials include the {certificate}.",
        "based": "I am based in {city}.",
        "looking_in": "I am looking for work in {place}.",
        "remote_only": "I am looking for remote work.",
        "remote_or_hybrid": "I am looking for remote or hybrid work.",
        "and": "and",
        "as_well": "and",
    },
    "de": {
        "date": "{day}. {month} {year}",
        "salutation": "Sehr geehrte Damen und Herren,",
        "recipient": "Personalabteilung, {company}",
        "sign_off": "Mit freundlichen Grüßen",
        "thanks": "Vielen Dank für Ihre Zeit.",
        "current": "Derzeit arbeite ich als {position} bei {employer}.",
        "past": "Zuletzt war ich als {position} bei {employer} tätig.",
        "does": "Zu meinen Aufgaben bei {employer} gehört: {text}.",
        "did": "Zu meinen Aufgaben bei {employer} gehörte: {text}.",
        "does_also": "Außerdem gehört dazu: {text}.",
        "did_also_noun": "Außerdem gehörte dazu: {text}.",
        "ask": "Sie suchen Erfahrung mit {labels}.",
        "speak": "Ich spreche {languages}.",
        "studied": "Ich habe {area} studiert ({institution}).",
        "hold": "Ich bringe folgenden Nachweis mit: {certificate}.",
        "based": "Ich wohne in {city}.",
        "looking_in": "Ich suche eine Stelle in {place}.",
        "remote_only": "Ich suche eine Stelle im Homeoffice.",
        "remote_or_hybrid": "Ich suche eine Stelle im Homeoffice oder mit hybrider Arbeitsweise.",
        "and": "und",
        "as_well": "sowie",
    },
    "fr": {
        "date": "{day} {month} {year}",
        "salutation": "Madame, Monsieur,",
        "recipient": "Service recrutement, {company}",
        "sign_off": "Cordialement,",
        "thanks": "Je vous remercie de votre attention.",
        "current": "J'occupe actuellement le poste de {position} chez {employer}.",
        "past": "Mon dernier poste était celui de {position} chez {employer}.",
        "does": "Chez {employer}, mes missions incluent : {text}.",
        "did": "Chez {employer}, mes missions incluaient : {text}.",
        "does_also": "Elles incluent aussi : {text}.",
        "did_also_noun": "Elles incluaient aussi : {text}.",
        "ask": "Vous recherchez une expérience en {labels}.",
        "speak": "Je parle {languages}.",
        "studied": "J'ai suivi une formation en {area} ({institution}).",
        "hold": "Je suis titulaire du {certificate}.",
        "based": "J'habite à {city}.",
        "looking_in": "Je recherche un poste à {place}.",
        "remote_only": "Je recherche un poste en télétravail.",
        "remote_or_hybrid": "Je recherche un poste en télétravail ou en mode hybride.",
        "and": "et",
        "as_well": "ainsi que",
    },
    "es": {
        "date": "{day} de {month} de {year}",
        "salutation": "Estimado equipo de {company}:",
        "recipient": "Departamento de selección, {company}",
        "sign_off": "Atentamente,",
        "thanks": "Gracias por su tiempo y consideración.",
        "current": "Actualmente trabajo como {position} en {employer}.",
        "past": "Mi último puesto fue {position} en {employer}.",
        "does": "En {employer}, mis funciones incluyen: {text}.",
        "did": "En {employer}, mis funciones incluían: {text}.",
        "does_also": "También incluyen: {text}.",
        "did_also_noun": "También incluían: {text}.",
        "ask": "Buscan experiencia en {labels}.",
        "speak": "Hablo {languages}.",
        "studied": "Estudié {area} en {institution}.",
        "hold": "Cuento con {certificate}.",
        "based": "Vivo en {city}.",
        "looking_in": "Busco trabajo en {place}.",
        "remote_only": "Busco un puesto en remoto.",
        "remote_or_hybrid": "Busco un puesto en remoto o híbrido.",
        "and": "y",
        "as_well": "así como",
    },
}


def letter_language(text: str) -> str:
    """The language of ``text`` if the offline letter can be written in it, else English."""
    found = text_language(text)
    return found if found in LETTER_LANGUAGES else "en"


def phrase(language: str, key: str, **values: str) -> str:
    table = PHRASES.get(language, PHRASES["en"])
    return table.get(key, PHRASES["en"][key]).format(**values)


def opening_frame(language: str) -> str:
    return LETTER_OPENINGS.get(language, LETTER_OPENINGS["en"])


def closing_frame(language: str) -> str:
    return LETTER_CLOSINGS.get(language, LETTER_CLOSINGS["en"])


def joined(items: list[str], language: str) -> str:
    """"a, b and c" in the letter's language."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {phrase(language, 'and')} " + items[-1]


def date_line(today: date, language: str) -> str:
    months = _MONTHS.get(language, _MONTHS["en"]).split()
    return phrase(language, "date", day=str(today.day), month=months[today.month - 1], year=str(today.year))
