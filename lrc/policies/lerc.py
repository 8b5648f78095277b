from lrc.policies.base import Policy


class LERC(Policy):
    """Least Effective Reference Count: only references whose whole peer group is cached count."""

    name = "lerc"
    needs_peers = True

    def priority(self, refs, block):
        return float(refs.peers.effective.get(block, 0))
