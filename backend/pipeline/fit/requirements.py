"""What a posting asks for, read from its title and description (no profile involved).

The description is cut into sections by its headings: "Requirements", "What you'll need",
"About you" hold must-haves; "Nice to have", "Bonus points", "Preferred" hold
nice-to-haves; duties and the company blurb only mention things (a skill named there is a
nice-to-have); benefits and the hiring process are skipped. Inside a must section a clause
that says "is a plus" or "preferred" is a nice-to-have. A posting with no headings is one
"mentioned" section, so it still yields skills, years, languages and the like.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import accumulate
from typing import NamedTuple

from backend.domain.fit import Importance
from backend.pipeline.fit.synonyms import WORD_END, skill_index
from backend.pipeline.fit.titles import title_family, title_level

MUST, NICE, MENTION, SKIP = "must", "nice", "mention", "skip"

# Nice is tested first: "Preferred qualifications" is not "Qualifications".
_NICE_HEADING = re.compile(
    r"nice[- ]to[- ]have|nice if|bonus|\bplus(?:es)?\b|preferred|would be (?:great|nice|a plus)|"
    r"great if|extra credit|not required|ideally|even better|stand out|desirable|we'd love"
    r"|wünschenswert|von vorteil|ein plus|serait un plus|un plus|atout|apprécié|se valorar|valorable"
    r"|deseable", re.I)
_MUST_HEADING = re.compile(
    r"requirement|required|qualifications|must[- ]have|what you(?:'|’)?ll need|what you need|"
    r"you(?:'|’)?ll need|you have|you bring|about you|who you are|looking for|great fit|"
    r"your (?:profile|background|skills|experience)|skills|what it takes|you should|you will have|"
    r"minimum|basic qualifications|ideal candidate|to succeed|we expect|essential|person specification"
    r"|ihr profil|dein profil|anforderungen|das bringen sie mit|das bringst du mit|was sie mitbringen"
    r"|qualifikation|profil recherché|votre profil|ton profil|compétences requises|prérequis"
    r"|requisitos|perfil|qué buscamos|buscamos|imprescindible", re.I)
_SKIP_HEADING = re.compile(
    r"benefit|perks|what we offer|we offer|why you(?:'|’)?ll|why join|why work|compensation|salary|"
    r"hiring process|how to apply|next steps|interview|equal opportunit|diversity|inclusion|"
    r"our process|apply|wir bieten|das bieten wir|unser angebot|avantages|nous offrons|ce que nous"
    r"|déroulement|processus de recrutement|ofrecemos|te ofrecemos|beneficios", re.I)
_BULLET = re.compile(r"^(?:[-•*▪◦·–]|\d{1,2}[.)])\s+")
_INLINE_HEADING = re.compile(r"^([A-Z][^:]{2,50}):\s+(\S.*)$")
_CLAUSES = re.compile(r"[;•]|(?<=[a-z0-9)])[.!?](?:\s+|$)")


@lru_cache(maxsize=2048)  # boards repeat their headings ("Requirements", "Benefits")
def _heading_kind(text: str) -> str | None:
    """The section a heading opens, or None when the text is not a heading we know."""
    if _SKIP_HEADING.search(text):
        return SKIP
    if _NICE_HEADING.search(text):
        return NICE
    if _MUST_HEADING.search(text):
        return MUST
    return None


_BULLET_START = frozenset("-•*▪◦·–0123456789")


def _looks_like_heading(line: str) -> bool:
    return (len(line) <= 70 and line.count(" ") < 9 and not line.endswith((".", ",", ";"))
            and not (line[0] in _BULLET_START and _BULLET.match(line)))


class Clause(NamedTuple):  # a tuple: postings have dozens, and a tuple is the cheapest to build
    text: str
    importance: Importance
    section: str
    """must | nice | mention: where the clause stood."""


def clauses(description: str) -> list[Clause]:
    """Every clause of the description that can hold a requirement, with its section's
    importance ("is a plus" inside a must section is applied by ``extract_needs``)."""
    section = MENTION
    out: list[Clause] = []
    lines = [line.strip() for line in description.split("\n")]
    last = len(lines) - 1
    for at, line in enumerate(lines):
        if not line:
            continue
        if _looks_like_heading(line):
            kind = _heading_kind(line.rstrip(":"))
            alone = (at == 0 or not lines[at - 1]) and (at == last or not lines[at + 1])
            if kind is not None or alone:
                # A known heading opens its section; an unknown one standing alone
                # ("What you'll do", "About us") opens a section that only mentions things.
                section = kind or MENTION
                continue
        elif ":" in line and (inline := _INLINE_HEADING.match(line)) and (
                kind := _heading_kind(inline.group(1))):
            section, line = kind, inline.group(2)  # "Requirements: Python, Go"
        if section == SKIP:
            continue
        importance: Importance = "must" if section == MUST else "nice"
        body = (_BULLET.sub("", line) if line[0] in _BULLET_START else line).rstrip(".!? ")
        parts = _CLAUSES.split(body) if _has_clause_break(body) else (body,)
        out.extend(Clause(part, importance, section) for part in map(str.strip, parts) if part)
    return out


def _has_clause_break(text: str) -> bool:
    # A cheap test first: most lines are one clause, and the split is the costly part.
    return ";" in text or "•" in text or ". " in text or "! " in text or "? " in text


# --------------------------------------------------------------------------- needs


@dataclass(frozen=True)
class YearsNeed:
    years: int
    domain: str | None
    """"backend development", "B2B marketing": what the years are of, when stated."""
    importance: Importance
    text: str


@dataclass(frozen=True)
class LanguageNeed:
    language: str
    level: int
    """The CEFR rank asked for (see ``evidence.CEFR``): 5 = C1 ("fluent"), 7 = native."""
    importance: Importance
    either: bool = False
    """One of several languages the clause names will do ("Spanish or Arabic")."""


@dataclass(frozen=True)
class DegreeNeed:
    level: int
    """1 bachelor, 2 master, 3 doctorate."""
    field: str | None
    importance: Importance
    or_equivalent: bool
    essential: bool = False
    """The posting says it cannot do without it ("essential", "imprescindible")."""


@dataclass(frozen=True)
class AuthorizationNeed:
    place: str | None
    no_sponsorship: bool
    text: str


@dataclass(frozen=True)
class LicenceNeed:
    acronym: str
    """"RMN", "CEng", "APRN": how the posting names the licence or registration."""
    expansion: str | None
    """"Registered Mental Health Nurse", when the posting spells it out."""
    importance: Importance
    text: str
    alternatives: tuple[str, ...] = ()
    """Other licences the same clause accepts instead ("ADN or BSN")."""
    essential: bool = False


@dataclass(frozen=True)
class ManagementNeed:
    size: int | None
    """How many people the role manages, when stated."""
    importance: Importance
    text: str


_OR_BETWEEN = re.compile(r"\s*,?\s*(?:or|oder|ou|o|/)\s*", re.I)
_EITHER = re.compile(r"\b(?:or|oder|ou|o)\b|/")


@dataclass
class PostingNeeds:
    family: str | None
    level: int | None
    skills: dict[str, Importance] = field(default_factory=dict)
    phrases: dict[str, Importance] = field(default_factory=dict)
    """Named abilities that are not in the synonym list ("freight operations")."""
    years: YearsNeed | None = None
    languages: dict[str, LanguageNeed] = field(default_factory=dict)
    degree: DegreeNeed | None = None
    authorization: AuthorizationNeed | None = None
    licences: dict[str, LicenceNeed] = field(default_factory=dict)
    management: ManagementNeed | None = None

    def add_skill(self, name: str, importance: Importance) -> None:
        if self.skills.get(name) != "must":
            self.skills[name] = importance


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15}
_YEARS = re.compile(
    r"\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen)\s*\+?\s*"
    r"(?:(?:-|–|to)\s*\d{1,2}\s*)?\+?\s*years?(?:'|’)?\s+(?:of\s+)?"
    r"(?:(?:professional|relevant|hands-on|industry|commercial|working|practical|proven)\s+)?"
    r"(?:(experience)\s*)?(?:(?:in|with|as|building|doing|on|of)\s+(?:an?\s+)?([^.;,()\n]{3,60}))?", re.I)
_PHRASE = re.compile(
    r"\b(?:experience (?:with|in)|skills? in|knowledge of|familiarity with|exposure to|"
    r"proficiency (?:in|with)|expertise in|background in|comfortable with)\s+([^.;()\n]{3,60})", re.I)

_LANGUAGE_ALIASES = {
    "English": "english", "German": "german|deutsch", "French": "french|français|francais",
    "Spanish": "spanish|español|espanol|castellano", "Italian": "italian|italiano",
    "Portuguese": "portuguese|português", "Dutch": "dutch|nederlands", "Polish": "polish",
    "Swedish": "swedish", "Danish": "danish", "Norwegian": "norwegian", "Finnish": "finnish",
    "Czech": "czech", "Greek": "greek", "Turkish": "turkish", "Russian": "russian",
    "Ukrainian": "ukrainian", "Arabic": "arabic", "Hebrew": "hebrew", "Hindi": "hindi",
    "Japanese": "japanese", "Korean": "korean", "Mandarin": "mandarin|chinese", "Cantonese": "cantonese",
}


# The languages postings are read in: a language's name in these (and English) is found.
_POSTING_LANGUAGES = frozenset(("de", "fr", "es", "it", "nl", "pt"))


def _language_patterns() -> dict[str, str]:
    """Each language's names in the languages postings are written in (ISO 639 names and
    pycountry's translations: "Englisch", "anglais", "inglés"), German "-kenntnisse" forms
    included ("Deutschkenntnisse"). Each is one prefix-factored alternation: the scanner
    runs all of them over every posting."""
    from backend.domain.spoken_languages import names_of
    from backend.pipeline.fit.synonyms import trie

    out = {}
    for english, aliases in _LANGUAGE_ALIASES.items():
        names = {*aliases.split("|"),
                 *(n for n in names_of(english, _POSTING_LANGUAGES) if n.isalpha() and len(n) > 3)}
        out[english] = f"(?:{trie(sorted(names))})(?:kenntnisse)?"
    return out


LANGUAGES = _language_patterns()
_LANGUAGE = re.compile(r"(?<![A-Za-z])(?:" + "|".join(LANGUAGES.values()) + r")(?![A-Za-z])", re.I)
LANGUAGE_NAMES = _LANGUAGE  # a language's name in any language postings are read in
_LANGUAGE_PATTERNS = tuple((name, re.compile(aliases, re.I)) for name, aliases in LANGUAGES.items())
# The level a clause asks for, strongest cue first (CEFR ranks: A1 1 … C2 6, native 7).
_LEVEL_CUES = ((7, r"native|mother tongue|muttersprach|langue maternelle|natif|native|nativo|lengua materna"),
               (6, r"\bc2\b|bilingual|bilingue|bilingüe|zweisprachig"),
               (5, r"fluen|business|professional|proficien|excellent|\bc1\b|full working|verhandlungssicher"
                   r"|fließend|sehr gut|courant|parfait|avanzado|fluido|experto"),
               (4, r"\bb2\b|good|working|strong|solid|\bgute?\b|\bbonn?e?\b|\bbuen[oa]?\b"),
               (3, r"\bb1\b|conversational|basic|some|grundkenntnisse|notions|básico"))
_LEVEL_CUE = tuple((level, re.compile(pattern, re.I)) for level, pattern in _LEVEL_CUES)
_LANGUAGE_CONTEXT = re.compile(r"fluen|native|speak|spoken|written|language|proficien|level|"
                               r"kenntnisse|\b[abc][12]\b|-speaking|sprach|langue|niveau|maîtrise"
                               r"|idioma|nivel|dominio|hablante", re.I)

_DEGREE = re.compile(
    r"\b(ph\.?\s?d|doctorate|doctorado|doctorat|promotion|master(?:'|’)?s|masters|master of|máster|m\.?sc|mba"
    r"|maestría|bac\s?\+\s?5|bachelor(?:'|’)?s?|b\.?sc|b\.?eng|university degree|college degree|licenciatura"
    r"|bac\s?\+\s?3|(?:bs|ba|ms|ma)(?= in | degree))(?![\w+])", re.I)
# A requirement the posting cannot do without, in the words postings use for it.
_ESSENTIAL = re.compile(r"\b(?:essential|mandatory|must hold|required|imprescindible|obligatori[oa]"
                        r"|indispensable|obligatoire|zwingend|unbedingt|erforderlich)\b", re.I)
_DEGREE_FIELD = re.compile(r"\b(?:degree|bs|ba|ms|ma|bsc|msc|bachelor(?:'|’)?s?|master(?:'|’)?s?|phd)"
                           r"(?: degree)? (?:in|of) ([A-Za-z][A-Za-z &/-]{2,50}?)(?=$|[,.;)]| or | and )",
                           re.I)
_AUTHORIZED = re.compile(
    r"\b(?:authori[sz]ed|authori[sz]ation|eligible|eligibility|right|permit(?:ted)?|legally able)"
    r"\s+to\s+work\s+in\s+(?:the\s+)?([A-Z][\w.]*(?: [A-Z][\w.]*){0,2})", re.I)
_NO_SPONSORSHIP = re.compile(
    r"\b(?:no|not|unable to|cannot|can(?:'|’)t|won(?:'|’)t|will not|do not|does not|don(?:'|’)t"
    r"|are not able to)"
    r"\s+(?:\w+\s+){0,3}?(?:visa\s+)?sponsor", re.I)


_MANAGEMENT_HINT = r"manag|lead|supervis|oversee|encadr|dirig|liderar|gestionar|direct reports|staff\b" \
                   r"|personalverantwortung|führungsverantwortung|mitarbeite"


# Where each reader has something to read, found together with the skills in one scan of
# the lower-cased clauses (one alternation behind one boundary check is several times faster
# than a re.I scan per reader and clause). "nice" marks a must-section clause that says
# "is a plus".
_HINTS = (
    ("years", r"years?\b"),
    ("phrase", r"(?:experience|skills?|knowledge|familiarity|exposure|proficiency|expertise|background"
               r"|comfortable) (?:with|in|of|to)\b"),
    ("authorization", r"to work in\b|sponsor"),
    ("licence", r"licen[cs]|licensure|registration|registered|certif|chartered|accredit|diplom|diplôm"
                r"|titulaci|habilitaci|approbation|zulassung|inscription|colegiad|status\b|authori[sz]ation|ticket"
                r"|obligatoir|mandatory|essential|imprescindible|erforderlich|admission|admitted"),
    ("language", "(?:" + "|".join(LANGUAGES.values()) + r")(?![a-z])"),
    ("degree", _DEGREE.pattern[2:]),  # without its leading \b: the shared boundary does it
    ("management", _MANAGEMENT_HINT),
    ("nice", r"(?:a plus|bonus|nice to have|preferred|ideally|desirable|an advantage|not required"
             r"|would be great|optional|un plus|un atout|apprécié|souhaité|souhaitable|von vorteil"
             r"|wünschenswert|ein plus|idealerweise|se valora|valorable|deseable|es un plus|pluspunt"
             r"|een pré)\b"),
)


@cache
def _scanner() -> re.Pattern[str]:
    hints = "|".join(f"(?P<{name}>{pattern})" for name, pattern in _HINTS)
    return re.compile(f"(?<![a-z0-9])(?:(?P<skill>{skill_index().lower_source}){WORD_END}|{hints})")


@dataclass
class _Scan:
    skills: dict[int, list[str]] = field(default_factory=dict)
    """Clause index → the canonical skills it mentions."""
    hints: dict[str, set[int] | range] = field(default_factory=lambda: {name: set() for name, _ in _HINTS})


def _scan(joined: str, starts: list[int]) -> _Scan:
    """Skills and reader hints per clause of ``joined`` (the clauses, one per line)."""
    index = skill_index()
    scan = _Scan()
    lowered = joined.lower()
    if len(lowered) == len(joined):
        for match in _scanner().finditer(lowered):
            at = bisect_right(starts, match.start()) - 1
            if match.lastgroup == "skill":
                scan.skills.setdefault(at, []).append(index.spelled(match.group(0)))
            else:
                scan.hints[match.lastgroup or ""].add(at)  # type: ignore[union-attr]
        exact = index.exact_pattern.finditer(joined) if index.exact_pattern else ()
        for match in exact:
            at = bisect_right(starts, match.start()) - 1
            scan.skills.setdefault(at, []).append(index.exact[match.group(0)])
    else:  # a letter whose lower case is longer: offsets would shift, so read every clause
        for offset, name in index.hits(joined):
            scan.skills.setdefault(bisect_right(starts, offset) - 1, []).append(name)
        scan.hints = {name: range(len(starts)) for name, _ in _HINTS}
    return scan


def _years(clause: Clause) -> YearsNeed | None:
    match = _YEARS.search(clause.text)
    if not match or not (match.group(2) or match.group(3)):
        return None  # "Founded 10 years ago" is not an experience requirement
    number = match.group(1).lower()
    years = _NUMBER_WORDS.get(number) or int(number)
    domain = (match.group(3) or "").strip() or None
    importance: Importance = "nice" if clause.importance == "nice" and clause.section == NICE else "must"
    return YearsNeed(years, domain, importance, clause.text)


def _languages(clause: Clause) -> list[LanguageNeed]:
    mentions = _LANGUAGE.findall(clause.text)
    if not mentions:
        return []
    # A language named in the company blurb ("14 Spanish cities") or the menu ("Italian
    # grill experience") is not a requirement: it needs a language word or a level next to it.
    cue = next((lvl for lvl, pattern in _LEVEL_CUE if pattern.search(clause.text)), None)
    if not _LANGUAGE_CONTEXT.search(clause.text) and (cue is None or clause.section == MENTION):
        return []
    level = cue or 4
    names = dict.fromkeys(_language_name(mention) for mention in mentions)
    importance: Importance = "nice" if clause.section == NICE or clause.importance == "nice" else "must"
    # "Spanish or Arabic": an "or" right between two different languages.
    found = [(m.start(), m.end(), _language_name(m.group(0))) for m in _LANGUAGE.finditer(clause.text)]
    either = any(_OR_BETWEEN.fullmatch(clause.text[a_end:b_start]) and a_name != b_name
                 for (_, a_end, a_name), (b_start, _, b_name) in zip(found, found[1:], strict=False))
    return [LanguageNeed(name, level, importance, either) for name in names]


def _language_name(mention: str) -> str:
    return next(name for name, pattern in _LANGUAGE_PATTERNS if pattern.fullmatch(mention))


def _degree(clause: Clause) -> DegreeNeed | None:
    match = _DEGREE.search(clause.text)
    if not match:
        return None
    word = match.group(1).lower()
    level = (3 if word.startswith(("ph", "doct", "promotion")) else
             2 if word.startswith(("m", "mba", "bac+5", "bac +5", "bac + 5", "bac+ 5")) else 1)
    field_match = _DEGREE_FIELD.search(clause.text)
    equivalent = bool(re.search(r"equivalent|or similar|related field|comparable|equivalente|équivalent",
                                clause.text, re.I))
    importance: Importance = "nice" if clause.importance == "nice" or equivalent else "must"
    essential = importance == "must" and _ESSENTIAL.search(clause.text) is not None
    return DegreeNeed(level, field_match.group(1).strip() if field_match else None, importance, equivalent,
                      essential)


def _authorization(clause: Clause) -> AuthorizationNeed | None:
    authorized = _AUTHORIZED.search(clause.text)
    no_sponsorship = _NO_SPONSORSHIP.search(clause.text) is not None
    if not authorized and not no_sponsorship:
        return None
    return AuthorizationNeed(authorized.group(1) if authorized else None, no_sponsorship, clause.text)


def _words_of(text: str) -> list[str]:
    return text.split()


# A licence is named by an acronym ("RMN", "CEng", "APRN"), often after its full name.
# RMN, CEng, MSc-style mixes, and dotted ones ("J.D.", "P.Eng.").
_ACRONYM_TEXT = (r"[A-Z]{2,6}|[A-Z]{2}[a-z]{2,3}|[A-Z][a-z][A-Z]{1,3}"
                 r"|(?:[A-Z]\.){2,4}|[A-Z]\.[A-Z][a-z]{1,3}\.?")
_ACRONYM = re.compile(rf"(?<![\w-])({_ACRONYM_TEXT})(?![\w-])")
_EXPANSION = re.compile(
    rf"((?:[A-Z][\w'’-]+\s+(?:(?:of|in|de|du|des)\s+)?){{1,5}})\(({_ACRONYM_TEXT})\)")
# Acronyms in licence clauses that name no licence: places, employers, units, documents.
_NOT_LICENCES = frozenset(_words_of("""UK US USA EU EEA NHS ICU CV PIN ID HR IT AI UX UI API SQL OR AND
TBC FTE DBS GCSE II III IV VI VII VIII IX XI XII CCU ER ED NICU PICU OT DE FR ES CA AU IE NL GB MD DC NY
TX HCPC PMP BA BSC MSC MBA PHD CDI CDD SA SL GMBH AG LTD LLC INC PLC"""))


def _licences(clause: Clause, skills: list[str]) -> list[LicenceNeed]:
    expansions = {acronym: " ".join(name.split()) for name, acronym in _EXPANSION.findall(clause.text)}
    importance: Importance = "nice" if clause.importance == "nice" else "must"
    skill_names = {skill.upper() for skill in skills}
    names = [a for a in dict.fromkeys(acronym.replace(".", "") for acronym in _ACRONYM.findall(clause.text))
             if a.upper() not in _NOT_LICENCES and a.upper() not in skill_names and len(a) > 1]
    # "an ADN or BSN", "CPA oder StB": either one will do.
    either = len(names) > 1 and _EITHER.search(clause.text) is not None
    return [LicenceNeed(a, expansions.get(a), importance, clause.text,
                        alternatives=tuple(n for n in names if n != a) if either else ())
            for a in names]


def _phrase(clause: Clause, found_skills: list[str]) -> str | None:
    match = _PHRASE.search(clause.text)
    if not match or found_skills:
        return None
    phrase = match.group(1).strip()
    if len(phrase.split()) > 4 or any(ch.isdigit() for ch in phrase) or _LANGUAGE.search(phrase):
        return None  # "fluency in Dutch and English" is a language requirement, read as one
    return phrase[0].upper() + phrase[1:]


def extract_needs(title: str, description: str) -> PostingNeeds:
    index = skill_index()
    needs = PostingNeeds(family=title_family(title), level=title_level(title))
    for name in index.find(title):
        needs.add_skill(name, "must")  # "iOS Engineer": the title itself asks for it
    found = clauses(description)
    joined = "\n".join(clause.text for clause in found)
    starts = list(accumulate((len(clause.text) + 1 for clause in found[:-1]), initial=0))
    scan = _scan(joined, starts)
    hints = scan.hints
    for at, clause in enumerate(found):
        if at in hints["nice"] and clause.importance == "must":
            clause = clause._replace(importance="nice")
        skills = scan.skills.get(at, [])
        for name in skills:
            needs.add_skill(name, clause.importance)
        years = _years(clause) if at in hints["years"] else None
        if years is not None:
            if needs.years is None or years.years > needs.years.years:
                needs.years = years
        elif at in hints["phrase"] and clause.section != MENTION and (phrase := _phrase(clause, skills)):
            # "5+ years of experience in B2B marketing" is the years requirement, not a skill.
            needs.phrases.setdefault(phrase, clause.importance)
        for language in _languages(clause) if at in hints["language"] else ():
            known = needs.languages.get(language.language)
            if known is None or _rank(language) > _rank(known):
                needs.languages[language.language] = language
        if at in hints["degree"] and (degree := _degree(clause)) is not None and (
                needs.degree is None or _outranks(degree, needs.degree)):
            needs.degree = degree
        if at in hints["authorization"]:
            needs.authorization = _merged(needs.authorization, _authorization(clause))
        if at in hints["management"] and (managing := _management(clause)) is not None and (
                needs.management is None or (managing.size or 0) > (needs.management.size or 0)):
            needs.management = managing
        if needs.level is None and clause.section == MUST and _STUDENT_ONLY.search(clause.text):
            needs.level = 0  # "Estudiante universitario o titulado reciente": a student job
        if at in hints["licence"] and clause.section != MENTION:
            for licence in _licences(clause, skills):
                known = needs.licences.get(licence.acronym)
                if known is None or (known.importance == "nice" and licence.importance == "must"):
                    needs.licences[licence.acronym] = licence
    return needs


# Managing people, as postings put it: "lead a team of 12", "8 direct reports",
# "Personalverantwortung", "encadrer une équipe de 5", "dirigir un equipo de 10".
_MANAGES = re.compile(
    r"\b(?:manag\w*|lead(?:ing)?|supervis\w*|line[- ]manag\w*|oversee\w*|encadr\w*|dirig\w*|liderar"
    r"|gestionar)\s+(?:and\s+\w+\s+)?(?:a\s+|an\s+|the\s+|une?\s+|d'une\s+|un\s+)?(?:\w+\s+)?"
    r"(?:team|staff|department|unit|équipe|equipo)\s+(?:of\s+|de\s+)?(?:up to\s+|around\s+|about\s+)?"
    r"(?P<team>\d{1,4})\+?"
    r"|\b(?P<reports>\d{1,4})\+?\s+direct reports\b"
    r"|\b(?:leadership|direction)\s+(?:and\s+direction\s+)?to\s+(?:approximately\s+|about\s+|around\s+)?"
    r"(?P<led>\d{1,4})\b"
    r"|\b(?:personalverantwortung|führungsverantwortung|people management|line management"
    r"|(?:people|team|nursing|progressive \w+) (?:leadership|management) experience"
    r"|management d'équipe|gestión de equipos)\b", re.I)


def _management(clause: Clause) -> ManagementNeed | None:
    match = _MANAGES.search(clause.text)
    if match is None:
        return None
    number = match.group("team") or match.group("reports") or match.group("led")
    size = int(number) if number else None
    if size is not None and size < 2:
        return None
    # The people a role manages are its duties, wherever the posting lists them: a must,
    # unless a nice-to-have section says so.
    return ManagementNeed(size, "nice" if clause.section == NICE else "must", clause.text)


# A role only students or new graduates may take, whatever its title says.
_STUDENT_ONLY = re.compile(
    r"currently enrolled|enrolled (?:in|at) an? (?:university|college|degree)|must be a (?:current )?student"
    r"|returning to (?:school|studies)|estudiante universitari[oa]|étudiant(?:e)? en (?:cours|master|licence)"
    r"|immatrikuliert|eingeschrieben(?:e|er)? student|studierende[rn]? (?:der|im|eines)", re.I)


def _outranks(new: DegreeNeed, known: DegreeNeed) -> bool:
    """The degree a posting insists on: a must over a nice-to-have, then the higher one."""
    if new.importance != known.importance:
        return new.importance == "must"
    return new.level > known.level


def _merged(known: AuthorizationNeed | None, new: AuthorizationNeed | None) -> AuthorizationNeed | None:
    """"Authorized to work in the US" and "no visa sponsorship" are often two clauses."""
    if known is None or new is None:
        return known or new
    return AuthorizationNeed(known.place or new.place, known.no_sponsorship or new.no_sponsorship, known.text)


def _rank(language: LanguageNeed) -> tuple[bool, int]:
    return language.importance == "must", language.level
