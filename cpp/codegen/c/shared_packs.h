// Dot operands packed once per launch for every program that reads them (the work-item form).
//
// A matmul's program packs its row's block of a and its column's block of b at each step of k;
// the programs of one column pack the same blocks of b, each its own copy, from rows of b in
// pages of their own (one TLB walk a row on a CPU). Where an operand's access uses only some of
// the program's digits, the programs that differ in the others pack the same elements: the first
// program to need a block packs it into a slot of the launch's workspace and publishes it; the
// others read the slot in its place. A program that finds the block being packed waits for it
// (the packer is running: a program claims a slot only as it packs it, and packs to the end
// without waiting on anything).
//
// In: a dot operand's access (lower::TensorAccess), its parameter, the program layout, the middle
// indices it is loaded at and the names that are the same for every program of a launch (sizes and
// strides; constexpr and meta symbols are by their attributes). Out: its slot (shared_slot()), or none where
// no digit the access leaves out spans more than one program, or where the access uses any other value (the
// flat program id of a parameter with programs of its own, a jagged sequence's bounds).
// Workspace: where each shared operand's flags (an int a slot) and slots lie. The workspace holds
// every operand's flags first, then their slots; the host zeroes the flags before each launch
// (flag_bytes()), so a flag never holds what another launch or kernel left there. The kernel's
// last two arguments are the workspace and whether the launch has one (`nt_ws`, `nt_ws_on`): the
// host gives none on a GPU, to a replayed launch, or above its limit, and every program then packs
// its own blocks, as without sharing. kSharedPackHelpers defines nt_claim_slot() and
// nt_publish_slot().
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/program_layout.h"
#include "lower/tensor_access.h"

namespace nt::codegen {

struct SharedSlot {
  Expr index;  // this program's block's slot: the digits the access uses, then the middle indices
  Expr count;  // the slots of all programs' blocks
  // Shared at this launch: more than one program reads each block, and the middle indices lie
  // within the parameter's middle shape.
  Expr shares;
};

std::optional<SharedSlot> shared_slot(const lower::TensorAccess& access, const ir::Param& param,
                                      const lower::ProgramLayout& layout, const std::vector<Expr>& middle,
                                      const std::set<std::string>& uniform);

// What sharing needs to know of the whole kernel, found in one pass (scan_for_shared_packs()):
// whether it has a dot (every form then takes the workspace), the parameters it stores to (whose
// blocks a program may read after its own stores: never shared), and the names every program of a
// launch sees alike other than constexpr and meta symbols (shared_slot() knows those by their
// attributes): its parameters' size and stride symbols.
struct SharedPackKernel {
  bool dots = false;
  std::set<int> stored;
  std::set<std::string> uniform;
};
SharedPackKernel scan_for_shared_packs(const ir::Kernel& kernel);

class Workspace {
 public:
  struct Region {
    Expr flag;  // the index of the first slot's flag among the workspace's ints
    Expr slot;  // the byte offset of the first slot, from the first operand's first slot
  };
  // A region of `count` slots of `slot_bytes` each (64-byte aligned).
  Region add(const Expr& count, const Expr& slot_bytes);
  // The flags' bytes (64-byte aligned): the first slot's offset in the workspace.
  Expr flag_bytes() const;
  // The whole workspace's.
  Expr bytes() const;

 private:
  Expr flags_ = Expr(0), slots_ = Expr(0);
};

// The address space of a packed operand that may be shared: NT_SHARED_SPACE, __global on CPUs
// (NT_CPU: a slot, or the program's private array through a global pointer, which PoCL's CPU
// devices address alike), __private elsewhere. kSharedPackHelpers defines it.
extern const char* const kSharedSpace;
// `int nt_claim_slot(volatile __global int* flag, int shared)`: 0 the caller packs its own block
// (no workspace, or not `shared` at this launch), 1 it packs and must publish, 2 the slot holds the
// block (read after a fence). `void nt_publish_slot(volatile __global int* flag)`.
extern const char* const kSharedPackHelpers;

}  // namespace nt::codegen
