from lrc.policies.base import Policy


class LRC(Policy):
    """Least Reference Count: keep blocks that more not-yet-run tasks will read."""

    name = "lrc"

    def priority(self, refs, block):
        return float(refs.count.get(block, 0))
