"""``Services`` stays a short list of named groups (``facade.deps``)."""

from __future__ import annotations

import dataclasses

from facade.deps import Services

MOST_FIELDS = 10


def test_services_has_few_fields_each_a_group_or_a_deployment_fact() -> None:
    """Issue 25: ``Services`` had grown to 22 flat fields (then 23), so no one place said what a
    deployment is made of, and each new setting landed there as one more optional part. It is now
    a few groups (speech, storage, brokers, access, job rules, usage) and the facts of the
    deployment itself; a new part joins the group it belongs to. If this fails, find that group
    (or make one), rather than raising the limit."""
    names = [f.name for f in dataclasses.fields(Services)]
    assert len(names) <= MOST_FIELDS, names
