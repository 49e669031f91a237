"""The shared shape of every expected failure: a bounded code and whether another
attempt may help. Messages never carry payloads, prompts or provider text."""


class TypedFailure(Exception):
    code: str = "failed"
    retryable: bool = True
