"""Personio XML feeds for three companies (shape: README.md in this folder).

``GET https://{company}.jobs.personio.de/xml?language=en`` -> ``<workzag-jobs>``. The
loopback server serves each company under ``/{company}/xml``.
"""

from __future__ import annotations

from tests.fakes.job_boards import JobBoards, Reply


def _position(pid: int, name: str, *, subcompany: str, office: str, others: list[str],
              department: str, employment: str, schedule: str, created: str,
              sections: list[tuple[str, str]]) -> str:
    extra = "".join(f"<office>{office_name}</office>" for office_name in others)
    parts = "".join(
        f"<jobDescription><name>{title}</name><value><![CDATA[{value}]]></value>"
        "</jobDescription>" for title, value in sections)
    return (
        f"<position><id>{pid}</id><subcompany>{subcompany}</subcompany><office>{office}</office>"
        + (f"<additionalOffices>{extra}</additionalOffices>" if others else "")
        + f"<department>{department}</department><recruitingCategory>{department}"
        f"</recruitingCategory><name>{name}</name><jobDescriptions>{parts}</jobDescriptions>"
        f"<employmentType>{employment}</employmentType><seniority>experienced</seniority>"
        f"<schedule>{schedule}</schedule><yearsOfExperience>3-5</yearsOfExperience>"
        "<keywords>python,aws</keywords><occupation>software_and_web_development</occupation>"
        f"<occupationCategory>it_software</occupationCategory><createdAt>{created}</createdAt>"
        "</position>"
    )


def _feed(*positions: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<workzag-jobs>'
            + "".join(positions) + "</workzag-jobs>")


FEEDS: dict[str, str] = {
    "litware": _feed(
        _position(1203456, "Senior Backend Developer (m/w/d)", subcompany="Litware GmbH",
                  office="Berlin", others=["Munich", "Remote"], department="Engineering",
                  employment="permanent", schedule="full-time",
                  created="2026-09-30T10:11:12+00:00",
                  sections=[("Your mission", "<p>Scale our <strong>payroll</strong> API.</p>"),
                            ("Your profile", "<ul><li>Python</li><li>PostgreSQL</li></ul>"),
                            ("Why us?", "<p>Gehalt: 70.000 \u20ac - 85.000 \u20ac pro Jahr."
                                        "</p>")]),
        _position(1203457, "Werkstudent Marketing (m/w/d)", subcompany="Litware GmbH",
                  office="Hamburg", others=[], department="Marketing",
                  employment="working_student", schedule="part-time",
                  created="2026-10-01T08:00:00+00:00",
                  sections=[("Deine Aufgaben", "<p>Kampagnen planen.</p>")]),
    ),
    "alpineski": _feed(
        _position(88001, "Customer Success Manager", subcompany="Alpine Ski House AG",
                  office="Home Office Austria", others=[], department="Customer Success",
                  employment="permanent", schedule="full-time",
                  created="2026-10-02T09:00:00+02:00",
                  sections=[("About the role", "<p>Help our resorts succeed.</p>")]),
    ),
    "margie": _feed(
        _position(55501, "Freelance Illustrator", subcompany="", office="Vienna",
                  others=[], department="Design", employment="freelance",
                  schedule="flexible", created="2026-10-03T12:00:00+00:00",
                  sections=[("Project", "<p>Illustrate our travel guides.</p>")]),
    ),
}


def feed_path(company: str) -> str:
    return f"/{company}/xml"


def serve(boards: JobBoards) -> None:
    for company, xml in FEEDS.items():
        boards.route(feed_path(company), Reply(body=xml.encode("utf-8"),
                                               content_type="text/xml; charset=utf-8"))
