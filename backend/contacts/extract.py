"""Finding contact candidates in source text: a deterministic offline extractor, the
model prompt and the parser that checks a model's answer against the sources.

Nothing is invented. A candidate's name and email must appear in a source document; a
model's candidate whose name is in no document is dropped, an email it made up is
cleared, and its evidence is replaced by the source sentence when the model's quote is
not in the sources."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationError

from backend.domain.contacts import MAX_EVIDENCE_CHARS, Candidate, SourceDocument, name_key
from backend.domain.errors import TypedFailure

MAX_CANDIDATES = 20
MAX_PROMPT_CHARS_PER_DOCUMENT = 12_000

EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}")
_WORD = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
NAME = rf"{_WORD}(?:\s+{_WORD}){{1,2}}"
# Role phrases a posting uses for the people behind it (matched case-insensitively).
ROLE = (r"(?:(?:senior|lead|principal|technical|tech|executive|engineering|people|"
        r"talent|university|campus)\s+){0,2}"
        r"(?:recruiter|recruiting\s+(?:lead|manager|coordinator|partner)|sourcer|"
        r"talent\s+(?:partner|acquisition(?:\s+(?:partner|lead|manager|specialist))?|"
        r"lead|manager)|hiring\s+manager|engineering\s+manager|people\s+partner|"
        r"head\s+of\s+(?:engineering|talent|people|recruiting|data|product)|"
        r"(?:cto|vp\s+(?:of\s+)?engineering|director\s+of\s+engineering))")
# Capitalized words that start sentences or name roles, teams and places, not people.
_NOT_NAME_TEXT = """
the a an our we you your us they this that these those if for and or with to of in on at by
please questions question contact email apply applications send reach write hiring manager
recruiter recruiting talent partner acquisition senior lead principal head team engineering
people product data director vp cto about role job position what who why how when where
remote hybrid onsite office careers jobs inbox human resources hr benefits salary
"""
NOT_NAME_WORDS = frozenset(_NOT_NAME_TEXT.split())

_ROLE_BEFORE_NAME = re.compile(
    rf"(?i:(?P<title>{ROLE}))\s*(?:is|:|,|-|–|—|\()?\s*(?P<name>{NAME})")
_NAME_BEFORE_ROLE = re.compile(
    rf"(?P<name>{NAME})\s*(?:,|\(|–|—|-|is|\bis\s+our|\bis\s+the)?\s*(?i:(?:our|the|a|an)\s+)?"
    rf"(?i:(?P<title>{ROLE}))")
_CONTACT_NAME = re.compile(
    rf"(?i:contact|reach\s+out\s+to|write\s+to|email|ask|questions\??\s*(?:go\s+to|ask)?)"
    rf"\s+(?P<name>{NAME})")


class ContactOutputInvalid(TypedFailure, ValueError):
    """The model answered, but not with the JSON we asked for (retryable)."""

    code = "provider_response_invalid"
    retryable = True


# --- text -----------------------------------------------------------------------------------


def page_text(html: str) -> str:
    """Readable text of a fetched page, one block per line; ``mailto:`` addresses kept."""
    from bs4 import BeautifulSoup  # on the first page read: bs4 is slow to import

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg"]):
        tag.decompose()
    mailtos = [a["href"][len("mailto:"):].split("?")[0] for a in soup.find_all("a", href=True)
               if a["href"].lower().startswith("mailto:")]
    text = soup.get_text("\n")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    body = "\n".join(line for line in lines if line)
    missing = [m for m in mailtos if m and m not in body]
    return body + ("\n" + "\n".join(missing) if missing else "")


def sentences(text: str) -> list[str]:
    """Lines, then sentences; short enough to serve as evidence."""
    found = []
    for line in text.splitlines():
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line.strip()):
            if part:
                found.append(part)
    return found


def _evidence(sentence: str) -> str:
    sentence = " ".join(sentence.split())
    if len(sentence) <= MAX_EVIDENCE_CHARS:
        return sentence
    return sentence[: MAX_EVIDENCE_CHARS - 1].rstrip() + "…"


def _is_name(candidate: str) -> bool:
    words = candidate.split()
    return 2 <= len(words) <= 3 and not any(w.lower() in NOT_NAME_WORDS for w in words)


def _trimmed(candidate: str) -> str:
    """``Contact Maria Lopez`` -> ``Maria Lopez``: a capitalized sentence start is not
    part of the name."""
    words = candidate.split()
    while words and words[0].lower() in NOT_NAME_WORDS:
        words.pop(0)
    return " ".join(words)


def _clean_title(title: str) -> str:
    words = " ".join(title.split())
    return words[:1].upper() + words[1:]


# --- the offline extractor ------------------------------------------------------------------


@dataclass
class _Found:
    name: str | None
    title: str | None
    email: str | None
    source_url: str | None
    evidence: str

    def confidence(self) -> float:
        """Named person with role and email 0.9; fewer facts, less confidence."""
        if self.name and self.title and self.email:
            return 0.9
        if self.name and self.email:
            return 0.75
        if self.name and self.title:
            return 0.7
        if self.name:
            return 0.55
        return 0.4  # an inbox without a person


def _names_in(sentence: str) -> list[tuple[str, str | None]]:
    """(name, title or None) pairs the sentence states, in order of appearance."""
    found: dict[str, tuple[int, str, str | None]] = {}
    for pattern in (_ROLE_BEFORE_NAME, _NAME_BEFORE_ROLE, _CONTACT_NAME):
        for match in pattern.finditer(sentence):
            name = _trimmed(match.group("name"))
            if not _is_name(name):
                continue
            title = match.groupdict().get("title")
            key = name_key(name)
            if key not in found or (found[key][2] is None and title):
                found[key] = (match.start("name"), name, _clean_title(title) if title else None)
    return [(name, title) for _, name, title in sorted(found.values())]


def _email_matches_name(email: str, name: str) -> bool:
    local = re.split(r"[._+-]", email.split("@", 1)[0].lower())
    parts = [p.lower() for p in name.split()]
    return bool(set(local) & set(parts)) or local[0] == parts[0][0] + parts[-1]


def _from_sentence(sentence: str, source_url: str | None) -> list[_Found]:
    names = _names_in(sentence)
    emails = list(dict.fromkeys(EMAIL.findall(sentence)))
    found = [_Found(name, title, None, source_url, _evidence(sentence)) for name, title in names]
    for email in emails:
        owner = next((f for f in found if f.email is None and _email_matches_name(email, f.name)),
                     None)
        if owner is None and len(found) == 1 and found[0].email is None:
            owner = found[0]  # one person and one address in the same sentence
        if owner is not None:
            owner.email = email
        else:
            found.append(_Found(None, None, email, source_url, _evidence(sentence)))
    return found


def offline_candidates(documents: list[SourceDocument]) -> list[Candidate]:
    """Deterministic candidates from named recruiters, hiring managers and addresses in
    the documents. Repeats merge: the most complete facts win, first source first."""
    merged: dict[str, _Found] = {}
    for document in documents:
        for sentence in sentences(document.text):
            for item in _from_sentence(sentence, document.url):
                key = name_key(item.name) if item.name else f"@{item.email.lower()}"
                current = merged.get(key)
                if current is None:
                    merged[key] = item
                    continue
                current.title = current.title or item.title
                current.email = current.email or item.email
    # An address on its own line (a mailto link, a signature) that names a person found
    # elsewhere belongs to that person.
    for key, inbox in list(merged.items()):
        if not key.startswith("@"):
            continue
        owner = next((f for f in merged.values() if f.name and f.email is None
                      and _email_matches_name(inbox.email, f.name)), None)
        if owner is not None:
            owner.email = inbox.email
    # An inbox that turned out to belong to a named person is not a second candidate.
    owned = {f.email.lower() for f in merged.values() if f.name and f.email}
    results = [f for k, f in merged.items() if not (k.startswith("@") and k[1:] in owned)]
    candidates = [Candidate(name=f.name, title=f.title, email=f.email, source_url=f.source_url,
                            confidence=f.confidence(), evidence=f.evidence) for f in results]
    candidates.sort(key=lambda c: (-c.confidence, c.name or "~", c.email or ""))
    return candidates[:MAX_CANDIDATES]


# --- the model path -------------------------------------------------------------------------

CONTACT_SYSTEM = (
    "You find the people a job seeker could contact about one job posting: recruiters, "
    "hiring managers and named contact addresses. Use only the documents given; never "
    "guess a name or an email address. Answer with JSON: {\"candidates\": [{\"name\": "
    "string or null, \"title\": string or null, \"email\": string or null, \"sourceId\": "
    "the document id, \"evidence\": the exact sentence that shows it, \"confidence\": "
    "0 to 1}]}. Answer {\"candidates\": []} when the documents name nobody."
)


def contact_prompt(*, title: str, company: str, documents: list[SourceDocument]) -> str:
    parts = [f"Job: {title} at {company}."]
    for document in documents:
        text = document.text[:MAX_PROMPT_CHARS_PER_DOCUMENT]
        parts.append(f"<document id=\"{document.source_id}\">\n{text}\n</document>")
    return "\n\n".join(parts)


class _ModelCandidate(BaseModel):
    name: str | None = Field(default=None, max_length=200)
    title: str | None = Field(default=None, max_length=200)
    email: str | None = Field(default=None, max_length=320)
    source_id: str | None = Field(default=None, alias="sourceId", max_length=100)
    evidence: str | None = Field(default=None, max_length=2000)
    confidence: float | None = None


class _ModelAnswer(BaseModel):
    candidates: list[_ModelCandidate]


def _json_object(text: str) -> str:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    return text[start: end + 1]


def _normalized(text: str) -> str:
    return " ".join(text.lower().split())


def parse_model_candidates(text: str, documents: list[SourceDocument]) -> list[Candidate]:
    """The model's candidates, each checked against the documents (see module doc)."""
    try:
        answer = _ModelAnswer.model_validate(json.loads(_json_object(text)))
    except (ValidationError, ValueError) as error:
        raise ContactOutputInvalid("contact reply is not the requested JSON") from error
    by_id = {d.source_id: d for d in documents}
    results: dict[str, Candidate] = {}
    for item in answer.candidates:
        checked = _verified(item, documents, by_id)
        if checked is None:
            continue
        key = name_key(checked.name) if checked.name else f"@{(checked.email or '').lower()}"
        if key not in results or results[key].confidence < checked.confidence:
            results[key] = checked
    ordered = sorted(results.values(), key=lambda c: (-c.confidence, c.name or "~"))
    return ordered[:MAX_CANDIDATES]


def _verified(item: _ModelCandidate, documents: list[SourceDocument],
              by_id: dict[str, SourceDocument]) -> Candidate | None:
    name = " ".join(item.name.split()) if item.name and item.name.strip() else None
    email = item.email.strip() if item.email and EMAIL.fullmatch(item.email.strip()) else None
    needle = name or email
    if needle is None:
        return None
    home = _document_with(needle, [by_id[item.source_id]] if item.source_id in by_id else [])
    home = home or _document_with(needle, documents)
    if home is None:
        return None  # the sources never mention it: never fabricate a contact
    if email and not any(email.lower() in d.text.lower() for d in documents):
        email = None
    evidence = item.evidence if item.evidence and _normalized(item.evidence) in _normalized(
        home.text) else None
    evidence = evidence or next((s for s in sentences(home.text)
                                 if _normalized(needle) in _normalized(s)), needle)
    confidence = min(max(item.confidence if item.confidence is not None else 0.5, 0.0), 1.0)
    title = " ".join(item.title.split()) if item.title and item.title.strip() else None
    return Candidate(name=name, title=title, email=email, source_url=home.url,
                     confidence=round(confidence, 3), evidence=_evidence(evidence))


def _document_with(needle: str, documents: list[SourceDocument]) -> SourceDocument | None:
    wanted = _normalized(needle)
    return next((d for d in documents if wanted in _normalized(d.text)), None)
