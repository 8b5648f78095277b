from lrc.policies.base import Policy


class LERC(Policy):
    """Least Effective Reference Count: only references whose whole peer group is cached count."""

    name = "lerc"
    needs_peers = True

    def bind(self, refs):
        get = refs.peers.effective.get
        return lambda block: get(block, 0)
