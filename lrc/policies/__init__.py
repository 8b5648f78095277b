"""Policy registry: ``get_policy(name)`` and ``POLICIES`` (name -> class)."""
from lrc.policies.base import Policy
from lrc.policies.crd import CRD
from lrc.policies.lerc import LERC
from lrc.policies.lrc import LRC
from lrc.policies.lru import LRU
from lrc.policies.min import MIN
from lrc.policies.mrd import MRD

POLICIES: dict[str, type[Policy]] = {p.name: p for p in (LRU, LRC, LERC, MRD, CRD, MIN)}


def get_policy(name: str | Policy) -> Policy:
    """A policy instance by name; unknown names raise ValueError listing the valid ones."""
    if isinstance(name, Policy):
        return name
    try:
        return POLICIES[name.strip().lower()]()
    except (KeyError, AttributeError):
        raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(POLICIES)}") from None


__all__ = ["Policy", "POLICIES", "get_policy"]
