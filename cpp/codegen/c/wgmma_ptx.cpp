#include "codegen/c/wgmma_ptx.h"

#include "codegen/c/mma_steps.h"

namespace nt::codegen {

namespace {

// Where an operand's elements lie: the staging code names them even where NT_WGMMA is not defined
// (the same source serves every target). Offsets into a staged block are ints: every block fits
// local memory many times over, and a GPU does 64-bit integer arithmetic in two instructions.
constexpr const char* kAtoms =
    R"CL(#define NT_WGMMA_ATOM(columns) ((columns) % 64 == 0 ? 64L : (columns) % 32 == 0 ? 32L : 16L)
#define NT_WGMMA_N(columns) \
  ((columns) % 256 == 0 ? 256L : (columns) % 128 == 0 ? 128L : (columns) % 64 == 0 ? 64L : (columns) % 32 == 0 ? 32L : 16L)
inline int nt_wgmma_offset(int r, int c, int rows, int atom) { return c / atom * rows * atom + r * atom + c % atom; }
inline int nt_wgmma_at(int r, int c, int rows, int atom) {
  const int o = nt_wgmma_offset(r, c, rows, atom);
  return o ^ ((o >> 6 & (atom / 8 - 1)) << 3);
}
)CL";

// Descriptor fields (PTX's matrix descriptor): the start address, the leading and the stride
// byte offsets, each in 16-byte units; the swizzle mode in bits 62-63 (1: 128 bytes, 2: 64, 3: 32).
// k-major: 8 rows of an atom lie 16 atom bytes apart (the leading offset is unused); n-major:
// atoms of `rows` rows lie 2 rows atom bytes apart, 8 rows of k 16 atom bytes apart.
constexpr const char* kDescriptors =
    R"CL(inline ulong nt_wgmma_desc(uint address, uint lbo, uint sbo, long atom) {
  const ulong mode = atom == 64 ? 1 : atom == 32 ? 2 : 3;
  return (ulong)((address & 0x3FFFF) >> 4) | (ulong)((lbo & 0x3FFFF) >> 4) << 16 |
         (ulong)((sbo & 0x3FFFF) >> 4) << 32 | mode << 62;
}
inline ulong nt_wgmma_desc_k(const void* p, long offset, long atom) {
  return nt_wgmma_desc(nt_shared_address(p) + 2 * (uint)offset, 16, 16 * (uint)atom, atom);
}
inline ulong nt_wgmma_desc_mn(const void* p, long offset, long rows, long atom) {
  return nt_wgmma_desc(nt_shared_address(p) + 2 * (uint)offset, 2 * (uint)(rows * atom), 16 * (uint)atom, atom);
}
#define NT_WGMMA_FENCE() asm volatile("wgmma.fence.sync.aligned;" : : : "memory")
#define NT_WGMMA_COMMIT() asm volatile("wgmma.commit_group.sync.aligned;" : : : "memory")
#define NT_WGMMA_WAIT(n) asm volatile("wgmma.wait_group.sync.aligned %0;" : : "n"(n) : "memory")
#define NT_WGMMA_HOLD(x) asm volatile("" : "+f"(x) : : "memory")
#define NT_ASYNC_PROXY_FENCE() asm volatile("fence.proxy.async.shared::cta;" : : : "memory")
)CL";

// One wgmma of a 64 x n tile, a specialisation of nt_wgmma_<type>[_ra]<N, TB>: run() takes n / 2
// accumulators (acc[base + ...], rows C apart), then a (a descriptor, or with `registers` its four
// registers of packed pairs: mma.sync's a fragment) and b's descriptor; TB is b's transposition
// (a from registers has none of its own). Templates, so that only the width a dot uses is built:
// as a chain of ifs over macros, every width's asm reached NVRTC's optimizer (flash attention's
// first call on an H200: 23.3 s and 9.7 GB of memory then, 6.8 s and 2.7 GB as templates).
std::string wgmma_specialization(const std::string& type, int n, bool registers) {
  const int regs = n / 2;
  std::string list, outputs;
  for (int q = 0; q < regs; ++q) {
    list += (q ? ", %" : "%") + std::to_string(q);
    const std::string row = q / 2 % 2 ? "C + " : "";
    outputs +=
        std::string(q ? ", " : "") + "\"+f\"(acc[base + " + row + std::to_string(2 * (q / 4) + q % 2) + "])";
  }
  auto operand = [&](int k) { return "%" + std::to_string(regs + k); };
  const int a_operands = registers ? 4 : 1;
  std::string a = operand(0), inputs = "\"l\"(da)", a_parameter = "ulong da";
  if (registers) {
    a = "{" + operand(0) + ", " + operand(1) + ", " + operand(2) + ", " + operand(3) + "}";
    inputs = "\"r\"(fa[0]), \"r\"(fa[1]), \"r\"(fa[2]), \"r\"(fa[3])";
    a_parameter = "const uint* fa";
  }
  const std::string b = operand(a_operands), scale = operand(a_operands + 1), tb = operand(a_operands + 2);
  const std::string name = "nt_wgmma_" + type + (registers ? "_ra" : "");
  return "template <int TB> struct " + name + "<" + std::to_string(n) +
         ", TB> {\n  static NT_D void run(float* acc, int base, int C, " + a_parameter +
         ", ulong db) {\n    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + scale +
         ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." + type +
         " {" + list + "}, " + a + ", " + b + ", p, 1, 1, " + (registers ? "" : "0, ") + tb +
         ";\\n}\\n\"\n                 : " + outputs + "\n                 : " + inputs +
         ", \"l\"(db), \"r\"(1), \"n\"(TB));\n  }\n};\n";
}

}  // namespace

std::string wgmma_helpers() {
  std::string out = kAtoms;
  out += "#ifdef NT_WGMMA\n";
  out += kDescriptors;
  out += "#define NT_WARPGROUP_MMA 1\n";
  for (const char* type : {"f16", "bf16"})
    for (bool registers : {false, true}) {
      out +=
          "template <int N, int TB> struct nt_wgmma_" + std::string(type) + (registers ? "_ra" : "") + ";\n";
      for (int n = 16; n <= 256; n *= 2) out += wgmma_specialization(type, n, registers);
    }
  out += "#else\n#define NT_WARPGROUP_MMA 0\n#define NT_ASYNC_PROXY_FENCE()\n#endif\n";
  return out;
}

void write_wgmma_steps(CodeWriter& out, const WgmmaSteps& steps) {
  const std::string &type = steps.type, &acc = steps.acc, &A = steps.A, &B = steps.B, &K = steps.K;
  const bool bt = steps.b_k_major;
  const std::string n = std::to_string(steps.layout);
  const std::string atom_a = "NT_WGMMA_ATOM(" + steps.A_columns + ")";
  const std::string atom_b = "NT_WGMMA_ATOM(" + steps.B_columns + ")";
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  const std::string width = "NT_WGMMA_N(NT_COLS" + n + ")";
  // The accumulators' registers, read and written only after what came before (the wait).
  auto hold = [&] { hold_wgmma_accumulators(out, acc, steps.layout); };
  const HeldOperand* held = steps.held;
  if (held) {
    // a's fragments packed from the registers that hold it (as write_mma_steps() packs them), all of
    // them before the fence: wgmma reads them while it runs.
    line_("uint nt_fa[(" + K + ") / 16][NT_MAX(1L, NT_R" + n + " / 2)][4];");
    line_("NT_UNROLL");
    open("for (nt_index nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 16)");
    line_("NT_UNROLL");
    open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
    for (int r = 0; r < 4; ++r)
      line_("nt_fa[nt_k0 / 16][nt_i][" + std::to_string(r) + "] = " + held_a_register(*held, type, r) + ";");
    close();
    close();
  } else {
    line_("const nt_index nt_wg = NT_LANE / 128;  // this thread's warpgroup");
  }
  hold();  // as they are now: wgmma.fence orders their earlier writes
  line_("NT_WGMMA_FENCE();");
  line_("NT_UNROLL");
  open("for (nt_index nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 16)");
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  if (!held)
    line_("const ulong nt_da = nt_wgmma_desc_k(" + A + ", nt_wgmma_offset(16L * NT_WM" + n +
          " * nt_i + 64L * nt_wg, nt_k0, " + steps.A_rows + ", " + atom_a + "), " + atom_a + ");");
  line_("NT_UNROLL");
  open("for (nt_index nt_n0 = 0; nt_n0 < NT_COLS" + n + "; nt_n0 += " + width + ")");
  if (bt) {
    line_("const ulong nt_db = nt_wgmma_desc_k(" + B + ", nt_wgmma_offset(nt_n0, nt_k0, " + steps.B_rows +
          ", " + atom_b + "), " + atom_b + ");");
  } else {
    line_("const ulong nt_db = nt_wgmma_desc_mn(" + B + ", nt_wgmma_offset(nt_k0, nt_n0, " + steps.B_rows +
          ", " + atom_b + "), " + steps.B_rows + ", " + atom_b + ");");
  }
  // The width this dot's columns take (NT_WGMMA_N: a constant), the one specialisation built; the
  // first of the tile's accumulators: slot (2 nt_i, nt_n0 / 4) of the NT_C a row.
  line_(std::string("nt_wgmma_") + type + (held ? "_ra" : "") + "<" + width + ", " + (bt ? "0" : "1") +
        ">::run(" + acc + ", 2 * nt_i * NT_C" + n + " + nt_n0 / 4, NT_C" + n + ", " +
        (held ? "nt_fa[nt_k0 / 16][nt_i]" : "nt_da") + ", nt_db);");
  close();
  close();
  close();
  line_("NT_WGMMA_COMMIT();");
  if (!steps.defer_macro.empty()) line_("#if !" + steps.defer_macro);
  line_("NT_WGMMA_WAIT(0);");
  hold();
  if (!steps.defer_macro.empty()) line_("#endif");
}

void hold_wgmma_accumulators(CodeWriter& out, const std::string& acc, int layout) {
  const std::string n = std::to_string(layout);
  out.emit_line("NT_UNROLL");
  out.emit_open("for (int nt_s = 0; nt_s < NT_R" + n + " * NT_C" + n + "; ++nt_s)");
  out.emit_line("NT_WGMMA_HOLD(" + acc + "[nt_s]);");
  out.emit_close();
}

}  // namespace nt::codegen
