// mma.sync k loops (mma_steps.h): each warp's fragments loaded, the mma macros issued.
#include "codegen/c/mma_steps.h"

namespace nt::codegen {

void write_mma_steps(CodeWriter& out, const MmaSteps& steps) {
  const std::string &type = steps.type, &tx = steps.tx, &ty = steps.ty, &acc = steps.acc, &A = steps.A,
                    &B = steps.B, &K = steps.K;
  const StagedLayout &la = steps.la, &lb = steps.lb;
  const bool pairs = steps.pairs, a16 = steps.a16, b16 = steps.b16, bt = steps.bt;
  const HeldOperand* held = steps.held;
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  const std::string n = std::to_string(steps.layout);
  const std::string pack = "nt_pack_" + type + "x2", step = "NT_MMA_M16N8K16_" + type;
  // Arrays of floats (packed here) have plain rows; ldmatrix reads each lane's 16 bytes where the
  // operand's layout puts them (wgmma's swizzle keeps 16-byte chunks whole).
  const std::string pa = "(" + la.pitch + ")", pb = "(" + lb.pitch + ")";
  // This lane's group g and thread t in the group; its warp's column wn (its row is in ty).
  line_("const nt_index nt_g = " + ty + " % 8, nt_t = " + tx + " % 4, nt_wn = " + tx + " / 4;");
  if (a16 || b16) line_("const int nt_l = (int)(NT_LANE % 32);");
  // Unrolled, the fragments of one step load while the previous step's mmas run.
  line_("NT_UNROLL");
  open("for (nt_index nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 16)");
  line_("uint nt_fa[NT_MAX(1L, NT_R" + n + " / 2)][4], nt_fb[NT_MAX(1L, NT_C" + n + " / 2)][2];");
  // a's fragment of the warp's i-th 16 rows: rows g and g + 8, columns 2 t, 2 t + 1 and + 8.
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  if (held) {
    for (int r = 0; r < 4; ++r)
      line_("nt_fa[nt_i][" + std::to_string(r) + "] = " + held_a_register(*held, type, r) + ";");
  } else if (a16) {
    // Lane l names row l % 16 of the tile, from column 8 (l / 16): the four 8 x 8 matrices are
    // a's registers 0 to 3 (rows + 0 and + 8, columns + 0 and + 8).
    line_("nt_ldmatrix_x4(nt_fa[nt_i], " + A + " + " +
          la.at("(NT_ROW" + n + "(" + ty + ", 2 * nt_i) - nt_g + nt_l % 16)", "nt_k0 + nt_l / 16 * 8") +
          ");");
  } else {
    line_("const nt_index nt_p = NT_ROW" + n + "(" + ty + ", 2 * nt_i) * " + pa +
          " + nt_k0 + 2 * nt_t, nt_q = nt_p + 8 * " + pa + ";");
    const char* at[4] = {"nt_p", "nt_q", "nt_p + 8", "nt_q + 8"};
    for (int r = 0; r < 4; ++r) {
      std::string x = std::string(at[r]), to = "nt_fa[nt_i][" + std::to_string(r) + "] = " + pack;
      if (pairs) {  // one 64-bit load: a half-warp's 16 lanes read 32 distinct banks
        line_("{ const float2 nt_e = *(" + steps.local_pointer + "const float2*)(" + A + " + " + x + "); " +
              to + "(nt_e.x, nt_e.y); }");
      } else {
        line_(to + "(" + A + "[" + x + "], " + A + "[" + x + " + 1]);");
      }
    }
  }
  close();
  // b's fragment of the warp's j-th 8 columns: column g, rows 2 t, 2 t + 1 and + 8.
  if (b16 && bt) {
    // b stored as rows of n: lane l names row (n) l % 8 of the tile, from column (k) 8 (l / 8 % 2);
    // lanes 16 on, of the next tile: b's registers 0 and 1 of two tiles a load.
    const std::string at = " + " + lb.at("(8 * (nt_wn + NT_WN" + n + " * (nt_j + nt_l / 16)) + nt_l % 8)",
                                         "nt_k0 + 8 * (nt_l / 8 % 2)");
    line_("NT_UNROLL");
    open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; nt_j += 2)");
    open("if (nt_j + 1 < NT_C" + n + " / 2)");
    line_("nt_ldmatrix_x4_pair(nt_fb[nt_j], nt_fb[nt_j + 1], " + B + at + ");");
    out.emit_else();
    line_("nt_ldmatrix_x2(nt_fb[nt_j], " + B + at + ");");
    close();
    close();
  } else if (bt) {
    line_("NT_UNROLL");
    open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; ++nt_j)");
    line_("const nt_index nt_p = (8 * (nt_wn + NT_WN" + n + " * nt_j) + nt_g) * " + pb +
          " + nt_k0 + 2 * nt_t;");
    line_("nt_fb[nt_j][0] = " + pack + "(" + B + "[nt_p], " + B + "[nt_p + 1]);");
    line_("nt_fb[nt_j][1] = " + pack + "(" + B + "[nt_p + 8], " + B + "[nt_p + 9]);");
    close();
  } else if (b16) {
    // Lane l names row (k) l % 16 of the tile; lanes 16 on, of the next tile: two tiles a load.
    line_("NT_UNROLL");
    open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; nt_j += 2)");
    open("if (nt_j + 1 < NT_C" + n + " / 2)");
    line_("nt_ldmatrix_x4_trans(nt_fb[nt_j], nt_fb[nt_j + 1], " + B + " + " +
          lb.at("(nt_k0 + nt_l % 16)", "8 * (nt_wn + NT_WN" + n + " * (nt_j + nt_l / 16))") + ");");
    out.emit_else();
    line_("nt_ldmatrix_x2_trans(nt_fb[nt_j], " + B + " + " +
          lb.at("(nt_k0 + nt_l % 16)", "8 * (nt_wn + NT_WN" + n + " * nt_j)") + ");");
    close();
    close();
  } else {
    line_("NT_UNROLL");
    open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; ++nt_j)");
    line_("const nt_index nt_p = (nt_k0 + 2 * nt_t) * " + pb + " + 8 * (nt_wn + NT_WN" + n +
          " * nt_j) + nt_g;");
    line_("nt_fb[nt_j][0] = " + pack + "(" + B + "[nt_p], " + B + "[nt_p + " + pb + "]);");
    line_("nt_fb[nt_j][1] = " + pack + "(" + B + "[nt_p + 8 * " + pb + "], " + B + "[nt_p + 9 * " + pb +
          "]);");
    close();
  }
  write_mma_tiles(out, steps.layout, acc, [&](const MmaSlots& d) {
    line_(step + "(" + d[0] + ", " + d[1] + ", " + d[2] + ", " + d[3] + ", nt_fa[nt_i], nt_fb[nt_j]);");
  });
  close();
}

std::string held_a_register(const HeldOperand& held, const std::string& type, int r) {
  // Its slots (2 nt_i + h, 4 (nt_k0 / 16) + 2 q + e): rows g and g + 8 (h), columns 2 t + e and
  // 8 + 2 t + e (q) of this 16 x 16 tile; a's register h + 2 q.
  const std::string slot = "(2 * nt_i + " + std::to_string(r % 2) + ") * NT_C" + std::to_string(held.layout) +
                           " + nt_k0 / 4 + " + std::to_string(2 * (r / 2));
  return "nt_pack_" + type + "x2(" + held.array + "[" + slot + "], " + held.array + "[" + slot + " + 1])";
}

void write_mma_tiles(CodeWriter& out, int layout, const std::string& acc,
                     const std::function<void(const MmaSlots& slots)>& body) {
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  const std::string n = std::to_string(layout);
  // The accumulators of tile (i, j): slots (2 i, 2 j), (2 i, 2 j + 1), (2 i + 1, 2 j), (2 i + 1, 2 j + 1).
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  line_("NT_UNROLL");
  open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; ++nt_j)");
  line_("const int nt_s = 2 * nt_i * NT_C" + n + " + 2 * nt_j;");
  body({acc + "[nt_s]", acc + "[nt_s + 1]", acc + "[nt_s + NT_C" + n + "]",
        acc + "[nt_s + NT_C" + n + " + 1]"});
  close();
  close();
}

void write_tf32_steps(CodeWriter& out, const Tf32Steps& steps) {
  const std::string &tx = steps.tx, &ty = steps.ty, &acc = steps.acc, &A = steps.A, &B = steps.B,
                    &K = steps.K;
  const bool x3 = steps.x3;
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  const std::string n = std::to_string(steps.layout);
  const std::string pa = "(" + steps.pitch_a + ")", pb = "(" + steps.pitch_b + ")";
  line_("const nt_index nt_g = " + ty + " % 8, nt_t = " + tx + " % 4, nt_wn = " + tx + " / 4;");
  line_("NT_UNROLL");
  open("for (nt_index nt_k0 = 0; nt_k0 < " + K + "; nt_k0 += 8)");
  line_("uint nt_fa[NT_MAX(1L, NT_R" + n + " / 2)][4], nt_fb[NT_MAX(1L, NT_C" + n + " / 2)][2];");
  if (x3) line_("uint nt_la[NT_MAX(1L, NT_R" + n + " / 2)][4], nt_lb[NT_MAX(1L, NT_C" + n + " / 2)][2];");
  // A float as TF32 (and, for tf32x3, the TF32 of what that leaves).
  auto split = [&](const std::string& x, const std::string& high, const std::string& low) {
    if (!x3) {
      line_(high + " = nt_tf32(" + x + ");");
      return;
    }
    // An infinite high part (or one rounded up to infinity) has no low part: inf, not NaN.
    line_("{ const float nt_x = " + x + "; " + high + " = nt_tf32(nt_x); " + low + " = isinf(as_float(" +
          high + ")) ? 0u : nt_tf32(nt_x - as_float(" + high + ")); }");
  };
  // a's fragment of the warp's i-th 16 rows: rows g and g + 8, columns t and t + 4.
  line_("NT_UNROLL");
  open("for (int nt_i = 0; nt_i < NT_R" + n + " / 2; ++nt_i)");
  line_("const nt_index nt_p = NT_ROW" + n + "(" + ty + ", 2 * nt_i) * " + pa +
        " + nt_k0 + nt_t, nt_q = nt_p + 8 * " + pa + ";");
  const char* at[4] = {"nt_p", "nt_q", "nt_p + 4", "nt_q + 4"};
  for (int r = 0; r < 4; ++r) {
    const std::string slot = "[nt_i][" + std::to_string(r) + "]";
    split(A + "[" + at[r] + "]", "nt_fa" + slot, "nt_la" + slot);
  }
  close();
  // b's fragment of the warp's j-th 8 columns: column g, rows t and t + 4.
  line_("NT_UNROLL");
  open("for (int nt_j = 0; nt_j < NT_C" + n + " / 2; ++nt_j)");
  line_("const nt_index nt_p = (nt_k0 + nt_t) * " + pb + " + 8 * (nt_wn + NT_WN" + n + " * nt_j) + nt_g;");
  split(B + "[nt_p]", "nt_fb[nt_j][0]", "nt_lb[nt_j][0]");
  split(B + "[nt_p + 4 * " + pb + "]", "nt_fb[nt_j][1]", "nt_lb[nt_j][1]");
  close();
  write_mma_tiles(out, steps.layout, acc, [&](const MmaSlots& d) {
    if (x3) {
      // The small products first, in their own accumulators. Where an operand is infinite, its
      // partner's low part (of either sign) makes them infinite or NaN: a correction that is not
      // finite is dropped, as the large product alone carries the infinity.
      line_("float nt_c0 = 0.0f, nt_c1 = 0.0f, nt_c2 = 0.0f, nt_c3 = 0.0f;");
      line_("NT_MMA_M16N8K8_tf32(nt_c0, nt_c1, nt_c2, nt_c3, nt_la[nt_i], nt_fb[nt_j]);");
      line_("NT_MMA_M16N8K8_tf32(nt_c0, nt_c1, nt_c2, nt_c3, nt_fa[nt_i], nt_lb[nt_j]);");
      for (int r = 0; r < 4; ++r) {
        const std::string c = "nt_c" + std::to_string(r);
        line_(d[r] + " += isfinite(" + c + ") ? " + c + " : 0.0f;");
      }
    }
    line_("NT_MMA_M16N8K8_tf32(" + d[0] + ", " + d[1] + ", " + d[2] + ", " + d[3] +
          ", nt_fa[nt_i], nt_fb[nt_j]);");
  });
  close();
}

}  // namespace nt::codegen
