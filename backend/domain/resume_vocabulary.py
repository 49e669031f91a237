"""The words the résumé rules recognise: headings, dates, roles, places, links.

English and German, because those are the job seekers JobCtrl is made for first. Kept
apart from the rules so a new heading or month spelling is a one-line change.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from backend.domain import occupations, places, spoken_languages

# --------------------------------------------------------------------------- headings

_HEADING_WORDS = {
    "work": (
        "experience", "work experience", "employment", "professional experience", "work history",
        "employment history", "career", "career history", "relevant experience", "experience and employment",
        "berufserfahrung", "berufliche erfahrung", "beruflicher werdegang", "werdegang", "berufspraxis",
        "praxiserfahrung", "experience professionnelle", "expérience professionnelle",
        "expériences professionnelles", "expérience", "expériences", "parcours professionnel",
        "experiencia", "experiencia laboral", "experiencia profesional", "trayectoria profesional",
        "historial laboral", "esperienza", "esperienza professionale", "esperienze lavorative",
        "werkervaring", "experiência profissional", "professional history", "employment experience",
    ),
    "education": (
        "education", "academic background", "education and training", "studies", "ausbildung",
        "bildung", "bildungsweg", "studium", "schulbildung", "ausbildung und studium", "education & training",
        "qualifications", "academic qualifications", "formation", "formations", "études", "diplômes",
        "formation et diplômes", "formación", "formación académica", "educación", "estudios",
        "schul- und berufsbildung", "éducation et formation", "educación y formación",
        "istruzione", "formazione", "opleiding", "opleidingen", "formação", "educação",
    ),
    "skills": (
        "skills", "technical skills", "core skills", "key skills", "skills and tools", "tech stack",
        "technologies", "tools", "competencies", "core competencies", "kenntnisse", "fähigkeiten",
        "technische kenntnisse", "it-kenntnisse", "fachkenntnisse", "kompetenzen", "skills and expertise",
        "areas of expertise", "expertise", "key competencies", "professional skills", "clinical skills",
        "software", "compétences", "compétences techniques", "savoir-faire", "habilidades", "aptitudes",
        "competencias", "conocimientos", "habilidades técnicas", "competenze", "vaardigheden",
        "competências", "skills & tools", "tools and technologies", "technical proficiencies",
        "personal skills", "persönliche fähigkeiten", "compétences personnelles", "competencias personales",
        "job-related skills", "berufsbezogene kompetenzen", "compétences professionnelles",
        "competencias profesionales", "digital skills", "digitale kompetenz", "compétences numériques",
        "competencias digitales", "digital competence", "organisational skills",
    ),
    "languages": ("languages", "language skills", "sprachen", "sprachkenntnisse", "fremdsprachen",
                  "langues", "compétences linguistiques", "idiomas", "lenguas", "lingue",
                  "talen", "línguas", "other language(s)", "other languages", "weitere sprache(n)",
                  "weitere sprachen", "autre(s) langue(s)", "autres langues", "otro(s) idioma(s)",
                  "otros idiomas"),
    # Europass: "Mother tongue(s)  German" — the language with that fluency.
    "native_language": ("mother tongue", "mother tongue(s)", "muttersprache", "muttersprache(n)",
                        "langue maternelle", "langue(s) maternelle(s)", "lengua materna",
                        "lengua(s) materna(s)", "madrelingua", "moedertaal", "native language"),
    "certificates": (
        "certifications", "certificates", "certification", "licenses and certifications",
        "certifications and licenses", "zertifikate", "zertifizierungen", "weiterbildung",
        "licences and certifications", "licenses", "licences", "registrations", "certificats",
        "certifications et licences", "certificaciones", "certificados", "certificazioni",
    ),
    "summary": (
        "summary", "profile", "about", "about me", "professional summary", "profile summary",
        "career summary", "profil", "über mich", "zusammenfassung", "kurzprofil",
        "personal statement", "personal profile", "professional profile", "executive summary",
        "à propos", "profil professionnel", "résumé professionnel", "perfil", "perfil profesional",
        "resumen", "sobre mí", "profilo", "profiel",
    ),
    "contact": (
        "contact", "contact details", "contact information", "kontakt", "kontaktdaten",
        "personal details", "persönliche daten", "angaben zur person", "personal information",
        "informations personnelles", "información personal",
        "informations personnelles", "información personal", "coordonnées", "contacto", "datos personales",
        "contatti",
    ),
    # What the person looks for: offered as preference suggestions, not as résumé text.
    "preferences": (
        "objective", "career objective", "looking for", "what i'm looking for", "what i am looking for",
        "preferences", "job preferences", "work preferences", "career goals", "desired position",
        "suchprofil", "wunschposition", "gesucht", "was ich suche", "berufsziel", "objectif",
        "objectif professionnel", "poste recherché", "recherche", "objetivo", "objetivo profesional",
        "busco", "obiettivo",
    ),
}
HEADINGS = {word: kind for kind, words in _HEADING_WORDS.items() for word in words}

# Sections JobCtrl does not structure: their lines go to "unplaced", not into a neighbour.
OTHER_HEADINGS = frozenset((
    "projects", "side projects", "personal projects", "interests", "hobbies", "references",
    "publications", "volunteering", "volunteer experience", "awards", "honors", "honours",
    "achievements", "awards and honors", "projekte", "interessen", "hobbys", "referenzen",
    "veröffentlichungen", "ehrenamt", "auszeichnungen", "honors and awards", "honours and awards",
    "community", "extracurricular activities", "activities", "leadership", "presentations",
    "talks", "committees", "writing", "courses", "memberships", "professional memberships",
    "additional information", "other", "sonstiges", "engagement", "projets", "centres d'intérêt",
    "loisirs", "intérêts", "bénévolat", "distinctions", "publications scientifiques", "proyectos",
    "intereses", "aficiones", "voluntariado", "premios", "referencias", "progetti", "interessi",
))

DOCUMENT_TITLES = frozenset(("curriculum vitae", "cv", "resume", "résumé", "lebenslauf",
                             "currículum", "currículum vitae", "curriculum"))

# --------------------------------------------------------------------------- dates

_MONTHS = {
    "jan": 1, "january": 1, "januar": 1, "jän": 1, "jänner": 1, "janv": 1, "janvier": 1, "ene": 1,
    "enero": 1, "gen": 1, "gennaio": 1, "januari": 1, "janeiro": 1,
    "feb": 2, "february": 2, "februar": 2, "févr": 2, "fév": 2, "février": 2, "febrero": 2,
    "febbraio": 2, "februari": 2, "fev": 2, "fevereiro": 2,
    "mar": 3, "march": 3, "mär": 3, "märz": 3, "maerz": 3, "mrz": 3, "mars": 3, "marzo": 3,
    "maart": 3, "mrt": 3, "março": 3,
    "apr": 4, "april": 4, "avr": 4, "avril": 4, "abr": 4, "abril": 4, "aprile": 4,
    "may": 5, "mai": 5, "mayo": 5, "mag": 5, "maggio": 5, "mei": 5, "maio": 5,
    "jun": 6, "june": 6, "juni": 6, "juin": 6, "junio": 6, "giu": 6, "giugno": 6, "junho": 6,
    "jul": 7, "july": 7, "juli": 7, "juil": 7, "juillet": 7, "julio": 7, "lug": 7, "luglio": 7,
    "julho": 7,
    "aug": 8, "august": 8, "août": 8, "aout": 8, "ago": 8, "agosto": 8, "augustus": 8,
    "sep": 9, "sept": 9, "september": 9, "septembre": 9, "septiembre": 9, "setiembre": 9,
    "set": 9, "settembre": 9, "setembro": 9,
    "oct": 10, "october": 10, "okt": 10, "oktober": 10, "octobre": 10, "octubre": 10, "ott": 10,
    "ottobre": 10, "out": 10, "outubro": 10,
    "nov": 11, "november": 11, "novembre": 11, "noviembre": 11, "novembro": 11,
    "dec": 12, "december": 12, "dez": 12, "dezember": 12, "déc": 12, "décembre": 12, "dic": 12,
    "diciembre": 12, "dicembre": 12, "dezembro": 12,
}  # fmt: skip
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = (
    rf"(?:(?:{_MONTH_NAMES})\.?\s+\d{{4}}"  # Apr 2021, April 2021, Okt. 2021
    r"|\d{4}-\d{1,2}(?:-\d{1,2})?"  # 2021-04, 2021-04-01
    r"|\d{1,2}[/.]\d{4}"  # 04/2021, 04.2021
    r"|\d{4})"  # 2021
)
_PRESENT = (
    r"(?:present|current|currently|now|today|ongoing|to date|date|heute|aktuell|jetzt|dato|laufend"
    r"|aujourd['’]hui|à ce jour|ce jour|présent|actuel(?:lement)?|en cours|(?:la\s+)?actualidad"
    r"|(?:el\s+)?presente|hoy|la fecha|actual|oggi|in corso|heden|nu|atual(?:mente)?|o momento)")
_TO = (r"(?:[–—‐‑−-]|\bto\b|\buntil\b|\btill\b|\bbis\b|\bà\b|\bau\b|\ba\b|\bal\b|\bhasta\b"
       r"|\bjusqu['’]à\b|\btot\b)")
_RANGE = re.compile(
    rf"(?<![\w/.-])(?:(?:from|von|vom|de|du|desde|dal|van)\s+)?(?P<start>{_DATE})\s*{_TO}\s*"
    rf"(?:(?:bis\s+)?(?P<present>{_PRESENT})|(?P<end>{_DATE}))(?![\w/-])"
    rf"|(?:\bsince\b|\bseit\b|\bdepuis\b|\bdesde\b|\bdal\b|\bsinds\b)\s+(?P<since>{_DATE})(?![\w/-])",
    re.IGNORECASE,
)
SINGLE_DATE = re.compile(rf"(?<![\w/.-]){_DATE}(?![\w/-])", re.IGNORECASE)


_PRESENT_ONLY = re.compile(rf"^\s*{_PRESENT}\s*$", re.IGNORECASE)


_FRAGMENT = re.compile(rf"\b(?:{_MONTH_NAMES})\b\.?|\b\d{{4}}\b|[–—‐‑−-]\s*$", re.IGNORECASE)


def date_fragment(text: str) -> bool:
    """Part of a date or range set over several lines: "Aug.", "2019–May", "2022"."""
    words = text.split()
    return 0 < len(words) <= 3 and bool(_FRAGMENT.search(text) or is_present_word(text))


def is_present_word(text: str) -> bool:
    """"present", "heute", "aujourd'hui": the open end of a range, on its own."""
    return bool(_PRESENT_ONLY.match(text))


def find_range(text: str) -> re.Match | None:
    """The first "Apr 2021 – Present" / "2019 - 2021" / "seit 04/2020" in ``text``."""
    return _RANGE.search(text)


def range_dates(match: re.Match) -> dict[str, str]:
    """startDate / endDate as JSON Resume ISO prefixes; an open range has no endDate."""
    if match.group("since"):
        return {"startDate": iso_date(match.group("since"))}
    dates = {"startDate": iso_date(match.group("start"))}
    if match.group("end"):
        dates["endDate"] = iso_date(match.group("end"))
    return dates


def iso_date(text: str) -> str:
    """"Apr 2021", "04/2021", "2021-04" → "2021-04"; "2021" → "2021"."""
    text = text.strip().lower()
    if m := re.fullmatch(r"(\d{4})-(\d{1,2})(?:-(\d{1,2}))?", text):
        year, month, day = m.groups()
        return f"{year}-{int(month):02d}" + (f"-{int(day):02d}" if day else "")
    if m := re.fullmatch(r"(\d{1,2})[/.](\d{4})", text):
        return f"{m.group(2)}-{int(m.group(1)):02d}"
    if m := re.fullmatch(r"([^\W\d_]+)\.?\s+(\d{4})", text):
        return f"{m.group(2)}-{_MONTHS[m.group(1)]:02d}"
    return text


# --------------------------------------------------------------------------- entry headers

STRONG_SEPARATOR = re.compile(r"\s+[—–-]\s+|\s*\|\s*|\s+·\s+|\s+@\s+|\s+at\s+|\s+bei\s+")
EDUCATION_SEPARATOR = re.compile(r"\s+[—–-]\s+|\s*\|\s*|\s+·\s+")

_LEGAL_SUFFIXES = frozenset((
    "ltd", "ltd.", "limited", "inc", "inc.", "llc", "l.l.c.", "llp", "plc", "co.", "corp", "corp.",
    "gmbh", "ag", "kg", "se", "s.a.", "sa", "s.l.", "sl", "s.a.s.", "sas", "sarl", "s.à r.l.",
    "s.r.l.", "srl", "s.p.a.", "spa", "b.v.", "bv", "n.v.", "nv", "pty ltd", "pty. ltd.", "oy", "ab",
    "a/s", "as", "aps", "k.k.", "pte ltd", "pte. ltd.", "gmbh & co. kg", "e.v.", "ltda", "s.c.",
))  # fmt: skip


def is_legal_suffix(text: str) -> bool:
    """"Ltd.", "Inc", "S.A.": the tail of a company name written after a comma."""
    return text.strip().casefold() in _LEGAL_SUFFIXES


_HEADER_HINT = re.compile(r"\s[—–|@]\s|\s-\s|\bat\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [word.strip(",;()").lower() for word in text.split()]


def role_score(text: str) -> int:
    return occupations.role_score(text)


def org_score(text: str) -> int:
    return occupations.org_score(text)


def looks_like_header(text: str) -> bool:
    """A line that reads like "Title — Employer" rather than the rest of a sentence."""
    if _HEADER_HINT.search(text):
        return True
    return role_score(text) + org_score(text) > 0 and len(text.split()) <= 8


_INSTITUTION_WORDS = (
    "university", "universität", "universitat", "universidad", "université", "università", "universiteit",
    "universidade", "hochschule", "fachhochschule", "college", "school", "schule", "école", "escuela",
    "escola", "scuola", "institute", "institut", "instituto", "istituto", "academy", "akademie",
    "académie", "academia", "accademia", "polytechnic", "polytechnique", "politecnico", "tu", "eth",
    "epfl", "fh", "gymnasium", "berufsschule", "lycée", "iut", "ifsi", "chu", "conservatoire",
    "handwerkskammer", "ihk", "kammer", "campus", "mit", "centre", "center", "centro", "seminary",
)
DEGREE = re.compile(
    r"^(?:[BM]\.?\s?(?:Sc|Eng|Ed|Tech|Math|Arch|Des|Mus|Com|Acc|Phil|Pharm|BA|S|A|E)\.?(?:\s?\(Hons\.?\))?"
    r"|Ph\.?\s?D\.?|MBA|BBA|LL\.?[BM]\.?|J\.?D\.?|M\.?D\.?|Pharm\.?\s?D\.?|Dr\.(?:\s?[a-z]+\.)*"
    r"|Dipl\.-?\s?\w+\.?|Diplom(?:-\w+)?|Abitur|Fachabitur|Magister|Staatsexamen|Meisterprüfung"
    r"|Meisterbrief|Ausbildung|Pg\s?Cert|Pg\s?Dip|PGCE|HND|HNC|NVQ|GCSEs?|A[- ]levels?|GED"
    r"|Licence|Licenciatura|Licenciado|Grado|Máster|Master|Mestrado|Doctorat|Doctorado|Dottorato"
    r"|Laurea(?:\s+magistrale)?|Diplôme|Diploma|Certificat|Certificate|Certificado|BTS|DUT|CAP|BEP"
    r"|Bac(?:calauréat)?(?:\s?\+\s?\d)?|Bachillerato|Técnico(?:\s+Superior)?|CFGS|Grado Superior"
    r"|(?:Bachelor|Master|Doctor|Associate)(?:'s)?(?:\s+of\s+(?:Science|Arts|Engineering|Business"
    r"\s+Administration|Fine Arts|Laws|Education|Nursing))?)(?=[\s,]|$)",
    re.IGNORECASE,
)


def institution_score(text: str) -> int:
    return sum(1 for word in _words(text) if word in _INSTITUTION_WORDS)


# --------------------------------------------------------------------------- places

def location_of(text: str) -> dict[str, str] | None:
    """"Berlin, Germany" / "Toronto, ON, Canada" / "Austin, TX" → a JSON Resume location."""
    return places.location_of(text)


def is_place(text: str) -> bool:
    return places.is_place(text)


# --------------------------------------------------------------------------- links

URL_TLDS = "com|de|dev|io|net|org|me|app|eu|co|uk|page|site|info|tech|ch|at|nl|xyz|ai|cloud|online"
_NETWORKS = {
    "linkedin.com": "LinkedIn", "github.com": "GitHub", "gitlab.com": "GitLab", "xing.com": "XING",
    "twitter.com": "Twitter", "x.com": "X", "stackoverflow.com": "Stack Overflow", "medium.com": "Medium",
    "mastodon.social": "Mastodon", "bitbucket.org": "Bitbucket", "kaggle.com": "Kaggle",
    "dribbble.com": "Dribbble", "behance.net": "Behance",
}  # fmt: skip


def domain_of(url: str) -> str:
    host = urlparse(url).hostname or url
    return host.removeprefix("www.")


def network_of(url: str) -> str | None:
    host = domain_of(url)
    for domain, network in _NETWORKS.items():
        if host == domain or host.endswith("." + domain):
            return network
    return None


# --------------------------------------------------------------------------- languages

def is_language(text: str) -> bool:
    """"English", "Deutsch", "Español", "anglais": a spoken language's name."""
    return spoken_languages.is_language_name(text)
