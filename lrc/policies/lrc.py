from lrc.policies.base import Policy


class LRC(Policy):
    """Least Reference Count: keep blocks that more not-yet-run tasks will read."""

    name = "lrc"

    def bind(self, refs):
        return refs.count.__getitem__  # 0 for a block never counted
