"""Enrich: fetch a posting page politely and extract the job description.

Plain async/sync functions with no Temporal, database or Qt dependency. Failures are
typed with bounded codes (never raw exception text or payloads) so an activity can map
them straight onto stage state: ``retryable`` errors go back to Temporal's retry policy,
the rest terminalize the stage. A robots.txt refusal is a *block*, not a failure.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

# The polite page fetch lives with the sources (the board adapters reuse it); Enrich's
# callers keep reading these names here.
from backend.sources.page_fetch import (  # noqa: F401 - re-exported
    BOUNDED_ENRICH_CODES,
    MAX_PAGE_BYTES,
    MAX_REDIRECTS,
    MAX_ROBOTS_BYTES,
    USER_AGENT,
    EnrichBlocked,
    EnrichError,
    EnrichGone,
    EnrichNotHtml,
    EnrichRejected,
    EnrichUnavailable,
    RobotsCache,
    fetch_posting_page,
)

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag
    from bs4.element import NavigableString

MIN_WORDS_HIGH_CONFIDENCE = 80

Confidence = Literal["high", "low"]
ExtractionReason = Literal["empty", "too_short", "expired_posting", "login_wall", "mostly_navigation"]
ExtractionMethod = Literal["json_ld", "dom", "body", "source"]

EXTRACTION_REASONS: frozenset[str] = frozenset(
    {"empty", "too_short", "expired_posting", "login_wall", "mostly_navigation"}
)


# --------------------------------------------------------------------------- extraction


@dataclass(frozen=True, slots=True)
class Extraction:
    text: str
    """Plain text: paragraphs separated by blank lines, list items as ``- item``."""
    html: str
    """Sanitized HTML using only p, ul, ol, li, h2, h3, h4, strong, em, br (no attributes)."""
    word_count: int
    confidence: Confidence
    reason: ExtractionReason | None
    """Why confidence is low (one of :data:`EXTRACTION_REASONS`); None when high."""
    method: ExtractionMethod = "dom"
    """Where the description came from: JSON-LD, a DOM candidate, the whole body, or the
    source-supplied HTML."""


_DROP_TAGS = frozenset(
    {
        "script", "style", "nav", "header", "footer", "aside", "form", "noscript",
        "template", "svg", "canvas", "iframe", "object", "embed", "video", "audio",
        "button", "select", "textarea", "input", "label", "dialog", "picture", "img",
        "figure", "head", "title", "meta", "link", "map",
    }
)  # fmt: skip
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog"}
)
_NOISE_ATTR = re.compile(
    r"(?:^|[\s_-])(cookie|cookies|consent|gdpr|newsletter|subscribe|share|sharing|social|"
    r"breadcrumbs?|sidebar|modal|popup|skip|related|similar|recommended|promo|advert|ads)"
    r"(?:$|[\s_-])",
    re.I,
)
_CANDIDATE_ATTR = re.compile(r"description|job|posting|content", re.I)
_DESCRIPTION_ATTR = re.compile(r"description", re.I)
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "section", "article", "main", "ul", "ol", "li", "h1", "h2", "h3", "h4",
        "h5", "h6", "table", "tbody", "thead", "tfoot", "tr", "td", "th", "dl", "dt", "dd",
        "blockquote", "pre", "address", "hr", "center", "details", "summary", "body",
        "html", "fieldset", "caption",
    }
)  # fmt: skip
_HEADING_MAP = {"h1": "h2", "h2": "h2", "h3": "h3", "h4": "h4", "h5": "h4", "h6": "h4"}
_INLINE_MAP = {"strong": "strong", "b": "strong", "em": "em", "i": "em"}
_WS = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

_EXPIRED = re.compile(
    r"no longer (?:available|accepting applications|open|active|posted|listed|exists)"
    r"|(?:job|position|posting|role|vacancy|listing) (?:has|have) (?:been )?"
    r"(?:filled|closed|expired|removed|archived)"
    r"|(?:job|position|posting|vacancy|listing) (?:is )?(?:closed|expired)"
    r"|applications? (?:are |is )?(?:now )?closed"
    r"|(?:job|position|posting|page) (?:was )?not found"
    r"|this (?:job|position|posting|vacancy) (?:does not|doesn't) exist",
    re.I,
)
_LOGIN = re.compile(
    r"(?:sign|log) ?in to (?:view|see|continue|apply|read|access)"
    r"|please (?:sign|log) ?in|(?:login|sign[- ]in) (?:is )?required"
    r"|join (?:now )?to (?:view|see)|create an account to (?:view|see|continue)"
    r"|you must be (?:logged|signed) in",
    re.I,
)


def _attr_text(tag: Tag) -> str:
    classes = tag.get("class") or []
    if isinstance(classes, str):
        classes = [classes]
    return " ".join([*classes, str(tag.get("id") or "")])


def _is_hidden(tag: Tag) -> bool:
    if tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).lower() == "true":
        return True
    style = str(tag.get("style") or "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _is_noise(tag: Tag) -> bool:
    if tag.name in ("html", "body", "main"):
        return False
    if tag.name in _DROP_TAGS:
        return True
    if str(tag.get("role") or "").lower() in _DROP_ROLES:
        return True
    if _is_hidden(tag):
        return True
    return bool(_NOISE_ATTR.search(_attr_text(tag)))


def _strip_noise(root: Tag) -> None:
    for node in list(root.descendants):
        if isinstance(node, Comment | Doctype | ProcessingInstruction):
            node.extract()
    # Top-down: a removed subtree's descendants are skipped (decomposed tags lose parents).
    for tag in list(root.find_all(True)):
        if tag.decomposed or getattr(tag, "attrs", None) is None:
            continue
        if _is_noise(tag):
            tag.decompose()


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _text_stats(tag: Tag) -> tuple[int, int]:
    """(all visible chars, chars inside links)."""
    total = len(_norm(tag.get_text(" ")))
    linked = sum(len(_norm(a.get_text(" "))) for a in tag.find_all("a"))
    return total, min(linked, total)


def _content_score(tag: Tag) -> float:
    total, linked = _text_stats(tag)
    if total == 0:
        return 0.0
    density = linked / total
    return (total - linked) * (1.0 - density)


# -- sanitizing into the allowlist ------------------------------------------------------


@dataclass(slots=True)
class _Inline:
    html: list[str]
    text: list[str]

    def empty(self) -> bool:
        return not "".join(self.text).strip()


@dataclass(slots=True)
class _Block:
    kind: str  # p, h2, h3, h4, ul, ol
    html: str = ""
    text: str = ""
    items: list[_Item] | None = None


@dataclass(slots=True)
class _Item:
    html: str
    text: str
    children: list[_Block]


def _escape(text: str) -> str:
    return html_lib.escape(text, quote=False)


def _finish_inline(run: _Inline) -> tuple[str, str]:
    html_out = "".join(run.html)
    # Collapse whitespace (including around <br>) without touching tag text.
    html_out = re.sub(r"\s+", " ", html_out)
    html_out = re.sub(r"\s*<br>\s*", "<br>", html_out).strip()
    html_out = re.sub(r"^(?:<br>)+|(?:<br>)+$", "", html_out).strip()
    text_out = "".join(run.text)
    lines = [_norm(line) for line in text_out.split("\n")]
    text_out = "\n".join(line for line in lines if line)
    return html_out, text_out


def _inline_into(node: Tag | NavigableString, run: _Inline) -> None:
    if isinstance(node, NavigableString):
        value = _WS.sub(" ", str(node))
        run.html.append(_escape(value))
        run.text.append(value)
        return
    name = node.name
    if name == "br":
        run.html.append("<br>")
        run.text.append("\n")
        return
    mapped = _INLINE_MAP.get(name)
    inner = _Inline([], [])
    for child in node.children:
        _inline_into(child, inner)
    if inner.empty():
        return
    inner_html = "".join(inner.html)
    if mapped:
        leading = " " if inner_html[:1].isspace() else ""
        trailing = " " if inner_html[-1:].isspace() else ""
        run.html.append(f"{leading}<{mapped}>{inner_html.strip()}</{mapped}>{trailing}")
    elif name in _BLOCK_TAGS:
        run.html.append(f"<br>{inner_html}<br>")
    else:
        run.html.append(inner_html)
    if name in _BLOCK_TAGS:
        run.text.append("\n" + "".join(inner.text) + "\n")
    else:
        run.text.extend(inner.text)


def _blocks_of(container: Tag) -> list[_Block]:
    """Flow content: inline runs become <p>, block children are converted recursively."""
    blocks: list[_Block] = []
    run = _Inline([], [])

    def flush() -> None:
        nonlocal run
        if not run.empty():
            html_out, text_out = _finish_inline(run)
            if text_out:
                blocks.append(_Block("p", html_out, text_out))
        run = _Inline([], [])

    for child in container.children:
        if isinstance(child, NavigableString):
            _inline_into(child, run)
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name
        if name not in _BLOCK_TAGS:
            _inline_into(child, run)
            continue
        flush()
        if name in _HEADING_MAP:
            heading = _Inline([], [])
            for sub in child.children:
                _inline_into(sub, heading)
            html_out, text_out = _finish_inline(heading)
            if text_out:
                blocks.append(_Block(_HEADING_MAP[name], html_out, text_out.replace("\n", " ")))
        elif name == "p":
            paragraph = _Inline([], [])
            for sub in child.children:
                _inline_into(sub, paragraph)
            html_out, text_out = _finish_inline(paragraph)
            if text_out:
                blocks.append(_Block("p", html_out, text_out))
        elif name in ("ul", "ol"):
            items = _items_of(child)
            if items:
                blocks.append(_Block(name, items=items))
        elif name == "li":  # stray <li> outside a list
            items = _items_of_single(child)
            if items:
                blocks.append(_Block("ul", items=items))
        elif name == "hr":
            continue
        else:
            blocks.extend(_blocks_of(child))
    flush()
    return blocks


def _items_of_single(li: Tag) -> list[_Item]:
    run = _Inline([], [])
    children: list[_Block] = []
    for sub in li.children:
        if isinstance(sub, Tag) and sub.name in ("ul", "ol"):
            nested = _items_of(sub)
            if nested:
                children.append(_Block(sub.name, items=nested))
        elif isinstance(sub, NavigableString | Tag):
            _inline_into(sub, run)
    html_out, text_out = _finish_inline(run)
    if not text_out and not children:
        return []
    return [_Item(html_out, text_out.replace("\n", " "), children)]


def _items_of(listing: Tag) -> list[_Item]:
    items: list[_Item] = []
    for child in listing.children:
        if isinstance(child, Tag) and child.name == "li":
            items.extend(_items_of_single(child))
        elif isinstance(child, Tag) and child.name in ("ul", "ol"):
            items.extend(_items_of(child))
    return items


def _render_html(blocks: Iterable[_Block]) -> str:
    parts: list[str] = []
    for block in blocks:
        if block.items is not None:
            rendered = "".join(f"<li>{item.html}{_render_html(item.children)}</li>" for item in block.items)
            parts.append(f"<{block.kind}>{rendered}</{block.kind}>")
        else:
            parts.append(f"<{block.kind}>{block.html}</{block.kind}>")
    return "\n".join(parts)


def _render_text(blocks: Iterable[_Block], depth: int = 0) -> Iterator[str]:
    indent = "  " * depth
    for block in blocks:
        if block.items is not None:
            lines = []
            for number, item in enumerate(block.items, start=1):
                marker = f"{number}." if block.kind == "ol" else "-"
                lines.append(f"{indent}{marker} {item.text}".rstrip())
                lines.extend(_render_text(item.children, depth + 1))
            yield "\n".join(lines)
        else:
            yield block.text


def _compose_text(blocks: list[_Block]) -> str:
    return "\n\n".join(part for part in _render_text(blocks) if part.strip())


def _count_words(text: str) -> int:
    return len(_WORD.findall(text))


# -- choosing the description -----------------------------------------------------------


def _iter_json_ld(node: object) -> Iterator[dict]:
    if isinstance(node, list):
        for item in node:
            yield from _iter_json_ld(item)
    elif isinstance(node, dict):
        yield node
        for key in ("@graph", "mainEntity", "itemListElement"):
            if key in node:
                yield from _iter_json_ld(node[key])


def _is_job_posting(node: dict) -> bool:
    kind = node.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and k.rsplit("/", 1)[-1] == "JobPosting" for k in kinds)


def _json_ld_description(soup: BeautifulSoup) -> str | None:
    best: str | None = None
    for script in soup.find_all("script", attrs={"type": re.compile(r"ld\+json", re.I)}):
        raw = script.string or script.get_text()
        if not raw or not raw.strip():
            continue
        try:
            data = json.loads(raw.strip().rstrip(";"))
        except ValueError:
            continue
        for node in _iter_json_ld(data):
            if not _is_job_posting(node):
                continue
            description = node.get("description")
            if not isinstance(description, str) or not description.strip():
                continue
            if best is None or len(description) > len(best):
                best = description
    return best


def _is_candidate(tag: Tag) -> bool:
    if tag.name in ("main", "article"):
        return True
    if str(tag.get("role") or "").lower() in ("main", "article"):
        return True
    if tag.name in ("a", "span", "strong", "em", "b", "i", "li"):
        return False
    return bool(_CANDIDATE_ATTR.search(_attr_text(tag)))


def _candidates(root: Tag) -> list[Tag]:
    return [tag for tag in root.find_all(True) if _is_candidate(tag)]


def _is_ancestor(ancestor: Tag, tag: Tag) -> bool:
    return any(parent is ancestor for parent in tag.parents)


def _choose_element(body: Tag) -> tuple[Tag, ExtractionMethod]:
    candidates = [tag for tag in _candidates(body) if _content_score(tag) > 0]
    body_score = _content_score(body)
    if not candidates:
        return body, "body"
    scores = {id(tag): _content_score(tag) for tag in candidates}
    best = max(candidates, key=lambda tag: scores[id(tag)])
    # Descend into a nested candidate that still holds most of the content: this picks
    # `.job-description` over the `.job-page` wrapper that also holds title/meta/apply.
    while True:
        inner = [tag for tag in candidates if tag is not best and _is_ancestor(best, tag)]
        chosen = None
        for tag in sorted(inner, key=lambda t: scores[id(t)], reverse=True):
            threshold = 0.6 if _DESCRIPTION_ATTR.search(_attr_text(tag)) else 0.8
            if scores[id(tag)] >= threshold * scores[id(best)]:
                chosen = tag
                break
        if chosen is None:
            break
        best = chosen
    if scores[id(best)] < 0.25 * body_score:
        return body, "body"
    return best, "dom"


def _expired(page_text: str, description_text: str, word_count: int) -> bool:
    """An "expired" notice outside the description always counts; one only inside a long
    description ("...no longer open to relocation") does not."""
    in_description = len(_EXPIRED.findall(description_text))
    # A source-supplied description is its own page (identity makes the check free):
    # scanning the same text twice doubled the check's cost.
    in_page = in_description if page_text == description_text else len(_EXPIRED.findall(page_text))
    if in_page > in_description:
        return True
    return in_description > 0 and word_count < 250


def _assess(
    *,
    word_count: int,
    page_text: str,
    description_text: str,
    link_density: float,
    has_password_field: bool,
) -> tuple[Confidence, ExtractionReason | None]:
    if word_count == 0:
        return "low", "empty"
    if word_count < 200 and (has_password_field or _LOGIN.search(page_text)):
        return "low", "login_wall"
    if _expired(page_text, description_text, word_count):
        return "low", "expired_posting"
    if link_density >= 0.5:
        return "low", "mostly_navigation"
    if word_count < MIN_WORDS_HIGH_CONFIDENCE:
        return "low", "too_short"
    return "high", None


def _extract_from_container(
    container: Tag,
    *,
    method: ExtractionMethod,
    page_text: str | None = None,
    has_password_field: bool,
) -> Extraction:
    container_text = _norm(container.get_text(" "))
    total, linked = _text_stats(container)
    density = linked / total if total else 0.0
    blocks = _blocks_of(container)
    text = _compose_text(blocks)
    words = _count_words(text)
    confidence, reason = _assess(
        word_count=words,
        page_text=container_text if page_text is None else page_text,
        description_text=container_text,
        link_density=density,
        has_password_field=has_password_field,
    )
    # Bounded once here, as at ingestion (backend/sources/caps.py): whatever a page or a
    # source held, job_enrichments never stores more than a long posting could need.
    from backend.sources.normalize import bounded_html, bounded_text  # with bs4: not at start

    return Extraction(
        text=bounded_text(text) or "",
        html=bounded_html(_render_html(blocks)) or "",
        word_count=words,
        confidence=confidence,
        reason=reason,
        method=method,
    )


_HAS_TAG = re.compile(r"<(?:[a-zA-Z][a-zA-Z0-9]*|/[a-zA-Z]|!--)")


def _plain_text_to_html(text: str) -> str:
    """Blank lines separate paragraphs; single newlines are kept as line breaks."""
    paragraphs = [part.strip() for part in re.split(r"\n\s*\n", text.replace("\r", ""))]
    return "".join(
        "<p>" + "<br>".join(_escape(line) for line in part.split("\n")) + "</p>"
        for part in paragraphs
        if part
    )


def _load_soup() -> None:
    """Bind BeautifulSoup's names on the first extraction, not at import: bs4 brings
    soupsieve, whose regex compiles made bs4 the largest single import of the worker's
    and the API's start-up. Every public entry point below calls this first."""
    global BeautifulSoup, Comment, Tag, Doctype, NavigableString, ProcessingInstruction
    from bs4 import BeautifulSoup, Comment, Tag
    from bs4.element import Doctype, NavigableString, ProcessingInstruction


def _parse_fragment(fragment_html: str) -> tuple[BeautifulSoup, bool]:
    if "&lt;" in fragment_html and not _HAS_TAG.search(fragment_html):
        fragment_html = html_lib.unescape(fragment_html)  # entity-escaped HTML (Greenhouse)
    if not _HAS_TAG.search(fragment_html):
        fragment_html = _plain_text_to_html(html_lib.unescape(fragment_html))
    soup = BeautifulSoup(fragment_html, "html.parser")
    has_password = soup.find("input", attrs={"type": "password"}) is not None
    _strip_noise(soup)
    return soup, has_password


def extract_description(html: str) -> Extraction:
    """Extract the job description from a whole posting page.

    Prefers schema.org ``JobPosting.description`` from JSON-LD; otherwise the densest
    main/article/description-ish element; otherwise the body. ``confidence == "low"``
    comes with a bounded ``reason`` so the caller can block Tailor explicitly.
    """
    _load_soup()
    soup = BeautifulSoup(html or "", "html.parser")
    json_ld = _json_ld_description(soup)
    has_password = soup.find("input", attrs={"type": "password"}) is not None
    title = soup.title.get_text(" ") if soup.title else ""
    _strip_noise(soup)
    body = soup.body or soup
    page_text = _norm(f"{title} {body.get_text(' ')}")

    def from_dom() -> Extraction:
        element, method = _choose_element(body)
        return _extract_from_container(
            element, method=method, page_text=page_text, has_password_field=has_password
        )

    if json_ld is None:
        return from_dom()
    fragment, fragment_password = _parse_fragment(json_ld)
    fragment_text = _norm(fragment.get_text(" "))
    from_json = _extract_from_container(
        fragment,
        method="json_ld",
        # The JSON-LD text is not part of the visible page: judge the page around it.
        page_text=f"{page_text} {fragment_text}",
        has_password_field=has_password or fragment_password,
    )
    if from_json.word_count >= MIN_WORDS_HIGH_CONFIDENCE:
        return from_json
    dom = from_dom()
    return from_json if from_json.word_count >= dom.word_count else dom


def description_from_source(description_html: str | None) -> Extraction | None:
    """Clean and score HTML a source already supplied (demo board, Greenhouse content).

    Returns None when there is nothing usable, so the caller fetches the page instead;
    a ``high`` confidence result lets Enrich skip the fetch entirely.
    """
    if description_html is None or not description_html.strip():
        return None
    _load_soup()
    soup, has_password = _parse_fragment(description_html)
    extraction = _extract_from_container(soup, method="source", has_password_field=has_password)
    if extraction.word_count == 0:
        return None
    return extraction
