from lrc.policies.base import Policy


class LERC(Policy):
    """Least Effective Reference Count: only references whose whole peer group is cached count."""

    name = "lerc"
    needs_peers = True

    def bind(self, refs):
        return refs.peers.effective.__getitem__  # 0 for a block never counted
