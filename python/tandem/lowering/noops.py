"""No-ops: the assertions and shape constraints torch.export leaves in the
graph, and getitem on the results of multi-result ops."""
import operator

from . import LOWERINGS, aten, lowers

def no_value(cx, *unused, **unused_kw):
    return None


for _overload in (aten._assert_tensor_metadata.default, aten._assert_scalar.default,
                  aten.sym_constrain_range_for_size.default,
                  aten.sym_constrain_range.default):
    LOWERINGS[_overload] = no_value


@lowers(operator.getitem)
def _getitem(cx, values, index):
    # An Unavailable item is an error only where something uses it.
    return values[index]
