// Dot operands packed once per launch for every program that reads them (the work-item form).
//
// A matmul's program packs its row's block of a and its column's block of b at each step of k;
// the programs of one column pack the same blocks of b, each its own copy, from rows of b in
// pages of their own (one TLB walk a row on a CPU). Where an operand's access uses only some of
// the program's digits, the programs that differ in the others pack the same elements: the first
// program to need a block packs it into a slot of the launch's workspace and publishes it; the
// others copy the slot, contiguous, into their private array. A program that finds the block
// being packed waits for it (the packer is running: a program claims a slot only as it packs it,
// and packs to the end without waiting on anything).
//
// In: a dot operand's access (lower::TensorAccess), its parameter, the program layout and the
// middle indices it is loaded at. Out: its slot (shared_slot()), or none where every digit the
// grid has is used, or where the access uses a program's values other than its digits and
// middle indices (the flat program id of a parameter with programs of its own, a jagged
// sequence's bounds). Workspace: the byte offsets of each shared operand's region (its slots'
// flags, then the slots), and the workspace's size, over the launch's symbols.
//
// A slot's flag tells the launch (its epoch, a kernel argument the host increments per launch
// on one workspace) that claimed or published it: 2 epoch - 1 claimed, 2 epoch published. A
// workspace is zeroed when made and again before its epochs would overflow; the host gives
// epoch 0 where it has none (a GPU, a replayed launch, a workspace too large): every program
// then packs its own blocks, as without sharing. kSharedPackHelpers defines nt_claim_slot()
// and nt_publish_slot().
#pragma once

#include <optional>
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
                                      const lower::ProgramLayout& layout, const std::vector<Expr>& middle);

class Workspace {
 public:
  struct Region {
    Expr flags;  // byte offset of the slots' flags (an int each)
    Expr slots;  // byte offset of the first slot
  };
  // A region of `count` slots of `slot_bytes` each, 64-byte aligned.
  Region add(const Expr& count, const Expr& slot_bytes);
  const Expr& bytes() const { return bytes_; }
  bool empty() const { return regions_ == 0; }

 private:
  Expr bytes_ = Expr(0);
  size_t regions_ = 0;
};

// The address space of a packed operand that may be shared: NT_SHARED_SPACE, __global on CPUs
// (NT_CPU: a slot, or the program's private array through a global pointer, which PoCL's CPU
// devices address alike), __private elsewhere. kSharedPackHelpers defines it.
extern const char* const kSharedSpace;
// `int nt_claim_slot(volatile __global int* flag, long epoch, int shared)`: 0 the caller packs
// its own block (no workspace, or not `shared` at this launch), 1 it packs and must publish, 2 the slot holds
// the block. `void nt_publish_slot(volatile __global int* flag, long epoch)`.
extern const char* const kSharedPackHelpers;

}  // namespace nt::codegen
