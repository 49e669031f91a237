"""Résumé text lines → a draft JSON Resume, by fixed rules (no model, no network).

The rules cover the layouts people actually send: English and German section headings
(Markdown or not, ALL CAPS or not), a top block with name, headline and contact details,
and work entries written as "Title — Employer, City" + dates, "Employer | Title | dates",
"Title, Employer (dates)" or title / employer / dates on separate lines.

Nothing is guessed into existence and nothing disappears: every line that cannot be
placed is returned in ``unplaced``, as it was, for the job seeker to review.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from backend.domain import resume_vocabulary as vocab
from backend.domain.resume import JsonResume

# --------------------------------------------------------------------------- lines

_BULLET = re.compile(r"^\s*(?:[•·▪►‣◦●■□➢✓]\s*|[-*+–—]\s+|\d{1,2}[.)]\s+)")
_MD_HEADING = re.compile(r"^\s*(#{1,6})\s+")
_RULE = re.compile(r"^\s*(?:[-*_=~—–]\s*){3,}$")  # Markdown / text horizontal rules
_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
_TERMINAL = (".", "!", "?", ";", ":")
_CELL_GAP = re.compile(r"\s{2,}|\t")
_URL_WRAPPED = re.compile(r"(?:https?://|www\.)\S*/$")
_UNFINISHED = re.compile(
    r"(?:,|\b(?:and|or|to|of|with|for|the|a|an|in|on|by|from|und|oder|mit|für|der|die|das|von|zu"
    r"|et|ou|de|des|du|la|le|les|avec|pour|y|o|con|para|del|el|los|las))$", re.IGNORECASE)


@dataclass
class Line:
    raw: str  # as it came, for ``unplaced``
    text: str  # marker, Markdown and spacing removed
    bullet: bool = False
    level: int = 0  # Markdown heading level, 0 when not a Markdown heading
    continued: list[str] = field(default_factory=list)  # raw lines joined into this one
    # The line split where the layout set items apart (two spaces or a tab): a title and
    # its right-aligned dates, an employer and its right-aligned city.
    cells: list[str] = field(default_factory=list)

    @property
    def raws(self) -> list[str]:
        return [self.raw, *self.continued]


def _plain(text: str, *, keep_urls: bool = False) -> str:
    """Inline Markdown → text. In contact details a link's target is what matters."""
    text = _MD_LINK.sub(lambda m: m.group(2) if keep_urls else m.group(1), text)
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    text = re.sub(r"(?<!\w)[*_]([^*_]+)[*_](?!\w)", r"\1", text)  # *emphasis*
    return text.strip().rstrip("\\").strip()


def read_lines(raw_lines: list[str]) -> list[Line | None]:
    """Classify each raw line; ``None`` marks an empty line (a paragraph break)."""
    out: list[Line | None] = []
    for raw in raw_lines:
        stripped = raw.strip()
        if not stripped or _RULE.match(stripped):
            out.append(None)
            continue
        heading = _MD_HEADING.match(stripped)
        level = len(heading.group(1)) if heading else 0
        body = stripped[heading.end():] if heading else stripped
        bullet = _BULLET.match(body) if not heading else None
        if bullet:
            body = body[bullet.end():]
        cells = [" ".join(cell.split()) for cell in _CELL_GAP.split(body.strip()) if cell.strip()]
        previous = out[-1] if out else None
        if previous is not None and _URL_WRAPPED.search(previous.text) and re.fullmatch(r"[\w.-]+/?", body):
            previous.text += body  # "https://www.linkedin.com/in/" / "luciafernandezrivas"
            previous.cells[-1:] = [previous.cells[-1] + body] if previous.cells else [previous.text]
            previous.continued.append(stripped)
            continue
        body = re.sub(r"\s+,", ",", body)  # "Mobilität , Technische Universität"
        out.append(Line(raw=stripped, text=" ".join(body.split()), bullet=bool(bullet), level=level,
                        cells=cells))
    return out


# --------------------------------------------------------------------------- sections


@dataclass
class Section:
    kind: str  # "top", one of vocab.HEADINGS' values, or "other"
    heading: Line | None = None
    lines: list[Line | None] = field(default_factory=list)


def heading_kind(line: Line) -> str | None:
    """The section a line names, or None when it is not a heading line."""
    key = _heading_key(line.text)
    if key in vocab.HEADINGS:
        return vocab.HEADINGS[key]
    if key in vocab.OTHER_HEADINGS:
        return "other"
    # "Skills and Tickets", "Languages & Interests": named by its first part
    first = re.split(r" and | und | et | y |, ", key)[0]
    if first != key and len(key.split()) <= 5 and first in vocab.HEADINGS:
        return vocab.HEADINGS[first]
    return None


def _heading_key(text: str) -> str:
    text = _plain(text).rstrip(":").strip()
    return " ".join(text.lower().replace("&", "and").split())


def _pure_contact(line: Line) -> bool:
    """An e-mail, phone number or web address, alone or with other contact details."""
    if line.bullet and len(line.text.split()) > 6:
        return False
    kinds = [_contact_kind(item) for item in _contact_items(line)]
    return any(kind in ("email", "phone", "url") for kind in kinds) and all(kinds)


def _set_aside_contact(lines: list[Line | None]) -> tuple[list[Line | None], list[Line]]:
    """Contact lines found among a section's entries (a sidebar read after the main
    column) and the place line just before them, taken out for the contact section."""
    marked = {index for index, line in enumerate(lines) if line is not None and _pure_contact(line)}
    for index in sorted(marked):
        before = index - 1
        while before >= 0 and lines[before] is None:
            before -= 1
        if before >= 0 and before not in marked and vocab.is_place(_plain(lines[before].text)):
            marked.add(before)
    kept = [line for index, line in enumerate(lines) if index not in marked]
    return kept, [lines[index] for index in sorted(marked)]


def split_sections(lines: list[Line | None]) -> list[Section]:
    sections = _split_sections(lines)
    stray: list[Line] = []
    for section in sections:
        if section.kind not in ("top", "contact"):
            section.lines, found = _set_aside_contact(section.lines)
            stray.extend(found)
    if stray:
        sections.append(Section("contact", lines=stray))
    return sections


def _split_sections(lines: list[Line | None]) -> list[Section]:
    sections = [Section("top")]
    section_level = 2  # Markdown level of the current section headings
    for line in lines:
        if line is None:
            sections[-1].lines.append(None)
            continue
        kind = heading_kind(line) if not line.bullet else None
        if kind is None and line.level and sections[-1].kind != "top" and line.level <= section_level:
            kind = "other"  # an unknown Markdown section ("## Projects"), not an entry title
        if kind is None and len(line.cells) > 1 and not line.bullet:
            # A heading in a side column beside its first line (Europass, Word tables).
            head = Line(raw=line.cells[0], text=line.cells[0])
            kind = heading_kind(head)
            rest_text = " ".join(line.cells[1:])
            if kind == "languages" and sections[-1].kind == "skills" and "," in rest_text \
                    and not _all_languages(rest_text):
                kind = None  # "Languages  SQL, Python, R": programming languages, a skill group
            if kind == "skills" and sections[-1].kind == "skills":
                kind = None  # "Tools  dbt, Airflow" inside Skills: a group's label
            if kind is not None:
                rest = "  ".join(line.cells[1:])
                sections.append(Section(kind, heading=head, lines=read_lines([rest])))
                continue
        if kind is None:
            sections[-1].lines.append(line)
            continue
        if line.level:
            section_level = line.level
        sections.append(Section(kind, heading=line))
    return sections


# --------------------------------------------------------------------------- the document


@dataclass
class Draft:
    basics: dict[str, Any] = field(default_factory=dict)
    work: list[dict[str, Any]] = field(default_factory=list)
    education: list[dict[str, Any]] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)
    languages: list[dict[str, Any]] = field(default_factory=list)
    certificates: list[dict[str, Any]] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    open_group: dict[str, Any] | None = None  # the skill group a trailing comma continues

    def leave(self, *lines: Line) -> None:
        for line in lines:
            self.unplaced.extend(line.raws)


def structure_lines(raw_lines: list[str]) -> tuple[JsonResume, list[str]]:
    """Lines of résumé text → (draft résumé, lines that could not be placed)."""
    draft = Draft()
    for section in split_sections(read_lines(raw_lines)):
        _SECTION_READERS[section.kind](section, draft)
    if draft.summary:
        draft.basics["summary"] = " ".join(draft.summary)
    return _validated(draft)


def _read_other(section: Section, draft: Draft) -> None:
    draft.leave(*(line for line in [section.heading, *section.lines] if line is not None))


def _read_preferences(section: Section, draft: Draft) -> None:
    """"Looking for" / "Objective": read by backend.profile_import.preferences as
    preference suggestions for the draft, so not résumé text and not unplaced."""


def _read_summary(section: Section, draft: Draft) -> None:
    draft.summary.extend(_plain(line.text) for line in section.lines if line is not None)


# --------------------------------------------------------------------------- top block and contact


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(rf"^(?:https?://|www\.)\S+$|^[\w-]+(?:\.[\w-]+)*\.(?:{vocab.URL_TLDS})(?:/\S*)?$",
                  re.IGNORECASE)
_PHONE = re.compile(r"^(?:\+|00)?[\d\s()./-]{6,}\d$")
_SEPARATORS = re.compile(r"\s*[|·•]\s*|\s{2,}|\s+[–—]\s+|;\s*")
_CONTACT_LABEL = re.compile(
    r"^(?:e-?mail|mail|phone|tel(?:efon)?\.?|mobile?|mobil|handy|location|ort|wohnort|address|adresse"
    r"|web(?:site)?|homepage|linkedin|github|gitlab|xing|portfolio)\s*:\s*", re.IGNORECASE)


def _read_top(section: Section, draft: Draft) -> None:
    lines = [line for line in section.lines if line is not None]
    if not lines:
        return
    rest = _take_name(lines, draft) if not draft.basics.get("name") else lines
    if rest and not draft.basics.get("label") and _is_headline(rest[0]):
        draft.basics["label"] = _plain(rest[0].text)
        rest = rest[1:]
    for line in rest:
        if _inline_section(line, draft) or _place_contact_line(line, draft, headline_first=True):
            continue
        if line.bullet:
            draft.leave(line)  # a list before any heading: whose bullets were they?
        else:
            draft.summary.append(_plain(line.text))


def _read_contact(section: Section, draft: Draft) -> None:
    lines = [line for line in section.lines if line is not None]
    if lines and not draft.basics.get("name"):
        lines = _take_name(lines, draft)  # "Personal details: Katrin Hoffmann" (Europass)
    for line in lines:
        if not _inline_section(line, draft) and not _place_contact_line(line, draft):
            draft.leave(line)


def _place_contact_line(line: Line, draft: Draft, *, headline_first: bool = False) -> bool:
    """Place the contact details of a line; False when it holds none. Other items on a
    contact line (and a second email) go to ``unplaced`` — except, in the top block, a
    leading headline ("Backend Engineer · sam@example.com · Berlin, Germany")."""
    items = _contact_items(line)
    if not any(_contact_kind(item) for item in items):
        return False
    if headline_first and not draft.basics.get("label") and _contact_kind(items[0]) is None \
            and _is_headline(Line(raw=items[0], text=items[0])):
        draft.basics["label"] = _plain(items.pop(0))
    draft.unplaced.extend(item for item in items if not _place_contact(item, draft))
    return True


def _take_name(lines: list[Line], draft: Draft) -> list[Line]:
    """The person's name: the first item of one of the first lines that reads as a name
    (a layout may set the address or the city above it). The lines without it."""
    if _heading_key(lines[0].text) in vocab.DOCUMENT_TITLES:  # "Curriculum Vitae", "Lebenslauf"
        draft.leave(lines[0])
        lines = lines[1:]
        if not lines:
            return lines
    for index, line in enumerate(lines[:6]):
        items = _contact_items(line)
        if items and not _contact_kind(items[0]) and _looks_like_name(items[0]) \
                and vocab.role_score(items[0]) == 0 and heading_kind(line) is None \
                and not vocab.is_place(items[0]):
            draft.basics["name"] = items[0]
            rest = [Line(raw=line.raw, text="  ".join(items[1:]))] if len(items) > 1 else []
            return [*lines[:index], *rest, *lines[index + 1:]]
        if line.bullet or not all(_contact_kind(item) or vocab.is_place(item) for item in items):
            break  # past the contact block: no name here
    return lines


def _looks_like_name(text: str) -> bool:
    words = text.split()
    return 1 <= len(words) <= 6 and not any(ch.isdigit() for ch in text) and "@" not in text


def _is_headline(line: Line) -> bool:
    if line.bullet or len(line.text.split()) > 14 or line.text.endswith("."):
        return False
    return all(_contact_kind(item) is None for item in _contact_items(line)) and not _inline_key(line)


def _contact_items(line: Line) -> list[str]:
    text = _plain(line.raw if not line.bullet else line.text, keep_urls=True)
    text = _MD_HEADING.sub("", text)
    items = [item.strip(" ,") for item in _SEPARATORS.split(text) if item and item.strip(" ,")]
    items = [part for item in items for part in _carved(item)]
    items = [part for item in items for part in _comma_items(item)]
    merged: list[str] = []
    for item in items:  # "München, Bayern – Deutschland": one place set apart by dashes
        if merged and _contact_kind(merged[-1]) in (None, "location") \
                and vocab.location_of(f"{merged[-1]}, {item}") and _contact_kind(item) not in (
                    "email", "phone", "url"):
            merged[-1] = f"{merged[-1]}, {item}"
        else:
            merged.append(item)
    return merged


_EMAIL_INSIDE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE_INSIDE = re.compile(r"(?<![\w@])\(?\+?\d[\d\s().-]{6,}\d(?![\w@])")


def _carved(item: str) -> list[str]:
    """An item with an e-mail address set in it by single spaces ("priya@example.com +1
    416 555 0142") is split around it; so is a phone number beside an e-mail."""
    email = _EMAIL_INSIDE.search(item)
    if email is None or email.group(0) == item:
        return [item]
    parts = [item[:email.start()], email.group(0), item[email.end():]]
    out = []
    for part in (p.strip(" ,") for p in parts):
        phone = _PHONE_INSIDE.search(part) if part and part != email.group(0) else None
        if phone and phone.group(0).strip() != part:
            out.extend(p.strip(" ,") for p in (part[:phone.start()], phone.group(0), part[phone.end():]))
        else:
            out.append(part)
    return [part for part in out if part]


def _comma_items(item: str) -> list[str]:
    """"sam@example.com, +49 30 1234567, Berlin, Germany" is four items; "Berlin, Germany"
    alone is one (a place), so neighbours that form a place are joined again."""
    parts = [part.strip() for part in item.split(",") if part.strip()]
    if len(parts) < 2 or vocab.location_of(item) or not any(_contact_kind(p) for p in parts):
        return [item]
    merged: list[str] = []
    for part in parts:
        if merged and vocab.location_of(f"{merged[-1]}, {part}"):
            merged[-1] = f"{merged[-1]}, {part}"
        else:
            merged.append(part)
    return merged


def _contact_kind(item: str) -> str | None:
    value = _CONTACT_LABEL.sub("", item).strip()
    if _EMAIL.fullmatch(value):
        return "email"
    if _URL.match(value):
        return "url"
    digits = sum(ch.isdigit() for ch in value)
    if _PHONE.match(value) and digits >= 7 and not re.fullmatch(r"[\d\s./-]*\d{4}\s*[-–]\s*\d{4}", value):
        return "phone"
    if vocab.location_of(value):
        return "location"
    return None


def _place_contact(item: str, draft: Draft) -> bool:
    kind = _contact_kind(item)
    value = _CONTACT_LABEL.sub("", item).strip()
    basics = draft.basics
    if kind == "email" and not basics.get("email"):
        basics["email"] = value
    elif kind == "phone" and not basics.get("phone"):
        basics["phone"] = value
    elif kind == "location" and not basics.get("location"):
        basics["location"] = vocab.location_of(value)
    elif kind == "url":
        _place_link(value, draft)
    else:
        return False
    return True


def _place_link(value: str, draft: Draft) -> None:
    url = value if re.match(r"^https?://", value, re.IGNORECASE) else f"https://{value}"
    network = vocab.network_of(url)
    if network is None and not draft.basics.get("url"):
        draft.basics["url"] = url
        return
    profile: dict[str, Any] = {"network": network or vocab.domain_of(url), "url": url}
    username = url.rstrip("/").rsplit("/", 1)[-1]
    if network and username and "." not in username:
        profile["username"] = username
    draft.basics.setdefault("profiles", []).append(profile)


# --------------------------------------------------------------------------- inline "Skills: ..." lines


_INLINE = re.compile(r"^([^:]{2,40}):\s*(\S.*)$")


def _inline_key(line: Line) -> str | None:
    match = _INLINE.match(line.text)
    if not match:
        return None
    kind = vocab.HEADINGS.get(_heading_key(match.group(1)))
    return kind if kind in ("skills", "languages") else None


def _inline_section(line: Line, draft: Draft) -> bool:
    """Outside the skills section, "Skills: Python, Go" or "Languages: English (C2)" is a
    one-line section of its own."""
    kind = _inline_key(line)
    if kind is None:
        return False
    content = _INLINE.match(line.text).group(2)
    inner = Line(raw=line.raw, text=content)
    if kind == "languages":
        _language_line(inner, draft)
    else:
        _skill_line(inner, draft, group_name=None)
    return True


# --------------------------------------------------------------------------- skills, languages, certificates


def _read_skills(section: Section, draft: Draft) -> None:
    lines = [line for line in section.lines if line is not None]
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else None
        if len(line.cells) > 1 and not _INLINE.match(line.cells[0]):
            _skill_cells(line, draft)
            continue
        if following is not None and len(following.cells) > 1 and _is_group_name(line):
            # "Cuisine" over "Cuisine de saison  Pâtisserie": the group's name alone
            draft.skills.append({"name": _plain(line.text), "keywords": []})
            draft.open_group = draft.skills[-1]
            continue
        match = _INLINE.match(_plain(line.text))
        # "Languages: English (C2), German (B1)" among the skills is the languages list;
        # "Languages: Python, Go" is a skill group.
        if match and vocab.HEADINGS.get(_heading_key(match.group(1))) == "languages" \
                and _all_languages(match.group(2)):
            _language_line(Line(raw=line.raw, text=match.group(2)), draft)
        else:
            _skill_line(line, draft, group_name=match.group(1).strip() if match else None)


def _is_group_name(line: Line) -> bool:
    text = _plain(line.text)
    return not line.bullet and len(text.split()) <= 3 and not re.search(r"[,;|·•]", text)


def _skill_cells(line: Line, draft: Draft) -> None:
    """Skills set apart by wide gaps: a label cell ("CAD  Siemens NX, SolidWorks") when
    the rest are lists, else every cell a skill ("Figma  Prototyping")."""
    cells = [_plain(cell) for cell in line.cells]
    if len(cells) == 2 and re.search(r"[,;|·•]", cells[1]) and not re.search(r"[,;|·•]", cells[0]):
        draft.skills.append({"name": cells[0], "keywords": split_items(cells[1])})
        draft.open_group = None
        return
    group = draft.open_group or _plain_group(draft)
    group["keywords"].extend(item for cell in cells for item in split_items(cell))


def _skill_line(line: Line, draft: Draft, group_name: str | None) -> None:
    text = _plain(line.text)
    if group_name is not None:
        group = {"name": group_name, "keywords": split_items(text.split(":", 1)[1])}
        draft.skills.append(group)
    else:
        group = draft.open_group or _plain_group(draft)
        group["keywords"].extend(split_items(text))
    # "Cloud: AWS, GCP," wrapped onto the next line: that line goes on with this group.
    draft.open_group = group if text.endswith(",") else None


def _plain_group(draft: Draft) -> dict[str, Any]:
    """Skills listed without a group name all go to one group called "Skills"."""
    for group in draft.skills:
        if group["name"] == "Skills":
            return group
    group = {"name": "Skills", "keywords": []}
    draft.skills.append(group)
    return group


def split_items(text: str) -> list[str]:
    """Split "AWS (EKS, RDS), Terraform; Go" on commas, semicolons, pipes and middle dots
    outside parentheses."""
    items, depth, current = [], 0, []
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        if depth == 0 and char in ",;|·•":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [" ".join(item.split()) for item in items if item.strip()]


_CEFR = re.compile(r"[ABC][12]", re.IGNORECASE)


def _language_entry(item: str) -> dict[str, str] | None:
    """"English (native)", "Deutsch – C1", "Français  langue maternelle", "German Sign
    Language: B1": the longest leading words that name a language, then its fluency."""
    words = item.replace("(", " (").split()
    for count in range(min(3, len(words)), 0, -1):
        language = " ".join(words[:count]).rstrip(":,;–—-")
        if not vocab.is_language(language):
            continue
        entry = {"language": language}
        fluency = " ".join(words[count:]).strip(" :;,–—-")
        if fluency.startswith("(") and fluency.endswith(")") and fluency.count("(") == 1:
            fluency = fluency[1:-1].strip()
        levels = fluency.split()
        if levels and all(_CEFR.fullmatch(level) for level in levels):  # Europass: one per skill
            fluency = " ".join(dict.fromkeys(levels))
        if fluency:
            entry["fluency"] = fluency
        return entry
    return None


def _all_languages(text: str) -> bool:
    items = split_items(text)
    return bool(items) and all(_language_entry(item) for item in items)


def _read_native_languages(section: Section, draft: Draft) -> None:
    """"Muttersprache  Deutsch": each language named, with the heading as its fluency."""
    fluency = _plain(section.heading.text) if section.heading else None
    for line in section.lines:
        if line is None:
            continue
        items = split_items(_plain(line.text))
        if items and all(vocab.is_language(item) for item in items):
            draft.languages.extend({"language": item, "fluency": fluency} for item in items)
        else:
            draft.leave(line)


def _read_languages(section: Section, draft: Draft) -> None:
    for line in section.lines:
        if line is not None:
            _language_line(line, draft)


def _language_line(line: Line, draft: Draft) -> None:
    entries = [_language_entry(item) for item in split_items(_plain(line.text))]
    if entries and all(entries):
        draft.languages.extend(entries)
    else:
        draft.leave(line)


def _read_certificates(section: Section, draft: Draft) -> None:
    for line in _joined(section.lines):
        if line is None:
            continue
        text = _plain(line.text)
        date = None
        found = vocab.SINGLE_DATE.search(text)
        if found:
            date = vocab.iso_date(found.group(0))
            text = _without(text, found)
        parts = [p for p in re.split(r"\s+[|—]\s+|,\s+|\s+\((?=[^)]*\)$)|\)$", text) if p.strip()]
        if not parts:
            draft.leave(line)
            continue
        entry: dict[str, Any] = {"name": parts[0].strip()}
        issuer = ", ".join(p.strip() for p in parts[1:])
        if issuer:
            entry["issuer"] = re.sub(r"^(?:issued by|by|von)\s+", "", issuer, flags=re.IGNORECASE)
        if date:
            entry["date"] = date
        draft.certificates.append(entry)


def _without(text: str, match: re.Match) -> str:
    """``text`` with a matched date removed, and the brackets and separators it leaves."""
    text = text[:match.start()] + " " + text[match.end():]
    text = re.sub(r"\(\s*\)|\[\s*\]", " ", text)
    text = re.sub(r"\s*(?:\||—|–|,|·)\s*$", "", text.strip())
    text = re.sub(r"^\s*(?:\||—|–|,|·)\s*", "", text)
    return " ".join(text.split()).strip(" ,|")


# --------------------------------------------------------------------------- work and education entries


def _joined(lines: list[Line | None]) -> list[Line | None]:
    """Join wrapped continuation lines onto the bullet (or prose line) they continue."""
    out: list[Line | None] = []
    for index, line in enumerate(lines):
        previous = out[-1] if out else None
        if line is not None and previous is not None and _range_wrapped(previous, line):
            previous.text = f"{previous.text} {line.text}"  # "… · 2009 –" / "2011"
            previous.cells[-1:] = [f"{previous.cells[-1]} {line.text}"] if previous.cells else []
            previous.continued.extend(line.raws)
            continue
        if line is not None and previous is not None and _continues(previous, line, lines[index + 1:]):
            previous.text = f"{previous.text} {line.text}"
            previous.continued.extend(line.raws)
            continue
        out.append(line)
    return out


def _range_wrapped(previous: Line, line: Line) -> bool:
    return not line.bullet and bool(re.search(r"\d{4}\s*[–—-]$", previous.text)) and bool(
        vocab.SINGLE_DATE.fullmatch(line.text.strip()) or vocab.is_present_word(line.text))


def _continues(previous: Line, line: Line, following: list[Line | None]) -> bool:
    if line.bullet or line.level or not previous.bullet or vocab.find_range(line.text):
        return False
    if line.text[:1].islower():
        return True
    if previous.text.endswith(_TERMINAL):
        return False
    if _UNFINISHED.search(previous.text):
        return True  # "... to Airflow and" goes on, whatever the next line looks like
    # A capitalised line after an unfinished bullet continues it, unless it opens the
    # next entry: a date comes within the next two lines, before any bullet.
    for nxt in following[:2]:
        if nxt is None or nxt.bullet:
            break
        if vocab.find_range(nxt.text) or vocab.SINGLE_DATE.fullmatch(nxt.text.strip()):
            return False
    return not vocab.looks_like_header(line.text)


@dataclass
class Entry:
    header: list[Line] = field(default_factory=list)
    bullets: list[Line] = field(default_factory=list)


def _entries(lines: list[Line | None]) -> list[Entry]:
    """Group a section's lines into entries: a run of plain lines (the header) and the
    bullets under it. A run holding two date ranges is two entries without bullets."""
    entries: list[Entry] = []
    run: list[Line] = []
    # Empty lines only stop continuations (in _joined); a PDF's spacing between a title
    # and its date line must not split one entry in two.
    content = [line for line in _joined(lines) if line is not None]
    for line in content + [None]:
        if line is not None and not line.bullet:
            if entries and not run and entries[-1].bullets and _is_prose(line):
                entries[-1].bullets.append(line)  # a paragraph after an entry's bullets
                continue
            run.append(line)
            continue
        if run:
            entries.extend(Entry(header=chunk) for chunk in _split_run(run))
            run = []
        if line is not None:
            if not entries:
                entries.append(Entry())
            entries[-1].bullets.append(line)
    return entries


def _is_prose(line: Line) -> bool:
    return line.text.endswith(".") and len(line.text.split()) > 8 and not vocab.find_range(line.text)


def _split_run(run: list[Line]) -> list[list[Line]]:
    dated = [i for i, line in enumerate(run) if vocab.find_range(line.text)]
    if len(dated) <= 1:
        return [run]
    # "Title — Employer (2021 – now)" lines: each dated line opens an entry; title /
    # employer / dates lines: each dated line closes one.
    cuts = dated if dated[0] == 0 else [0] + [i + 1 for i in dated[:-1]]
    cuts = cuts + [len(run)]
    return [run[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if run[a:b]]


def _read_work(section: Section, draft: Draft) -> None:
    entries = _entries(section.lines)
    title_at = _title_position(entries)
    for entry in entries:
        if not entry.header:
            draft.leave(*entry.bullets)  # bullets before any employer: whose were they?
            continue
        work = _work_header(entry.header, draft, title_at)
        highlights, summary = [], []
        for line in entry.bullets:
            (highlights if line.bullet else summary).append(line.text)
        if highlights:
            work["highlights"] = highlights
        if summary:
            work["summary"] = " ".join(filter(None, [work.get("summary"), *summary]))
        draft.work.append(work)


def _header_parts(header: list[Line], separator: re.Pattern = vocab.STRONG_SEPARATOR,
                  ) -> tuple[list[str], dict[str, str], list[str]]:
    """Header lines → (segments, dates, prose lines). The date range is cut out first;
    each remaining cell of a line splits on strong separators (—, |, ·, @, " at ")."""
    dates: dict[str, str] = {}
    segments: list[str] = []
    prose: list[str] = []
    for line in _wrapped_header(header):
        if _is_prose(line) and segments:
            prose.append(_plain(line.text))
            continue
        cells = [_plain(cell) for cell in line.cells] if len(line.cells) > 1 else [_plain(line.text)]
        if not dates and not any(vocab.find_range(cell) for cell in cells) \
                and vocab.find_range(_plain(line.text)):
            cells = [_plain(line.text)]  # a range set apart by wide gaps ("2019  –  2021")
        for cell in cells:
            found = vocab.find_range(cell)
            if found and not dates:
                dates = vocab.range_dates(found)
                cell = _without(cell, found)
            segments.extend(_no_end_period(s.strip()) for s in separator.split(cell) if s.strip(" ,"))
    return segments, dates, prose


def _wrapped_header(header: list[Line]) -> list[Line]:
    """A header line the layout wrapped ("…, Collège des Deux-" / "Rives, Lyon.") is one
    line again; its dates, wherever they were, stay a cell of their own."""
    out: list[Line] = []
    for line in header:
        previous = out[-1] if out else None
        if previous is not None and _header_goes_on(previous, line):
            core, dates = _core_and_dates(previous)
            if core.endswith("-") and line.text[:1].islower():
                core, glue = core[:-1], ""  # a hyphenation break: "Commu-" / "nity"
            else:
                glue = "" if core.endswith("-") else " "
            cells = [core + glue + line.text, *([dates] if dates else [])]
            out[-1] = Line(raw=previous.raw, text="  ".join(cells),
                           continued=[*previous.continued, *line.raws], cells=cells)
            continue
        out.append(line)
    return out


def _core_and_dates(line: Line) -> tuple[str, str | None]:
    """A header line's text without its date range, and the range as written."""
    found = vocab.find_range(line.text)
    if found is None:
        return (line.cells[0] if line.cells else line.text), None
    # The text's own punctuation stays: a comma before the dates means it goes on.
    core = f"{line.text[:found.start()].rstrip()} {line.text[found.end():].lstrip()}".strip()
    return core, found.group(0)


def _header_goes_on(previous: Line, line: Line) -> bool:
    """The line finishes the header text above it: that text ends in a comma, a hyphen
    or a conjunction, or (moderncv) it is a dated "title, employer" line and this line
    closes it with the entry's full stop."""
    if len(line.cells) > 1 or vocab.find_range(line.text) or len(previous.cells) > 2:
        return False
    core, dates = _core_and_dates(previous)
    if re.search(r"(?:,|[^\W\d_]-)$", core) or _UNFINISHED.search(core) and not core.endswith(","):
        return True
    return bool(dates) and "," in core and not core.endswith(".") and line.text.endswith(".")


def _no_end_period(text: str) -> str:
    """moderncv ends an entry with a full stop ("Lyon."); "Inc." and "Ltd." keep theirs."""
    last = text.split()[-1] if text.split() else ""
    if text.endswith(".") and len(last) > 4 and not vocab.is_legal_suffix(last) and last.count(".") == 1:
        return text[:-1]
    return text


_REMOTE_WORDS = frozenset((
    "remote", "remotely", "hybrid", "fully remote", "remote-first", "home office", "homeoffice",
    "télétravail", "à distance", "remoto", "en remoto", "a distancia", "híbrido", "hybride",
    "mobiles arbeiten",
))  # fmt: skip


def _is_work_place(text: str) -> bool:
    folded = text.casefold().strip(" ()")
    return folded in _REMOTE_WORDS or vocab.is_place(text.strip(" ()"))


def _comma_parts(segment: str) -> list[str]:
    """"Title, Employer, City" → its parts; a legal suffix stays with its company
    ("Omnious Co., Ltd.") and a place stays whole ("Toronto, ON, Canada")."""
    if "," not in segment or _is_work_place(segment):
        return [segment]
    parts: list[str] = []
    for part in (p.strip() for p in segment.split(",")):
        if not part:
            continue
        if parts and (vocab.is_legal_suffix(part) or _place_goes_on(parts[-1], part)):
            parts[-1] = f"{parts[-1]}, {part}"
        else:
            parts.append(part)
    return parts


def _place_goes_on(previous: str, part: str) -> bool:
    """"Berlin" + "Germany", "Toronto" + "ON": the part completes the place before it."""
    combined = f"{previous}, {part}"
    if vocab.location_of(combined) is None:
        return False
    return vocab.is_place(previous) or len(previous.split()) == 1


def _segment_score(segment: str) -> int:
    """How much a header segment reads as the job title rather than the employer."""
    parts = _comma_parts(segment)
    places = sum(1 for part in parts if _is_work_place(part))
    return vocab.role_score(segment) - vocab.org_score(segment) - 2 * places \
        - (2 if vocab.is_legal_suffix(parts[-1]) else 0)


def _title_index(segments: list[str]) -> int | None:
    """Which segment is the title, when the words say so clearly."""
    if len(segments) < 2:
        return None
    scores = [_segment_score(segment) for segment in segments]
    best = max(range(len(segments)), key=lambda i: (scores[i], -i))
    return best if scores[best] > 0 and scores.count(scores[best]) == 1 else None


def _work_header(header: list[Line], draft: Draft, title_at: int | None = None) -> dict[str, Any]:
    """An entry's header → employer, title, location and dates. ``title_at`` is where the
    other entries of the section put the title (the segment index, from the end when
    negative), used when this entry's words do not tell."""
    segments, dates, prose = _header_parts(header)
    work: dict[str, Any] = dict(dates)
    index = _title_index(segments)
    if index is None and title_at is not None and -len(segments) <= title_at < len(segments):
        index = title_at % len(segments)
    rest = [part for i, segment in enumerate(segments) if i != index for part in _comma_parts(segment)]
    if index is not None and any(not _is_work_place(part) for part in rest):
        # The title's own commas stay ("Ward Sister, Acute Medical Unit"): the employer
        # is another segment. Only a place is taken off its end.
        title_parts = _comma_parts(segments[index])
        while len(title_parts) > 1 and _is_work_place(title_parts[-1]):
            rest.insert(0, title_parts.pop())
        work["position"] = ", ".join(title_parts)
    else:
        rest = [part for segment in segments for part in _comma_parts(segment)]
        position = _pick(rest, lambda text: vocab.role_score(text) - vocab.org_score(text)
                         - (2 if _is_work_place(text) else 0))
        if position is not None:
            work["position"] = rest.pop(position)
    places = [part for part in rest if _is_work_place(part)]
    others = [part for part in rest if part not in places]
    if others:
        work["name"] = others.pop(0)
    elif len(places) > 1:
        work["name"] = places.pop(0)
    location = [*places, *others]
    if location:
        work["location"] = ", ".join(location)
    if prose:
        work["summary"] = " ".join(prose)
    return work


def _title_position(entries: list[Entry]) -> int | None:
    """Where this section's entries put the title (first or last segment), by the entries
    whose words tell: one template lays out every entry the same way."""
    votes: Counter[int] = Counter()
    for entry in entries:
        segments = _header_parts(entry.header)[0] if entry.header else []
        index = _title_index(segments)
        if index is not None:
            votes[0 if index == 0 else -1 if index == len(segments) - 1 else index] += 1
    return votes.most_common(1)[0][0] if votes else None


def _pick(segments: list[str], score) -> int | None:
    """The segment that names the role: the best role score; "Title — Employer" order
    when none scores; a lone segment that names a company is the employer."""
    if not segments:
        return None
    scores = [score(segment) for segment in segments]
    best = max(range(len(segments)), key=lambda i: (scores[i], -i))
    if scores[best] > 0:
        return best
    if len(segments) == 1 and vocab.org_score(segments[0]) > 0:
        return None
    return 0


def _read_education(section: Section, draft: Draft) -> None:
    for entry in _entries(section.lines):
        if not entry.header:
            # "- BSc Nursing, University of Salford (2014–2017)": each item a school
            schools = [line for line in entry.bullets if _names_a_school(line)]
            draft.education.extend(_education_header([line]) for line in schools)
            draft.leave(*(line for line in entry.bullets if line not in schools))
            continue
        education = _education_header(entry.header)
        notes = [line.text for line in entry.bullets]
        if notes:  # JSON Resume's only list in an education entry
            education["courses"] = notes
        draft.education.append(education)


def _names_a_school(line: Line) -> bool:
    text = _plain(line.text)
    return bool(vocab.find_range(text) or vocab.SINGLE_DATE.search(text)) and bool(
        vocab.DEGREE.match(text) or vocab.institution_score(text))


def _education_header(header: list[Line]) -> dict[str, Any]:
    # No " at " here: "University of Texas at Austin" is one name; "BSc at University"
    # is split below, where the part before " at " is a degree.
    segments, dates, prose = _header_parts(header, vocab.EDUCATION_SEPARATOR)
    education: dict[str, Any] = dict(dates)
    if not dates:  # "M.Sc. Computer Science, TU Berlin, 2016": the year it was finished
        for index, segment in enumerate(segments):
            found = vocab.SINGLE_DATE.search(segment)
            if found:
                education["endDate"] = vocab.iso_date(found.group(0))
                segments[index] = _without(segment, found)
                break
    segments = [segment for segment in segments if segment]
    whole = next((i for i, segment in enumerate(segments) if vocab.DEGREE.match(segment)), None)
    if whole is not None and len(segments) >= 2:
        # The degree on a line of its own keeps its commas ("M.Sc. Logistik, Infrastruktur
        # und Mobilität"); the school is on another line.
        degree_parts = _comma_parts(segments.pop(whole))
        while len(degree_parts) > 1 and _is_work_place(degree_parts[-1]):
            segments.append(degree_parts.pop())
        _set_degree(education, ", ".join(degree_parts))
    parts = [part for segment in segments for part in _education_parts(segment)]
    places = [part for part in parts if _is_work_place(part) and not vocab.institution_score(part)]
    rest = [part for part in parts if part not in places]
    degree = next((i for i, part in enumerate(rest) if vocab.DEGREE.match(part)), None)
    if degree is not None and "studyType" not in education:
        _set_degree(education, rest.pop(degree))
    institution = _pick(rest, vocab.institution_score) if rest else None
    if institution is not None:
        education["institution"] = rest.pop(institution)
    if rest and "studyType" not in education:
        education["area"] = rest.pop(0)
    if rest:
        education["institution"] = ", ".join(filter(None, [education.get("institution"), *rest]))
    if places:
        education["location"] = ", ".join(places)
    if prose:
        education.setdefault("courses", []).extend(prose)
    return education


def _education_parts(segment: str) -> list[str]:
    """A segment's comma parts; a degree's own commas stay with it when the rest names
    a school ("Licence de mathématiques, Université Lyon 1")."""
    head, at, tail = segment.partition(" at ")
    if at and vocab.DEGREE.match(head) and not vocab.institution_score(head):
        return [head.strip(), *_comma_parts(tail.strip())]
    return _comma_parts(segment)


def _set_degree(education: dict[str, Any], text: str) -> None:
    degree = vocab.DEGREE.match(text)
    education["studyType"] = degree.group(0).strip(" ,")
    area = re.sub(r"^(?:in|of)\s+", "", text[degree.end():].strip(" ,-–"))  # "BSc in Nursing"
    if area:
        education["area"] = area


_SECTION_READERS = {
    "top": _read_top,
    "contact": _read_contact,
    "summary": _read_summary,
    "preferences": _read_preferences,
    "work": _read_work,
    "education": _read_education,
    "skills": _read_skills,
    "languages": _read_languages,
    "native_language": _read_native_languages,
    "certificates": _read_certificates,
    "other": _read_other,
}


# --------------------------------------------------------------------------- validation


def _validated(draft: Draft) -> tuple[JsonResume, list[str]]:
    """Build the JsonResume. A value the model refuses (too long, too many) is taken
    out and its text goes to ``unplaced``, so one odd line cannot fail the import."""
    document: dict[str, Any] = {
        "basics": draft.basics, "work": draft.work, "education": draft.education,
        "skills": draft.skills,
        "languages": draft.languages, "certificates": draft.certificates,
    }
    unplaced = list(draft.unplaced)
    for _attempt in range(50):
        try:
            return JsonResume.model_validate(document), unplaced
        except ValidationError as exc:
            for error in exc.errors():
                unplaced.extend(_remove(document, error))
    raise RuntimeError("the draft résumé could not be made valid")  # pragma: no cover


def _remove(document: dict[str, Any], error: dict[str, Any]) -> list[str]:
    *path, last = error["loc"]
    parent: Any = document
    for key in path:
        parent = parent[key]
    try:
        value = parent[last]
    except (KeyError, IndexError, TypeError):
        return []
    limit = (error.get("ctx") or {}).get("max_length")
    if isinstance(value, list) and error["type"] == "too_long" and limit is not None:
        parent[last] = value[:limit]
        return [text for item in value[limit:] for text in _texts(item)]
    del parent[last]
    return _texts(value)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def structure_text(text: str) -> tuple[JsonResume, list[str]]:
    """Pasted or stored résumé text → (draft résumé, lines that could not be placed)."""
    return structure_lines(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
