// Kernel IR, lowering and OpenCL generation: type inference, the verifier,
// Let inlining, the shape of generated code, and kernels run end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "codegen/c/kernel_source.h"
#include "driver/compiled_kernel.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lower/inline_lets.h"
#include "support/errors.h"
#include "tensor/tensor.h"

namespace nt {
namespace {

using namespace ir;

TensorPtr tiled_vector(const Expr& block) {
  TensorSpec spec;
  spec.ndim = 1;
  return Tensor::create(spec)->tile({block});
}

Expr meta_symbol(const std::string& name) {
  SymbolAttrs attrs;
  attrs.meta = true;
  attrs.constexpr_ = true;
  attrs.lower_bound = 32;
  attrs.upper_bound = 1024;
  attrs.power_of_two = true;
  return var(name, attrs);
}

// z = x + y over blocks of `block`.
Kernel vector_add(const Expr& block, DType dtype = DType::float32) {
  Builder b("add");
  int x = b.add_param(Param{"x", tiled_vector(block), dtype});
  int y = b.add_param(Param{"y", tiled_vector(block), dtype});
  int z = b.add_param(Param{"z", tiled_vector(block), dtype});
  b.store(z, {}, binary(BinaryFn::Add, b.load(x, {}), b.load(y, {})));
  return b.finish();
}

int count_lets(const StmtList& stmts) {
  int n = 0;
  for (const Stmt& s : stmts) n += s->kind == StmtKind::Let;
  return n;
}

TEST(KernelIR, PromotionFollowsWeakNumbersAndWidth) {
  Value f16 = typed_constant(float_const(1.0), DType::float16);
  Value f32 = typed_constant(float_const(1.0), DType::float32);
  Value i32 = typed_constant(int_const(1), DType::int32);
  EXPECT_EQ(binary(BinaryFn::Add, f16, constant(int_const(2)))->type.dtype, DType::float16);
  EXPECT_EQ(binary(BinaryFn::Add, i32, constant(float_const(0.5)))->type.dtype, DType::float32);
  EXPECT_EQ(binary(BinaryFn::Add, f16, f32)->type.dtype, DType::float32);
  EXPECT_EQ(binary(BinaryFn::Add, f16, typed_constant(float_const(1.0), DType::bfloat16))->type.dtype,
            DType::float32);
  EXPECT_EQ(binary(BinaryFn::Div, i32, i32)->type.dtype, DType::float32);
  EXPECT_EQ(binary(BinaryFn::Lt, i32, f32)->type.dtype, DType::boolean);
  EXPECT_TRUE(binary(BinaryFn::Mul, constant(int_const(2)), constant(int_const(3)))->type.weak);
}

TEST(KernelIR, BroadcastingIsExplicitAndChecked) {
  Value row = full({Expr(1), Expr(8)}, constant(int_const(0)), DType::float32);
  Value col = full({Expr(4), Expr(1)}, constant(int_const(0)), DType::float32);
  Value sum = binary(BinaryFn::Add, row, col);
  ASSERT_EQ(sum->type.shape.size(), 2u);
  EXPECT_TRUE(sum->type.shape[0].is_int(4));
  EXPECT_TRUE(sum->type.shape[1].is_int(8));
  EXPECT_EQ(sum->operands[0]->kind, ValueKind::Broadcast);
  Value three = full({Expr(3)}, constant(int_const(0)), DType::float32);
  EXPECT_THROW(binary(BinaryFn::Add, three, full({Expr(5)}, constant(int_const(0)), DType::float32)),
               ValueError);
  EXPECT_THROW(dot(row, row), ValueError);
  EXPECT_THROW(reduce(ReduceFn::Sum, three, 1, false), IndexError);
}

TEST(KernelIR, VerifierRejectsALetUsedOutsideItsScope) {
  Builder b("bad");
  int z = b.add_param(Param{"z", tiled_vector(Expr(16)), DType::float32});
  b.begin_for("k", constant(int_const(0)), constant(int_const(4)), constant(int_const(1)));
  Value inside = b.let(constant(float_const(1.0)));
  b.end_for();
  b.store(z, {}, inside);
  Kernel k = b.finish();
  EXPECT_THROW(verify(k), std::logic_error);
  EXPECT_NO_THROW(verify(vector_add(Expr(64))));
}

TEST(KernelIR, SingleUseLetsAreInlinedAndSharedOnesKept) {
  Builder b("lets");
  int x = b.add_param(Param{"x", tiled_vector(Expr(16)), DType::float32});
  int z = b.add_param(Param{"z", tiled_vector(Expr(16)), DType::float32});
  Value loaded = b.let(b.load(x, {}));  // used twice: kept
  Value shifted =
      b.let(binary(BinaryFn::Sub, loaded, reduce(ReduceFn::Max, loaded, std::nullopt, false)));  // once
  b.store(z, {}, unary(UnaryFn::Exp, shifted));
  Kernel lowered = lower::inline_lets(b.finish());
  EXPECT_EQ(count_lets(lowered.body), 1);
  verify(lowered);
  EXPECT_NE(to_string(lowered).find("exp((%let0 - broadcast(expand_dims(max(%let0), 0), (16,))))"),
            std::string::npos)
      << to_string(lowered);
}

TEST(KernelIR, LetsNeverReadAreRemoved) {
  // `o, _ = f(x)`: the value bound to `_` is computed by nothing.
  Builder b("unread");
  int x = b.add_param(Param{"x", tiled_vector(Expr(16)), DType::float32});
  int z = b.add_param(Param{"z", tiled_vector(Expr(16)), DType::float32});
  Value loaded = b.let(b.load(x, {}));
  b.let(reduce(ReduceFn::Max, loaded, std::nullopt, false));  // never read
  b.store(z, {}, binary(BinaryFn::Add, loaded, loaded));
  Kernel lowered = lower::inline_lets(b.finish());
  EXPECT_EQ(count_lets(lowered.body), 1) << to_string(lowered);
  EXPECT_EQ(to_string(lowered).find("max("), std::string::npos) << to_string(lowered);
  verify(lowered);
}

TEST(KernelIR, ALetIsNotMovedAcrossAStoreToWhatItReads) {
  Builder b("order");
  int x = b.add_param(Param{"x", tiled_vector(Expr(16)), DType::float32});
  Value before = b.let(b.load(x, {}));
  b.store(x, {}, constant(float_const(0.0)));
  b.store(x, {}, before);  // must store the values read before the first store
  Kernel lowered = lower::inline_lets(b.finish());
  EXPECT_EQ(count_lets(lowered.body), 1) << to_string(lowered);
}

TEST(KernelSource, FusedLoopWithMaskFreeFastPath) {
  codegen::KernelSource source =
      codegen::generate_opencl(lower::inline_lets(vector_add(meta_symbol("BLOCK"))));
  const std::string& s = source.source;
  EXPECT_NE(s.find("__kernel void nt_kernel_add("), std::string::npos);
  // One loop that loads, adds and stores; the fast path has no mask.
  EXPECT_NE(s.find("nt_p2[(((BLOCK * nt_pid_0) + e0) * ninetoothed_tensor_"), std::string::npos) << s;
  EXPECT_NE(s.find("} else {"), std::string::npos);
  EXPECT_EQ(source.symbols.count("BLOCK"), 1u);
  // Buffer, offset, extent, size and stride for each of the three tensors.
  EXPECT_EQ(source.args.size(), 15u);
}

TEST(KernelSource, HalfIsStoredThroughConversions) {
  std::string s = codegen::generate_opencl(vector_add(Expr(64), DType::float16)).source;
  EXPECT_NE(s.find("vload_half("), std::string::npos);
  EXPECT_NE(s.find("vstore_half_rte("), std::string::npos);
  std::string b = codegen::generate_opencl(vector_add(Expr(64), DType::bfloat16)).source;
  EXPECT_NE(b.find("nt_float_to_bf16("), std::string::npos);
}

// z = dot(x, y) over (m, k) and (k, n) blocks of 2-D tensors, in `dtype`.
Kernel block_dot(int64_t m, int64_t k, int64_t n, DType dtype) {
  TensorSpec spec;
  spec.ndim = 2;
  Builder b("dot");
  int x = b.add_param(Param{"x", Tensor::create(spec)->tile({Expr(m), Expr(k)}), dtype});
  int y = b.add_param(Param{"y", Tensor::create(spec)->tile({Expr(k), Expr(n)}), dtype});
  int z = b.add_param(Param{"z", Tensor::create(spec)->tile({Expr(m), Expr(n)}), dtype});
  b.store(z, {}, dot(b.load(x, {}), b.load(y, {})));
  return b.finish();
}

TEST(KernelSource, DotIsARegisterBlockedMicroKernel) {
  // 11 x 49: one 8-row tile and 3 single rows, each over 32 + 16 + 1 columns.
  std::string s = codegen::generate_opencl(lower::inline_lets(block_dot(11, 16, 49, DType::float32))).source;
  EXPECT_NE(s.find("micro-tiles of 8 rows by 2 x 16 columns"), std::string::npos) << s;
  EXPECT_NE(s.find("float16 nt_c"), std::string::npos);  // accumulators in vector variables
  EXPECT_NE(s.find(" = fma(nt_a"), std::string::npos);
  EXPECT_NE(s.find("vload16(0, nt_op"), std::string::npos);  // rows of b, unit stride
  EXPECT_NE(s.find("+ 32 <= 49"), std::string::npos);        // two vectors of columns
  EXPECT_NE(s.find("+ 16 <= 49"), std::string::npos);        // then one
  EXPECT_NE(s.find("+ 8 <= 11"), std::string::npos);         // 8-row tiles
  // A plain dot starts from zero: its result array is never read before the tiles write it.
  EXPECT_NE(s.find("= (float16)(0);"), std::string::npos);
  std::string d = codegen::generate_opencl(lower::inline_lets(block_dot(11, 16, 49, DType::float64))).source;
  EXPECT_NE(d.find("double8 nt_c"), std::string::npos);
  std::string i = codegen::generate_opencl(lower::inline_lets(block_dot(11, 16, 49, DType::int32))).source;
  EXPECT_NE(i.find("int16 nt_c"), std::string::npos);
  EXPECT_EQ(i.find(" = fma(nt_a"), std::string::npos);  // integers multiply and add exactly
  EXPECT_NE(i.find(" * nt_b"), std::string::npos);
}

TEST(KernelSource, UnitStrideInnerLoopsAreHintedToFullWidthVectors) {
  std::string s = codegen::generate_opencl(lower::inline_lets(vector_add(Expr(64)))).source;
  EXPECT_NE(s.find("__attribute__((min_vector_width(512)))"), std::string::npos) << s;
  // The unmasked loop, under the unit-stride macros of the three tensors' strides.
  size_t hint = s.find("#pragma clang loop vectorize_width(16)");
  ASSERT_NE(hint, std::string::npos) << s;
  size_t test = s.rfind("#if defined(__clang__) && NT_UNIT_", hint);
  ASSERT_NE(test, std::string::npos) << s;
  std::string condition = s.substr(test, hint - test);
  size_t units = 0;
  for (size_t at = condition.find("NT_UNIT_"); at != std::string::npos;
       at = condition.find("NT_UNIT_", at + 1)) {
    ++units;
  }
  EXPECT_EQ(units, 3u) << condition;
  // The unmasked path's two loops are hinted (the streamed strips of a program on one work-item,
  // the plain loop otherwise); the masked path's (the last loop) is not.
  EXPECT_NE(s.find("__builtin_nontemporal_store("), std::string::npos) << s;
  EXPECT_NE(s.find("#pragma clang loop vectorize_width(16)", s.find('\n', hint)), std::string::npos) << s;
  EXPECT_EQ(s.find("vectorize_width", s.rfind("for (nt_index e")), std::string::npos) << s;
  std::string d = codegen::generate_opencl(lower::inline_lets(vector_add(Expr(64), DType::float64))).source;
  EXPECT_NE(d.find("#pragma clang loop vectorize_width(8)"), std::string::npos) << d;
  // float16 loads and stores keep the vectoriser's own width.
  std::string h = codegen::generate_opencl(lower::inline_lets(vector_add(Expr(64), DType::float16))).source;
  EXPECT_EQ(h.find("vectorize_width"), std::string::npos) << h;
  // A transposed read steps by a row along the inner loop: no hint.
  TensorSpec spec;
  spec.ndim = 2;
  Builder b("transpose");
  int x = b.add_param(Param{"x", Tensor::create(spec)->tile({Expr(16), Expr(16)}), DType::float32});
  int z = b.add_param(Param{"z", Tensor::create(spec)->tile({Expr(16), Expr(16)}), DType::float32});
  b.store(z, {}, trans(b.load(x, {})));
  std::string t = codegen::generate_opencl(lower::inline_lets(b.finish())).source;
  EXPECT_EQ(t.find("vectorize_width"), std::string::npos) << t;
}

TEST(KernelSource, RuntimeSizedBlocksCannotBeHeldInMemory) {
  TensorSpec spec;
  spec.ndim = 1;
  TensorPtr whole = Tensor::create(spec)->tile({Expr(-1)});  // block = the whole runtime size
  Builder b("whole");
  int x = b.add_param(Param{"x", whole, DType::float32});
  Value loaded = b.let(b.load(x, {}));
  b.store(x, {}, binary(BinaryFn::Add, loaded, loaded));
  EXPECT_THROW(codegen::generate_opencl(lower::inline_lets(b.finish())), ValueError);
}

TEST(CompiledKernel, VectorAddOverHostMemory) {
  CompiledKernel kernel(vector_add(meta_symbol("BLOCK")));
  ASSERT_EQ(kernel.meta_symbols().size(), 1u);
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> normal;
  for (int64_t n : {1, 1000, 4097}) {
    std::vector<float> x(n), y(n), z(n, NAN);
    for (auto& v : x) v = normal(rng);
    for (auto& v : y) v = normal(rng);
    auto arg = [&](std::vector<float>& v) { return LaunchArg(TensorArg{v.data(), {n}, {1}}); };
    kernel.launch({arg(x), arg(y), arg(z)}, {}, SymbolValues{{"BLOCK", 256}});
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + y[i]) << "n=" << n << " i=" << i;
  }
}

TEST(CompiledKernel, OutermostShapesOfTheirOwnUnravelTheProgramIdAsUpstream) {
  // The grid is a's 2 blocks of 64; c has 5: the grid's 2 programs write its first 2 (a and b read
  // 0 past their 100 elements), and the rest of c is left alone.
  CompiledKernel kernel(vector_add(Expr(64)));
  std::vector<float> a(100), b(100), c(300, -1.0f);
  for (int i = 0; i < 100; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f;
  kernel.launch(
      {TensorArg{a.data(), {100}, {1}}, TensorArg{b.data(), {100}, {1}}, TensorArg{c.data(), {300}, {1}}},
      {});
  for (int i = 0; i < 300; ++i) {
    const float expected = i < 100 ? static_cast<float>(i) + 0.5f : i < 128 ? 0.0f : -1.0f;
    ASSERT_EQ(c[i], expected) << "at " << i;
  }
  // A kernel made from its plan alone has no IR to make such a launch's source from.
  CompiledKernel from_plan(kernel.plan());
  std::fill(c.begin(), c.end(), -1.0f);
  EXPECT_THROW(from_plan.launch({TensorArg{a.data(), {100}, {1}}, TensorArg{b.data(), {100}, {1}},
                                 TensorArg{c.data(), {300}, {1}}},
                                {}),
               ValueError);
  EXPECT_EQ(c[0], -1.0f);
}

}  // namespace
}  // namespace nt
