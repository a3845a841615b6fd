"""`from ninetoothed.language import libdevice`: Triton's libdevice names.

Each function computes elementwise on blocks (Python numbers take the dtype
of the block they meet); floats keep their dtype, integers compute in
float32, float16/bfloat16 compute in float32 and round where stored. The
functions forward to the compiler core (`ir/math_fns.h`), which maps each
name to an OpenCL builtin or a helper. Names libdevice has but OpenCL cannot
honour (arithmetic with a directed rounding mode such as `add_rz`, Bessel
functions, `erfinv`) raise NotImplementedError.
"""

from ninetoothed import _core


def _block(x):
    as_block = getattr(x, "_ninetoothed_block", None)
    return as_block() if as_block is not None else x


def _call(name, *args):
    return _core.block_call(name, [_block(a) for a in args])


def _unary(name, doc, core_name=None):
    def function(x):
        return _core.block_unary(core_name or name, _block(x))

    function.__name__ = name
    function.__doc__ = doc
    return function


def _named(name, doc, arity, call_name=None):
    def function(*args):
        if len(args) != arity:
            raise TypeError(f"{name}() takes {arity} arguments, got {len(args)}")
        return _call(call_name or name, *args)

    function.__name__ = name
    function.__doc__ = doc
    return function


def _unsupported(name, reason):
    def function(*args, **kwargs):
        raise NotImplementedError(f"libdevice.{name} is not supported: {reason}")

    function.__name__ = name
    function.__doc__ = f"Not supported: {reason}."
    return function


def _is_integer(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    dtype = getattr(_block(x), "dtype", None)
    return dtype is not None and dtype not in (_core.DType.float16, _core.DType.bfloat16, _core.DType.float32,
                                               _core.DType.float64, _core.DType.bool)


def pow(x, y):
    """`x` raised to the power `y`: an integer exponent (block or int) is exact repeated
    multiplication (`pown`), a float one `pow`."""
    if _is_integer(y) and not _is_integer(x):
        return _call("pown", x, y)
    return _core.block_binary("pow", _block(x), _block(y))


def frexp(x):
    """The mantissa (in [0.5, 1), with x's sign) and the int32 exponent of each element."""
    return _call("frexp_mantissa", x), _call("frexp_exponent", x)


# The core's unary functions.
abs = _unary("abs", "The absolute value of each element.")
exp = _unary("exp", "e raised to each element.")
exp2 = _unary("exp2", "2 raised to each element.")
exp10 = _unary("exp10", "10 raised to each element.")
expm1 = _unary("expm1", "exp(x) - 1 of each element.")
log = _unary("log", "The natural logarithm of each element.")
log2 = _unary("log2", "The base-2 logarithm of each element.")
log10 = _unary("log10", "The base-10 logarithm of each element.")
log1p = _unary("log1p", "log(1 + x) of each element.")
sqrt = _unary("sqrt", "The square root of each element.")
rsqrt = _unary("rsqrt", "The reciprocal square root of each element.")
cbrt = _unary("cbrt", "The cube root of each element.")
sin = _unary("sin", "The sine of each element.")
cos = _unary("cos", "The cosine of each element.")
tan = _unary("tan", "The tangent of each element.")
asin = _unary("asin", "The arcsine of each element.")
acos = _unary("acos", "The arccosine of each element.")
atan = _unary("atan", "The arctangent of each element.")
sinh = _unary("sinh", "The hyperbolic sine of each element.")
cosh = _unary("cosh", "The hyperbolic cosine of each element.")
tanh = _unary("tanh", "The hyperbolic tangent of each element.")
erf = _unary("erf", "The error function of each element.")
floor = _unary("floor", "The largest integer not above each element.")
ceil = _unary("ceil", "The smallest integer not below each element.")
trunc = _unary("trunc", "The integer part (toward zero) of each element.")
round = _unary("round", "The nearest integer (halves away from zero) of each element.")

# Functions of the core's call table (ir/math_fns.h).
erfc = _named("erfc", "The complementary error function, 1 - erf(x).", 1)
lgamma = _named("lgamma", "The natural logarithm of |gamma(x)|.", 1)
tgamma = _named("tgamma", "The gamma function.", 1)
rint = _named("rint", "The nearest integer, halves to even.", 1)
nearbyint = _named("nearbyint", "The nearest integer, halves to even.", 1)
acosh = _named("acosh", "The inverse hyperbolic cosine.", 1)
asinh = _named("asinh", "The inverse hyperbolic sine.", 1)
atanh = _named("atanh", "The inverse hyperbolic tangent.", 1)
sinpi = _named("sinpi", "sin(pi * x).", 1)
cospi = _named("cospi", "cos(pi * x).", 1)
logb = _named("logb", "The exponent of x as a float.", 1)
rcbrt = _named("rcbrt", "1 / cbrt(x).", 1)
sqrt_rn = _named("sqrt_rn", "The square root, correctly rounded.", 1)
rsqrt_rn = _named("rsqrt_rn", "1 / sqrt(x), rounded once from the exact square root.", 1)
rcp_rn = _named("rcp_rn", "1 / x, correctly rounded.", 1)
saturatef = _named("saturatef", "x clamped to [0, 1] (NaN gives 0).", 1)
normcdf = _named("normcdf", "The standard normal cumulative distribution function.", 1)
fast_sinf = _named("fast_sinf", "A fast sine (OpenCL native_sin).", 1)
fast_cosf = _named("fast_cosf", "A fast cosine (OpenCL native_cos).", 1)
fast_tanf = _named("fast_tanf", "A fast tangent (OpenCL native_tan).", 1)
fast_expf = _named("fast_expf", "A fast exp (OpenCL native_exp).", 1)
fast_exp10f = _named("fast_exp10f", "A fast exp10 (OpenCL native_exp10).", 1)
fast_logf = _named("fast_logf", "A fast log (OpenCL native_log).", 1)
fast_log2f = _named("fast_log2f", "A fast log2 (OpenCL native_log2).", 1)
fast_log10f = _named("fast_log10f", "A fast log10 (OpenCL native_log10).", 1)
fmod = _named("fmod", "The remainder of x / y truncated toward zero (sign of x).", 2)
remainder = _named("remainder", "x - n * y with n = x / y rounded to nearest even.", 2)
hypot = _named("hypot", "sqrt(x * x + y * y) without undue overflow.", 2)
atan2 = _named("atan2", "atan2(y, x) as in C: the angle of the point (x, y), in [-pi, pi].", 2)
copysign = _named("copysign", "|x| with the sign of y.", 2)
nextafter = _named("nextafter", "The next representable value after x toward y.", 2)
fdim = _named("fdim", "x - y if x > y, else +0.", 2)
div_rn = _named("div_rn", "x / y, correctly rounded.", 2)
rhypot = _named("rhypot", "1 / hypot(x, y).", 2)
add_rn = _named("add_rn", "x + y rounded to nearest even.", 2)
sub_rn = _named("sub_rn", "x - y rounded to nearest even.", 2)
mul_rn = _named("mul_rn", "x * y rounded to nearest even.", 2)
fast_dividef = _named("fast_dividef", "A fast division (OpenCL native_divide).", 2)
fast_powf = _named("fast_powf", "pow(x, y).", 2)
fma_rn = _named("fma_rn", "x * y + z rounded once.", 3)
norm3d = _named("norm3d", "sqrt(a^2 + b^2 + c^2) without undue overflow.", 3)
rnorm3d = _named("rnorm3d", "1 / norm3d(a, b, c).", 3)
norm4d = _named("norm4d", "sqrt(a^2 + b^2 + c^2 + d^2) without undue overflow.", 4)
rnorm4d = _named("rnorm4d", "1 / norm4d(a, b, c, d).", 4)
isnan = _named("isnan", "Whether each element is NaN (a boolean block).", 1)
isinf = _named("isinf", "Whether each element is infinite (a boolean block).", 1)
finitef = _named("finitef", "1 where the element is finite, else 0 (int32).", 1)
isfinited = _named("isfinited", "1 where the element is finite, else 0 (int32).", 1)
signbit = _named("signbit", "1 where the sign bit is set (-0.0 and NaNs with it included), else 0 (int32).", 1)
ilogb = _named("ilogb", "The unbiased exponent of x as an int32.", 1)
ldexp = _named("ldexp", "x * 2 ** n for an integer n.", 2)
scalbn = _named("scalbn", "x * 2 ** n for an integer n.", 2)
llrint = _named("llrint", "The nearest integer (halves to even) as an int64.", 1)
llround = _named("llround", "The nearest integer (halves away from zero) as an int64.", 1)
mulhi = _named("mulhi", "The high half of the double-width product (signed or unsigned as the operands).", 2)
umulhi = _named("umulhi", "The high half of the unsigned double-width product.", 2)
hadd = _named("hadd", "(x + y) >> 1 without overflow.", 2)
rhadd = _named("rhadd", "(x + y + 1) >> 1 without overflow.", 2)
mul24 = _named("mul24", "The product of the low 24 bits of x and y.", 2)
sad = _named("sad", "|x - y| + z.", 3)
brev = _named("brev", "The bits of each element reversed.", 1)
clz = _named("clz", "The number of leading zero bits (int32).", 1)
popc = _named("popc", "The number of set bits (int32).", 1)
ffs = _named("ffs", "The position (from 1) of the least significant set bit, 0 for 0 (int32).", 1)
byte_perm = _named("byte_perm", "Bytes of (y:x) selected by the nibbles of s.", 3)
int_as_float = _named("int_as_float", "The bits of an int32 read as float32.", 1)
uint_as_float = _named("uint_as_float", "The bits of a uint32 read as float32.", 1)
float_as_int = _named("float_as_int", "The bits of a float32 read as int32.", 1)
float_as_uint = _named("float_as_uint", "The bits of a float32 read as an integer.", 1)
longlong_as_double = _named("longlong_as_double", "The bits of an int64 read as float64.", 1)
double_as_longlong = _named("double_as_longlong", "The bits of a float64 read as int64.", 1)
double2loint = _named("double2loint", "The low 32 bits of a float64 (int32).", 1)
double2hiint = _named("double2hiint", "The high 32 bits of a float64 (int32).", 1)
hiloint2double = _named("hiloint2double", "The float64 with high bits `hi` and low bits `lo`.", 2)
fma = _named("fma_rn", "x * y + z rounded once.", 3)


def _conversions():
    names = {}
    types = ("float", "double", "int", "uint", "ll", "ull")
    for source in types:
        for target in types:
            if source == target or (source not in ("float", "double") and target not in ("float", "double")):
                continue
            for mode in ("rn", "rz", "rd", "ru"):
                name = f"{source}2{target}_{mode}"
                names[name] = _named(name, f"{source} to {target}, rounded {mode}.", 1)
    return names


globals().update(_conversions())

for _name in ("add_rz", "add_rd", "add_ru", "sub_rz", "sub_rd", "sub_ru", "mul_rz", "mul_rd", "mul_ru",
              "div_rz", "div_rd", "div_ru", "rcp_rz", "rcp_rd", "rcp_ru", "sqrt_rz", "sqrt_rd", "sqrt_ru",
              "fma_rz", "fma_rd", "fma_ru"):
    globals()[_name] = _unsupported(_name, "OpenCL C has no arithmetic with a directed rounding mode")
for _name in ("j0", "j1", "y0", "y1", "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1", "erfinv", "erfcinv",
              "erfcx", "normcdfinv", "rcp64h"):
    globals()[_name] = _unsupported(_name, "OpenCL C has no builtin for it")
del _name
