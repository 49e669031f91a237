#!/usr/bin/env python3
"""Regenerate the bundled JobCtrl demo job board.

Run from the repository root::

    python scripts/generate_demo_board.py

This writes ``resources/demo_board/postings.json``: 240 postings from 36 fictional
companies (every name, domain and URL is invented; ``.example`` hosts never resolve).
The script uses only the standard library and a single ``random.Random(20261129)``,
so re-running it reproduces the file byte for byte. If you change this script,
regenerate the file and commit both together.

Deliberate near-duplicates
--------------------------
The board has 240 postings but only 234 distinct jobs. Six postings re-list an
earlier one, as aggregators and newsletters do: same title, company, location,
salary, description and tags, a ``postedAt`` a few days later (a re-post), a new
``id``, and a ``url``/``applyUrl`` that differs from the original only by noise
that URL canonicalisation removes (lowercase scheme and host, drop query and
fragment, strip the trailing slash)::

    demo-0041 re-lists demo-0012: adds ?utm_source=newsletter&utm_medium=email
    demo-0088 re-lists demo-0047: adds a trailing slash
    demo-0123 re-lists demo-0090: mixed-case host (https://JOBS.Demo-Board.EXAMPLE/...)
    demo-0164 re-lists demo-0131: adds a #apply fragment
    demo-0202 re-lists demo-0066: adds ?ref=homepage&utm_campaign=fall-hiring
    demo-0237 re-lists demo-0215: upper-case scheme and host, trailing slash,
              ?utm_source=linkedin&utm_medium=social and a #top fragment

Nothing in the data marks these postings as duplicates; a dedup-by-canonical-URL
pass should keep 240 - 6 = 234 jobs.
"""

from __future__ import annotations

import copy
import json
import random
import re
import unicodedata
from datetime import date, datetime, timedelta
from html import escape, unescape
from pathlib import Path

SEED = 20261129
TOTAL_POSTINGS = 240
OUTPUT = Path(__file__).resolve().parent.parent / "resources" / "demo_board" / "postings.json"
BOARD_HOST = "https://jobs.demo-board.example"
FIRST_DAY = date(2026, 10, 1)
LAST_DAY = date(2026, 11, 28)
MIN_WORDS, MAX_WORDS = 150, 450

# --------------------------------------------------------------------------- places & pay

# code: (currency, mid-level base salary, rounding step, benefits region)
COUNTRIES = {
    "US": ("USD", 150_000, 5_000, "us"),
    "CA": ("CAD", 120_000, 5_000, "ca"),
    "GB": ("GBP", 68_000, 1_000, "uk"),
    "DE": ("EUR", 72_000, 1_000, "eu"),
    "NL": ("EUR", 68_000, 1_000, "eu"),
    "FR": ("EUR", 56_000, 1_000, "eu"),
    "ES": ("EUR", 46_000, 1_000, "eu"),
    "PL": ("PLN", 216_000, 6_000, "eu"),
    "IE": ("EUR", 74_000, 1_000, "eu"),
    "SE": ("SEK", 660_000, 10_000, "eu"),
    "PT": ("EUR", 40_000, 1_000, "eu"),
    "IN": ("INR", 2_400_000, 100_000, "in"),
    "AU": ("AUD", 140_000, 5_000, "au"),
    "REMOTE_US": ("USD", 145_000, 5_000, "us"),
    "REMOTE_EU": ("EUR", 64_000, 1_000, "eu"),
    "REMOTE_WW": ("USD", 110_000, 5_000, "ww"),
}

# (label, country code, weight when picking a city other than the company's home)
CITIES = [
    ("San Francisco, CA, United States", "US", 6), ("New York, NY, United States", "US", 6),
    ("Seattle, WA, United States", "US", 3), ("Austin, TX, United States", "US", 3),
    ("Boston, MA, United States", "US", 3), ("Chicago, IL, United States", "US", 2),
    ("Denver, CO, United States", "US", 2), ("Atlanta, GA, United States", "US", 2),
    ("Toronto, ON, Canada", "CA", 3), ("Vancouver, BC, Canada", "CA", 2),
    ("Montreal, QC, Canada", "CA", 2), ("London, United Kingdom", "GB", 5),
    ("Manchester, United Kingdom", "GB", 2), ("Edinburgh, United Kingdom", "GB", 1),
    ("Berlin, Germany", "DE", 4), ("Munich, Germany", "DE", 2), ("Hamburg, Germany", "DE", 1),
    ("Amsterdam, Netherlands", "NL", 3), ("Rotterdam, Netherlands", "NL", 1),
    ("Utrecht, Netherlands", "NL", 1), ("Paris, France", "FR", 3), ("Lyon, France", "FR", 1),
    ("Barcelona, Spain", "ES", 2), ("Madrid, Spain", "ES", 2), ("Warsaw, Poland", "PL", 2),
    ("Kraków, Poland", "PL", 1), ("Dublin, Ireland", "IE", 3), ("Cork, Ireland", "IE", 1),
    ("Stockholm, Sweden", "SE", 3), ("Gothenburg, Sweden", "SE", 1),
    ("Lisbon, Portugal", "PT", 2), ("Porto, Portugal", "PT", 1),
    ("Bengaluru, India", "IN", 3), ("Hyderabad, India", "IN", 1), ("Pune, India", "IN", 1),
    ("Sydney, Australia", "AU", 2), ("Melbourne, Australia", "AU", 1),
]
CITY_BY_NAME = {label.split(",")[0]: (label, code) for label, code, _ in CITIES}

REMOTE_LOCATIONS = [
    ("Remote (US)", "REMOTE_US", 5), ("Remote (EU)", "REMOTE_EU", 4),
    ("Remote (Worldwide)", "REMOTE_WW", 2),
]
REMOTE_NOTES = {
    "REMOTE_US": "This is a fully remote role open to candidates anywhere in the United States.",
    "REMOTE_EU": "This is a fully remote role; you need to live in the EU and keep at least "
    "four hours of overlap with Central European Time.",
    "REMOTE_WW": "You can work from anywhere in the world, as long as you can overlap a few "
    "hours a day with colleagues in Europe or the Americas.",
}

# --------------------------------------------------------------------------- companies

# (name, industry, size, home city, workplace policy R/H/O, blurb)
COMPANIES = [
    ("Ledgerline", "Fintech", "201-500", "London", "H",
     "Ledgerline builds real-time bookkeeping and tax tools for small businesses across Europe."),
    ("Copperleaf Payments", "Fintech", "501-1000", "Amsterdam", "H",
     "Copperleaf Payments lets online marketplaces pay out to sellers in 30 countries "
     "through a single API."),
    ("Tallyforge", "Fintech", "51-200", "New York", "H",
     "Tallyforge automates expense reconciliation for mid-sized finance teams."),
    ("Mendwell Health", "Healthcare", "1001-5000", "Boston", "H",
     "Mendwell Health runs virtual-first primary care for more than a million members."),
    ("Carewright", "Healthcare", "201-500", "Toronto", "H",
     "Carewright gives home-care agencies scheduling, visit notes and billing in one place."),
    ("Helixmoor Bio", "Biotech", "51-200", "Munich", "O",
     "Helixmoor Bio combines machine learning and a high-throughput lab to speed up "
     "antibody discovery."),
    ("Cellbrook Therapeutics", "Biotech", "201-500", "San Francisco", "O",
     "Cellbrook Therapeutics develops cell therapies for autoimmune disease, with R&D "
     "running on its own automated wet lab."),
    ("Verdant Grid", "Climate tech", "201-500", "Berlin", "H",
     "Verdant Grid balances home batteries, heat pumps and EV chargers against the power grid."),
    ("Solstice Carbon Labs", "Climate tech", "51-200", "Denver", "R",
     "Solstice Carbon Labs measures and verifies carbon-removal projects using satellite data."),
    ("Tidewater Energy Co.", "Energy", "1001-5000", "Edinburgh", "O",
     "Tidewater Energy Co. develops and operates offshore wind and tidal projects around "
     "the North Sea."),
    ("Stackmint", "Developer tools", "51-200", "Seattle", "R",
     "Stackmint spins up a full preview environment of your app for every pull request."),
    ("Lintwise", "Developer tools", "11-50", "Stockholm", "R",
     "Lintwise maintains a fast open-source code-quality toolchain and a hosted service on top."),
    ("Quarry Labs", "Developer tools", "201-500", "San Francisco", "R",
     "Quarry Labs makes a serverless analytics database that product teams use to query "
     "event data."),
    ("Patchbay Systems", "Observability", "501-1000", "Dublin", "H",
     "Patchbay Systems offers one observability platform for logs, metrics and traces."),
    ("Cargoloop", "Logistics", "501-1000", "Rotterdam", "H",
     "Cargoloop is a digital freight forwarder for containers moving between Europe and Asia."),
    ("Driftway Freight", "Logistics", "1001-5000", "Chicago", "O",
     "Driftway Freight matches shippers with carriers across North America and tracks every "
     "load in real time."),
    ("Parcelry", "Logistics", "201-500", "Warsaw", "H",
     "Parcelry runs a network of smart parcel lockers across Central Europe."),
    ("Fernhollow Goods", "Retail", "501-1000", "Manchester", "H",
     "Fernhollow Goods is an online homeware retailer with its own brands and two warehouses."),
    ("Basketry Market", "Retail", "1001-5000", "Madrid", "O",
     "Basketry Market delivers groceries in under an hour in 14 Spanish cities."),
    ("Loomline Apparel", "Retail", "201-500", "Lisbon", "H",
     "Loomline Apparel makes clothing to order and sells direct to customers in 20 countries."),
    ("Pixel Orchard Games", "Games", "51-200", "Montreal", "H",
     "Pixel Orchard Games makes cozy multiplayer games for PC and consoles."),
    ("Tumbleweed Interactive", "Games", "201-500", "Kraków", "H",
     "Tumbleweed Interactive develops and publishes free-to-play mobile strategy games."),
    ("Chalkbridge Learning", "Education", "201-500", "Austin", "H",
     "Chalkbridge Learning builds math and reading practice tools used in 9,000 US schools."),
    ("Brightquill", "Education", "51-200", "Bengaluru", "H",
     "Brightquill runs live, small-group coding courses for university students."),
    ("Civic Signal", "Public sector", "51-200", "Atlanta", "H",
     "Civic Signal builds case-management software for city and county social services."),
    ("Open Commons Digital Service", "Public sector", "201-500", "Utrecht", "H",
     "Open Commons Digital Service is a non-profit team building open-source tools for "
     "Dutch municipalities."),
    ("Harbourline Insurance", "Insurance", "501-1000", "Sydney", "H",
     "Harbourline Insurance sells home & car insurance online and settles most claims "
     "within a day."),
    ("Keystone Habitat", "Property tech", "201-500", "Paris", "H",
     "Keystone Habitat helps landlords run rentals, from tenant screening to maintenance."),
    ("Fieldnote Agritech", "Agritech", "51-200", "Melbourne", "O",
     "Fieldnote Agritech gives farmers soil-moisture sensors and irrigation forecasts."),
    ("Wayfarer Lane", "Travel", "501-1000", "Barcelona", "H",
     "Wayfarer Lane is a booking platform for independent hotels and guesthouses."),
    ("Sentinel Forge", "Cybersecurity", "201-500", "Hamburg", "R",
     "Sentinel Forge detects identity-based attacks for cloud-first companies."),
    ("Rosterly", "HR tech", "201-500", "Cork", "H",
     "Rosterly does shift scheduling and payroll for restaurants and retail stores."),
    ("Gearwell Robotics", "Robotics", "201-500", "Lyon", "O",
     "Gearwell Robotics builds autonomous mobile robots for warehouse picking."),
    ("Murmur Media", "Media", "51-200", "New York", "H",
     "Murmur Media is a podcast network and the hosting platform behind 40,000 "
     "independent shows."),
    ("Quillstone Legal", "Legal tech", "51-200", "Vancouver", "R",
     "Quillstone Legal builds contract-review software for in-house legal teams."),
    ("Tillbright", "Retail", "201-500", "Pune", "H",
     "Tillbright gives neighbourhood stores in India inventory, billing and UPI payments "
     "in one app."),
]
SIZE_WEIGHT = {"11-50": 1, "51-200": 2, "201-500": 3, "501-1000": 4, "1001-5000": 5}
SIZE_HEADCOUNT = {"11-50": "30", "51-200": "120", "201-500": "350", "501-1000": "700",
                  "1001-5000": "2,500"}

AREAS = {
    "Fintech": ["payments", "card issuing", "ledger", "fraud detection", "payouts"],
    "Healthcare": ["patient scheduling", "clinical documentation", "care coordination",
                   "claims"],
    "Biotech": ["lab automation", "assay data", "protein design", "sample tracking"],
    "Climate tech": ["carbon measurement", "grid flexibility", "forecasting"],
    "Energy": ["asset monitoring", "turbine analytics", "field operations"],
    "Developer tools": ["CLI", "build pipeline", "preview environments", "onboarding"],
    "Observability": ["ingestion", "query engine", "alerting", "dashboards"],
    "Logistics": ["routing", "shipment tracking", "carrier integrations", "pricing"],
    "Retail": ["checkout", "search and discovery", "catalogue", "fulfilment", "loyalty"],
    "Games": ["live operations", "matchmaking", "player accounts", "in-game economy"],
    "Education": ["classroom tools", "content authoring", "assessments"],
    "Public sector": ["benefits eligibility", "case management", "resident services"],
    "Insurance": ["claims", "underwriting", "quoting"],
    "Property tech": ["tenant experience", "maintenance", "rent collection"],
    "Agritech": ["sensor platform", "irrigation forecasting", "farm insights"],
    "Travel": ["booking", "search", "property onboarding"],
    "Cybersecurity": ["detection", "identity analytics", "response automation"],
    "HR tech": ["scheduling", "payroll", "time tracking"],
    "Robotics": ["fleet management", "perception", "simulation"],
    "Media": ["podcast hosting", "ad marketplace", "audience analytics"],
    "Legal tech": ["contract review", "document search", "workflow automation"],
}
DOMAIN_BONUS = {
    "Fintech": "Experience in payments, banking or another regulated financial environment",
    "Healthcare": "Familiarity with healthcare data and privacy rules such as HIPAA or GDPR",
    "Biotech": "Curiosity about biology; you don't need a lab background, but it helps",
    "Climate tech": "A genuine interest in decarbonisation and energy systems",
    "Energy": "Experience in the energy sector or with industrial equipment",
    "Developer tools": "You've maintained or contributed to a popular open-source project",
    "Observability": "Experience running or building monitoring systems at scale",
    "Logistics": "Exposure to freight, warehousing or supply-chain operations",
    "Retail": "Experience in e-commerce or a high-volume consumer business",
    "Games": "You play games and have opinions about what makes them fun",
    "Education": "Experience working with teachers, schools or learners",
    "Public sector": "Experience delivering services with or for government",
    "Insurance": "Knowledge of insurance products, claims or underwriting",
    "Property tech": "Experience with rental, real-estate or facilities software",
    "Agritech": "A connection to farming or food production",
    "Travel": "Experience in travel, hospitality or two-sided marketplaces",
    "Cybersecurity": "Working knowledge of attacker techniques and the MITRE ATT&CK framework",
    "HR tech": "Experience with payroll, workforce management or shift-based businesses",
    "Robotics": "Exposure to robotics, ROS or embedded systems",
    "Media": "Experience in audio, publishing or advertising technology",
    "Legal tech": "Exposure to legal workflows or contract management",
}

# --------------------------------------------------------------------------- roles

# Ladder letters: J junior, . mid, S senior, X staff, P principal, L lead, H head of.
LEVELS = {
    "J": ("Junior", 12, 0.72), ".": ("", 32, 1.0), "S": ("Senior", 30, 1.28),
    "X": ("Staff", 7, 1.55), "P": ("Principal", 3, 1.8), "L": ("Lead", 9, 1.4),
    "H": ("Head of", 4, 1.8),
}
YEARS = {"J": "0-2 years", ".": "2+ years", "S": "5+ years", "X": "8+ years",
         "P": "10+ years", "L": "6+ years", "H": "10+ years"}


def role(titles, head, ladder, pay, weight, field, skills, duties, mission, **extra):
    """Bundle one role family's data; ``extra`` may hold ``team`` and ``junior``."""
    return {"titles": titles, "head": head, "ladder": ladder, "pay": pay, "weight": weight,
            "field": field, "skills": skills, "duties": duties, "mission": mission,
            "team": extra.get("team"), "junior": extra.get("junior"),
            "eng": extra.get("eng", True)}


ROLES = [
    role(["Backend Engineer", "Software Engineer, Backend"], "Head of Backend Engineering",
         "J.SXPLH", 1.0, 14, "backend development",
         ["Python", "Go", "Java", "Kotlin", "PostgreSQL", "Redis", "Kafka", "gRPC", "Docker",
          "Kubernetes", "AWS", "GCP"],
         ["Design, build and operate the APIs and services behind {area}",
          "Model data and write efficient queries against large relational datasets",
          "Improve the reliability, latency and cost of the services you own",
          "Join a fair, well-compensated on-call rotation",
          "Review code and help keep service boundaries clean",
          "Write short design docs and make pragmatic trade-offs"],
         "build the services and data models that power {area}"),
    role(["Frontend Engineer", "Software Engineer, Frontend"], "Head of Frontend",
         "J.SXPLH", 0.97, 9, "frontend development",
         ["React", "TypeScript", "JavaScript", "CSS", "Next.js", "GraphQL", "Storybook",
          "Vite", "Playwright", "accessibility"],
         ["Build fast, accessible interfaces for {area}",
          "Own features end to end, from design review to release",
          "Contribute components to our shared design system",
          "Measure and improve Core Web Vitals",
          "Pair with designers to sweat the details of interactions and states",
          "Keep our frontend test suite fast and trustworthy"],
         "craft the web experience customers use for {area}"),
    role(["Full-Stack Engineer", "Software Engineer, Full-Stack"], "Head of Engineering",
         "J.SXLH", 1.0, 10, "full-stack web development",
         ["TypeScript", "React", "Node.js", "Python", "Django", "Ruby on Rails",
          "PostgreSQL", "GraphQL", "AWS", "Docker"],
         ["Ship product features across the stack, from database migrations to UI polish",
          "Work in a small team that owns {area} end to end",
          "Talk to customers and turn feedback into improvements",
          "Keep the codebase healthy with tests and thoughtful refactoring",
          "Help decide what to build next, not just how to build it"],
         "ship customer-facing features for {area} across the whole stack"),
    role(["iOS Engineer", "Mobile Engineer (iOS)"], "Head of Mobile", "J.SXL", 1.0, 3,
         "native iOS development",
         ["Swift", "SwiftUI", "UIKit", "Xcode", "Combine", "Core Data", "Fastlane"],
         ["Build and maintain our iOS app used by thousands of people every day",
          "Ship features for {area} in close collaboration with design",
          "Improve app performance, crash rate and start-up time",
          "Own the release process to the App Store",
          "Share knowledge with our Android engineers and agree on patterns"],
         "build a polished iOS app for {area}"),
    role(["Android Engineer", "Mobile Engineer (Android)"], "Head of Mobile", "J.SXL", 1.0, 3,
         "native Android development",
         ["Kotlin", "Jetpack Compose", "Coroutines", "Gradle", "Room", "Firebase"],
         ["Build and maintain our Android app across a wide range of devices",
          "Ship features for {area} in close collaboration with design",
          "Improve app performance, battery use and crash rate",
          "Own releases to Google Play, including staged rollouts",
          "Share knowledge with our iOS engineers and agree on patterns"],
         "build a fast, reliable Android app for {area}"),
    role(["Platform Engineer", "Software Engineer, Platform"], "Head of Platform", ".SXPLH",
         1.05, 5, "infrastructure or platform engineering",
         ["Kubernetes", "Terraform", "AWS", "GCP", "Go", "Helm", "Argo CD", "Prometheus",
          "GitHub Actions", "Linux"],
         ["Build the internal platform our product teams deploy to every day",
          "Manage cloud infrastructure as code and keep it secure",
          "Make CI/CD pipelines faster and more reliable",
          "Design self-service tooling so engineers can ship without tickets",
          "Drive down cloud spend without hurting developer experience"],
         "build the paved road every engineer at {company} ships on"),
    role(["Site Reliability Engineer"], "Head of Site Reliability", ".SXPLH", 1.05, 4,
         "operating production systems",
         ["Kubernetes", "Prometheus", "Grafana", "Terraform", "Linux", "Go", "Python", "AWS",
          "OpenTelemetry"],
         ["Define SLOs with product teams and help them meet those targets",
          "Lead incident response and run blameless post-incident reviews",
          "Automate toil away, one runbook at a time",
          "Improve observability across our services",
          "Plan capacity for seasonal peaks in {area}"],
         "keep {area} fast and available while the business grows"),
    role(["Data Engineer"], "Head of Data Engineering", "J.SXLH", 1.0, 6, "data engineering",
         ["Python", "SQL", "dbt", "Airflow", "Spark", "Snowflake", "BigQuery", "Kafka",
          "Dagster"],
         ["Build and maintain batch and streaming pipelines for {area} data",
          "Model data in the warehouse so analysts can self-serve",
          "Own data quality checks, lineage and documentation",
          "Partner with analysts and ML engineers on new data products",
          "Reduce warehouse costs and pipeline run times"],
         "build reliable data pipelines and models around {area}"),
    role(["Machine Learning Engineer", "ML Engineer"], "Head of Machine Learning", ".SXPLH",
         1.15, 5, "machine learning in production",
         ["Python", "PyTorch", "TensorFlow", "scikit-learn", "MLflow", "Kubernetes", "SQL",
          "LLMs", "Ray"],
         ["Train, evaluate and deploy models that improve {area}",
          "Build feature pipelines and model-serving infrastructure",
          "Design offline evaluations and online experiments",
          "Monitor models for drift and degradation in production",
          "Work with product managers to find problems where ML really helps"],
         "turn data into models that make {area} smarter"),
    role(["Product Manager"], "Head of Product", "J.SXPH", 1.05, 7, "product management",
         ["SQL", "Amplitude", "Jira", "A/B testing", "user research", "roadmapping",
          "Figma"],
         ["Own the roadmap for {area} and explain the why behind it",
          "Talk to customers every week and turn insight into clear problem statements",
          "Work with engineering and design to ship in small, measurable steps",
          "Define success metrics and report on them honestly",
          "Align stakeholders across sales, support and leadership"],
         "decide what we build next for {area} and why", junior="Associate Product Manager",
         eng=False),
    role(["Product Designer"], "Head of Design", "J.SXPLH", 0.92, 5, "product design",
         ["Figma", "prototyping", "design systems", "user research", "accessibility",
          "usability testing"],
         ["Design end-to-end flows for {area}, from sketches to polished UI",
          "Run usability tests and bring findings back to the team",
          "Contribute to and evolve our design system",
          "Work closely with engineers during implementation",
          "Present your work and rationale to stakeholders"],
         "design simple, usable experiences for {area}", eng=False),
    role(["Data Analyst", "Product Analyst"], "Head of Analytics", "J.SLH", 0.78, 4,
         "analytics",
         ["SQL", "Looker", "Tableau", "Python", "dbt", "Excel", "BigQuery"],
         ["Answer questions about {area} with clear, well-caveated analysis",
          "Build and maintain dashboards that teams actually use",
          "Define metrics with product and finance",
          "Support experiment design and read-outs",
          "Spot trends early and raise them with the right people"],
         "help teams across {company} make better decisions with data", eng=False),
    role(["Data Scientist"], "Head of Data Science", "J.SXPLH", 1.02, 4, "data science",
         ["Python", "SQL", "pandas", "scikit-learn", "statistics", "A/B testing",
          "causal inference"],
         ["Build models and analyses that improve {area}",
          "Design and analyse experiments",
          "Translate ambiguous business questions into tractable analyses",
          "Share findings in writing with both technical and non-technical audiences",
          "Work with data engineers to get the data you need into shape"],
         "use statistics and modelling to improve {area}", eng=False),
    role(["Engineering Manager"], "Head of Engineering", ".SH", 1.4, 5,
         "software engineering, including people management",
         ["Python", "TypeScript", "Go", "AWS", "Kubernetes", "Jira", "incident management"],
         ["Lead a team of five to eight engineers working on {area}",
          "Hire, coach and grow engineers through regular 1:1s and feedback",
          "Run planning with product and design and keep delivery predictable",
          "Keep an eye on technical debt, quality and on-call health",
          "Build an inclusive team culture where people do their best work"],
         "lead the team responsible for {area}"),
    role(["Technical Writer"], "Head of Documentation", ".SLH", 0.78, 2,
         "technical writing",
         ["Markdown", "docs-as-code", "Git", "OpenAPI", "Docusaurus", "information architecture"],
         ["Write and maintain developer documentation, guides and API references",
          "Work with engineers to document new features before they ship",
          "Improve the structure and searchability of our docs",
          "Set and promote a style guide across the company",
          "Measure documentation quality with feedback and analytics"],
         "make our product easy to understand and adopt", team="Documentation", eng=False),
    role(["Security Engineer", "Application Security Engineer"], "Head of Security",
         ".SXPLH", 1.08, 3, "security engineering",
         ["AWS", "threat modeling", "Python", "Kubernetes", "SIEM", "SOC 2",
          "penetration testing", "OWASP"],
         ["Review designs and code for security issues and help fix them",
          "Run our vulnerability management and bug bounty programme",
          "Harden our cloud infrastructure and identity setup",
          "Respond to security incidents and improve detection",
          "Support SOC 2 and ISO 27001 audits with evidence and automation"],
         "keep our customers' data safe without slowing the team down", team="Security"),
    role(["QA Engineer", "Software Engineer in Test"], "Head of Quality", "J.SL", 0.8, 3,
         "quality assurance or test automation",
         ["Playwright", "Cypress", "Selenium", "Python", "TypeScript", "CI/CD", "Postman"],
         ["Build and maintain automated end-to-end and API tests",
          "Work with developers to build quality in from the start",
          "Investigate flaky tests and fix the root causes",
          "Plan exploratory testing for risky releases in {area}",
          "Report on quality trends and release readiness"],
         "make sure every release of {area} is one we're proud of"),
    role(["Support Engineer", "Technical Support Engineer"], "Head of Support", "J.SLH",
         0.65, 4, "technical support",
         ["SQL", "Linux", "REST APIs", "Zendesk", "Python", "troubleshooting", "JSON"],
         ["Solve tricky technical questions from customers by email and chat",
          "Reproduce bugs and write clear reports for engineering",
          "Write help-centre articles for common problems",
          "Build small scripts and tools that make support faster",
          "Share customer feedback with product teams"],
         "help customers get unstuck and stay successful", team="Customer Support", eng=False),
    role(["Solutions Engineer", "Sales Engineer"], "Head of Solutions Engineering", ".SLH",
         0.95, 3, "pre-sales or solutions engineering",
         ["REST APIs", "Python", "JavaScript", "SQL", "Salesforce", "webhooks"],
         ["Run technical discovery and tailored demos with prospects",
          "Build proof-of-concept integrations against our APIs",
          "Answer security questionnaires and architecture questions",
          "Partner with account executives on complex deals",
          "Feed what you hear from the field back to product"],
         "help prospects understand how {company} fits their stack", team="Solutions",
         eng=False),
    role(["Developer Advocate", "Developer Relations Engineer"], "Head of Developer Relations",
         ".SL", 0.95, 2, "developer relations or software engineering",
         ["TypeScript", "Python", "GitHub", "open source", "technical writing",
          "public speaking"],
         ["Create tutorials, sample apps and videos for developers",
          "Speak at meetups and conferences, in person and online",
          "Be the voice of the developer community inside the company",
          "Improve the getting-started experience for our SDKs",
          "Help run our community forum and Discord"],
         "help developers succeed with {company}", team="Developer Relations", eng=False),
    role(["Product Marketing Manager", "Growth Marketing Manager",
          "Content Marketing Manager"], "Head of Marketing", ".SLH", 0.85, 4, "B2B marketing",
         ["HubSpot", "SEO", "Google Analytics", "content strategy", "positioning",
          "lifecycle marketing"],
         ["Own positioning and messaging for {area}",
          "Plan and run launches with product and sales",
          "Create content that brings in qualified leads",
          "Run experiments across channels and report on results",
          "Build sales enablement material that people actually use"],
         "tell the story of {company} to the people who need it", team="Marketing",
         eng=False),
    role(["Account Executive", "Enterprise Account Executive"], "Head of Sales", "J.SLH", 0.8,
         5, "B2B SaaS sales",
         ["Salesforce", "HubSpot", "negotiation", "pipeline management", "MEDDICC",
          "SaaS"],
         ["Own the full sales cycle from first call to signed contract",
          "Build and manage a healthy pipeline",
          "Run discovery and value-based conversations with senior buyers",
          "Work with solutions engineers on technical evaluations",
          "Forecast accurately and keep the CRM up to date"],
         "bring {company} to new customers", team="Sales",
         junior="Sales Development Representative", eng=False),
    role(["Operations Manager", "Business Operations Analyst"], "Head of Operations", "J.SLH",
         0.75, 3, "operations",
         ["Excel", "SQL", "process improvement", "Notion", "Zapier", "project management"],
         ["Map and improve the processes that keep {area} running",
          "Build reporting that shows where time and money go",
          "Run cross-team projects from kickoff to completion",
          "Automate manual work with no-code tools and simple scripts",
          "Manage vendors and budgets"],
         "make {company} run smoothly as we scale", team="Operations",
         junior="Operations Associate", eng=False),
    role(["Technical Recruiter", "Talent Partner"], "Head of Talent", "J.SLH", 0.7, 3,
         "recruiting",
         ["Greenhouse", "LinkedIn Recruiter", "sourcing", "Ashby", "employer branding"],
         ["Run full-cycle hiring for engineering and product roles",
          "Partner with hiring managers on role definitions and interview plans",
          "Source great candidates, including those who aren't looking",
          "Give every candidate a fast, respectful experience",
          "Track funnel data and improve our process"],
         "help us hire the people who will shape {company}", team="Talent",
         junior="Recruiting Coordinator", eng=False),
]

# --------------------------------------------------------------------------- phrase pools

REQUIREMENT_TEMPLATES = [
    "Hands-on experience with {}", "Solid working knowledge of {}",
    "Practical experience with {}", "Demonstrable experience with {}", "Strong skills in {}",
]
BONUS_TEMPLATES = ["Experience with {}", "Exposure to {}", "Some familiarity with {}"]
SOFT_SKILLS = [
    "Clear written communication; we work asynchronously a lot",
    "You enjoy working with people from different backgrounds and disciplines",
    "You take ownership and follow through without being asked",
    "Good judgement about when to go fast and when to be careful",
    "You give and receive feedback with kindness and candour",
    "Curiosity about the problems our customers face",
    "Fluent English; other languages are a plus",
]
GENERIC_DUTIES = [
    "Mentor teammates and help raise the bar for the whole team",
    "Take part in hiring and help us build a diverse team",
    "Document decisions so future teammates understand them",
]
BENEFITS = {
    "us": ["Medical, dental & vision coverage with most premiums paid",
           "401(k) with a 4% company match", "Unlimited PTO with a 20-day minimum",
           "16 weeks of fully paid parental leave", "$1,500 yearly learning budget",
           "Home-office stipend", "Commuter benefits"],
    "ca": ["Extended health and dental coverage from day one", "RRSP matching up to 4%",
           "Four weeks of vacation plus a winter break", "CA$1,500 yearly learning budget",
           "Parental leave top-up to 100% for 16 weeks", "Home-office stipend"],
    "uk": ["Private medical insurance", "Pension with 6% employer contribution",
           "28 days of holiday plus bank holidays", "£1,000 yearly learning budget",
           "Enhanced parental leave", "Cycle-to-work scheme"],
    "eu": ["30 days of paid vacation", "Learning & development budget of €1,500 a year",
           "Public transport pass or bike leasing", "Company pension scheme",
           "Private health insurance top-up", "Home-office setup budget",
           "Flexible working hours"],
    "in": ["Comprehensive health insurance for you, your partner and parents",
           "Annual learning budget", "Internet and home-office allowance",
           "26 weeks of paid parental leave", "Flexible hours"],
    "au": ["Superannuation on top of base salary", "Four weeks of annual leave plus a "
           "wellbeing day each quarter", "Learning budget", "18 weeks of paid parental leave",
           "Salary packaging options"],
    "ww": ["A home-office setup budget", "Annual team offsite", "Learning budget",
           "Generous paid time off", "Health stipend wherever you live"],
}
SHARED_BENEFITS = ["Equity in a growing company", "Annual company offsite",
                   "Mental health support through a confidential counselling service",
                   "A modern laptop and the tools you need"]
COMPANY_EXTRAS = [
    "Founded in {year}, we're a team of about {headcount} people.",
    "Today we're roughly {headcount} people, and we're still growing.",
    "Our customers range from two-person shops to some of the biggest names in the industry.",
    "We care about craft, calm deadlines and being kind to each other.",
    "We're profitable, and we plan to stay independent.",
    "We publish our salary bands internally and review them twice a year.",
]
PUBLIC_EXTRAS = [
    "We're funded by public grants and partner organisations, not advertising.",
    "Everything we build is open source and designed with the people who use it.",
]
HEADINGS = {
    "about": ["About {company}", "Who we are", "About us", "{company} in a nutshell"],
    "role": ["The role", "About the role", "What this role is about", "Your mission"],
    "duties": ["What you'll do", "Responsibilities", "In this role you will",
               "Your day-to-day"],
    "reqs": ["What we're looking for", "Requirements", "You might be a great fit if you have",
             "About you"],
    "bonus": ["Nice to have", "Bonus points", "It would be great if you also have"],
    "perks": ["What we offer", "Benefits", "Perks & benefits", "Why you'll like it here"],
    "process": ["How to apply", "Our hiring process", "Next steps"],
}
CLOSINGS = [
    "{company} is an equal opportunity employer. We welcome applicants of every background, "
    "identity and ability.",
    "Don't meet every single requirement? Studies show many people hold back in that case. "
    "If you're excited about this role, apply anyway.",
    "We're committed to building a diverse team and an inclusive workplace. Tell us if you "
    "need any adjustments during the process.",
    "We read every application, and a human will get back to you either way.",
]
PARTNERS = ["product, design and engineering", "a product manager, a designer and a handful "
            "of engineers", "our customer-facing teams", "colleagues across the company"]
FIRST_MONTHS = [
    "In your first month you'll meet the team, ship something small and learn how {area} "
    "works today.",
    "By the end of your third month you'll own a meaningful piece of {area} and have "
    "opinions about where it should go next.",
    "We'll pair you with an onboarding buddy and agree on a 30-60-90 day plan together.",
    "Within six months we expect you to be leading work that others build on.",
]
INTERVIEW_STEPS = ["a take-home exercise", "a pairing session", "a portfolio review",
                   "a case study", "a system design conversation", "a role-play exercise"]

# --------------------------------------------------------------------------- small helpers


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def weighted(rng: random.Random, items: list, weights: list):
    return rng.choices(items, weights=weights, k=1)[0]


def esc(text: str) -> str:
    return escape(text, quote=False)


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def word_count(html: str) -> int:
    return len(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def round_to(value: float, step: int) -> int:
    return int(round(value / step) * step)


# --------------------------------------------------------------------------- companies


def build_companies() -> list[dict]:
    companies = []
    for name, industry, size, city, policy, blurb in COMPANIES:
        label, country = CITY_BY_NAME[city]
        companies.append({"slug": slugify(name), "name": name, "industry": industry,
                          "size": size, "city": label, "blurb": blurb,
                          "_policy": policy, "_country": country})
    return companies


def public_company(company: dict) -> dict:
    return {k: v for k, v in company.items() if not k.startswith("_")}


def company_schedule(rng: random.Random, companies: list[dict], count: int) -> list[dict]:
    """Two postings per company, the rest weighted by company size, shuffled."""
    schedule = [c for c in companies for _ in range(2)]
    weights = [SIZE_WEIGHT[c["size"]] for c in companies]
    schedule += rng.choices(companies, weights=weights, k=count - len(schedule))
    rng.shuffle(schedule)
    return schedule


# --------------------------------------------------------------------------- posting fields


def pick_level(rng: random.Random, role_data: dict) -> str:
    codes = list(role_data["ladder"])
    return weighted(rng, codes, [LEVELS[c][1] for c in codes])


def pick_employment(rng: random.Random, level: str) -> str:
    if level == "J":
        kinds, weights = ["full_time", "internship", "part_time", "contract"], [60, 30, 5, 5]
    elif level == "H":
        kinds, weights = ["full_time"], [1]
    else:
        kinds, weights = ["full_time", "contract", "part_time"], [86, 10, 4]
    return weighted(rng, kinds, weights)


def make_title(rng: random.Random, role_data: dict, level: str, employment: str) -> str:
    base = rng.choice(role_data["titles"])
    if level == "H":
        return role_data["head"]
    if employment == "internship":
        return f"{role_data['titles'][0]} Intern"
    if level == "J" and role_data["junior"]:
        return role_data["junior"]
    return f"{LEVELS[level][0]} {base}".strip()


def pick_location(rng: random.Random, company: dict) -> tuple[str, str, str]:
    """Return (location label, country code, remote mode)."""
    policy = company["_policy"]
    remote_share = {"R": 0.7, "H": 0.15, "O": 0.05}[policy]
    if rng.random() < remote_share:
        label, code, _ = weighted(rng, REMOTE_LOCATIONS, [w for *_, w in REMOTE_LOCATIONS])
        return label, code, "remote"
    if rng.random() < 0.72:
        label, code = company["city"], company["_country"]
    else:
        label, code, _ = weighted(rng, CITIES, [w for *_, w in CITIES])
    onsite_share = {"R": 0.0, "H": 0.2, "O": 0.7}[policy]
    return label, code, "onsite" if rng.random() < onsite_share else "hybrid"


def make_salary(rng: random.Random, role_data: dict, level: str, country: str,
                employment: str) -> dict | None:
    if employment in ("internship", "part_time"):
        return None
    currency, base, step, region = COUNTRIES[country]
    chance = {"us": 0.9, "ca": 0.85, "uk": 0.85, "in": 0.55}.get(region, 0.72)
    if rng.random() >= chance:
        return None
    low = base * role_data["pay"] * LEVELS[level][2] * rng.uniform(0.86, 1.0)
    high = low * rng.uniform(1.15, 1.4)
    low, high = round_to(low, step), round_to(high, step)
    high = max(high, low + step)
    return {"min": low, "max": high, "currency": currency, "period": "year"}


def posted_at(rng: random.Random) -> str:
    span = (LAST_DAY - FIRST_DAY).days
    day = FIRST_DAY + timedelta(days=rng.randint(0, span))
    if day.weekday() >= 5:  # fewer weekend postings: re-roll once
        day = FIRST_DAY + timedelta(days=rng.randint(0, span))
    stamp = datetime(day.year, day.month, day.day, rng.randint(7, 17), rng.choice([0, 0, 15, 30]))
    return stamp.strftime("%Y-%m-%dT%H:%M:00Z")


def make_url(rng: random.Random, company: dict, title: str, used: set[str]) -> str:
    while True:
        url = f"{BOARD_HOST}/{company['slug']}/{slugify(title)}-{rng.randint(1000, 9999)}"
        if url not in used:
            used.add(url)
            return url


# --------------------------------------------------------------------------- description


def heading(ctx: dict, key: str, level: str = "h3") -> str:
    text = esc(ctx["rng"].choice(HEADINGS[key]).format(company=ctx["company"]["name"]))
    if ctx["strong_headings"] and level == "h3":
        return f"<p><strong>{text}</strong></p>"
    return f"<{level}>{text}</{level}>"


def bullet_list(items: list[str], stop: str) -> str:
    return "<ul>\n" + "\n".join(f"<li>{esc(i)}{stop}</li>" for i in items) + "\n</ul>"


def paragraph(*sentences: str) -> str:
    return "<p>" + " ".join(esc(s) for s in sentences if s) + "</p>"


def company_paragraph(ctx: dict) -> str:
    rng, company = ctx["rng"], ctx["company"]
    pool = PUBLIC_EXTRAS if company["industry"] == "Public sector" else COMPANY_EXTRAS
    extras = rng.sample(pool, k=rng.randint(1, 2))
    filled = [e.format(year=rng.randint(2012, 2022), headcount=SIZE_HEADCOUNT[company["size"]])
              for e in extras]
    return paragraph(company["blurb"], *filled)


def work_mode_sentence(ctx: dict) -> str:
    if ctx["remote"] == "remote":
        return REMOTE_NOTES[ctx["country"]]
    city = ctx["location"].split(",")[0]
    if ctx["remote"] == "hybrid":
        days = ctx["rng"].choice(["two", "two", "three"])
        return f"We work hybrid: {days} days a week together in our {city} office."
    return f"This role is based in our {city} office, five days a week."


def employment_sentence(ctx: dict) -> str:
    rng = ctx["rng"]
    kind = ctx["employment"]
    if kind == "contract":
        return f"This is a {rng.choice([6, 9, 12])}-month contract with a possible extension."
    if kind == "part_time":
        return f"This is a part-time role of around {rng.choice([20, 24, 30])} hours a week."
    if kind == "internship":
        return f"This is a paid {rng.choice([3, 6])}-month internship starting in spring 2027."
    return ""


def role_paragraph(ctx: dict) -> str:
    rng, role_data, title = ctx["rng"], ctx["role"], ctx["title"]
    mission = role_data["mission"].format(area=ctx["area"], company=ctx["company"]["name"])
    a_title, team = f"{article(title)} {title}", role_data["team"]
    openers = [f"We're looking for {a_title} to {mission}.",
               f"{ctx['company']['name']} is hiring {a_title}. You'll {mission}, working "
               f"closely with {rng.choice(PARTNERS)}."]
    if team:
        openers += [f"As {a_title} on our {team} team, you'll {mission}.",
                    f"Join the {team} team as {a_title}. You'll {mission}."]
    else:
        openers.append(f"As {a_title}, you'll {mission}.")
    opener = rng.choice(openers)
    return paragraph(opener, work_mode_sentence(ctx), employment_sentence(ctx))


def intro_block(ctx: dict) -> list[str]:
    if ctx["rng"].random() < 0.6:
        return [f"<h2>{esc(ctx['title'])}</h2>", company_paragraph(ctx), role_paragraph(ctx)]
    return [heading(ctx, "about", "h2"), company_paragraph(ctx),
            heading(ctx, "role", "h2"), role_paragraph(ctx)]


def first_months_block(ctx: dict) -> list[str]:
    rng = ctx["rng"]
    if rng.random() > 0.3:
        return []
    sentences = [s.format(area=ctx["area"]) for s in rng.sample(FIRST_MONTHS, k=2)]
    title = rng.choice(["Your first months", "What success looks like", "Getting started"])
    tag = "p><strong" if ctx["strong_headings"] else "h3"
    close = "strong></p" if ctx["strong_headings"] else "h3"
    return [f"<{tag}>{title}</{close}>", paragraph(*sentences)]


def duties_block(ctx: dict, size: int) -> list[str]:
    rng, role_data = ctx["rng"], ctx["role"]
    duties = rng.sample(role_data["duties"], k=min(len(role_data["duties"]), 3 + size))
    if ctx["level"] in "SXPLH" and size:
        duties.append(rng.choice(GENERIC_DUTIES))
    duties = [d.format(area=ctx["area"]) for d in duties]
    return [heading(ctx, "duties"), bullet_list(duties, ctx["stop"])]


def experience_line(ctx: dict) -> str:
    field = ctx["role"]["field"]
    if ctx["level"] == "J":
        return f"Some experience in {field}; internships, bootcamps and side projects count"
    if ctx["level"] == "H":
        return f"{YEARS['H']} in {field}, including at least three years leading teams"
    return f"{YEARS[ctx['level']]} of experience in {field}"


def requirements_block(ctx: dict, size: int) -> list[str]:
    rng = ctx["rng"]
    templates = rng.sample(REQUIREMENT_TEMPLATES, k=len(ctx["core"]))
    items = [experience_line(ctx)]
    items += [t.format(skill) for t, skill in zip(templates, ctx["core"], strict=True)]
    items += rng.sample(SOFT_SKILLS, k=1 + size)
    return [heading(ctx, "reqs"), bullet_list(items, ctx["stop"])]


def bonus_block(ctx: dict) -> list[str]:
    rng = ctx["rng"]
    items = [rng.choice(BONUS_TEMPLATES).format(skill) for skill in ctx["bonus"]]
    if rng.random() < 0.6:
        items.append(DOMAIN_BONUS[ctx["company"]["industry"]])
    if not items:
        return []
    return [heading(ctx, "bonus"), bullet_list(items, ctx["stop"])]


def stack_block(ctx: dict) -> list[str]:
    if not ctx["role"]["eng"] or ctx["rng"].random() > 0.4:
        return []
    stack = ctx["core"] + ctx["bonus"] + ctx["extra_stack"]
    return [f"<p><strong>Our stack:</strong> {esc(', '.join(stack))}.</p>"]


def money(amount: int, currency: str) -> str:
    symbols = {"USD": "$", "EUR": "€", "GBP": "£", "CAD": "CA$", "AUD": "A$"}
    if currency in symbols:
        return f"{symbols[currency]}{amount:,}"
    return f"{amount:,} {currency}"


def salary_block(ctx: dict) -> list[str]:
    salary = ctx["salary"]
    transparent = COUNTRIES[ctx["country"]][3] in ("us", "ca", "uk")
    if not salary or not (transparent or ctx["rng"].random() < 0.35):
        return []
    low, high = money(salary["min"], salary["currency"]), money(salary["max"], salary["currency"])
    return [f"<p>The base salary range for this role is <strong>{esc(low)} &ndash; "
            f"{esc(high)}</strong> per year. <em>Your final offer depends on experience "
            "and location.</em></p>"]


def perks_block(ctx: dict, size: int) -> list[str]:
    rng = ctx["rng"]
    region = COUNTRIES[ctx["country"]][3]
    perks = rng.sample(BENEFITS[region], k=min(len(BENEFITS[region]), 3 + size))
    perks += rng.sample(SHARED_BENEFITS, k=1 + (size > 1))
    return [heading(ctx, "perks"), bullet_list(perks, "")]


def process_block(ctx: dict) -> list[str]:
    rng = ctx["rng"]
    if rng.random() < 0.5:
        return []
    step = rng.choice(INTERVIEW_STEPS)
    text = (f"Our process: a 30-minute intro call, {step}, and a final conversation with the "
            f"team. We aim to decide within {rng.choice(['two', 'three'])} weeks.")
    link = ""
    if rng.random() < 0.6:
        href = f"https://{ctx['company']['slug']}.example/careers/how-we-hire"
        link = f' Read more about <a href="{href}">how we hire</a>.'
    return [heading(ctx, "process"), f"<p>{esc(text)}{link}</p>"]


def closing_block(ctx: dict) -> list[str]:
    rng = ctx["rng"]
    if rng.random() < 0.3:
        return []
    return [paragraph(rng.choice(CLOSINGS).format(company=ctx["company"]["name"]))]


def render_description(ctx: dict, size: int) -> str:
    blocks = intro_block(ctx)
    blocks += duties_block(ctx, size) + stack_block(ctx) + first_months_block(ctx)
    blocks += requirements_block(ctx, size) + bonus_block(ctx)
    blocks += salary_block(ctx) + perks_block(ctx, size)
    blocks += process_block(ctx) + closing_block(ctx)
    return "\n".join(blocks)


def fitted_description(ctx: dict) -> str:
    """Render at a normal size; shrink or grow until within the word budget."""
    size = ctx["rng"].choice([0, 1, 1, 2, 2, 3])
    for _ in range(10):
        html = render_description(ctx, size)
        words = word_count(html)
        if MIN_WORDS <= words <= MAX_WORDS:
            return html
        size = max(0, size - 1) if words > MAX_WORDS else min(3, size + 1)
    raise RuntimeError(f"could not fit description for {ctx['title']!r}")


def pick_skills(rng: random.Random, role_data: dict) -> tuple[list, list, list]:
    """Split a random sample of the role's skills into core, bonus and stack-only."""
    skills = rng.sample(role_data["skills"], k=min(len(role_data["skills"]), 6))
    core_count = rng.randint(3, 4)
    bonus_count = rng.randint(0, 2)
    core, rest = skills[:core_count], skills[core_count:]
    return core, rest[:bonus_count], rest[bonus_count:]


def pick_tags(rng: random.Random, skills: list[str], html: str) -> list[str]:
    text = unescape(re.sub(r"<[^>]+>", " ", html)).lower()
    present = [s.lower() for s in skills if s.lower() in text]
    return present[: rng.randint(3, min(8, len(present)))]


# --------------------------------------------------------------------------- postings


def make_posting(rng: random.Random, number: int, company: dict, used: set[str]) -> dict:
    role_data = weighted(rng, ROLES, [r["weight"] for r in ROLES])
    level = pick_level(rng, role_data)
    employment = pick_employment(rng, level)
    title = make_title(rng, role_data, level, employment)
    location, country, remote = pick_location(rng, company)
    salary = make_salary(rng, role_data, level, country, employment)
    core, bonus, extra_stack = pick_skills(rng, role_data)
    ctx = {"rng": rng, "company": company, "role": role_data, "level": level, "title": title,
           "employment": employment, "location": location, "country": country,
           "remote": remote, "salary": salary, "core": core, "bonus": bonus,
           "extra_stack": extra_stack, "area": rng.choice(AREAS[company["industry"]]),
           "strong_headings": rng.random() < 0.25, "stop": rng.choice(["", "", "."])}
    html = fitted_description(ctx)
    url = make_url(rng, company, title, used)
    return {"id": f"demo-{number:04d}", "url": url, "applyUrl": f"{url}/apply",
            "title": title, "company": company["name"], "companySlug": company["slug"],
            "location": location, "remote": remote, "salary": salary,
            "employmentType": employment, "postedAt": posted_at(rng),
            "descriptionHtml": html, "tags": pick_tags(rng, core + bonus + extra_stack, html)}


def upper_host(url: str) -> str:
    return url.replace(BOARD_HOST, "https://JOBS.Demo-Board.EXAMPLE", 1)


def kitchen_sink(url: str) -> str:
    shouty = url.replace(BOARD_HOST, "HTTPS://JOBS.DEMO-BOARD.EXAMPLE", 1)
    return f"{shouty}/?utm_source=linkedin&utm_medium=social#top"


# posting number -> (number of the earlier posting it re-lists, URL mangler)
DUPLICATES = {
    41: (12, lambda u: f"{u}?utm_source=newsletter&utm_medium=email"),
    88: (47, lambda u: f"{u}/"),
    123: (90, upper_host),
    164: (131, lambda u: f"{u}#apply"),
    202: (66, lambda u: f"{u}?ref=homepage&utm_campaign=fall-hiring"),
    237: (215, kitchen_sink),
}


def relist(rng: random.Random, number: int, original: dict, mangle) -> dict:
    posting = copy.deepcopy(original)
    posted = datetime.strptime(original["postedAt"], "%Y-%m-%dT%H:%M:%SZ")
    last = datetime(LAST_DAY.year, LAST_DAY.month, LAST_DAY.day, 17, 0)
    posted = min(posted + timedelta(days=rng.randint(2, 9)), last)
    posting.update(id=f"demo-{number:04d}", url=mangle(original["url"]),
                   applyUrl=mangle(original["applyUrl"]),
                   postedAt=posted.strftime("%Y-%m-%dT%H:%M:00Z"))
    return posting


def build_postings(rng: random.Random, companies: list[dict]) -> list[dict]:
    schedule = iter(company_schedule(rng, companies, TOTAL_POSTINGS - len(DUPLICATES)))
    postings: list[dict] = []
    used: set[str] = set()
    for number in range(1, TOTAL_POSTINGS + 1):
        if number in DUPLICATES:
            source, mangle = DUPLICATES[number]
            postings.append(relist(rng, number, postings[source - 1], mangle))
        else:
            postings.append(make_posting(rng, number, next(schedule), used))
    return postings


def build_board() -> dict:
    rng = random.Random(SEED)
    companies = build_companies()
    postings = build_postings(rng, companies)
    return {"board": "JobCtrl Demo Board", "version": 1, "generatedAt": "2026-11-29T00:00:00Z",
            "companies": [public_company(c) for c in companies], "postings": postings}


def main() -> None:
    board = build_board()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(board, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(board['postings'])} postings to {OUTPUT}")


if __name__ == "__main__":
    main()
