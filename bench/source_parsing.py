"""Source parsing throughput and the description cleaner's growth (issue 16).

Two measurements, no network (parsing is what is timed; the loopback tests cover HTTP):

1. **postings/s per family**: each family's real-shape board (tests/fakes/boards) repeated
   to ``--postings`` postings, every description replaced by the same realistic ~6 KB
   description, converted by the family's own code (JSON already decoded; the feed and
   Personio XML parsed from bytes, as they are in the product). Baseline in the same run:
   the same descriptions through the pre-issue-16 BeautifulSoup cleaner alone.
2. **cleaner time vs description size** (1 KB ... 2 MB) on the shape that was quadratic
   (hundreds of unwrapped children in one ``<div>``): the lxml cleaner at every size, the old
   cleaner up to ``--baseline-max-kb``. Linear growth shows as a flat time per KB and a
   log-log slope near 1.

    .venv/bin/python bench/source_parsing.py [--rounds 5] [--postings 400] [--json out.json]

Times are CPU seconds of the benchmark process (median of the rounds).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from baseline_bs4_sanitize import sanitize_html as bs4_sanitize  # noqa: E402

from backend.domain.source_config import (  # noqa: E402
    FeedSource,
    GreenhouseSource,
    PersonioSource,
    RecruiteeSource,
    SmartRecruitersSource,
    WorkdaySource,
)
from backend.sources import (  # noqa: E402
    ashby,
    feeds,
    greenhouse,
    lever,
    personio,
    recruitee,
    smartrecruiters,
    workable,
    workday,
)
from backend.sources.html_clean import clean_html  # noqa: E402
from backend.sources.normalize import collect  # noqa: E402
from tests.fakes.boards import classic  # noqa: E402
from tests.fakes.boards import personio as personio_boards  # noqa: E402
from tests.fakes.boards import recruitee as recruitee_boards  # noqa: E402
from tests.fakes.boards import smartrecruiters as sr_boards  # noqa: E402
from tests.fakes.boards import workable as workable_boards  # noqa: E402
from tests.fakes.boards import workday as workday_boards  # noqa: E402

PARAGRAPH = (
    "<p>You will design, build and run the services behind our <strong>fleet platform"
    "</strong>, working closely with product and operations. Read more about "
    '<a href="https://careers.example/benefits?utm_source=board&amp;x=1">our benefits</a>'
    " &amp; how we work.</p>"
)
LIST = "<ul>" + "".join(f"<li>Requirement number {i}: five years with Go or Rust</li>"
                        for i in range(6)) + "</ul>"
DESCRIPTION = ('<div class="content-intro">' + (PARAGRAPH * 4 + "<h3>What you bring</h3>"
                                                 + LIST) * 3 + "</div>"
               '<script>track()</script><img src="x" onerror="y()">')


# The shape that was quadratic: one container whose many children are unwrapped (a
# <div> per paragraph, loose <span> text with <br>), as real descriptions are written.
WIDE_UNIT = ("<div><p>A paragraph with <b>bold</b> words &amp; an entity.</p></div>"
             "<span>A loose line of text</span><br>")


def wide_description(size_bytes: int) -> str:
    return "<div>" + WIDE_UNIT * max(1, size_bytes // len(WIDE_UNIT)) + "</div>"


# --------------------------------------------------------------------------- families


def _repeat(items: list, count: int) -> list:
    return [copy.deepcopy(items[i % len(items)]) for i in range(count)]


def _unique(url: str, index: int) -> str:
    return f"{url}{'&' if '?' in url else '?'}n={index}"


def family_cases(count: int) -> dict:
    """family -> (a function that converts the board once, postings it yields)."""
    cases = {}

    jobs = _repeat(classic.GREENHOUSE_BOARDS["nimbuslabs"]["jobs"], count)
    for i, job in enumerate(jobs):
        job["absolute_url"] = _unique(job["absolute_url"], i)
        job["content"] = DESCRIPTION.replace("<", "&lt;").replace(">", "&gt;")
    gh = GreenhouseSource(id="gh", board_token="nimbuslabs")
    cases["greenhouse"] = lambda: collect(jobs, lambda j: greenhouse.to_posting(j, gh),
                                          family="gh")

    postings = _repeat(classic.LEVER_SITES["contoso"], count)
    for i, item in enumerate(postings):
        item["hostedUrl"] = _unique(item["hostedUrl"], i)
        item["description"] = DESCRIPTION
    cases["lever"] = lambda: collect(postings, lambda p: lever.to_posting(p, "Contoso"),
                                     family="lever")

    ashby_jobs = _repeat(classic.ASHBY_BOARDS["openpay"]["jobs"], count)
    for i, job in enumerate(ashby_jobs):
        job["jobUrl"] = _unique(job["jobUrl"], i)
        job["descriptionHtml"] = DESCRIPTION
    cases["ashby"] = lambda: collect(ashby_jobs, lambda j: ashby.to_posting(j, "Openpay"),
                                     family="ashby")

    site = workday_boards.SITES["acme"]
    wd_pairs = _repeat(site.postings, count)
    for i, (item, detail) in enumerate(wd_pairs):
        item["externalPath"] += f"-{i}"
        detail["jobPostingInfo"]["externalUrl"] += f"-{i}"
        detail["jobPostingInfo"]["jobDescription"] = DESCRIPTION
    wd = WorkdaySource(id="wd", host=site.host, tenant=site.tenant, site=site.site)
    now = datetime.now(UTC)
    cases["workday"] = lambda: collect(wd_pairs, lambda p: workday.to_posting(p, wd, now),
                                       family="wd")

    sr_pairs = _repeat(sr_boards.COMPANIES["ContosoGmbH"].postings, count)
    for i, (item, detail) in enumerate(sr_pairs):
        item["id"] = f"{item['id']}{i}"
        detail["postingUrl"] = _unique(detail["postingUrl"], i)
        detail["jobAd"]["sections"]["jobDescription"]["text"] = DESCRIPTION
    sr = SmartRecruitersSource(id="sr", company="ContosoGmbH")
    cases["smartrecruiters"] = lambda: collect(
        sr_pairs, lambda p: smartrecruiters.to_posting(p, sr), family="sr")

    wk_jobs = _repeat(workable_boards.ACCOUNTS["tailspin"]["jobs"], count)
    for i, job in enumerate(wk_jobs):
        job["url"] = _unique(job["url"], i)
        job["description"] = DESCRIPTION
    cases["workable"] = lambda: collect(wk_jobs, lambda j: workable.to_posting(j, "Tailspin"),
                                        family="wk")

    offers = _repeat(recruitee_boards.COMPANIES["lucerne"]["offers"][:2], count)
    for i, offer in enumerate(offers):
        offer["careers_url"] = _unique(offer["careers_url"], i)
        offer["description"] = DESCRIPTION
    rc = RecruiteeSource(id="rc", company="lucerne")
    cases["recruitee"] = lambda: collect(offers, lambda o: recruitee.to_posting(o, rc),
                                         family="rc")

    one = personio_boards.FEEDS["litware"].split("<position>")[1].split("</position>")[0]
    one = one.replace("<p>Scale our <strong>payroll</strong> API.</p>", DESCRIPTION)
    xml = ('<?xml version="1.0" encoding="UTF-8"?><workzag-jobs>' + "".join(
        "<position>" + one.replace("<id>1203456</id>", f"<id>{i}</id>") + "</position>"
        for i in range(count)) + "</workzag-jobs>").encode("utf-8")
    ps = PersonioSource(id="ps", company="litware")
    cases["personio"] = lambda: personio._read(xml, ps)

    item = classic.COMPANY_TITLE_FEED.split("<item>")[1].split("</item>")[0]
    escaped = DESCRIPTION.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    item = item.replace("&lt;p&gt;Rails 7, Postgres, Sidekiq. Salary: $140,000 - $170,000."
                        "&lt;/p&gt;", escaped)
    rss = ('<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Jobs'
           "</title>" + "".join("<item>" + item.replace("senior-rails-developer",
                                                          f"senior-rails-developer-{i}")
                                + "</item>" for i in range(count))
           + "</channel></rss>").encode("utf-8")
    feed = FeedSource(id="feed", url="https://remoteboard.example/feed.rss")
    cases["feed (RSS)"] = lambda: feeds.feed_postings(
        feeds.parse_feed(rss, feed.url, "application/rss+xml"), feed)
    return cases


def best_of(rounds: int, run) -> tuple[float, object]:
    """Median CPU seconds of this process (parsing is single-threaded CPU work; CPU time
    keeps other load on a shared machine out of the figure better than wall time)."""
    times, result = [], None
    for _ in range(rounds):
        started = time.process_time()
        result = run()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def measure_families(rounds: int, count: int) -> list[dict]:
    rows = []
    baseline_s, _ = best_of(rounds, lambda: [bs4_sanitize(DESCRIPTION) for _ in range(count)])
    for family, run in family_cases(count).items():
        seconds, postings = best_of(rounds, run)
        assert len(postings) == count, (family, len(postings))
        rows.append({"family": family, "postings": count, "seconds": seconds,
                     "postings_per_s": count / seconds,
                     "bs4_cleaner_only_per_s": count / baseline_s})
    return rows


# --------------------------------------------------------------------------- cleaner growth

SIZES_KB = (1, 4, 16, 64, 256, 1024, 2048)


def measure_growth(rounds: int, baseline_max_kb: int) -> list[dict]:
    rows = []
    for size_kb in SIZES_KB:
        text = wide_description(size_kb * 1024)
        seconds, result = best_of(rounds if size_kb < 1024 else max(1, rounds // 2),
                                  lambda text=text: clean_html(text))
        row = {"size_kb": round(len(text) / 1024, 1), "lxml_s": seconds,
               "lxml_ms_per_kb": 1000 * seconds / (len(text) / 1024), "steps": result.steps,
               "bs4_s": None}
        if size_kb <= baseline_max_kb:
            row["bs4_s"], _ = best_of(1 if size_kb >= 64 else rounds,
                                      lambda text=text: bs4_sanitize(text))
        rows.append(row)
    return rows


def slope(rows: list[dict], key: str) -> float | None:
    points = [(math.log(r["size_kb"]), math.log(r[key])) for r in rows
              if r[key] and r["size_kb"] >= 16]
    if len(points) < 2:
        return None
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    return (sum((x - mean_x) * (y - mean_y) for x, y in points)
            / sum((x - mean_x) ** 2 for x, _ in points))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postings", type=int, default=400)
    parser.add_argument("--baseline-max-kb", type=int, default=256)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    families = measure_families(args.rounds, args.postings)
    print(f"postings/s per family ({args.postings} postings, ~{len(DESCRIPTION) // 1024} KB"
          " description each; median of rounds)")
    print(f"{'family':18} {'postings/s':>11} {'bs4 cleaner alone/s':>20}")
    for row in families:
        print(f"{row['family']:18} {row['postings_per_s']:>11.0f}"
              f" {row['bs4_cleaner_only_per_s']:>20.0f}")

    growth = measure_growth(args.rounds, args.baseline_max_kb)
    print("\ncleaner CPU time vs description size (one <div>, many unwrapped children)")
    print(f"{'size KB':>8} {'lxml s':>9} {'ms/KB':>7} {'steps':>9} {'bs4 s':>9} {'bs4/lxml':>9}")
    for row in growth:
        bs4 = f"{row['bs4_s']:.3f}" if row["bs4_s"] is not None else "-"
        ratio = f"{row['bs4_s'] / row['lxml_s']:.0f}x" if row["bs4_s"] else "-"
        print(f"{row['size_kb']:>8} {row['lxml_s']:>9.4f} {row['lxml_ms_per_kb']:>7.3f}"
              f" {row['steps']:>9} {bs4:>9} {ratio:>9}")
    lxml_slope, bs4_slope = slope(growth, "lxml_s"), slope(growth, "bs4_s")
    print(f"\nlog-log slope (16 KB and up): lxml {lxml_slope:.2f}"
          + (f", bs4 {bs4_slope:.2f}" if bs4_slope else "") + "  (1.0 = linear, 2.0 = quadratic)")
    if args.json:
        args.json.write_text(json.dumps({"families": families, "growth": growth,
                                         "slope": {"lxml": lxml_slope, "bs4": bs4_slope}},
                                        indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
