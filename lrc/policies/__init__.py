"""Policy registry: ``get_policy(name)`` and ``POLICIES`` (name -> class)."""
from lrc.policies.base import Policy
from lrc.policies.crd import CRD
from lrc.policies.lerc import LERC
from lrc.policies.lrc import LRC
from lrc.policies.lru import LRU
from lrc.policies.min import MIN
from lrc.policies.mrd import MRD

POLICIES: dict[str, type[Policy]] = {p.name: p for p in (LRU, LRC, LERC, MRD, CRD, MIN)}
# admission "auto" (spark.lrc.admit's default) turns it on for these; jvm_shim's Settings.admit()
# mirrors the rule. crd is measured with it (results/latest/online); lrc, lerc and mrd stay as
# their papers define them
ADMITS_BY_DEFAULT = ("crd",)
ADMIT_MODES = ("auto", "true", "false")


def admits(policy: str, admit: str = "auto") -> bool:
    """Whether a store that would evict a block ranked above its own fails instead (admission):
    ``admit`` is spark.lrc.admit's value (auto, true or false; ValueError otherwise); lru never
    needs to (every block ranks the same)."""
    mode = str(admit).strip().lower()
    if mode not in ADMIT_MODES:
        raise ValueError(f"admission must be one of {', '.join(ADMIT_MODES)}, not {admit!r}")
    name = get_policy(policy).name
    return name != "lru" and (mode == "true" or (mode == "auto" and name in ADMITS_BY_DEFAULT))


def get_policy(name: str | Policy) -> Policy:
    """A policy instance by name; unknown names raise ValueError listing the valid ones."""
    if isinstance(name, Policy):
        return name
    try:
        return POLICIES[name.strip().lower()]()
    except (KeyError, AttributeError):
        raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(POLICIES)}") from None


__all__ = ["ADMITS_BY_DEFAULT", "ADMIT_MODES", "Policy", "POLICIES", "admits", "get_policy"]
