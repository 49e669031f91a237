"""Which line of work a job title names, from an occupational taxonomy.

A title is read against ESCO's occupation titles (English, French, Spanish; see
``scripts/make_occupations.py``) and a short supplement of titles ESCO v1.0 lacks
(``resources/occupations/titles_supplement.json``). Each title leads to an ISCO-08 group:
"Ward Sister" and "infirmier" to 2221 (nursing professionals), "Konstrukteur" and
"Mechanical Design Engineer" to 2144 (mechanical engineers), "BI Analyst" to 2511.

ISCO-08 groups work by the kind of job, not the line of work (a marketing manager is in
1221, a marketer in 2431), so each group belongs to a *field* (``_FIELDS``): the line of
work a person moves within. The distance between two titles is 0 for the same ISCO unit
group, 1 within one field, 2 between neighbouring fields (``_NEIGHBOURS``), 3 otherwise.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

# ISCO-08 prefixes → field (the longest prefix wins). Managers of a field sit with it.
_FIELDS: dict[str, str] = {
    # 1 Managers
    "1": "management", "1211": "finance", "1212": "people", "1221": "marketing_sales",
    "1222": "marketing", "1223": "product", "131": "agriculture", "1321": "engineering",
    "1322": "engineering", "1323": "construction", "1324": "logistics", "1330": "software",
    "1341": "care", "1342": "health", "1343": "care", "1344": "social_work", "1345": "teaching",
    "1346": "finance", "141": "hospitality", "1412": "culinary", "1420": "sales",
    # 2 Professionals
    "21": "science", "2120": "data", "214": "engineering", "2142": "civil", "215": "electrical_engineering",
    "2161": "architecture", "2162": "architecture", "2163": "design", "2164": "architecture",
    "2165": "civil", "2166": "design",
    "22": "health", "221": "medicine", "2221": "nursing", "2222": "midwifery", "2240": "advanced_practice",
    "2250": "veterinary", "2261": "dentistry", "2262": "pharmacy", "2264": "therapy", "2265": "health",
    "23": "teaching",
    "241": "finance", "2421": "business_analysis", "2422": "management", "2423": "people", "2424": "people",
    "2431": "marketing", "2432": "marketing", "2433": "sales", "2434": "sales_engineering",
    "25": "software", "2511": "data",
    "261": "legal", "262": "culture", "2631": "data", "263": "social_work", "2634": "therapy",
    "264": "writing", "265": "arts",
    # 3 Technicians and associate professionals
    "3": "associate", "311": "engineering_technicians", "3112": "construction", "3113": "electrical_trades",
    "3123": "construction", "313": "engineering_technicians", "314": "science", "315": "transport",
    "32": "health", "3213": "pharmacy", "3221": "nursing_support", "3222": "midwifery",
    "331": "finance", "332": "sales", "3331": "logistics", "333": "business_services",
    "334": "administration", "3342": "legal", "3411": "legal", "3412": "social_work", "342": "sports",
    "343": "arts", "3432": "design", "3434": "culinary", "35": "software",
    # 4 Clerical support workers
    "4": "administration", "422": "customer_service", "4224": "hospitality", "431": "finance",
    "432": "logistics",
    # 5 Service and sales workers
    "5": "services", "511": "hospitality", "512": "culinary", "513": "hospitality", "52": "sales",
    "53": "care", "5321": "care", "54": "protective_services",
    # 6–9 Agriculture, trades, operators, elementary; 0 armed forces
    "6": "agriculture", "7": "trades", "71": "construction", "72": "metal_trades", "74": "electrical_trades",
    "751": "culinary", "8": "machine_operators", "83": "transport", "9": "elementary",
    "941": "culinary", "0": "armed_forces",
}
FIELD_NAMES = {
    "management": "general management", "finance": "finance and accounting", "people": "HR",
    "marketing_sales": "marketing and sales", "marketing": "marketing", "sales": "sales",
    "product": "product management", "sales_engineering": "sales engineering",
    "engineering": "engineering and manufacturing",
    "construction": "construction", "civil": "civil engineering", "software": "software",
    "nursing": "nursing", "care": "care work", "teaching": "teaching", "science": "science",
    "data": "data and analytics", "electrical_engineering": "electrical engineering",
    "architecture": "architecture", "design": "design", "medicine": "medicine",
    "midwifery": "midwifery", "advanced_practice": "advanced practice nursing",
    "health": "health care", "business_analysis": "business analysis", "law_culture":
    "law, culture and media", "engineering_technicians": "engineering technician",
    "electrical_trades": "electrical trade work", "nursing_support": "nursing support",
    "business_services": "business services", "administration": "office and administration",
    "services": "service work", "metal_trades": "machine and metal trade work",
    "trades": "trade work", "machine_operators": "machine operation", "elementary":
    "elementary work", "armed_forces": "the armed forces", "associate": "technical work",
    "agriculture": "agriculture", "logistics": "logistics and supply chain", "social_work": "social work",
    "hospitality": "hospitality", "culinary": "kitchen work", "veterinary": "veterinary work",
    "dentistry": "dentistry", "pharmacy": "pharmacy", "therapy": "therapy", "legal": "legal work",
    "culture": "library and museum work", "writing": "writing", "arts": "the arts",
    "transport": "transport", "customer_service": "customer service", "sports": "sport and fitness",
    "protective_services": "protective services",
}
# Fields a person moves between with a step (distance 2): the same skills carry part way.
# Professions with a registration of their own (midwifery, advanced practice) are not
# neighbours of the one they grew from: the registration decides.
_NEIGHBOURS = {frozenset(pair) for pair in (
    ("software", "data"), ("data", "business_analysis"), ("data", "finance"),
    ("design", "software"), ("sales_engineering", "software"), ("sales_engineering", "sales"),
    ("marketing", "marketing_sales"), ("sales", "marketing_sales"), ("marketing", "sales"),
    ("marketing", "design"), ("finance", "business_analysis"),
    ("engineering", "civil"), ("engineering", "engineering_technicians"),
    ("engineering", "electrical_engineering"), ("civil", "construction"),
    ("civil", "architecture"), ("electrical_engineering", "electrical_trades"),
    ("construction", "electrical_trades"), ("nursing", "nursing_support"), ("nursing", "care"),
    ("nursing", "health"),
    ("health", "medicine"), ("people", "management"), ("finance", "management"),
    ("logistics", "business_services"), ("logistics", "transport"), ("culinary", "hospitality"),
    ("pharmacy", "health"), ("legal", "administration"), ("writing", "marketing"), ("writing", "design"),
    ("social_work", "care"), ("therapy", "health"), ("customer_service", "sales"),
)}

def _words_of(text: str) -> list[str]:
    return text.split()


_GENDER = re.compile(r"\((?:[mwfdhx]\s*/\s*)+[mwfdhx]\)|\b[mwfdhx]/[mwfdhx](?:/[mwfdhx])?\b"
                     r"|\((?:all genders?|alle geschlechter|f/m/div\.?|m/f/div\.?)\)"
                     r"|(?<=\w)(?:/|\()(?:a|as|in|innen|e|ne|euse|rice)\b\)?", re.I)
_PARTS = re.compile(r"\s+[-–—|]\s+|[,:;(){}\[\]]|\s+/\s+")
_WORD = re.compile(r"[^\W\d_][\w+#.'’-]*|\d+[a-z]?", re.UNICODE)
# Level words say how senior, not which job: "Senior Staff Nurse" is a nurse.
_LEVEL_WORDS = frozenset(_words_of("""senior sr sr. junior jr jr. lead principal staff chief i ii iii iv v
intern internship trainee graduate associate apprentice werkstudent praktikant stagiaire
becario prácticas alternance alternant entry-level mid-level mid"""))
# Head nouns every line of work uses ("Staff Engineer" may write software or build
# bridges): alone they name no occupation, whatever most taxonomy titles ending in them do.
_SHARED_HEADS = frozenset(_words_of("""engineer engineers developer analyst consultant specialist manager
director head lead officer associate coordinator executive assistant administrator technician
advisor adviser partner representative supervisor expert"""))
MAX_WORDS = 6


@dataclass(frozen=True)
class Occupation:
    code: str
    """ISCO-08 group: four digits for a unit group, fewer when only the broad group is clear."""
    field: str
    via: str
    """The words of the title that named it."""

    @property
    def field_name(self) -> str:
        return FIELD_NAMES.get(self.field, self.field.replace("_", " "))


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).lower().split())


@cache
def _taxonomy() -> tuple[dict[str, str], dict[str, str | None], dict[str, str], frozenset[str]]:
    """(title → ISCO unit group, head word → broad group, ISCO code → group name, the
    supplement's titles)."""
    root = resources.files("resources") / "occupations"
    esco = json.loads(gzip.decompress((root / "esco_titles.json.gz").read_bytes()))
    supplement = json.loads((root / "titles_supplement.json").read_text(encoding="utf-8"))
    titles: dict[str, str] = {}
    heads: dict[str, Counter[str]] = {}
    for language, names in esco["titles"].items():
        head_first = language in ("fr", "es", "it", "pt")  # "comptable général": head first
        for name, codes in names.items():
            titles.setdefault(name, codes[0])
            words = name.split()
            # Keyed by where the head stands: "<word" first (French, Spanish), ">word" last.
            head = f"<{words[0]}" if head_first else f">{words[-1]}"
            heads.setdefault(head, Counter())[codes[0]] += 1
    curated = set()
    for code, names in supplement["titles"].items():
        for name in names:
            titles[_fold(name)] = code  # the supplement names today's titles: it wins
            curated.add(_fold(name))
    return titles, _broad_heads(heads), esco["groups"], frozenset(curated)


def _broad_heads(heads: dict[str, Counter[str]]) -> dict[str, str | None]:
    """A head word ("nurse", "teacher") → the deepest ISCO group (two digits at least)
    that most titles ending in it share: "nurse" 2221, "teacher" 23; None for a word that
    heads many titles of no one group ("maestro")."""
    out: dict[str, str | None] = {}
    for word, counts in heads.items():
        total = sum(counts.values())
        if total < 3 or word[1:] in _SHARED_HEADS:
            continue
        out[word] = None  # many titles, no group most of them share: a generic word
        for digits in (4, 3, 2):
            grouped: Counter[str] = Counter()
            for code, count in counts.items():
                grouped[code[:digits]] += count
            code, count = grouped.most_common(1)[0]
            if count / total >= 0.6:
                out[word] = code
                break
    return out


def field_of(code: str) -> str:
    for length in range(len(code), 0, -1):
        field = _FIELDS.get(code[:length])
        if field is not None:
            return field
    return "other"


def _words(part: str) -> list[str]:
    return _WORD.findall(part)


def _lookup(words: list[str], titles: dict[str, str], heads: dict[str, str | None],
            curated: frozenset[str]) -> tuple[int, str, str] | None:
    """The longest run of words that is a known title: (length, code, words); among runs
    of one length the rightmost (English titles end in their head noun). A lone word
    counts only when it is no generic head ("maestro", "head")."""
    for length in range(min(len(words), MAX_WORDS), 0, -1):
        for start in range(len(words) - length, -1, -1):
            phrase = " ".join(words[start:start + length])
            code = titles.get(phrase) or _feminine(phrase, titles)
            if code is None or (length == 1 and phrase not in curated and _generic(phrase, code, heads)):
                continue
            return length, code, phrase
    return None


def _feminine(phrase: str, titles: dict[str, str]) -> str | None:
    """German feminine forms: "Konstrukteurin" is read as "Konstrukteur"."""
    if phrase.endswith("in") and " " not in phrase and len(phrase) > 6:
        return titles.get(phrase[:-2])
    return None


def _generic(word: str, code: str, heads: dict[str, str | None]) -> bool:
    """A lone word that heads titles of other groups too ("maestro", "director")."""
    return word in _SHARED_HEADS or any(key in heads and not code.startswith(heads[key] or "-")
                                        for key in (f">{word}", f"<{word}"))


@lru_cache(maxsize=8192)  # titles repeat across targets, history and boards
def occupation_of(title: str, *, by_head: bool = True) -> Occupation | None:
    """The occupation a job title names, or None when the taxonomy does not know it.
    ``by_head``: a title no taxonomy title matches may still be placed by its head noun
    ("Bank Nurse"); off for phrases that are no title ("B2B marketing")."""
    if not title or not title.strip():
        return None
    titles, heads, _, curated = _taxonomy()
    text = _fold(_GENDER.sub(" ", title))
    parts = [text, *(p for p in _PARTS.split(text) if p.strip() and p.strip() != text)]
    best: tuple[int, str, str] | None = None
    for part in parts:
        found = _lookup(_words(part), titles, heads, curated)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    if best is not None:
        return Occupation(best[1], field_of(best[1]), best[2])
    for part in parts if by_head else ():  # no title known: the head noun's broad group ("… Nurse")
        words = [w for w in _words(part) if w not in _LEVEL_WORDS]
        for key in ([f">{words[-1]}", f"<{words[0]}"] if words else []):
            code = heads.get(key)
            if code:
                return Occupation(code, field_of(code), key[1:])
    return None


def occupation_distance(a: Occupation, b: Occupation) -> int:
    """0 the same work, 1 the same field, 2 neighbouring fields, 3 another line of work."""
    if a.code == b.code or (a.field == b.field and (a.code.startswith(b.code) or b.code.startswith(a.code))):
        return 0
    if a.field == b.field:
        return 1
    if frozenset((a.field, b.field)) in _NEIGHBOURS:
        return 2
    return 3


def group_name(code: str) -> str | None:
    """The ISCO-08 group's English name ("Nursing professionals")."""
    return _taxonomy()[2].get(code)
