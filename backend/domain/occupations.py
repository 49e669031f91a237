"""Is this phrase a job title or an organisation? Words that decide it, in the languages
JobCtrl's job seekers write their résumés in.

A title is told by its head nouns ("nurse", "Elektroniker", "contable", "infirmière"); the
feminine and plural forms are reduced to the listed form ("Recruiterin" → "recruiter",
"auditora" → "auditor", "développeuse" → "développeur"), and a German compound counts by
its last part ("Elektromeister" → "meister", "Bauleiter" → "leiter"). An organisation is
told by legal forms and the words institutions name themselves with ("Trust", "Klinikum",
"Grupo").
"""

from __future__ import annotations

import re


def _listed(words: str) -> list[str]:
    return words.split()


_ROLE_NOUNS = _listed("""
accountant actuary adviser advisor agent aide analyst animator apprentice architect archivist
artist assistant associate attendant attorney auditor baker banker barista bartender biologist
bookkeeper broker butcher buyer carer carpenter cashier chef chemist cleaner clerk clinician
coach consultant controller cook coordinator copywriter counsel counsellor counselor courier
curator dentist designer developer dietitian director dispatcher doctor drafter draughtsman
driver economist editor educator electrician engineer executive expert fellow firefighter
foreman founder co-founder freelancer generalist guard head hygienist illustrator inspector
instructor intern interpreter investigator janitor journalist labourer laborer lawyer lead
lecturer librarian machinist manager marketer matron mechanic midwife mentor nurse officer
operator owner painter paralegal paramedic pharmacist photographer physician
physiotherapist pilot planner plumber porter practitioner president principal producer
professor programmer psychologist receptionist recruiter representative rep researcher
scientist secretary solicitor sonographer specialist steward strategist student supervisor
surgeon surveyor teacher technician technologist tester therapist trainee trainer translator
tutor underwriter volunteer waiter welder writer administrator admin sre devops cto ceo cfo coo
cmo cio vp svp evp staff sister charge
entwickler softwareentwickler ingenieur berater leiter teamleiter werkstudent praktikant
geschäftsführer mitarbeiter auszubildender azubi elektriker elektroniker meister geselle
monteur techniker sachbearbeiter kaufmann kauffrau buchhalter referent assistent
krankenpfleger pflegefachkraft pflegefachfrau pflegefachmann gesundheitspfleger lehrer
erzieher koch köchin cheffe apotheker arzt ärztin projektleiter bauleiter konstrukteur vertriebler

ingénieur développeur chef comptable auditeur analyste assistant consultant directeur
responsable gestionnaire chargé technicien infirmier enseignant professeur professeure
instituteur formateur cuisinier commis serveur vendeur commercial conseiller coordinateur
graphiste designer pharmacien juriste avocat stagiaire apprenti alternant agent employé
opérateur ouvrier électricien plombier secrétaire rédacteur
ingeniero desarrollador programador contable contador auditor analista asistente consultor
director jefe jefa responsable gerente técnico enfermero profesor maestro docente cocinero
camarero vendedor comercial asesor coordinador diseñador farmacéutico abogado becario
practicante administrativo auxiliar operario electricista fontanero secretario redactor
ayudante encargado supervisor gestor especialista
ingegnere sviluppatore contabile analista consulente direttore responsabile tecnico
infermiere insegnante cuoco commesso progettista farmacista avvocato stagista impiegato
""")
_ROLE_WORDS = frozenset(_ROLE_NOUNS)
# German compounds end in their head noun ("Softwareentwickler"): heads this long or longer
# are looked for at the end of a word.
_COMPOUND_HEADS = tuple(sorted((w for w in _ROLE_WORDS if len(w) >= 5), key=len, reverse=True))

_ORG_WORDS = frozenset(_listed("""
gmbh ag se kg ug inc inc. ltd ltd. llc plc corp corp. co. company group gmbh&co. s.a. b.v. oy
ab labs bank studio trust nhs hospital clinic klinikum krankenhaus klinik hôpital hospital
clínica council ministry agency associates asociados partners solutions services systems
technologies technology consulting logistics foundation stiftung fundación fondation
university universität université universidad college school schule école escuela institute
institut instituto grupo groupe gruppe versicherung insurance assurance seguros mutual
holdings holding industries gesellschaft verlag stadtwerke sas sarl s.l. s.r.l. spa
"""))


def _words(text: str) -> list[str]:
    return [word.strip(",;()·|").casefold() for word in text.split() if word.strip(",;()·|")]


def _base_forms(word: str) -> list[str]:
    """The word and its masculine singular forms in German, French and Spanish."""
    forms = [word]
    for suffix, replacement in (("innen", ""), ("in", ""), ("euse", "eur"), ("rice", "eur"),
                                ("ienne", "ien"), ("ère", "er"), ("ora", "or"), ("ores", "or"),
                                ("eras", "ero"), ("era", "ero"), ("as", "o"), ("a", "o"), ("a", ""),
                                ("e", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.append(word[: len(word) - len(suffix)] + replacement)
    return forms


def is_role_word(word: str) -> bool:
    word = word.casefold()
    if "-" in word and word.rsplit("-", 1)[1] and is_role_word(word.rsplit("-", 1)[1]):
        return True  # "Sous-chef", "Co-founder"
    if any(form in _ROLE_WORDS for form in _base_forms(word)):
        return True
    return len(word) >= 8 and any(form.endswith(_COMPOUND_HEADS) for form in _base_forms(word))


def role_score(text: str) -> int:
    """How many of the phrase's words are job-title head nouns."""
    return sum(1 for word in _words(text) if is_role_word(word))


def org_score(text: str) -> int:
    """How many of the phrase's words name an organisation's legal form or kind."""
    return sum(1 for word in _words(text) if word in _ORG_WORDS)


_ALL_CAPS_ACRONYM = re.compile(r"^[A-Z&]{2,6}$")


def looks_like_org_name(text: str) -> bool:
    return org_score(text) > 0 or bool(_ALL_CAPS_ACRONYM.match(text.strip()))
