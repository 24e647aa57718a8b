"""What an "always" answer grants, as the gate weighs it: the grant tests and their attack."""

from __future__ import annotations

from di_code.tools.policy.permissions import PermissionRules, grant_offers


def runs_unasked_after_always(first: str, then: str) -> bool:
    """Whether `then` runs unasked once the user answered "always" to `first` (a line that
    hides code is offered no "always")."""
    offers = grant_offers("bash", {"command": first})
    grants = offers[0].rules if offers else ()
    return PermissionRules().decide("bash", {"command": then}, grants) == "allow"
