"""The words the résumé rules recognise: headings, dates, roles, places, links.

English and German, because those are the job seekers JobCtrl is made for first. Kept
apart from the rules so a new heading or month spelling is a one-line change.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

# --------------------------------------------------------------------------- headings

_HEADING_WORDS = {
    "work": (
        "experience", "work experience", "employment", "professional experience", "work history",
        "employment history", "career", "career history", "relevant experience", "experience and employment",
        "berufserfahrung", "berufliche erfahrung", "beruflicher werdegang", "werdegang", "berufspraxis",
    ),
    "education": (
        "education", "academic background", "education and training", "studies", "ausbildung",
        "bildung", "bildungsweg", "studium", "schulbildung",
    ),
    "skills": (
        "skills", "technical skills", "core skills", "key skills", "skills and tools", "tech stack",
        "technologies", "tools", "competencies", "core competencies", "kenntnisse", "fähigkeiten",
        "technische kenntnisse", "it-kenntnisse", "fachkenntnisse", "kompetenzen",
    ),
    "languages": ("languages", "language skills", "sprachen", "sprachkenntnisse", "fremdsprachen"),
    "certificates": (
        "certifications", "certificates", "certification", "licenses and certifications",
        "certifications and licenses", "zertifikate", "zertifizierungen", "weiterbildung",
    ),
    "summary": (
        "summary", "profile", "about", "about me", "professional summary", "profile summary",
        "career summary", "objective", "profil", "über mich", "zusammenfassung", "kurzprofil",
    ),
    "contact": (
        "contact", "contact details", "contact information", "kontakt", "kontaktdaten",
        "personal details", "persönliche daten",
    ),
}
HEADINGS = {word: kind for kind, words in _HEADING_WORDS.items() for word in words}

# Sections JobCtrl does not structure: their lines go to "unplaced", not into a neighbour.
OTHER_HEADINGS = frozenset((
    "projects", "side projects", "personal projects", "interests", "hobbies", "references",
    "publications", "volunteering", "volunteer experience", "awards", "honors", "honours",
    "achievements", "awards and honors", "projekte", "interessen", "hobbys", "referenzen",
    "veröffentlichungen", "ehrenamt", "auszeichnungen",
))

DOCUMENT_TITLES = frozenset(("curriculum vitae", "cv", "resume", "résumé", "lebenslauf"))

# --------------------------------------------------------------------------- dates

_MONTHS = {
    "jan": 1, "january": 1, "januar": 1, "jän": 1, "jänner": 1,
    "feb": 2, "february": 2, "februar": 2,
    "mar": 3, "march": 3, "mär": 3, "märz": 3, "maerz": 3, "mrz": 3,
    "apr": 4, "april": 4,
    "may": 5, "mai": 5,
    "jun": 6, "june": 6, "juni": 6,
    "jul": 7, "july": 7, "juli": 7,
    "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "okt": 10, "oktober": 10,
    "nov": 11, "november": 11,
    "dec": 12, "december": 12, "dez": 12, "dezember": 12,
}  # fmt: skip
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = (
    rf"(?:(?:{_MONTH_NAMES})\.?\s+\d{{4}}"  # Apr 2021, April 2021, Okt. 2021
    r"|\d{4}-\d{1,2}(?:-\d{1,2})?"  # 2021-04, 2021-04-01
    r"|\d{1,2}[/.]\d{4}"  # 04/2021, 04.2021
    r"|\d{4})"  # 2021
)
_PRESENT = r"(?:present|current|currently|now|today|ongoing|heute|aktuell|jetzt|dato|laufend)"
_RANGE = re.compile(
    rf"(?<![\w/.-])(?P<start>{_DATE})\s*(?:[–—-]|\bto\b|\buntil\b|\bbis\b)\s*"
    rf"(?:(?:bis\s+)?(?P<present>{_PRESENT})|(?P<end>{_DATE}))(?![\w/-])"
    rf"|(?:\bsince\b|\bseit\b)\s+(?P<since>{_DATE})(?![\w/-])",
    re.IGNORECASE,
)
SINGLE_DATE = re.compile(rf"(?<![\w/.-]){_DATE}(?![\w/-])", re.IGNORECASE)


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

_ROLE_WORDS = frozenset((
    "engineer", "developer", "programmer", "architect", "manager", "lead", "head", "director",
    "consultant", "analyst", "scientist", "designer", "intern", "internship", "officer", "specialist",
    "administrator", "admin", "sre", "devops", "cto", "ceo", "cfo", "coo", "vp", "founder", "co-founder",
    "owner", "principal", "staff", "researcher", "student", "assistant", "associate", "technician",
    "tester", "trainee", "freelancer", "freelance", "contractor", "coach", "mentor", "teacher",
    "entwickler", "softwareentwickler", "ingenieur", "berater", "leiter", "teamleiter", "werkstudent",
    "praktikant", "praktikum", "geschäftsführer", "mitarbeiter", "auszubildender",
))  # fmt: skip
_ORG_WORDS = frozenset((
    "gmbh", "ag", "se", "kg", "ug", "inc", "inc.", "ltd", "ltd.", "llc", "plc", "corp", "corp.",
    "co.", "company", "group", "gmbh & co. kg", "s.a.", "b.v.", "oy", "ab", "labs", "bank", "studio",
))  # fmt: skip
_HEADER_HINT = re.compile(r"\s[—–|@]\s|\s-\s|\bat\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [word.strip(",;()").lower() for word in text.split()]


def role_score(text: str) -> int:
    return sum(1 for word in _words(text) if word in _ROLE_WORDS or word.rstrip("s") in _ROLE_WORDS)


def org_score(text: str) -> int:
    return sum(1 for word in _words(text) if word in _ORG_WORDS)


def looks_like_header(text: str) -> bool:
    """A line that reads like "Title — Employer" rather than the rest of a sentence."""
    if _HEADER_HINT.search(text):
        return True
    return role_score(text) + org_score(text) > 0 and len(text.split()) <= 8


_INSTITUTION_WORDS = (
    "university", "universität", "universitat", "hochschule", "college", "school", "institute", "institut",
    "academy", "akademie", "polytechnic", "tu", "eth", "epfl", "fh", "gymnasium", "berufsschule", "mit",
)
DEGREE = re.compile(
    r"^(?:[BM]\.?\s?(?:Sc|Eng|Ed|Tech|S|A|E)\.?|Ph\.?\s?D\.?|MBA"
    r"|Dr\.(?:\s?[a-z]+\.)*|Dipl\.-?\s?\w+\.?|Diplom(?:-\w+)?|Abitur|Magister|Staatsexamen"
    r"|(?:Bachelor|Master|Doctor|Associate)(?:'s)?(?:\s+of\s+(?:Science|Arts|Engineering|Business"
    r"\s+Administration|Fine Arts))?)(?=[\s,]|$)",
    re.IGNORECASE,
)


def institution_score(text: str) -> int:
    return sum(1 for word in _words(text) if word in _INSTITUTION_WORDS)


# --------------------------------------------------------------------------- places

_COUNTRIES = {
    "germany": "DE", "deutschland": "DE", "austria": "AT", "österreich": "AT", "switzerland": "CH",
    "schweiz": "CH", "netherlands": "NL", "the netherlands": "NL", "france": "FR", "spain": "ES",
    "italy": "IT", "poland": "PL", "portugal": "PT", "ireland": "IE", "sweden": "SE", "denmark": "DK",
    "norway": "NO", "finland": "FI", "belgium": "BE", "czechia": "CZ", "czech republic": "CZ",
    "united kingdom": "GB", "uk": "GB", "england": "GB", "scotland": "GB", "united states": "US",
    "usa": "US", "us": "US", "canada": "CA", "india": "IN", "ukraine": "UA", "romania": "RO",
    "greece": "GR", "hungary": "HU", "luxembourg": "LU", "estonia": "EE", "latvia": "LV",
    "lithuania": "LT", "croatia": "HR", "slovenia": "SI", "slovakia": "SK", "bulgaria": "BG",
    "serbia": "RS", "turkey": "TR", "israel": "IL", "australia": "AU", "new zealand": "NZ",
    "brazil": "BR", "mexico": "MX", "argentina": "AR", "japan": "JP", "singapore": "SG",
}  # fmt: skip
_ISO_CODES = frozenset(_COUNTRIES.values()) | {"EU"}
_US_STATES_TEXT = (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY "
    "NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC"
)
# "DE" and "IN" after a city mean Germany and India far more often than Delaware and Indiana.
_US_STATES = frozenset(_US_STATES_TEXT.split()) - {"DE", "IN"}
_PLACE = re.compile(
    r"^(?P<city>[^\W\d_][^\d,|@:/]{1,60}?),\s*(?P<country>[^\W\d_][^\W\d_ .]*(?: [^\W\d_]+)*)$")


def location_of(text: str) -> dict[str, str] | None:
    """"Berlin, Germany" / "Berlin, DE" / "Austin, TX" → a JSON Resume location."""
    match = _PLACE.match(text.strip())
    if not match:
        return None
    city, country = match.group("city").strip(), match.group("country").strip()
    if country in _US_STATES:
        return {"city": city, "region": country, "countryCode": "US"}
    if country.upper() == country and country in _ISO_CODES:
        return {"city": city, "countryCode": country}
    code = _COUNTRIES.get(country.lower())
    return {"city": city, "countryCode": code} if code else None


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

LANGUAGES = frozenset((
    "english", "german", "deutsch", "englisch", "french", "französisch", "spanish", "spanisch",
    "italian", "italienisch", "portuguese", "portugiesisch", "dutch", "niederländisch", "polish",
    "polnisch", "russian", "russisch", "ukrainian", "ukrainisch", "turkish", "türkisch", "arabic",
    "arabisch", "chinese", "chinesisch", "mandarin", "cantonese", "japanese", "japanisch", "korean",
    "koreanisch", "hindi", "urdu", "bengali", "punjabi", "tamil", "persian", "farsi", "hebrew",
    "greek", "griechisch", "swedish", "schwedisch", "danish", "dänisch", "norwegian", "norwegisch",
    "finnish", "finnisch", "czech", "tschechisch", "slovak", "hungarian", "ungarisch", "romanian",
    "rumänisch", "bulgarian", "croatian", "kroatisch", "serbian", "serbisch", "bosnian", "slovenian",
    "albanian", "vietnamese", "thai", "indonesian", "malay", "tagalog", "swahili", "catalan",
    "basque", "galician", "irish", "welsh", "latin", "latein", "estonian", "latvian", "lithuanian",
    "icelandic", "luxembourgish", "kurdish", "kurdisch", "amharic", "somali", "esperanto",
    "sign language", "german sign language",
))  # fmt: skip
