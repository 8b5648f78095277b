from lrc.policies.base import Policy

INF = float("inf")


class MRD(Policy):
    """Most Reference Distance: evict the block whose next reference (stage position) is farthest;
    blocks with no future reference go first (-inf)."""

    name = "mrd"
    needs_order = True
    uses_count = False

    def bind(self, refs):
        get = refs.next_ref.get
        return lambda block: -get(block, INF)
