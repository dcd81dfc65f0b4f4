"""Elementwise lowerings: arithmetic (with PyTorch's alpha and scalar
operands), unary math and activations (gelu, hardtanh and clamp, hardswish,
leaky_relu, elu...) decomposed where the dialect lacks them."""
import math

import torch

from . import LOWERINGS, TORCH_ELEMENTS, aten, lowers
from ..mlir import Value

def binary(cx, name, x, y):
    out = cx.result_type()
    return cx.emit(name, [cx.operand(x, out.element), cx.operand(y, out.element)],
                   out)


def promoted_element(x, y) -> str:
    """The element type both operands of a comparison are brought to."""
    values = [v for v in (x, y) if isinstance(v, Value)]
    dtypes = [dtype for dtype, element in TORCH_ELEMENTS.items()
              if element in (v.type.element for v in values)]
    dtype = dtypes[0]
    for other in dtypes[1:]:
        dtype = torch.promote_types(dtype, other)
    scalars = [v for v in (x, y) if not isinstance(v, Value)]
    if any(isinstance(s, float) for s in scalars) and not dtype.is_floating_point:
        dtype = torch.float32
    return TORCH_ELEMENTS[dtype]


def with_alpha(cx, name, x, y, alpha):
    """x (op) alpha·y: PyTorch's add/sub with their `alpha`."""
    if alpha != 1:
        y = scaled_operand(cx, y, alpha, cx.result_type().element)
    return binary(cx, name, x, y)


@lowers(aten.add.Tensor, aten.add.Scalar)
def _add(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.add", x, y, alpha)


@lowers(aten.sub.Tensor, aten.sub.Scalar)
def _sub(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.sub", x, y, alpha)


@lowers(aten.rsub.Tensor, aten.rsub.Scalar)
def _rsub(cx, x, y, alpha=1):
    return with_alpha(cx, "tandem.sub", y, x, alpha)


def scaled_operand(cx, y, factor, element):
    """y * factor (a value or a number)."""
    if not isinstance(y, Value):
        return y * factor
    y = cx.cast(y, element)
    return cx.emit("tandem.mul", [y, cx.scalar(factor, element)], y.type)


def elementwise(name):
    def lower(cx, x, y):
        return binary(cx, name, x, y)
    return lower


for _overloads, _name in [
        ((aten.mul.Tensor, aten.mul.Scalar), "tandem.mul"),
        ((aten.div.Tensor, aten.div.Scalar), "tandem.div"),
        ((aten.maximum.default,), "tandem.maximum"),
        ((aten.minimum.default,), "tandem.minimum")]:
    for _overload in _overloads:
        LOWERINGS[_overload] = elementwise(_name)


@lowers(aten.pow.Tensor_Tensor)
def _pow(cx, x, y):
    if not cx.result_type().is_float:
        raise cx.error("pow of integers is not in the tandem dialect (floats are)")
    return binary(cx, "tandem.pow", x, y)


@lowers(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(cx, x, y, rounding_mode=None):
    """Division rounded toward zero (tandem.div of integers already is; a
    float quotient is truncated, as ATen computes trunc(x / y)) or, for
    integers, toward minus infinity (`//` on integer tensors)."""
    quotient = binary(cx, "tandem.div", x, y)
    out = quotient.type
    is_float = out.element in ("f32", "f16", "bf16")
    if rounding_mode is None:
        return quotient
    if rounding_mode == "trunc":
        return cx.emit("tandem.trunc", [quotient], out) if is_float else quotient
    if rounding_mode == "floor" and not is_float:
        # One less where the division left a remainder of the divisor's
        # opposite sign.
        x, y = cx.operand(x, out.element), cx.operand(y, out.element)
        remainder = cx.emit("tandem.sub", [x, cx.emit("tandem.mul", [quotient, y],
                                                       out)], out)
        zero = cx.scalar(0, out.element)
        inexact = cx.compare("ne", remainder, zero)
        signs_differ = cx.compare("ne", cx.compare("lt", remainder, zero),
                                  cx.compare("lt", y, zero))
        adjust = cx.logical_and(inexact, signs_differ)
        return cx.emit("tandem.sub", [quotient, cx.cast(adjust, out.element)], out)
    raise cx.error(f"division with rounding_mode='{rounding_mode}' of floats is "
                   "not in the tandem dialect")


@lowers(aten.remainder.Tensor, aten.remainder.Scalar, aten.fmod.Tensor,
        aten.fmod.Scalar)
def _remainder(cx, x, y):
    """x - q·y for integers, q rounded as the op's sign rule wants: toward
    minus infinity for remainder (the divisor's sign), toward zero for fmod
    (the dividend's)."""
    out = cx.result_type()
    if out.element in ("f32", "f16", "bf16"):
        raise cx.error(f"{cx.node.target.__name__.split('.')[0]} of floats is not "
                       "in the tandem dialect")
    mode = "floor" if "remainder" in str(cx.node.target) else "trunc"
    quotient = _div_mode(cx, x, y, mode)
    product = cx.emit("tandem.mul", [quotient, cx.operand(y, out.element)], out)
    return cx.emit("tandem.sub", [cx.operand(x, out.element), product], out)


@lowers(aten.pow.Tensor_Scalar)
def _pow_scalar(cx, x, exponent):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    if exponent == 1:
        return x
    if exponent == 2:
        return cx.emit("tandem.mul", [x, x], out)
    if exponent == 0.5 and out.is_float:
        return cx.emit("tandem.sqrt", [x], out)
    if not out.is_float:
        raise cx.error("pow of integers is not in the tandem dialect (floats are, "
                       "and x ** 2)")
    return binary(cx, "tandem.pow", x, exponent)


@lowers(aten.pow.Scalar)
def _pow_base(cx, base, x):
    return binary(cx, "tandem.pow", base, x)


@lowers(aten.reciprocal.default)
def _reciprocal(cx, x):
    return binary(cx, "tandem.div", 1.0, x)


def unary(name):
    def lower(cx, x, *unused):
        out = cx.result_type()
        return cx.emit(name, [cx.cast(x, out.element)], out)
    return lower


for _overload, _name in [
        (aten.neg.default, "tandem.neg"), (aten.abs.default, "tandem.abs"),
        (aten.exp.default, "tandem.exp"), (aten.log.default, "tandem.log"),
        (aten.sqrt.default, "tandem.sqrt"), (aten.rsqrt.default, "tandem.rsqrt"),
        (aten.tanh.default, "tandem.tanh"), (aten.sigmoid.default, "tandem.sigmoid"),
        (aten.relu.default, "tandem.relu"), (aten.silu.default, "tandem.silu"),
        (aten.erf.default, "tandem.erf")]:
    LOWERINGS[_overload] = unary(_name)


def rounding(name):
    """floor, ceil, round (halves to even) and trunc: integers are already
    integral, so on an integer tensor they are the identity, as in PyTorch."""
    def lower(cx, x, *unused):
        out = cx.result_type()
        if not out.is_float:
            return x
        return cx.emit(name, [cx.cast(x, out.element)], out)
    return lower


for _overload, _name in [
        (aten.floor.default, "tandem.floor"), (aten.ceil.default, "tandem.ceil"),
        (aten.round.default, "tandem.round"), (aten.trunc.default, "tandem.trunc")]:
    LOWERINGS[_overload] = rounding(_name)



@lowers(aten.round.decimals)
def _round_decimals(cx, x, decimals=0):
    # As ATen computes it, in the tensor's type: round(x·10^d) / 10^d, or
    # for d < 0, round(x / 10^-d) · 10^-d (halves to even either way).
    out = cx.result_type()
    if not out.is_float:
        return x
    x = cx.cast(x, out.element)
    scale = cx.scalar(10.0 ** abs(decimals), out.element)
    first, then = ("tandem.mul", "tandem.div") if decimals >= 0 else ("tandem.div", "tandem.mul")
    scaled = cx.emit(first, [x, scale], out)
    return cx.emit(then, [cx.emit("tandem.round", [scaled], out), scale], out)

@lowers(aten.gelu.default)
def _gelu(cx, x, approximate="none"):
    out = cx.result_type()
    if approximate == "none":
        return cx.emit("tandem.gelu", [x], out)
    # The tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
    e = out.element
    cube = cx.emit("tandem.mul", [cx.emit("tandem.mul", [x, x], out), x], out)
    inner = cx.emit("tandem.add", [x, cx.emit("tandem.mul", [
        cube, cx.scalar(0.044715, e)], out)], out)
    t = cx.emit("tandem.tanh", [cx.emit("tandem.mul", [
        inner, cx.scalar(math.sqrt(2 / math.pi), e)], out)], out)
    half_x = cx.emit("tandem.mul", [x, cx.scalar(0.5, e)], out)
    return cx.emit("tandem.mul", [half_x, cx.emit("tandem.add", [
        t, cx.scalar(1.0, e)], out)], out)


def clamp(cx, x, low, high):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    if low is not None:
        x = cx.emit("tandem.maximum", [x, cx.operand(low, out.element)], out)
    if high is not None:
        x = cx.emit("tandem.minimum", [x, cx.operand(high, out.element)], out)
    return x


@lowers(aten.hardtanh.default)
def _hardtanh(cx, x, low=-1.0, high=1.0):
    return clamp(cx, x, low, high)


@lowers(aten.clamp.default, aten.clamp.Tensor)
def _clamp(cx, x, low=None, high=None):
    return clamp(cx, x, low, high)


@lowers(aten.clamp_min.default, aten.clamp_min.Tensor)
def _clamp_min(cx, x, low):
    return clamp(cx, x, low, None)


@lowers(aten.clamp_max.default, aten.clamp_max.Tensor)
def _clamp_max(cx, x, high):
    return clamp(cx, x, None, high)


@lowers(aten.hardsigmoid.default)
def _hardsigmoid(cx, x):
    out = cx.result_type()
    shifted = cx.emit("tandem.add", [cx.emit("tandem.div", [
        x, cx.scalar(6.0, out.element)], out), cx.scalar(0.5, out.element)], out)
    return clamp(cx, shifted, 0.0, 1.0)


@lowers(aten.hardswish.default)
def _hardswish(cx, x):
    return cx.emit("tandem.mul", [x, _hardsigmoid(cx, x)], cx.result_type())


@lowers(aten.leaky_relu.default)
def _leaky_relu(cx, x, slope=0.01):
    out = cx.result_type()
    positive = cx.emit("tandem.compare", [x, cx.scalar(0, out.element)],
                       out.with_element("i1"), {"predicate": "#tandem.predicate<gt>"})
    scaled_x = cx.emit("tandem.mul", [x, cx.scalar(slope, out.element)], out)
    return cx.emit("tandem.select", [positive, x, scaled_x], out)


@lowers(aten.log1p.default)
def _log1p(cx, x):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    return cx.emit("tandem.log", [cx.emit("tandem.add", [
        x, cx.scalar(1.0, out.element)], out)], out)


@lowers(aten.expm1.default)
def _expm1(cx, x):
    out = cx.result_type()
    x = cx.cast(x, out.element)
    return cx.emit("tandem.sub", [cx.emit("tandem.exp", [x], out),
                                  cx.scalar(1.0, out.element)], out)


@lowers(aten.elu.default)
def _elu(cx, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale·x where x > 0, else scale·alpha·(exp(input_scale·x) − 1)."""
    out = cx.result_type()
    e = out.element
    positive = cx.emit("tandem.compare", [x, cx.scalar(0, e)],
                       out.with_element("i1"), {"predicate": "#tandem.predicate<gt>"})
    grown = cx.emit("tandem.exp", [scaled_operand(cx, x, input_scale, e)], out)
    negative = scaled_operand(cx, cx.emit("tandem.sub", [grown, cx.scalar(1.0, e)],
                                          out), scale * alpha, e)
    return cx.emit("tandem.select", [positive, scaled_operand(cx, x, scale, e),
                                     negative], out)
