from lrc.policies.base import Policy


class LRC(Policy):
    """Least Reference Count: keep blocks that more not-yet-run tasks will read."""

    name = "lrc"

    def bind(self, refs):
        get = refs.count.get
        return lambda block: get(block, 0)
