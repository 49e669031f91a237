"""Base model for every JSON shape we store or expose: camelCase on the wire."""

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    # defer_build: a model's validator and serializer are built on its first use, not when
    # its module is imported. Each process uses a fraction of the ~200 models it imports
    # (the worker's start needs a handful), and building all of them was a large part of
    # every process's start-up.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True,
                              defer_build=True)


# Money is Decimal in code (never float sums) and a JSON number on the wire.
Usd = Annotated[Decimal, PlainSerializer(float, return_type=float, when_used="json")]
